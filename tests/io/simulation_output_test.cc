// The output writers (issue 10): the fast "%.9g" formatter against printf over every decade,
// signs, ties and special values; trajectory.csv's torque and contact-force columns against
// the StepResults they come from (a box resting under gravity: Σ f_z = m g); contacts.csv rows;
// stats.json's robots, warnings and notes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "coulomb/io/scene_loader.h"
#include "coulomb/io/simulation_output.h"

namespace coulomb::io {
namespace {

namespace fs = std::filesystem;

std::string g9(double x) {
  char buffer[40];
  char* end = format_g9(x, buffer);
  return std::string(buffer, end);
}

std::string printf_g9(double x) {
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%.9g", x);
  return buffer;
}

TEST(SimulationOutputTest, FormatMatchesPrintfG9) {
  for (double x : {0.0, -0.0, 1.0, -1.0, 0.1, 0.5, 1e-4, 9.99999999e-5, 1e-5, 123456789.0, 1234567890.0, 999999999.5,
                   9.999999995, 0.00012345678949, 1e9, 1e-9, 1e22, 1e-300, 1e300, 5e-324, 1.7976931348623157e308,
                   3.14159265358979, -2.718281828459045, 100.0, 1e8, 12345.0, 0.3})
    EXPECT_EQ(g9(x), printf_g9(x)) << x;
  EXPECT_EQ(g9(std::nan("")), "nan");
  EXPECT_EQ(g9(INFINITY), "inf");
  EXPECT_EQ(g9(-INFINITY), "-inf");
  // Random values over 60 decades, and the ones that stress rounding (9.5 digit boundaries).
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> mantissa(1.0, 10.0), exponent(-35.0, 35.0);
  int mismatches = 0, total = 0;
  for (int i = 0; i < 200000; ++i) {
    const double x = (i % 2 ? -1.0 : 1.0) * mantissa(rng) * std::pow(10.0, std::floor(exponent(rng)));
    ++total;
    const std::string a = g9(x), b = printf_g9(x);
    if (a != b) {
      ++mismatches;
      ADD_FAILURE() << a << " vs printf " << b;
    }
  }
  std::printf("[ measured ] format_g9 vs printf %%.9g: %d of %d differ\n", mismatches, total);
  // Values whose 10th digit is exactly 5 in binary (ties and near-ties), every decade.
  for (int e = -33; e <= 33; ++e)
    for (long long m : {123456785LL, 999999995LL, 100000005LL, 555555555LL})
      for (double y : {static_cast<double>(m) * std::pow(10.0, e - 9), std::nextafter(static_cast<double>(m) * std::pow(10.0, e - 9), 0.0)})
        EXPECT_EQ(g9(y), printf_g9(y)) << y;
}

/// Runs `steps` steps of `sim`, writing DIR/trajectory.csv (t = 0, then every step) and
/// DIR/contacts.csv (the contacts of the last step), and closes both.
void write_run(simulation::Simulator& sim, const fs::path& dir, int steps) {
  TrajectoryWriter trajectory((dir / "trajectory.csv").string(), sim.scene());
  ContactsWriter contacts((dir / "contacts.csv").string(), sim.scene(), sim.parameters().time_step);
  trajectory.write(0.0, sim.q(), sim.v());
  for (int k = 0; k < steps; ++k) {
    sim.step();
    trajectory.write(sim.time(), sim.q(), sim.v(), &sim.last_results());
  }
  contacts.write(sim.time(), sim.last_results());
  trajectory.close();
  contacts.close();
}

std::vector<std::vector<std::string>> read_csv(const fs::path& path) {
  std::vector<std::vector<std::string>> rows;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) cells.push_back(cell);
    rows.push_back(cells);
  }
  return rows;
}

// A 3 kg box resting on the ground and a pendulum with an actuator: the torque column is the
// applied actuator force, the contact-force columns sum to m g, contacts.csv has the four
// corners whose f_z add up to the same.
TEST(SimulationOutputTest, TrajectoryTorqueAndContactForceColumns) {
  const std::string urdf =
      "<robot name='pendulum'><link name='base'/><link name='arm'><inertial><origin xyz='0.5 0 0'/><mass value='1'/>"
      "<inertia ixx='0.01' iyy='0.01' izz='0.01' ixy='0' ixz='0' iyz='0'/></inertial></link>"
      "<joint name='hinge' type='continuous'><parent link='base'/><child link='arm'/><axis xyz='0 1 0'/></joint></robot>";
  const fs::path dir = fs::temp_directory_path() / ("coulomb_output_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "pendulum.urdf") << urdf;
  const std::string yaml =
      "time_step: 0.001\nbodies:\n"
      "  - {name: ground, fixed: true, shapes: [{type: halfspace}]}\n"
      "  - {name: crate, mass: 3.0, shapes: [{type: box, size: [0.2, 0.2, 0.2]}], position: [0, 0, 0.1]}\n"
      "robots:\n  - urdf: " + (dir / "pendulum.urdf").string() + "\n    position: [5, 0, 2]\n"
      "    actuators: {hinge: {kp: 100, kd: 5}}\n";
  const scene::Scene scene = parse_scene(yaml, "out.yaml");
  simulation::SimulatorParameters params;
  params.time_step = scene.time_step;
  simulation::Simulator sim(scene, params);
  const std::vector<std::string> header = TrajectoryWriter::header(sim.scene());
  EXPECT_EQ(header[header.size() - 4], "hinge.tau");
  EXPECT_EQ(header[header.size() - 3], "crate.contact_fx");
  EXPECT_EQ(header.back(), "crate.contact_fz");
  write_run(sim, dir, 500);
  const auto rows = read_csv(dir / "trajectory.csv");
  ASSERT_EQ(rows.size(), 502u);  // header, t = 0, 500 steps
  ASSERT_EQ(rows[0], header);
  const std::vector<std::string>& last = rows.back();
  ASSERT_EQ(last.size(), header.size());
  EXPECT_EQ(std::stod(rows[1][header.size() - 4]), 0.0);  // t = 0: no step yet
  EXPECT_NEAR(std::stod(last[header.size() - 4]), sim.last_results().actuator_forces[0], 1e-8 * 10);
  EXPECT_NEAR(std::stod(last.back()), 3.0 * 9.81, 1e-6 * 3.0 * 9.81);  // the crate at rest: f_z = m g
  EXPECT_NEAR(std::stod(last[header.size() - 3]), 0.0, 1e-6);
  // contacts.csv: four corners, f_z summing to m g, names not indices.
  const auto c = read_csv(dir / "contacts.csv");
  ASSERT_EQ(c.size(), 5u);
  EXPECT_EQ(c[0][0], "t");
  EXPECT_EQ(c[0].back(), "region");
  double fz = 0.0;
  for (size_t i = 1; i < c.size(); ++i) {
    EXPECT_EQ(c[i][1], "world");
    EXPECT_EQ(c[i][2], "crate");
    EXPECT_EQ(c[i][4], "crate/shape0");
    EXPECT_EQ(c[i].back(), "stiction");
    fz += std::stod(c[i][16]);
  }
  EXPECT_NEAR(fz, 3.0 * 9.81, 1e-6 * 3.0 * 9.81);
  fs::remove_all(dir);
}

// Names with commas and quotes (a scene may name a body so; mutation campaign, scene 8380) are
// RFC 4180 fields: quoted, inner quotes doubled, so that every row keeps the header's width.
TEST(SimulationOutputTest, NamesWithCommasAndQuotesAreQuotedCsvFields) {
  EXPECT_EQ(split_csv_row("a,\"b,c\",\"d\"\"e\","), (std::vector<std::string>{"a", "b,c", "d\"e", ""}));
  EXPECT_EQ(split_csv_row("t"), (std::vector<std::string>{"t"}));
  const fs::path dir = fs::temp_directory_path() / ("coulomb_output_quote_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string yaml =
      "time_step: 0.001\nbodies:\n"
      "  - {name: ground, fixed: true, shapes: [{type: halfspace}]}\n"
      "  - {name: 'crate, \"big\"', mass: 3.0, shapes: [{type: box, size: [0.2, 0.2, 0.2]}], position: [0, 0, 0.1]}\n";
  const scene::Scene scene = parse_scene(yaml, "quote.yaml");
  simulation::SimulatorParameters params;
  params.time_step = scene.time_step;
  simulation::Simulator sim(scene, params);
  write_run(sim, dir, 20);
  std::ifstream in(dir / "trajectory.csv");
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  // The bytes RFC 4180 prescribes, independent of split_csv_row.
  EXPECT_NE(line.find(",\"crate, \"\"big\"\".x\","), std::string::npos) << line;
  const std::vector<std::string> header = TrajectoryWriter::header(sim.scene());
  EXPECT_EQ(split_csv_row(line), header);
  EXPECT_EQ(header[1], "crate, \"big\".x");
  int rows = 0;
  while (std::getline(in, line)) {
    ASSERT_EQ(split_csv_row(line).size(), header.size()) << "row " << rows;
    ++rows;
  }
  EXPECT_EQ(rows, 21);
  std::ifstream contacts_in(dir / "contacts.csv");
  ASSERT_TRUE(std::getline(contacts_in, line));
  const size_t columns = split_csv_row(line).size();
  int contact_rows = 0;
  while (std::getline(contacts_in, line)) {
    const std::vector<std::string> f = split_csv_row(line);
    ASSERT_EQ(f.size(), columns) << line;
    EXPECT_EQ(f[2], "crate, \"big\"");
    ++contact_rows;
  }
  EXPECT_GT(contact_rows, 0);
  fs::remove_all(dir);
}

// stats.json: robots with base, joints, actuated joints and bodies; warnings and notes lists.
TEST(SimulationOutputTest, StatsJsonRobotsWarningsNotes) {
  const scene::Scene scene = load_scene(std::string(COULOMB_SOURCE_DIR) + "/examples/scenes/a1_stand.yaml");
  const fs::path path = fs::temp_directory_path() / ("coulomb_stats_" + std::to_string(::getpid()) + ".json");
  RunStatistics stats;
  stats.warnings = {"w1"};
  stats.notes = scene.notes;
  write_stats_json(path.string(), stats, "sap", "implicit-euler", 0.001, "a1_stand.yaml", scene.model.nv(), "lagged", &scene);
  std::ifstream in(path);
  const nlohmann::json j = nlohmann::json::parse(in);
  ASSERT_EQ(j.at("robots").size(), 1u);
  const auto& r = j.at("robots")[0];
  EXPECT_EQ(r.at("name"), "a1");
  EXPECT_TRUE(r.at("floating").get<bool>());
  EXPECT_EQ(r.at("base"), scene.model.body(scene.robots[0].root_body).name);
  EXPECT_EQ(r.at("joints").size(), 12u);
  EXPECT_EQ(r.at("actuated").size(), 12u);
  EXPECT_EQ(r.at("bodies").size(), 13u);  // base + 12 leg links (feet fused into the calves)
  EXPECT_EQ(j.at("warnings"), nlohmann::json::array({"w1"}));
  EXPECT_EQ(j.at("notes").size(), scene.notes.size());
  for (const char* key : {"steps", "sim_time_s", "real_time_factor", "solver_iterations", "failures", "energy", "dofs"})
    EXPECT_TRUE(j.contains(key)) << key;
  fs::remove(path);
}

}  // namespace
}  // namespace coulomb::io
