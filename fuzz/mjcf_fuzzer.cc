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

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string xml(reinterpret_cast<const char*>(data), size);
  try {
    coulomb::multibody::ModelBuilder builder;
    coulomb::io::add_mjcf_string(builder, xml, {}, "<fuzz>", COULOMB_FUZZ_MODELS_DIR);
    coulomb::fuzz::check_accepted_model(builder.build());
  } catch (const coulomb::io::MjcfError& e) {
    coulomb::fuzz::check_rejection_names_source(e, {"<fuzz>"});
    return 0;
  } catch (const std::exception& e) {
    coulomb::fuzz::unexpected_exception(e);
  }
  return 0;
}
