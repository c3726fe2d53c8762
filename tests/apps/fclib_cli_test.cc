// `coulomb fclib`: the table's figures on an FCLIB file (the problem sizes of
// ../shared/fclib/README.md; coulomb's residual of Siconos' answers; SAP's relaxation gap where
// contacts slide), and bad files exit 1 naming the file.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli_runner.h"

namespace coulomb::cli {
namespace {

namespace fs = std::filesystem;
using coulomb::testing::contains;
using coulomb::testing::run_cli;
using coulomb::testing::RunResult;

const std::string kFclibDir = std::string(COULOMB_SHARED_DIR) + "/fclib/";

TEST(FclibCliTest, BoxStacksTable) {
  const std::string file = kFclibDir + "Box_Stacks-i0122-82-5.hdf5";
  const RunResult r = run_cli({"fclib", file, "--json", "--repeats", "1"});
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json all = nlohmann::json::parse(r.out);
  ASSERT_EQ(all.size(), 1u);
  const nlohmann::json& j = all[0];
  EXPECT_EQ(j.at("contacts").get<int>(), 82);  // README
  EXPECT_EQ(j.at("dofs").get<int>(), 450);
  ASSERT_EQ(j.at("solvers").size(), 3u);
  for (const nlohmann::json& s : j.at("solvers")) {
    const std::string name = s.at("solver");
    EXPECT_TRUE(s.at("converged").get<bool>()) << name;
    EXPECT_LT(s.at("residuals").at("equation").get<double>(), 1e-9) << name;
    if (name == "sap") {
      // Sliding contacts: SAP's relaxation leaves a normal gap, hence a residual above the
      // Siconos solvers' (which solve the exact law to the tolerance 1e-8).
      EXPECT_GT(s.at("residuals").at("sliding_contacts").get<int>(), 0);
      EXPECT_GT(s.at("residuals").at("normal_gap").get<double>(), 1e-6);
      EXPECT_GT(s.at("residuals").at("complementarity").get<double>(), 1e-6);
    } else {
      EXPECT_LT(s.at("residuals").at("complementarity").get<double>(), 1e-7) << name;
      EXPECT_LT(s.at("residuals").at("normal_gap").get<double>(), 1e-8) << name;
    }
  }
  // The human table names the solvers and the stored solution.
  const RunResult t = run_cli({"fclib", file, "--repeats", "1", "--solvers", "sap"});
  ASSERT_EQ(t.status, 0) << t.err;
  EXPECT_TRUE(contains(t.out, "82 contacts, 450 dofs")) << t.out;
  EXPECT_TRUE(contains(t.out, "sap")) << t.out;
  EXPECT_TRUE(contains(t.out, "stored solution")) << t.out;
}

TEST(FclibCliTest, BadFilesExitOneNamingTheFile) {
  const fs::path dir = fs::temp_directory_path() / ("coulomb_fclib_cli_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string text = (dir / "notes.hdf5").string();
  std::ofstream(text) << "hello\n";
  const std::string local = kFclibDir + "local_problem_test.hdf5";
  const std::string missing = (dir / "missing.hdf5").string();
  for (const auto& [file, message] : {std::pair<std::string, std::string>{missing, "file not found"},
                                      {text, "not an HDF5 file"},
                                      {local, "local problem (W, q, mu): not supported"}}) {
    const RunResult r = run_cli({"fclib", file, "--repeats", "1"});
    EXPECT_EQ(r.status, 1) << file << "\n" << r.err;
    EXPECT_TRUE(contains(r.err, "coulomb: error: " + file)) << r.err;
    EXPECT_TRUE(contains(r.err, message)) << r.err;
  }
  // Several files: the good one is solved, the bad one reported, exit 1.
  const RunResult r = run_cli({"fclib", kFclibDir + "CubeH8.hdf5", missing, "--repeats", "1", "--solvers", "sap"});
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.out, "CubeH8.hdf5: global problem, 1 contacts, 162 dofs")) << r.out;
  EXPECT_TRUE(contains(r.err, missing)) << r.err;
  // Usage errors exit 2.
  EXPECT_EQ(run_cli({"fclib", local, "--solvers", "pgs"}).status, 2);
  EXPECT_EQ(run_cli({"fclib", local, "--tolerance", "0"}).status, 2);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace coulomb::cli
