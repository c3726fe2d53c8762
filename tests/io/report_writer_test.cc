// report.html data (src/io/report_writer.cc): steps.csv and stats.json of an output folder go
// into the page's JSON; long runs are merged into buckets (largest value; energy: last value);
// missing or malformed files are errors naming the file.
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "coulomb/io/report_writer.h"

namespace coulomb::io {
namespace {

namespace fs = std::filesystem;

class ReportWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("coulomb_report_test_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::ofstream stats(dir_ / "stats.json");
    stats << R"({"steps": 50, "time_step_s": 0.01, "scene": "test </script> scene", "failures": 1})";
  }
  void TearDown() override { fs::remove_all(dir_); }

  void write_steps(int rows) {
    std::ofstream out(dir_ / "steps.csv");
    out << "t,solver_iterations,line_search_iterations,contacts,momentum_error,max_penetration_m,energy_J,"
           "wall_time_s,status,slip,note\n";
    for (int i = 1; i <= rows; ++i)
      out << 0.01 * i << ',' << (i % 10) << ',' << 2 * (i % 10) << ',' << i << ",1e-7," << 0.001 * (i % 5) << ','
          << 100.0 - i << ",0.0005," << (i == 17 ? "max_iterations" : "success") << ',' << 0.5 * i << ",n" << i
          << '\n';
  }

  nlohmann::json data(const ReportOptions& options = {}) {
    const std::string html = report_html(dir_.string(), options);
    const std::string open = R"(<script type="application/json" id="coulomb-report-data">)";
    const std::size_t begin = html.find(open);
    EXPECT_NE(begin, std::string::npos);
    const std::size_t end = html.find("</script>", begin);
    return nlohmann::json::parse(html.substr(begin + open.size(), end - begin - open.size()));
  }

  fs::path dir_;
};

TEST_F(ReportWriterTest, EmbedsEveryStepAndTheSummary) {
  write_steps(50);
  const nlohmann::json d = data();
  EXPECT_EQ(d["format"], "coulomb-report");
  EXPECT_EQ(d["title"], "test </script> scene");
  EXPECT_EQ(d["stats"]["failures"], 1);
  EXPECT_EQ(d["replay"], "");
  const nlohmann::json& s = d["steps"];
  EXPECT_EQ(s["rows"], 50);
  EXPECT_EQ(s["decimated_to"], 0);
  ASSERT_EQ(s["t"].size(), 50u);
  EXPECT_DOUBLE_EQ(s["t"][16].get<double>(), 0.17);
  EXPECT_EQ(s["contacts"][16], 17);
  EXPECT_DOUBLE_EQ(s["energy_J"][49].get<double>(), 50.0);
  EXPECT_EQ(s["status_counts"]["success"], 49);
  EXPECT_EQ(s["status_counts"]["max_iterations"], 1);
  ASSERT_EQ(s["failure_times"].size(), 1u);
  EXPECT_DOUBLE_EQ(s["failure_times"][0].get<double>(), 0.17);
  // A further numeric column is carried along; a text column is not.
  ASSERT_EQ(s["extra"].size(), 1u);
  EXPECT_EQ(s["extra"][0]["name"], "slip");
  EXPECT_DOUBLE_EQ(s["extra"][0]["data"][9].get<double>(), 5.0);

  std::ofstream(dir_ / "replay.html") << "x";
  EXPECT_EQ(data()["replay"], "replay.html");
  EXPECT_GT(write_report(dir_.string()), 50000u);  // the page carries uPlot
  EXPECT_TRUE(fs::exists(dir_ / "report.html"));
}

// The robot's series from trajectory.csv: joints of stats.json's robots (q, v, tau), contact
// forces on the robot's bodies only, and the floating base's height and roll/pitch/yaw from
// its quaternion (a yaw of 0.3 rad about z); long files keep one row per stride.
TEST_F(ReportWriterTest, RobotSeriesFromTheTrajectory) {
  write_steps(50);
  std::ofstream(dir_ / "stats.json") << R"({"steps": 50, "time_step_s": 0.01, "scene": "s", "robots": [{"name": "r",
      "floating": true, "base": "base", "joints": ["hip"], "actuated": ["hip"], "bodies": ["base", "leg"]}]})";
  {
    std::ofstream t(dir_ / "trajectory.csv");
    t << "t,base.z,base.qw,base.qx,base.qy,base.qz,hip.q,hip.v,hip.tau,leg.contact_fz,box.contact_fz\n";
    for (int i = 0; i <= 100; ++i)
      t << 0.01 * i << ",0.3," << std::cos(0.15) << ",0,0," << std::sin(0.15) << ',' << 0.001 * i << ",0.1," << 2.0 * i
        << ",50,7\n";
  }
  ReportOptions options;
  options.max_points = 20;
  const nlohmann::json r = data(options)["robot"];
  ASSERT_TRUE(r.contains("t"));
  EXPECT_EQ(r["stride"], 6);            // 101 rows → ⌈101/20⌉
  EXPECT_EQ(r["t"].size(), 17u);        // rows 5, 11, …, 95 and the last one
  EXPECT_DOUBLE_EQ(r["t"].back().get<double>(), 1.0);
  ASSERT_EQ(r["joints"].size(), 1u);
  EXPECT_EQ(r["joints"][0]["name"], "hip");
  EXPECT_DOUBLE_EQ(r["joints"][0]["tau"][0].get<double>(), 10.0);  // row 5
  ASSERT_EQ(r["contact_fz"].size(), 1u);  // the robot's leg, not the box
  EXPECT_EQ(r["contact_fz"][0]["name"], "leg");
  ASSERT_EQ(r["bases"].size(), 1u);
  EXPECT_NEAR(r["bases"][0]["yaw"][3].get<double>(), 0.3, 1e-6);  // the file has 6 digits
  EXPECT_NEAR(r["bases"][0]["roll"][3].get<double>(), 0.0, 1e-12);
  EXPECT_DOUBLE_EQ(r["bases"][0]["z"][3].get<double>(), 0.3);
  // No trajectory.csv: no robot plots, the report still works.
  fs::remove(dir_ / "trajectory.csv");
  EXPECT_FALSE(data()["robot"].contains("t"));
}

TEST_F(ReportWriterTest, MergesLongRunsIntoBucketsKeepingTheLargestValue) {
  write_steps(50);
  ReportOptions options;
  options.max_points = 10;  // 50 rows -> buckets of 5
  const nlohmann::json s = data(options)["steps"];
  EXPECT_EQ(s["rows"], 50);
  EXPECT_EQ(s["decimated_to"], 10);
  ASSERT_EQ(s["t"].size(), 10u);
  EXPECT_DOUBLE_EQ(s["t"][0].get<double>(), 0.05);                 // the bucket's last time
  EXPECT_EQ(s["solver_iterations"][0], 5);                          // max of 1..5
  EXPECT_EQ(s["solver_iterations"][1], 9);                          // max of 6..9, 0
  EXPECT_EQ(s["contacts"][9], 50);
  EXPECT_DOUBLE_EQ(s["max_penetration_m"][0].get<double>(), 0.004);
  EXPECT_DOUBLE_EQ(s["energy_J"][0].get<double>(), 95.0);           // the bucket's last energy
  EXPECT_EQ(s["status_counts"]["max_iterations"], 1);
  EXPECT_DOUBLE_EQ(s["extra"][0]["data"][0].get<double>(), 2.5);  // max of 0.5 .. 2.5
}

TEST_F(ReportWriterTest, MissingOrMalformedFilesNameTheFile) {
  EXPECT_THROW(
      {
        try {
          report_html(dir_.string());
        } catch (const std::runtime_error& e) {
          EXPECT_NE(std::string(e.what()).find("steps.csv: cannot open"), std::string::npos) << e.what();
          throw;
        }
      },
      std::runtime_error);
  std::ofstream(dir_ / "steps.csv") << "t,solver_iterations\n0.1,3\n";
  try {
    report_html(dir_.string());
    ADD_FAILURE() << "a steps.csv without the contract's columns must be rejected";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("steps.csv:1: no column 'line_search_iterations'"), std::string::npos)
        << e.what();
  }
  write_steps(3);
  std::ofstream(dir_ / "steps.csv", std::ios::app) << "0.04,x,1,1,1,1,1,1,success,1,n\n";
  try {
    report_html(dir_.string());
    ADD_FAILURE() << "a non-number must be rejected";
  } catch (const std::runtime_error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("steps.csv:5: column 'solver_iterations': not a number: 'x'"), std::string::npos) << message;
  }
  write_steps(3);
  std::ofstream(dir_ / "stats.json") << "{not json";
  EXPECT_THROW(report_html(dir_.string()), std::runtime_error);
}

}  // namespace
}  // namespace coulomb::io
