// libFuzzer harness: io::load_sdf on arbitrary bytes (docs/reliability.md).
//
// libsdformat reads files only (sdf::Root::Load), so each input is written to a file in a
// temporary directory of this process and loaded with load_sdf, as `coulomb simulate FILE.sdf`
// does; COULOMB_MODEL_PATH is set to the example SDF models (examples/models/sdf) so that
// <include>s of model://tumbler resolve. libsdformat itself is not instrumented (a system library); coulomb's walk over
// its DOM, the pose and inertia checks and the model builder are. An SdfError is a clean
// rejection; a crash, a sanitizer report, a timeout or an excessive allocation is a finding, and
// so is an accepted model whose mass matrix or gravity is not finite (fuzz_checks.h).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <string>

#include "coulomb/io/sdf_loader.h"
#include "fuzz_checks.h"

namespace {

// The input file, in a temporary directory made on first use and removed at exit.
struct InputFile {
  std::string directory;
  std::string path;
  InputFile() {
    const char* tmp = std::getenv("TMPDIR");
    directory = std::string(tmp && *tmp ? tmp : "/tmp") + "/coulomb_fuzz_sdf_XXXXXX";
    if (::mkdtemp(directory.data()) == nullptr) {
      std::perror("fuzz_sdf: mkdtemp");
      std::abort();
    }
    path = directory + "/input.sdf";
    ::setenv("COULOMB_MODEL_PATH", COULOMB_FUZZ_MODELS_DIR "/sdf", 1);
  }
  ~InputFile() {
    std::remove(path.c_str());
    ::rmdir(directory.c_str());
  }
};

const std::string& input_path() {
  static const InputFile file;
  return file.path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = input_path();
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    if (!out) {
      std::fprintf(stderr, "fuzz_sdf: cannot write %s\n", path.c_str());
      std::abort();
    }
  }
  try {
    const coulomb::io::SdfModel loaded = coulomb::io::load_sdf(path);
    coulomb::fuzz::check_accepted_model(loaded.model, loaded.q0,
                                        Eigen::VectorXd::Zero(loaded.model.nv()));
  } catch (const coulomb::io::SdfError& e) {
    // The input file, or an included model's file or a file libsdformat names.
    coulomb::fuzz::check_rejection_names_source(e, {".sdf", ".config", ".urdf"});
  } catch (const std::exception& e) {
    coulomb::fuzz::unexpected_exception(e);
  }
  return 0;
}
