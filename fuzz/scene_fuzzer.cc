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

// COULOMB_FUZZ_STRICT=1 in the environment: an exception other than the loader's documented
// error types (a std::out_of_range from a container, a yaml-cpp or builder exception that does
// not name the file) aborts too, so that libFuzzer records the input: the house rule wants every
// user error reported as the loader's error, naming the file. A documented error whose message
// does not name the source ("<fuzz>") aborts as well in that mode.
static void check_message(const std::exception& e) {
  static const bool strict = std::getenv("COULOMB_FUZZ_STRICT") != nullptr;
  if (strict && std::string(e.what()).find("<fuzz>") == std::string::npos) {
    std::fprintf(stderr, "error message without the file name: %s\n", e.what());
    std::abort();
  }
}

static void unexpected_exception(const std::exception& e) {
  static const bool strict = std::getenv("COULOMB_FUZZ_STRICT") != nullptr;
  if (strict) {
    std::fprintf(stderr, "undocumented exception: %s\n", e.what());
    std::abort();
  }
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string yaml(reinterpret_cast<const char*>(data), size);
  try {
    const coulomb::io::Scene scene = coulomb::io::parse_scene(yaml, "<fuzz>", COULOMB_FUZZ_SCENES_DIR);
    if (!std::isfinite(scene.time_step) || !(scene.time_step > 0.0)) coulomb::fuzz::accepted_but("time step");
    if (!std::isfinite(scene.duration) || !(scene.duration > 0.0)) coulomb::fuzz::accepted_but("duration");
    coulomb::fuzz::check_accepted_model(scene.model, scene.q0, scene.v0);
  } catch (const coulomb::io::SceneError& e) {
    check_message(e);
    return 0;
  } catch (const coulomb::io::UrdfError& e) {
    check_message(e);
    return 0;
  } catch (const coulomb::io::MjcfError& e) {
    check_message(e);
    return 0;
  } catch (const std::exception& e) {
    unexpected_exception(e);
  }
  return 0;
}
