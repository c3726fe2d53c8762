// Malformed scene files (tests/data/bad_scenes/*.yaml), each with one distinct fault: every one
// must raise io::SceneError whose message starts with "<file>:<line>: <key path>: " and states
// the fault. The expected line is the one marked "# ERROR" in the file.
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "coulomb/io/scene_loader.h"

namespace coulomb::io {
namespace {

namespace fs = std::filesystem;

const std::string kBadDir = std::string(COULOMB_TEST_DATA_DIR) + "/bad_scenes/";

/// 1-based number of the line containing "# ERROR" (0 if none).
int marked_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n)
    if (line.find("# ERROR") != std::string::npos) return n;
  return 0;
}

struct BadScene {
  const char* file;
  const char* key;        ///< key path named after "file:line: " ("" for syntax errors)
  const char* fragment;   ///< the statement of the fault
};

const BadScene kBadScenes[] = {
    {"unknown_key.yaml", "bodies[1].shapes[0].raduis", "unknown key 'raduis' (expected one of: type, name"},
    {"missing_required_key.yaml", "bodies[1]", "missing required key 'mass'"},
    {"negative_time_step.yaml", "time_step", "must be > 0 s, got -0.01"},
    {"negative_mu.yaml", "contact.mu", "must be >= 0, got -0.5"},
    {"negative_mass.yaml", "bodies[1].mass", "must be > 0 kg, got -1"},
    {"bad_shape_type.yaml", "bodies[0].shapes[0].type",
     "unknown shape type 'cone' (expected one of: sphere, box, capsule, cylinder, halfspace, convex_mesh, mesh)"},
    {"zero_radius.yaml", "bodies[0].shapes[0].radius", "must be > 0, got 0"},
    {"unknown_joint.yaml", "robots[0].joint_positions.FR_knee_joint",
     "unknown joint 'FR_knee_joint' in 'coulomb_quadruped' (its 1-dof joints: FR_hip_joint"},
    {"missing_urdf.yaml", "robots[0].urdf", "URDF file 'no_such_robot.urdf' not found"},
    {"wrong_type.yaml", "bodies[0].mass", "expected a number, got 'heavy'"},
    {"nan_value.yaml", "bodies[0].position[1]", "must be a finite number, got .nan"},
    {"bad_integrator.yaml", "integrator",
     "unknown integrator 'runge-kutta' (expected one of: implicit-euler, symplectic-euler, midpoint)"},
    {"bad_solver.yaml", "solver", "unknown solver 'pgs' (expected one of: sap, lstable)"},
    {"halfspace_free_body.yaml", "bodies[0].shapes[0]", "a half-space has infinite volume"},
    {"yaml_syntax_error.yaml", "", "YAML syntax error: end of sequence flow not found"},
    {"duplicate_key.yaml", "bodies[0].mass", "duplicate key 'mass' (first on line 5)"},
    {"rpy_and_quaternion.yaml", "bodies[0].quaternion", "give either rpy or quaternion, not both"},
    {"actuator_without_kp.yaml", "robots[0].actuators.FR_calf_joint", "missing required key 'kp'"},
    {"fixed_joint_position.yaml", "robots[0].joint_positions.FR_foot_fixed",
     "joint 'FR_foot_fixed' is a fixed joint"},
    {"bad_urdf.yaml", "robots[0].urdf", "nan_mass.urdf:6: link 'payload': <inertial><mass value> is not finite"},
    {"negative_box_size.yaml", "bodies[0].shapes[0].size[1]", "must be > 0 (full edge lengths), got -2"},
    {"duplicate_body_name.yaml", "bodies[1].name", "duplicate body name 'ball'"},
    {"wrong_vector_length.yaml", "gravity", "expected a list of 3 numbers, got a list of 2"},
    {"bad_boolean.yaml", "bodies[0].fixed", "expected true or false, got 'maybe'"},
    {"constraint_unknown_body.yaml", "constraints[0].body_b",
     "unknown body 'bobb' (expected a scene body, a robot link or 'world': world, bob)"},
    {"constraint_bad_type.yaml", "constraints[0].type",
     "unknown constraint type 'hinge' (expected one of: ball, weld, distance, joint)"},
    {"constraint_negative_length.yaml", "constraints[0].length", "must be > 0 m, got -0.5"},
    {"constraint_same_body.yaml", "constraints[0].body_b",
     "body_a 'wall' and body_b 'post' are the same rigid body 'world'"},
    {"constraint_bad_joint_type.yaml", "constraints[0].joint_type",
     "unknown joint type 'spherical' (expected one of: revolute, prismatic)"},
    {"constraint_negative_stiffness.yaml", "constraints[0].stiffness",
     "must be > 0 (N/m, N·m/rad on rotational rows) or .inf, got -1000000"},
};

TEST(SceneBadInputTest, EveryMalformedSceneGivesItsMessage) {
  for (const BadScene& bad : kBadScenes) {
    SCOPED_TRACE(bad.file);
    const std::string path = kBadDir + bad.file;
    ASSERT_TRUE(fs::exists(path));
    const int line = marked_line(path);
    ASSERT_GT(line, 0) << "no '# ERROR' marker";
    std::string prefix = path + ":" + std::to_string(line) + ": ";
    if (bad.key[0] != '\0') prefix += std::string(bad.key) + ": ";
    try {
      load_scene(path);
      ADD_FAILURE() << "no error for " << bad.file;
    } catch (const SceneError& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.rfind(prefix, 0), 0u) << "message: " << what << "\nexpected prefix: " << prefix;
      EXPECT_NE(what.find(bad.fragment), std::string::npos) << "message: " << what << "\nexpected: " << bad.fragment;
    }
  }
}

TEST(SceneBadInputTest, EveryFileInTheFolderIsCovered) {
  std::set<std::string> listed;
  for (const BadScene& bad : kBadScenes) listed.insert(bad.file);
  std::set<std::string> files;
  for (const auto& entry : fs::directory_iterator(kBadDir)) files.insert(entry.path().filename().string());
  EXPECT_EQ(listed, files);
  EXPECT_GE(files.size(), 10u);
}

TEST(SceneBadInputTest, StringScenes) {
  auto message = [](const std::string& yaml) {
    try {
      parse_scene(yaml, "inline.yaml");
    } catch (const SceneError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(message(""), "inline.yaml: the scene is empty");
  EXPECT_EQ(message("- 1\n- 2\n"), "inline.yaml:1: expected a mapping (key: value entries), got a list");
  EXPECT_EQ(message("time_step: 0.01\nbodies: {name: x}\n"),
            "inline.yaml:2: bodies: expected a list of bodies, got a mapping");
  EXPECT_EQ(message("duration: .inf\n"), "inline.yaml:1: duration: must be a finite number, got .inf");
  EXPECT_EQ(message("time_step: '0.01'\n"), "inline.yaml:1: time_step: expected a number, got '0.01'");
  EXPECT_EQ(message("collision: {margin: -1}\n"), "inline.yaml:1: collision.margin: must be >= 0 m, got -1");
  EXPECT_EQ(message("collision: {speculative: 2}\n"), "inline.yaml:1: collision.speculative: expected true or false, got '2'");
  EXPECT_EQ(message("bodies:\n  - {name: world, fixed: true}\n"),
            "inline.yaml:2: bodies[0].name: must be non-empty and not 'world' (the world body), got 'world'");
  EXPECT_EQ(message("bodies:\n  - {name: b, mass: 1, shapes: [{type: sphere, radius: 0.1}], collision_mask: -1}\n"),
            "inline.yaml:2: bodies[0].collision_mask: expected a non-negative integer (decimal or 0x hexadecimal), "
            "got '-1'");
  EXPECT_EQ(message("bodies:\n  - {name: b, fixed: true, linear_velocity: [1, 0, 0]}\n"),
            "inline.yaml:2: bodies[0].linear_velocity: a fixed body has no velocity (remove it or set fixed: false)");
  EXPECT_EQ(message("bodies:\n  - {name: b, mass: 1}\n"),
            "inline.yaml:2: bodies[0]: cannot compute the inertia of body 'b': it has no shapes (give shapes or "
            "inertia)");
  EXPECT_EQ(message("bodies:\n  - {name: b, mass: 1, inertia: [1, 1, 3, 0, 0, 0]}\n"),
            "inline.yaml:2: bodies[0].inertia: [ixx, iyy, izz, ixy, ixz, iyz] about the centre of mass: principal "
            "moments (1, 1, 3) kg·m² violate the triangle inequality I1 + I2 >= I3");
  EXPECT_EQ(message("contact: {stiffness: 0}\n"), "inline.yaml:1: contact.stiffness: must be > 0 N/m, got 0");
  EXPECT_EQ(message("contact: {dissipation_time: -1}\n"),
            "inline.yaml:1: contact.dissipation_time: must be >= 0 s, got -1");
  EXPECT_EQ(message("time_step: 0.01\ncontact_approximation: lagd\n"),
            "inline.yaml:2: contact_approximation: unknown contact approximation 'lagd' (expected one of: sap, "
            "similar, lagged)");
  EXPECT_EQ(message("contact: {hunt_crossley_dissipation: -2}\n"),
            "inline.yaml:1: contact.hunt_crossley_dissipation: must be >= 0 s/m, got -2");
  EXPECT_EQ(message("contact: {stiction_tolerance: 0}\n"),
            "inline.yaml:1: contact.stiction_tolerance: must be > 0 m/s, got 0");
  EXPECT_EQ(message("bodies:\n  - {name: b, mass: 1, shapes: [{type: sphere, radius: 0.1}],\n"
                    "     contact: {hunt_crossley_dissipation: -3}}\n"),
            "inline.yaml:3: bodies[0].contact.hunt_crossley_dissipation: must be >= 0 s/m, got -3");
}

TEST(SceneBadInputTest, ConstraintStringScenes) {
  auto message = [](const std::string& constraint) {
    const std::string yaml =
        "bodies:\n"
        "  - {name: a, mass: 1, shapes: [{type: sphere, radius: 0.1}]}\n"
        "  - {name: b, mass: 1, position: [1, 0, 0], shapes: [{type: sphere, radius: 0.1}]}\n"
        "constraints:\n  - " + constraint + "\n";
    try {
      parse_scene(yaml, "inline.yaml");
    } catch (const SceneError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(message("{type: ball, body_a: a, body_b: b}"), "(no error)");
  EXPECT_EQ(message("{body_a: a, body_b: b}"), "inline.yaml:5: constraints[0]: missing required key 'type'");
  EXPECT_EQ(message("{type: ball, body_a: a}"), "inline.yaml:5: constraints[0]: missing required key 'body_b'");
  EXPECT_EQ(message("{type: ball, body_a: a, body_b: b, lenght: 1}"),
            "inline.yaml:5: constraints[0].lenght: unknown key 'lenght' (expected one of: name, type, joint_type, "
            "body_a, body_b, point_a, point_b, frame_a, frame_b, axis, length, stiffness, damping, dissipation_time)");
  EXPECT_EQ(message("{type: weld, body_a: a, body_b: b, point_a: [0, 0, 0]}"),
            "inline.yaml:5: constraints[0].point_a: not used by a weld constraint (give frame_a)");
  EXPECT_EQ(message("{type: ball, body_a: a, body_b: b, length: 1}"),
            "inline.yaml:5: constraints[0].length: not used by a ball constraint (only a distance constraint has a "
            "length)");
  EXPECT_EQ(message("{type: joint, joint_type: revolute, body_a: a, body_b: b, axis: [0, 0, 0]}"),
            "inline.yaml:5: constraints[0].axis: must be a non-zero vector, got [0, 0, 0]");
  EXPECT_EQ(message("{type: joint, body_a: a, body_b: b}"),
            "inline.yaml:5: constraints[0]: missing required key 'joint_type'");
  EXPECT_EQ(message("{type: ball, body_a: a, body_b: b, damping: 1}"),
            "inline.yaml:5: constraints[0].damping: needs a finite stiffness (a rigid constraint is damped by the "
            "solver's near-rigid rule)");
  EXPECT_EQ(message("{type: ball, body_a: a, body_b: b, stiffness: 1e6, damping: 1, dissipation_time: 0.1}"),
            "inline.yaml:5: constraints[0].dissipation_time: give either damping or dissipation_time, not both");
  EXPECT_EQ(message("{type: ball, body_a: a, body_b: b, stiffness: 1e6, dissipation_time: -0.1}"),
            "inline.yaml:5: constraints[0].dissipation_time: must be >= 0 s, got -0.1");
  EXPECT_EQ(message("{type: distance, body_a: a, body_b: b, point_b: [-1, 0, 0]}"),
            "inline.yaml:5: constraints[0]: the two points coincide at the initial configuration: give length > 0");
  EXPECT_EQ(message("{type: ball, body_a: a, body_b: b, frame_b: {position: [0, 0, 0]}}"),
            "inline.yaml:5: constraints[0].frame_b: not used by a ball constraint (give point_b)");
  EXPECT_EQ(message("{type: weld, body_a: a, body_b: b, frame_a: {positon: [0, 0, 0]}}"),
            "inline.yaml:5: constraints[0].frame_a.positon: unknown key 'positon' (expected one of: position, rpy, "
            "quaternion)");
  EXPECT_EQ(message("{name: x, type: ball, body_a: a, body_b: b}\n  - {name: x, type: ball, body_a: world, body_b: b}"),
            "inline.yaml:6: constraints[1].name: duplicate constraint name 'x'");
}

TEST(SceneBadInputTest, UnreadableFile) {
  const std::string missing = kBadDir + "no_such_scene.yaml";
  try {
    load_scene(missing);
    ADD_FAILURE();
  } catch (const SceneError& e) {
    EXPECT_EQ(std::string(e.what()), missing + ": cannot read scene file: no such file");
  }
  EXPECT_THROW(load_scene(kBadDir), SceneError);
}

}  // namespace
}  // namespace coulomb::io
