// libFuzzer harness: io::parse_urdf on arbitrary bytes (fuzz/README in docs/reliability.md).
//
// The input is taken as the text of a URDF file, parsed once fixed (welded root) and once with a
// floating root. An exception derived from std::exception (UrdfError, the documented one) is a
// clean rejection; anything else — a crash, a sanitizer report (ASan, UBSan), a leak, a timeout
// or an excessive allocation — is a finding, and so is an accepted model whose mass matrix or
// gravity is not finite (fuzz_checks.h). Mesh filenames resolve against examples/models.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "coulomb/io/urdf_loader.h"
#include "fuzz_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string xml(reinterpret_cast<const char*>(data), size);
  for (const bool floating : {false, true}) {
    coulomb::io::UrdfOptions options;
    options.floating = floating;
    try {
      const coulomb::io::UrdfModel urdf = coulomb::io::parse_urdf(xml, options, "<fuzz>", COULOMB_FUZZ_MODELS_DIR);
      coulomb::fuzz::check_accepted_model(urdf.model);
    } catch (const coulomb::io::UrdfError& e) {
      coulomb::fuzz::check_rejection_names_source(e, {"<fuzz>"});
      return 0;  // rejected: the same for both, no need to try the second
    } catch (const std::exception& e) {
      coulomb::fuzz::unexpected_exception(e);
      return 0;
    }
  }
  return 0;
}
