// libFuzzer harness: io::parse_scene on arbitrary bytes (docs/reliability.md).
//
// The input is taken as the text of a YAML scene file located in examples/scenes, so that the
// relative robot paths of the seed scenes (../models/*.urdf, ../models/*.xml) resolve and the
// URDF/MJCF loaders run behind the scene loader. An exception derived from std::exception
// (SceneError, UrdfError, MjcfError, …) is a clean rejection; a crash, a sanitizer report, a
// leak, a timeout or an excessive allocation is a finding, and so is an accepted scene whose time
// step, duration, mass matrix or gravity at (q0, v0) is not finite (fuzz_checks.h).
#include <cstddef>
#include <cstdint>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "coulomb/io/mjcf_loader.h"
#include "coulomb/io/scene_loader.h"
#include "coulomb/io/urdf_loader.h"
#include "fuzz_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string yaml(reinterpret_cast<const char*>(data), size);
  try {
    const coulomb::io::Scene scene = coulomb::io::parse_scene(yaml, "<fuzz>", COULOMB_FUZZ_SCENES_DIR);
    if (!std::isfinite(scene.time_step) || !(scene.time_step > 0.0)) coulomb::fuzz::accepted_but("time step");
    if (!std::isfinite(scene.duration) || !(scene.duration > 0.0)) coulomb::fuzz::accepted_but("duration");
    coulomb::fuzz::check_accepted_model(scene.model, scene.q0, scene.v0);
  } catch (const coulomb::io::SceneError& e) {
    coulomb::fuzz::check_rejection_names_source(e, {"<fuzz>"});
    return 0;
  } catch (const coulomb::io::UrdfError& e) {
    coulomb::fuzz::check_rejection_names_source(e, {"<fuzz>"});
    return 0;
  } catch (const coulomb::io::MjcfError& e) {
    coulomb::fuzz::check_rejection_names_source(e, {"<fuzz>"});
    return 0;
  } catch (const std::exception& e) {
    coulomb::fuzz::unexpected_exception(e);
  }
  return 0;
}
