// Files compiled into the coulomb binary: the embedded default scene of `coulomb simulate`
// (examples/scenes/default.yaml) and the robot it uses (examples/models/coulomb_quadruped.urdf).
#pragma once

namespace coulomb::cli {
extern const char* const kEmbeddedDefaultScene;
extern const char* const kEmbeddedQuadrupedUrdf;
}  // namespace coulomb::cli
