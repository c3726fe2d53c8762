// `coulomb simulate FILE` / `coulomb inspect FILE` with a model file instead of a scene: MJCF and
// URDF recognized by content, an SDFormat file and files of unknown kind rejected in one line, and
// MuJoCo's humanoid sample (libmujoco-samples) run for 5 s without a solver failure. The example
// scene examples/scenes/mjcf_arm.yaml is run too (arm held by its position servos, box at rest).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "coulomb/io/scene_loader.h"
#include "coulomb/simulation/simulator.h"

namespace coulomb {
namespace {

namespace fs = std::filesystem;
using testing::contains;
using testing::run_cli;

const std::string kHumanoid = "/usr/share/mujoco/model/humanoid/humanoid.xml";

fs::path temp_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("coulomb_mjcf_cli_" + name + "_" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d;
}

nlohmann::json read_json(const fs::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in);
}

TEST(MjcfCliTest, SimulatesTheHumanoidSampleForFiveSeconds) {
  ASSERT_TRUE(fs::exists(kHumanoid)) << kHumanoid << " missing: install libmujoco-samples (scripts/install-deps.sh)";
  const fs::path out = temp_dir("humanoid");
  const auto r = run_cli({"simulate", kHumanoid, "-o", out.string(), "--duration", "5", "--no-html", "--quiet"});
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json stats = read_json(out / "stats.json");
  EXPECT_EQ(stats["failures"].get<int>(), 0);
  EXPECT_EQ(stats["time_step_s"].get<double>(), 0.005);  // <option timestep>
  EXPECT_EQ(stats["steps"].get<int>(), 1000);
  // The file's unsupported elements: none in humanoid.xml, so no "not supported" warning.
  EXPECT_FALSE(contains(r.err, "not supported")) << r.err;
  fs::remove_all(out);
}

// The other sample models coulomb simulates completely (humanoid100: 100 free objects, of which
// the ellipsoids collide as capsules; 22 humanoids): 5 s without a solver failure (0.5 s under
// COULOMB_TEST_SHORT, cli_runner.h).
TEST(MjcfCliTest, SimulatesTheOtherSupportedSamplesForFiveSeconds) {
  const double duration = testing::sweep_duration(5.0, 0.5);
  const int steps = static_cast<int>(std::lround(duration / 0.005));  // their <option timestep>: 5 ms
  for (const char* sample : {"humanoid100/humanoid100.xml", "humanoid/22_humanoids.xml"}) {
    const std::string file = std::string("/usr/share/mujoco/model/") + sample;
    ASSERT_TRUE(fs::exists(file)) << file;
    const fs::path out = temp_dir("sample");
    const auto r = run_cli({"simulate", file, "-o", out.string(), "--duration", std::to_string(duration),
                            "--no-html", "--quiet"});
    ASSERT_EQ(r.status, 0) << sample << ": " << r.err;
    const nlohmann::json stats = read_json(out / "stats.json");
    EXPECT_EQ(stats["failures"].get<int>(), 0) << sample;
    EXPECT_EQ(stats["steps"].get<int>(), steps) << sample;
    fs::remove_all(out);
  }
}

TEST(MjcfCliTest, InspectTakesAModelFile) {
  ASSERT_TRUE(fs::exists(kHumanoid));
  const auto r = run_cli({"inspect", kHumanoid, "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["num_dofs"].get<int>(), 27);
  ASSERT_EQ(j["robots"].size(), 1u);
  EXPECT_EQ(j["robots"][0]["format"], "mjcf");
  EXPECT_TRUE(j["robots"][0]["floating"].get<bool>());
}

TEST(MjcfCliTest, UrdfFileRunsDirectlyAndIsNotDumpedAsAYamlError) {
  const std::string urdf = std::string(COULOMB_SOURCE_DIR) + "/examples/models/spring_cylinder.urdf";
  const fs::path out = temp_dir("urdf");
  const auto r = run_cli({"simulate", urdf, "-o", out.string(), "--duration", "0.05", "--no-html", "--quiet"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(fs::exists(out / "stats.json"));
  fs::remove_all(out);
  // Where only a scene is read (io::load_scene), a URDF is one line naming what it is.
  try {
    io::load_scene(urdf);
    FAIL() << "expected SceneError";
  } catch (const io::SceneError& e) {
    const std::string what = e.what();
    EXPECT_TRUE(contains(what, "this is a URDF file (root element <robot>), not a scene")) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    EXPECT_LT(what.size(), 400u) << what;
  }
}

TEST(MjcfCliTest, SdfRunsAndUnknownFilesGetOneLine) {
  const fs::path dir = temp_dir("kinds");
  // A free SDF model (one box link, no joint to the world): run on the ground the loader adds.
  std::ofstream(dir / "model.sdf")
      << "<?xml version='1.0'?>\n<sdf version='1.9'><model name='m'><pose>0 0 0.5 0 0 0</pose><link name='box'>"
         "<inertial><mass>1</mass><inertia><ixx>0.01</ixx><iyy>0.01</iyy><izz>0.01</izz></inertia></inertial>"
         "<collision name='c'><geometry><box><size>0.1 0.1 0.1</size></box></geometry></collision></link></model>"
         "</sdf>\n";
  std::ofstream(dir / "data.json") << "{\"robots\": []}\n";
  std::ofstream(dir / "blob.bin", std::ios::binary) << std::string("\x00\x01\x02\x03 binary", 10);
  std::ofstream(dir / "page.xml") << "<html><body/></html>\n";
  const auto sdf = run_cli({"simulate", (dir / "model.sdf").string(), "-o", (dir / "out").string(), "--no-html", "-q",
                            "--duration", "0.5"});
  EXPECT_EQ(sdf.status, 0) << sdf.err;
  EXPECT_TRUE(fs::exists(dir / "out" / "stats.json"));
  for (const char* f : {"data.json", "blob.bin", "page.xml"}) {
    const auto r = run_cli({"simulate", (dir / f).string(), "-o", (dir / "out").string(), "--no-html"});
    EXPECT_EQ(r.status, 1) << f;
    EXPECT_TRUE(contains(r.err, "coulomb reads YAML scenes, URDF (<robot>), MJCF (<mujoco>) and SDFormat (<sdf>)"))
        << f << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << f << ": " << r.err;
  }
  fs::remove_all(dir);
}

TEST(MjcfExampleSceneTest, ArmHeldByItsServosAndBoxComesToRest) {
  io::Scene scene = io::load_scene(std::string(COULOMB_SOURCE_DIR) + "/examples/scenes/mjcf_arm.yaml");
  ASSERT_EQ(scene.actuators.size(), 3u);
  EXPECT_EQ(scene.time_step, 0.005);
  simulation::SimulatorParameters params;
  params.time_step = scene.time_step;
  const double duration = scene.duration;
  simulation::Simulator sim(std::move(scene), params);
  const auto& model = sim.model();
  int failures = 0;
  for (int i = 0; i < static_cast<int>(std::lround(duration / params.time_step)); ++i)
    if (sim.step().status != solvers::sap::SapSolverStatus::kSuccess) ++failures;
  EXPECT_EQ(failures, 0);
  // The box (half-size 5 cm) rests on the floor: centre at 0.05 m (minus the contact compression
  // m g / k ≈ 1e-5 m for 0.8 kg at k = 1e6 N/m, with margin), at rest.
  const auto& box = model.body(model.joint_body("arm/box_joint")).joint;
  EXPECT_NEAR(sim.q()[box.q_index + 2], 0.05, 1e-3);
  EXPECT_LT(sim.v().segment<6>(box.v_index).norm(), 1e-2);
  // The servos hold the arm near its set-point 0: the static deflection is the gravity torque
  // over the servo stiffness, τ_g / kp ≤ (1.7 kg · 9.81 · 0.2 m) / 100 ≈ 0.03 rad.
  for (const char* joint : {"arm/shoulder_yaw", "arm/shoulder_pitch", "arm/elbow"})
    EXPECT_LT(std::abs(sim.q()[model.body(model.joint_body(joint)).joint.q_index]), 0.05) << joint;
}

}  // namespace
}  // namespace coulomb
