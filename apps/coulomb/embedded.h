// Files compiled into the coulomb binary: the embedded default scene of `coulomb simulate`
// (examples/scenes/default.yaml) and the robot it uses (examples/models/coulomb_quadruped.urdf),
// and the figures script of `coulomb experiment id-tables` (apps/coulomb/experiment_plots.py).
#pragma once

namespace coulomb::cli {
extern const char* const kEmbeddedDefaultScene;
extern const char* const kEmbeddedQuadrupedUrdf;
/// apps/coulomb/experiment_plots.py: the figures of `coulomb experiment id-tables`.
extern const char* const kEmbeddedExperimentPlots;
}  // namespace coulomb::cli
