// libFuzzer harness: io::parse_urdf on arbitrary bytes (fuzz/README in docs/reliability.md).
//
// The input is taken as the text of a URDF file, parsed once fixed (welded root) and once with a
// floating root. An exception derived from std::exception (UrdfError, the documented one) is a
// clean rejection; anything else — a crash, a sanitizer report (ASan, UBSan), a leak, a timeout
// or an excessive allocation — is a finding. Mesh filenames resolve against examples/models.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>

#include "coulomb/io/urdf_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string xml(reinterpret_cast<const char*>(data), size);
  for (const bool floating : {false, true}) {
    coulomb::io::UrdfOptions options;
    options.floating = floating;
    try {
      coulomb::io::parse_urdf(xml, options, "<fuzz>", COULOMB_FUZZ_MODELS_DIR);
    } catch (const std::exception&) {
      return 0;  // rejected with an exception: the same for both, no need to try the second
    }
  }
  return 0;
}
