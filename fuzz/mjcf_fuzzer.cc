// libFuzzer harness: io::add_mjcf_string on arbitrary bytes (docs/reliability.md).
//
// The input is taken as the text of an MJCF file in examples/models (includes and mesh files
// resolve there), added to a fresh ModelBuilder which is then built, as load_mjcf does. An
// exception derived from std::exception (MjcfError, the builder's std::invalid_argument, …) is a
// clean rejection; a crash, a sanitizer report, a leak, a timeout or an excessive allocation is
// a finding, and so is an accepted model whose mass matrix or gravity is not finite
// (fuzz_checks.h).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "coulomb/io/mjcf_loader.h"
#include "coulomb/multibody/model.h"
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
  const std::string xml(reinterpret_cast<const char*>(data), size);
  try {
    coulomb::multibody::ModelBuilder builder;
    coulomb::io::add_mjcf_string(builder, xml, {}, "<fuzz>", COULOMB_FUZZ_MODELS_DIR);
    coulomb::fuzz::check_accepted_model(builder.build());
  } catch (const coulomb::io::MjcfError& e) {
    check_message(e);
    return 0;
  } catch (const std::exception& e) {
    unexpected_exception(e);
  }
  return 0;
}
