// libFuzzer harness: io::parse_scene on arbitrary bytes (docs/reliability.md).
//
// The input is taken as the text of a YAML scene file located in examples/scenes, so that the
// relative robot paths of the seed scenes (../models/*.urdf, ../models/*.xml) resolve and the
// URDF/MJCF loaders run behind the scene loader. An exception derived from std::exception
// (SceneError, UrdfError, MjcfError, …) is a clean rejection; a crash, a sanitizer report, a
// leak, a timeout or an excessive allocation is a finding.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>

#include "coulomb/io/scene_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string yaml(reinterpret_cast<const char*>(data), size);
  try {
    coulomb::io::parse_scene(yaml, "<fuzz>", COULOMB_FUZZ_SCENES_DIR);
  } catch (const std::exception&) {
  }
  return 0;
}
