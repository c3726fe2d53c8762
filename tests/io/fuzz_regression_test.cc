// Replays the inputs of tests/data/fuzz_regressions/<harness>/ (crashes and other findings of the
// libFuzzer harnesses of fuzz/, minimized, and fuzzer-made inputs kept as replay cases; see
// docs/reliability.md) through the loader the harness calls, in the normal build: each must load
// or be rejected with the loader's documented error, whose message names the file, as the house
// rule asks; an accepted model must have a finite mass matrix and generalized gravity.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "coulomb/io/mjcf_loader.h"
#include "coulomb/io/scene_loader.h"
#include "coulomb/io/sdf_loader.h"
#include "coulomb/io/urdf_loader.h"
#include "coulomb/multibody/crba.h"
#include "coulomb/multibody/rnea.h"
#include "coulomb/multibody/workspace.h"
#include "io/io_test_util.h"

namespace coulomb::io {
namespace {

namespace fs = std::filesystem;

const std::string kRegressions = std::string(COULOMB_TEST_DATA_DIR) + "/fuzz_regressions/";
// The harnesses resolve relative paths there (fuzz/CMakeLists.txt).
const std::string kModels = std::string(COULOMB_SOURCE_DIR) + "/examples/models";
const std::string kScenes = std::string(COULOMB_SOURCE_DIR) + "/examples/scenes";

std::vector<std::string> inputs(const std::string& harness) {
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(kRegressions + harness)) {
    if (entry.is_regular_file() && entry.path().filename() != "README.md") files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

void expect_usable(const multibody::Model& model, const Eigen::VectorXd& q, const Eigen::VectorXd& v) {
  EXPECT_TRUE(std::isfinite(model.total_mass()));
  ASSERT_EQ(q.size(), model.nq());
  ASSERT_EQ(v.size(), model.nv());
  multibody::Workspace ws(model);
  EXPECT_TRUE(multibody::crba(model, ws, q).allFinite());
  EXPECT_TRUE(multibody::generalized_gravity(model, ws, q).allFinite());
}

template <class Error>
void expect_names_file(const Error& e, const std::string& path) {
  const std::string what = e.what();
  EXPECT_NE(what.find(path), std::string::npos) << "message does not name the file: " << what;
}

TEST(FuzzRegressionTest, UrdfInputsLoadOrThrowUrdfError) {
  const std::vector<std::string> files = inputs("urdf");
  EXPECT_FALSE(files.empty());
  for (const std::string& path : files) {
    SCOPED_TRACE(path);
    for (const bool floating : {false, true}) {
      UrdfOptions options;
      options.floating = floating;
      try {
        const UrdfModel urdf = parse_urdf(testing::read_text(path), options, path, kModels);
        expect_usable(urdf.model, urdf.model.neutral_configuration(), Eigen::VectorXd::Zero(urdf.model.nv()));
      } catch (const UrdfError& e) {
        expect_names_file(e, path);
      }
    }
  }
}

TEST(FuzzRegressionTest, MjcfInputsLoadOrThrowMjcfError) {
  const std::vector<std::string> files = inputs("mjcf");
  EXPECT_FALSE(files.empty());
  for (const std::string& path : files) {
    SCOPED_TRACE(path);
    try {
      multibody::ModelBuilder builder;
      add_mjcf_string(builder, testing::read_text(path), {}, path, kModels);
      const multibody::Model model = builder.build();
      expect_usable(model, model.neutral_configuration(), Eigen::VectorXd::Zero(model.nv()));
    } catch (const MjcfError& e) {
      expect_names_file(e, path);
    }
  }
}

// fuzz_sdf reads files (libsdformat does): the regression files are loaded where they are.
TEST(FuzzRegressionTest, SdfInputsLoadOrThrowSdfError) {
  const std::vector<std::string> files = inputs("sdf");
  EXPECT_FALSE(files.empty());
  const testing::ScopedEnv env("COULOMB_MODEL_PATH", kModels + "/sdf");
  for (const std::string& path : files) {
    SCOPED_TRACE(path);
    try {
      const SdfModel sdf = load_sdf(path);
      expect_usable(sdf.model, sdf.model.neutral_configuration(), Eigen::VectorXd::Zero(sdf.model.nv()));
    } catch (const SdfError& e) {
      expect_names_file(e, path);
    }
  }
}

TEST(FuzzRegressionTest, SceneInputsLoadOrThrowTheLoadersErrors) {
  const std::vector<std::string> files = inputs("scene");
  EXPECT_FALSE(files.empty());
  for (const std::string& path : files) {
    SCOPED_TRACE(path);
    try {
      const Scene scene = parse_scene(testing::read_text(path), path, kScenes);
      EXPECT_GT(scene.time_step, 0.0);
      EXPECT_TRUE(std::isfinite(scene.duration));
      expect_usable(scene.model, scene.q0, scene.v0);
    } catch (const SceneError& e) {
      expect_names_file(e, path);
    } catch (const UrdfError& e) {
      expect_names_file(e, path);
    } catch (const MjcfError& e) {
      expect_names_file(e, path);
    }
  }
}

}  // namespace
}  // namespace coulomb::io
