// Issue 18 (reliability under bad input and faults): each defect found by adversarial testing,
// reproduced here end to end on the built `coulomb` binary (COULOMB_CLI_PATH) or on the library
// call that crashed, with the fix's expected behaviour: a clean error naming the file, field and
// value (exit 1 or 2), or an output folder a reader can trust.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "coulomb/geometry/shape.h"

namespace {

namespace fs = std::filesystem;

using coulomb::testing::contains;
using coulomb::testing::kCli;
using coulomb::testing::RunResult;
using coulomb::testing::run_cli;
using coulomb::testing::shell_quote;

const std::string kIncline = std::string(COULOMB_SOURCE_DIR) + "/examples/scenes/incline.yaml";

class ReliabilityCliTest : public testing::Test {
 protected:
  void SetUp() override {
    if (kCli.empty() || !fs::exists(kCli)) GTEST_SKIP() << "the coulomb CLI was not built";
    dir_ = fs::temp_directory_path() /
           ("coulomb_reliability_" + std::to_string(::getpid()) + "_" +
            testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  fs::path write(const std::string& name, const std::string& text) const {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  static std::string read(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  fs::path dir_;
};

// A two-link robot with mass (welded unless the scene floats it).
const char* kArmUrdf = R"(<robot name="arm">
  <link name="base">
    <inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><geometry><box size="0.1 0.1 0.1"/></geometry></collision>
  </link>
  <link name="upper">
    <inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><geometry><sphere radius="0.05"/></geometry></collision>
  </link>
  <joint name="shoulder" type="revolute">
    <parent link="base"/><child link="upper"/><origin xyz="0 0 0.2"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="10" velocity="10"/>
  </joint>
</robot>
)";

std::string scene_with_robot(const std::string& urdf, const std::string& extra) {
  return "time_step: 0.01\nduration: 0.05\nbodies:\n  - {name: ground, fixed: true, shapes: [{type: halfspace}]}\n"
         "robots:\n  - urdf: " + urdf + "\n" + extra;
}

// --- Crashes -----------------------------------------------------------------------------

// A dimension near 1e155 or more overflowed when squared inside FCL's broadphase: segfault while
// the CollisionWorld was built (here: `inspect` and `simulate` exited with SIGSEGV, status -1).
TEST_F(ReliabilityCliTest, HugeShapeDimensionsAreRejectedWithFileFieldAndValue) {
  const std::string prefix = "time_step: 0.01\nduration: 0.02\nbodies:\n";
  struct Case {
    std::string body, field;
  };
  const std::vector<Case> cases = {
      {"  - {name: floor, fixed: true, shapes: [{type: box, size: [1.0e160, 1, 1]}]}\n", "bodies[0].shapes[0].size[0]"},
      {"  - {name: ball, mass: 1, inertia: [0.01, 0.01, 0.01, 0, 0, 0], shapes: [{type: sphere, radius: 1.0e200}]}\n",
       "bodies[0].shapes[0].radius"},
      {"  - {name: rod, mass: 1, inertia: [0.01, 0.01, 0.01, 0, 0, 0], shapes: [{type: capsule, radius: 0.1, "
       "length: 2.0e6}]}\n",
       "bodies[0].shapes[0].length"},
      {"  - {name: speck, mass: 1, inertia: [0.01, 0.01, 0.01, 0, 0, 0], shapes: [{type: sphere, radius: 1.0e-9}]}\n",
       "bodies[0].shapes[0].radius"}};
  for (const Case& c : cases) {
    const fs::path scene = write("huge.yaml", prefix + c.body);
    for (const char* command : {"inspect", "simulate"}) {
      std::vector<std::string> args = {command, scene.string()};
      if (std::string(command) == "simulate") args.insert(args.end(), {"-o", (dir_ / "out").string(), "-q"});
      const RunResult r = run_cli(args);
      EXPECT_EQ(r.status, 1) << command << " " << c.body << r.err;
      EXPECT_TRUE(contains(r.err, scene.string() + ":4: " + c.field + ": must be in [1e-06, 1000000] m, got "))
          << r.err;
    }
  }
  // The same through a URDF <collision>: the URDF file, its line, the link and the field.
  for (const std::string geometry : {"<sphere radius=\"1e160\"/>", "<cylinder radius=\"0.1\" length=\"3e155\"/>",
                                     "<box size=\"1 1e170 1\"/>"}) {
    write("huge.urdf", "<robot name=\"r\">\n<link name=\"base\">\n"
                       "<inertial><mass value=\"1\"/><inertia ixx=\"0.1\" iyy=\"0.1\" izz=\"0.1\" ixy=\"0\" ixz=\"0\" "
                       "iyz=\"0\"/></inertial>\n<collision><geometry>" +
                           geometry + "</geometry></collision>\n</link>\n</robot>\n");
    const fs::path scene = write("huge_urdf.yaml", scene_with_robot("huge.urdf", "    floating: true\n"));
    const RunResult r = run_cli({"inspect", scene.string()});
    EXPECT_EQ(r.status, 1) << geometry << r.err;
    EXPECT_TRUE(contains(r.err, "huge.urdf:2: link 'base': <collision><")) << r.err;
    EXPECT_TRUE(contains(r.err, "m is outside [1e-06, 1000000] m")) << r.err;
  }
}

// The library's own check, for scenes built in code (Python): Shape::validate, which the
// CollisionWorld's constructor calls on every geometry before FCL sees it.
TEST(ReliabilityGeometryTest, ShapeValidateRefusesShapesOutsideThePhysicalRange) {
  using coulomb::geometry::Shape;
  EXPECT_NO_THROW(Shape::Sphere(coulomb::geometry::kMaxShapeDimension).validate("s"));
  EXPECT_NO_THROW(Shape::Box({1e-6, 1.0, 1e6}).validate("s"));
  for (const Shape& s : {Shape::Sphere(1e160), Shape::Box({1, 1e156, 1}), Shape::Cylinder(0.1, 1e7),
                         Shape::Capsule(1e-7, 1.0)}) {
    try {
      s.validate("ball");
      ADD_FAILURE() << "accepted " << coulomb::geometry::shape_type_name(s.type);
    } catch (const std::invalid_argument& e) {
      EXPECT_TRUE(contains(e.what(), "ball: ")) << e.what();
      EXPECT_TRUE(contains(e.what(), "m is outside [1e-06, 1000000] m")) << e.what();
    }
  }
  std::vector<coulomb::math::Vector3> vertices = {{0, 0, 0}, {2e6, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  const Shape far = Shape::ConvexMesh(vertices, {{{0, 2, 1}}, {{0, 1, 3}}, {{0, 3, 2}}, {{1, 2, 3}}});
  EXPECT_THROW(far.validate("hull"), std::invalid_argument);
}

// 10,000 nested elements inside a <link> (70 kB) overflowed the stack in the recursive
// check_numeric_attributes (5,000 under ASan): exit by SIGSEGV.
TEST_F(ReliabilityCliTest, DeeplyNestedUrdfIsAnErrorNotAStackOverflow) {
  std::string nested = "<robot name=\"r\">\n<link name=\"base\">";
  for (int i = 0; i < 10000; ++i) nested += "<a>";
  for (int i = 0; i < 10000; ++i) nested += "</a>";
  nested += "</link>\n</robot>\n";
  const fs::path urdf = write("nested.urdf", nested);
  EXPECT_GE(fs::file_size(urdf), 70000u);
  const RunResult r = run_cli({"dynamics", urdf.string()});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(contains(r.err, urdf.string() + ":2: elements are nested more than 64 levels deep")) << r.err;

  // Below the cap the (now iterative) walk still reaches every depth: a NaN 40 levels down.
  std::string deep = "<robot name=\"r\">\n<link name=\"base\">";
  for (int i = 0; i < 40; ++i) deep += "<a>";
  deep += "\n<origin xyz=\"nan 0 0\"/>";
  for (int i = 0; i < 40; ++i) deep += "</a>";
  deep += "</link>\n</robot>\n";
  const fs::path urdf2 = write("deep.urdf", deep);
  const RunResult r2 = run_cli({"dynamics", urdf2.string()});
  EXPECT_EQ(r2.status, 1) << r2.err;
  EXPECT_TRUE(contains(r2.err, urdf2.string() + ":3: link 'base': ")) << r2.err;
  EXPECT_TRUE(contains(r2.err, "<origin xyz> is not finite: 'nan 0 0'")) << r2.err;
}

// --- Silent or partial results -------------------------------------------------------------

// A full disk: RLIMIT_FSIZE in the child (with SIGXFSZ ignored, so writes fail with EFBIG)
// stops trajectory.csv at 16 kB. The run must exit non-zero naming the incomplete file, and
// leave nothing under the final names that passes for a complete result.
TEST_F(ReliabilityCliTest, FullDiskFailsNamingTheIncompleteFile) {
  if (std::system("sh -c 'trap \"\" XFSZ; ulimit -f 32' 2>/dev/null") != 0)
    GTEST_SKIP() << "sh cannot set RLIMIT_FSIZE (ulimit -f) here";
  const fs::path out = dir_ / "out";
  const fs::path err = dir_ / "stderr";
  const std::string command = "sh -c " + shell_quote("trap '' XFSZ; ulimit -f 32; exec " + shell_quote(kCli) +
                                                     " simulate " + shell_quote(kIncline) + " -o " +
                                                     shell_quote(out.string()) + " -q --no-html") +
                              " 2>" + shell_quote(err.string());
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status)) << command;
  EXPECT_EQ(WEXITSTATUS(status), 1) << read(err);
  const std::string message = read(err);
  EXPECT_TRUE(contains(message, (out / "trajectory.csv").string())) << message;
  EXPECT_TRUE(contains(message, "the file is incomplete")) << message;
  EXPECT_FALSE(fs::exists(out / "trajectory.csv"));
  EXPECT_FALSE(fs::exists(out / "steps.csv"));
  ASSERT_TRUE(fs::exists(out / "stats.json"));
  const nlohmann::json stats = nlohmann::json::parse(read(out / "stats.json"));
  EXPECT_NE(stats.at("status").get<std::string>(), "complete");
}

// Outputs of an earlier run never pass for this run's: a --no-html run after a full run leaves
// no replay.html; stats.json says "complete" only at the end; links at output names are
// replaced, never written through.
TEST_F(ReliabilityCliTest, OutputFolderContract) {
  const fs::path out = dir_ / "out";
  RunResult r = run_cli({"simulate", kIncline, "-o", out.string(), "-q", "--duration", "0.1"});
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* f : {"stats.json", "trajectory.csv", "steps.csv", "replay.html", "report.html"})
    EXPECT_TRUE(fs::is_regular_file(out / f)) << f;
  nlohmann::json stats = nlohmann::json::parse(read(out / "stats.json"));
  EXPECT_EQ(nlohmann::ordered_json::parse(read(out / "stats.json")).begin().key(), "status");  // written first
  EXPECT_EQ(stats.at("status").get<std::string>(), "complete");

  r = run_cli({"simulate", kIncline, "-o", out.string(), "-q", "--duration", "0.1", "--no-html"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(fs::exists(out / "replay.html"));
  EXPECT_FALSE(fs::exists(out / "report.html"));
  for (const auto& entry : fs::directory_iterator(out))
    EXPECT_EQ(entry.path().extension() == ".partial", false) << entry.path();

  // Links at every output name, pointing outside the folder.
  const fs::path outside = dir_ / "outside";
  fs::create_directories(outside);
  for (const char* f : {"stats.json", "trajectory.csv", "steps.csv", "replay.html", "report.html", "stats.json.partial",
                        "trajectory.csv.partial"}) {
    std::ofstream(outside / f) << "precious";
    fs::remove(out / f);
    fs::create_symlink(outside / f, out / f);
  }
  r = run_cli({"simulate", kIncline, "-o", out.string(), "-q", "--duration", "0.1"});
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* f : {"stats.json", "trajectory.csv", "steps.csv", "replay.html", "report.html", "stats.json.partial",
                        "trajectory.csv.partial"}) {
    EXPECT_EQ(read(outside / f), "precious") << f;
    EXPECT_FALSE(fs::is_symlink(out / f)) << f;
  }
  stats = nlohmann::json::parse(read(out / "stats.json"));
  EXPECT_EQ(stats.at("status").get<std::string>(), "complete");
  EXPECT_EQ(stats.at("steps").get<int>(), 20);
}

// `dynamics --v 1e308,1e308` printed null (NaN) as a result with exit 0.
TEST_F(ReliabilityCliTest, DynamicsRefusesNonFiniteResults) {
  const std::string model = std::string(COULOMB_SHARED_DIR) + "/models/double_pendulum_simple.urdf";
  for (bool json : {true, false}) {
    std::vector<std::string> args = {"dynamics", model, "--v", "1e308,1e308"};
    if (json) args.push_back("--json");
    const RunResult r = run_cli(args);
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_TRUE(contains(r.err, model + ": bias[joint1] = ")) << r.err;
    EXPECT_TRUE(contains(r.err, "is not finite: the values given to --q, --v, or the model's masses, inertias or "
                                "lengths, are too large"))
        << r.err;
  }
  // The same model at a large but representable speed still answers: bias = C(q, v) v grows as v².
  const RunResult ok = run_cli({"dynamics", model, "--v", "1e100,0", "--json"});
  ASSERT_EQ(ok.status, 0) << ok.err;
  const nlohmann::json j = nlohmann::json::parse(ok.out);
  EXPECT_TRUE(j.at("bias")[0].is_number());
}

// Inputs `inspect` accepted and `simulate` could not run ("SapProblem: A block 0 is not
// positive definite" / "... is not finite" at step 1): refused at load time naming the field.
TEST_F(ReliabilityCliTest, UnsimulatableInitialStatesAreRejectedAtLoadTime) {
  write("massless.urdf", R"(<robot name="ghost">
  <link name="base"><collision><geometry><box size="0.1 0.1 0.1"/></geometry></collision></link>
  <link name="arm"><collision><geometry><sphere radius="0.05"/></geometry></collision></link>
  <joint name="j" type="revolute"><parent link="base"/><child link="arm"/><origin xyz="0 0 0.1"/>
    <axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
</robot>
)");
  const fs::path massless =
      write("massless.yaml", scene_with_robot("massless.urdf", "    floating: true\n    position: [0, 0, 1]\n"));
  for (const char* command : {"inspect", "simulate"}) {
    std::vector<std::string> args = {command, massless.string()};
    if (std::string(command) == "simulate") args.insert(args.end(), {"-o", (dir_ / "out").string(), "-q"});
    const RunResult r = run_cli(args);
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_TRUE(contains(r.err, massless.string() + ":6: robots[0].urdf: the floating tree rooted at body 'base' "
                                                    "has total mass 0 kg"))
        << r.err;
    EXPECT_FALSE(contains(r.err, "SapProblem")) << r.err;
  }
  write("arm.urdf", kArmUrdf);
  // 1e160 rad/s: ½ I v² overflows. 1e6 rad/s is finite and still accepted (a huge but
  // representable energy; SAP reports what it makes of it).
  const fs::path fast =
      write("fast.yaml", scene_with_robot("arm.urdf", "    joint_velocities: {shoulder: 1.0e160}\n"));
  const RunResult r = run_cli({"inspect", fast.string()});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(contains(r.err, fast.string() + ":7: robots[0].joint_velocities: the initial velocities of the tree "
                                              "rooted at body 'upper' (largest |v| 1e+160) give kinetic energy inf J"))
      << r.err;
  const fs::path ok = write("ok.yaml", scene_with_robot("arm.urdf", "    joint_velocities: {shoulder: 1.0e6}\n"));
  EXPECT_EQ(run_cli({"inspect", ok.string()}).status, 0);
}

// --rel-tolerance inf made every solve "succeed" in 0 iterations; nan and negative values were
// accepted.
TEST_F(ReliabilityCliTest, RelToleranceOutsideItsRangeIsAUsageError) {
  for (const char* value : {"inf", "nan", "-1e-6", "0", "1", "-inf"}) {
    const RunResult r = run_cli({"simulate", kIncline, "-o", (dir_ / "out").string(), "-q", "--no-html",
                                 "--rel-tolerance", value});
    EXPECT_EQ(r.status, 2) << value << r.err;
    EXPECT_TRUE(contains(r.err, "--rel-tolerance must be in (0, 1), got ")) << r.err;
  }
}

// Option audit (issue 18): every numeric option of every command refuses values outside its
// documented range with exit status 2, naming the option and the value as written in short form.
// Found: `id --friction-edges 100000000` crashed (SIGSEGV) allocating the polygon;
// `id --ground-height 1e308` failed inside the QP ("conic QP: non-finite data"); values were
// printed with std::to_string (a 309-digit number for 1e308, "-1.000000" for -1).
TEST_F(ReliabilityCliTest, EveryNumericOptionRefusesValuesOutsideItsRange) {
  const std::string a1 = std::string(COULOMB_SHARED_DIR) + "/models/a1.urdf";
  const std::string fclib = std::string(COULOMB_SHARED_DIR) + "/fclib/Box_Stacks-i0122-82-5.hdf5";
  const std::string out = (dir_ / "out").string();
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"id", a1, "--friction-edges", "100000000"}, "--friction-edges must be in 3 … 64, got 100000000"},
      {{"id", a1, "--friction-edges", "2"}, "--friction-edges must be in 3 … 64, got 2"},
      {{"id", a1, "--ground-height", "1e308"}, "--ground-height must be a number in [-1e6, 1e6] m, got 1e+308"},
      {{"id", a1, "--ground-height", "nan"}, "--ground-height must be a number in [-1e6, 1e6] m, got nan"},
      {{"id", a1, "--dt", "-1"}, "--dt must be a finite number > 0 s, got -1"},
      {{"id", a1, "--mu", "inf"}, "--mu must be a finite number >= 0, got inf"},
      {{"id", a1, "--max-distance", "-0.5"}, "--max-distance must be a finite number >= 0 m, got -0.5"},
      {{"bench", kIncline, "--perturb", "1e308"}, "--perturb must be in [0, 1e-3] m, got 1e+308"},
      {{"bench", kIncline, "--time-step", "1e-400"}, "--time-step must be a finite number > 0 s, got 0"},
      {{"bench", kIncline, "--steps", "0"}, "--steps must be >= 1, got 0"},
      {{"bench", kIncline, "--states", "-3"}, "--states must be >= 1, got -3"},
      {{"simulate", kIncline, "-o", out, "--duration", "-2"}, "--duration must be a finite number > 0 s, got -2"},
      {{"simulate", kIncline, "-o", out, "--output-rate", "nan"}, "--output-rate must be a finite number > 0 Hz, got nan"},
      {{"fclib", fclib, "--tolerance", "1e-400"}, "--tolerance must be in (0, 1), got 0"},
      {{"fclib", fclib, "--beta", "2"}, "--beta must be in (0, 1], got 2"},
      {{"fclib", fclib, "--sigma", "inf"}, "--sigma must be in (0, 1], got inf"},
      {{"fclib", fclib, "--repeats", "0"}, "--repeats must be >= 1, got 0"},
      {{"fclib", fclib, "--max-iterations", "-3"}, "--max-iterations must be >= 1, got -3"},
  };
  for (const Case& c : cases) {
    const RunResult r = run_cli(c.args);
    std::string command;
    for (const std::string& a : c.args) command += a + " ";
    EXPECT_EQ(r.status, 2) << command << "\n" << r.err;
    EXPECT_TRUE(contains(r.err, "coulomb: error: " + c.message)) << command << "\n" << r.err;
    EXPECT_FALSE(fs::exists(out)) << command;
  }
}

// A run longer than int's steps names where the duration and the time step came from: the
// option or the scene's key (it said "--duration 1e+300 s at --time-step 0.001 s" for values read
// from the scene file).
TEST_F(ReliabilityCliTest, TooManyStepsNamesWhereDurationAndTimeStepCameFrom) {
  const std::string scene = (dir_ / "long.yaml").string();
  std::ofstream(scene) << "time_step: 0.001\nduration: 1.0e300\n"
                          "bodies:\n  - {name: ball, mass: 1, shapes: [{type: sphere, radius: 0.1}]}\n";
  const std::string out = (dir_ / "out").string();
  RunResult r = run_cli({"simulate", scene, "-o", out, "-q", "--no-html"});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(contains(r.err, scene + ": duration 1e+300 s at time_step 0.001 s needs 1e+303 steps, more than the "
                              "2147483647 a run can take"))
      << r.err;
  r = run_cli({"simulate", scene, "-o", out, "-q", "--no-html", "--duration", "1e12", "--time-step", "1e-6"});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "--duration 1e+12 s at --time-step 1e-06 s needs 1e+18 steps")) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "out" / "stats.json"));
}

// Non-UTF-8 bytes reached nlohmann::json: `inspect --json` failed with a bare
// "[json.exception.type_error.316]", and a run from a scene path with byte 0xFF lost its
// stats.json after all its steps.
TEST_F(ReliabilityCliTest, NonUtf8NamesAreRejectedAndPathsEscaped) {
  std::string urdf = kArmUrdf;
  urdf.replace(urdf.find("name=\"upper\""), 12, "name=\"upp\xff" "er\"");
  urdf.replace(urdf.find("link=\"upper\""), 12, "link=\"upp\xff" "er\"");
  write("latin.urdf", urdf);
  const fs::path scene = write("latin.yaml", scene_with_robot("latin.urdf", ""));
  const RunResult r = run_cli({"inspect", scene.string(), "--json"});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "latin.urdf:6: <link name>: not valid UTF-8 (byte 0xFF at offset 3)")) << r.err;
  EXPECT_FALSE(contains(r.err, "json.exception")) << r.err;

  const fs::path odd = dir_ / "incline\xff.yaml";
  fs::copy_file(kIncline, odd);
  const fs::path out = dir_ / "out";
  const RunResult s = run_cli({"simulate", odd.string(), "-o", out.string(), "-q", "--duration", "0.05"});
  EXPECT_EQ(s.status, 0) << s.err;
  const nlohmann::json stats = nlohmann::json::parse(read(out / "stats.json"));
  EXPECT_EQ(stats.at("status").get<std::string>(), "complete");
  EXPECT_TRUE(contains(stats.at("scene").get<std::string>(), "incline\xef\xbf\xbd.yaml"));  // U+FFFD
}

}  // namespace
