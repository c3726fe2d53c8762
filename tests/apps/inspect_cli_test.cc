// End-to-end tests of `coulomb inspect`: runs the built binary (COULOMB_CLI_PATH) on example
// and hand-written scenes and checks the JSON and text output and the exit status.
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli_runner.h"
#include <nlohmann/json.hpp>

namespace {

namespace fs = std::filesystem;

using coulomb::testing::kCli;
using coulomb::testing::contains;
using coulomb::testing::RunResult;
using coulomb::testing::run_cli;
using coulomb::testing::shell_quote;
const std::string kScenes = std::string(COULOMB_SOURCE_DIR) + "/examples/scenes/";
const std::string kBadScenes = std::string(COULOMB_TEST_DATA_DIR) + "/bad_scenes/";



class InspectCliTest : public testing::Test {
 protected:
  void SetUp() override {
    if (kCli.empty() || !fs::exists(kCli)) GTEST_SKIP() << "the coulomb CLI was not built";
  }
};

// World poses at q0 and the lowest collision point: the base where q0 puts it, the feet frames
// (welded links) listed with their poses, and the lowest point = the lowest foot frame minus
// the foot sphere radius (0.02 m), its height above the ground plane at z = 0.
TEST_F(InspectCliTest, A1DropPosesAndLowestCollisionPoint) {
  const RunResult r = run_cli({"inspect", kScenes + "a1_drop.yaml", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  const nlohmann::json& base = j.at("bodies")[0].at("pose_W");
  for (int i = 0; i < 3; ++i) EXPECT_DOUBLE_EQ(base.at("position")[i].get<double>(), j.at("q0")[i].get<double>());
  for (int i = 0; i < 4; ++i) EXPECT_DOUBLE_EQ(base.at("quaternion")[i].get<double>(), j.at("q0")[3 + i].get<double>());
  double lowest_foot = 1e9;
  int feet = 0;
  for (const nlohmann::json& f : j.at("frames")) {
    const std::string name = f.at("name");
    if (name.size() > 5 && name.substr(name.size() - 5) == "_foot") {
      ++feet;
      lowest_foot = std::min(lowest_foot, f.at("pose_W").at("position")[2].get<double>());
    }
  }
  EXPECT_EQ(feet, 4);
  const nlohmann::json& low = j.at("robots")[0].at("lowest_collision_point");
  EXPECT_NEAR(low.at("position")[2].get<double>(), lowest_foot - 0.02, 1e-12);
  EXPECT_NEAR(low.at("height_above_ground").get<double>(), lowest_foot - 0.02, 1e-12);
  EXPECT_EQ(low.at("ground_height").get<double>(), 0.0);
  // The text output has the same sections.
  const RunResult t = run_cli({"inspect", kScenes + "a1_drop.yaml"});
  ASSERT_EQ(t.status, 0) << t.err;
  EXPECT_TRUE(contains(t.out, "world poses at q0")) << t.out;
  EXPECT_TRUE(contains(t.out, "lowest collision point")) << t.out;
  EXPECT_TRUE(contains(t.out, "m above the ground")) << t.out;
}

// The four-bar's loop constraint: listed with its bodies, rows and g(q0) ≈ 0 (the scene's
// initial angles close the loop); the text output names it.
TEST_F(InspectCliTest, FourBarListsItsConstraint) {
  const RunResult r = run_cli({"inspect", kScenes + "four_bar.yaml", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.at("constraints").size(), 1u);
  const nlohmann::json& c = j.at("constraints")[0];
  EXPECT_EQ(c.at("name"), "loop");
  EXPECT_EQ(c.at("type"), "ball");
  EXPECT_EQ(c.at("body_a"), "rocker_link");
  EXPECT_EQ(c.at("body_b"), "coupler_link");
  EXPECT_EQ(c.at("rows"), 3);
  EXPECT_EQ(c.at("stiffness"), "inf");
  for (int i = 0; i < 3; ++i) EXPECT_LT(std::abs(c.at("g0")[i].get<double>()), 1e-12);
  const RunResult t = run_cli({"inspect", kScenes + "four_bar.yaml"});
  ASSERT_EQ(t.status, 0) << t.err;
  EXPECT_TRUE(contains(t.out, "loop: ball (3 rows) rocker_link -> coupler_link, rigid")) << t.out;
}

TEST_F(InspectCliTest, A1DropJsonListsEighteenDofs) {
  const RunResult r = run_cli({"inspect", kScenes + "a1_drop.yaml", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("num_dofs").get<int>(), 18);
  EXPECT_EQ(j.at("dof_names").size(), 18u);
  EXPECT_EQ(j.at("dof_names")[0].get<std::string>(), "root_joint.wx");
  // Bodies: the floating base and 12 leg links, each with a name and a mass; they sum to the
  // A1's 13.741 kg (../shared/models/README.md).
  const nlohmann::json& bodies = j.at("bodies");
  ASSERT_EQ(bodies.size(), 13u);
  double mass = 0.0;
  for (const nlohmann::json& b : bodies) {
    EXPECT_TRUE(b.at("name").is_string());
    mass += b.at("mass").get<double>();
  }
  EXPECT_NEAR(mass, 13.741, 1e-9);
  EXPECT_NEAR(j.at("total_mass").get<double>(), 13.741, 1e-9);
  EXPECT_EQ(bodies[0].at("name").get<std::string>(), "base");
  EXPECT_EQ(bodies[0].at("joint_type").get<std::string>(), "floating");
  ASSERT_EQ(j.at("trees").size(), 1u);
  EXPECT_EQ(j.at("trees")[0].at("num_dofs").get<int>(), 18);
  ASSERT_EQ(j.at("robots").size(), 1u);
  EXPECT_TRUE(j.at("robots")[0].at("floating").get<bool>());
  EXPECT_GT(j.at("num_geometries").get<int>(), 13);
  // Dropped from 0.5 m: nothing touches at the initial state.
  EXPECT_EQ(j.at("contacts").size(), 0u);
  // Missing visual meshes of the A1 are notes on stderr, and in the JSON.
  EXPECT_TRUE(contains(r.err, "coulomb: note:")) << r.err;
  EXPECT_EQ(j.at("notes").size(), 13u);  // one per <mesh> of a1.urdf
}

TEST_F(InspectCliTest, BoxRestingOnTheGroundHasFourContacts) {
  const fs::path scene = fs::temp_directory_path() / ("coulomb_inspect_box_" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(scene) << R"(time_step: 0.01
contact: {mu: 0.6, stiffness: 1.0e6, dissipation_time: 0.01}
bodies:
  - name: ground
    fixed: true
    shapes: [{type: box, size: [2, 2, 0.2], position: [0, 0, -0.1]}]
  - name: box
    mass: 1.0
    shapes: [{type: box, size: [0.2, 0.2, 0.2]}]
    position: [0, 0, 0.1]
)";
  const RunResult r = run_cli({"inspect", scene.string(), "--json"});
  fs::remove(scene);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("num_dofs").get<int>(), 6);
  const nlohmann::json& contacts = j.at("contacts");
  ASSERT_EQ(contacts.size(), 4u) << contacts.dump(1);
  double x_sum = 0.0, y_sum = 0.0;
  for (const nlohmann::json& c : contacts) {
    EXPECT_EQ(c.at("body_a").get<std::string>(), "world");
    EXPECT_EQ(c.at("body_b").get<std::string>(), "box");
    EXPECT_EQ(c.at("geometry_a").get<std::string>(), "ground/shape0");
    EXPECT_EQ(c.at("geometry_b").get<std::string>(), "box/shape0");
    EXPECT_NEAR(c.at("distance").get<double>(), 0.0, 1e-9);
    const auto n = c.at("normal").get<std::vector<double>>();
    ASSERT_EQ(n.size(), 3u);
    EXPECT_NEAR(n[0], 0.0, 1e-9);
    EXPECT_NEAR(n[1], 0.0, 1e-9);
    EXPECT_NEAR(n[2], 1.0, 1e-9);
    const auto p = c.at("point").get<std::vector<double>>();
    ASSERT_EQ(p.size(), 3u);
    EXPECT_NEAR(std::abs(p[0]), 0.1, 1e-9);  // the corners of the box's bottom face
    EXPECT_NEAR(std::abs(p[1]), 0.1, 1e-9);
    EXPECT_NEAR(p[2], 0.0, 1e-9);
    x_sum += p[0];
    y_sum += p[1];
    EXPECT_NEAR(c.at("mu").get<double>(), 0.6, 1e-12);
  }
  EXPECT_NEAR(x_sum, 0.0, 1e-9);
  EXPECT_NEAR(y_sum, 0.0, 1e-9);
}

TEST_F(InspectCliTest, TextOutput) {
  const RunResult r = run_cli({"inspect", kScenes + "clutter.yaml"});
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* s : {"nv = 240", "trees (40)", "sphere_00", "box_01", "0.524", "contacts at the initial state",
                        "geometries: 45"})
    EXPECT_TRUE(contains(r.out, s)) << s << "\n" << r.out;
}

TEST_F(InspectCliTest, EveryExampleSceneInspects) {
  for (const auto& entry : fs::directory_iterator(kScenes)) {
    if (entry.path().extension() != ".yaml") continue;
    const RunResult r = run_cli({"inspect", entry.path().string(), "--json"});
    EXPECT_EQ(r.status, 0) << entry.path() << "\n" << r.err;
    if (r.status == 0) {
      EXPECT_NO_THROW(nlohmann::json::parse(r.out)) << entry.path();
    }
  }
}

TEST_F(InspectCliTest, BadSceneFailsWithTheMessage) {
  const std::string path = kBadScenes + "unknown_key.yaml";
  const RunResult r = run_cli({"inspect", path, "--json"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(contains(r.err, "coulomb: error: " + path + ":11: bodies[1].shapes[0].raduis: unknown key 'raduis'"))
      << r.err;

  const RunResult missing = run_cli({"inspect", kBadScenes + "no_such_scene.yaml"});
  EXPECT_EQ(missing.status, 1);
  EXPECT_TRUE(contains(missing.err, "no_such_scene.yaml: cannot read scene file")) << missing.err;

  const RunResult usage = run_cli({"inspect"});
  EXPECT_EQ(usage.status, 2);
}

TEST_F(InspectCliTest, HelpListsInspect) {
  const RunResult r = run_cli({"--help"});
  EXPECT_EQ(r.status, 0);
  EXPECT_TRUE(contains(r.out, "inspect")) << r.out;
}

}  // namespace
