// Every file in tests/data/bad_mjcf/ holds one fault (stated in its header comment; the
// include_cycle_b.xml helper is the other half of include_cycle.xml). add_mjcf must reject each
// with an MjcfError whose message starts with "FILE:LINE: " and names the element and the value.
// The same files through the CLI (`coulomb simulate FILE`) exit with status 1 and print the message.
#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <typeinfo>
#include <vector>

#include <gtest/gtest.h>

#include "cli_runner.h"
#include "coulomb/io/mjcf_loader.h"

namespace coulomb::io {
namespace {

namespace fs = std::filesystem;

const std::string kBadDir = std::string(COULOMB_TEST_DATA_DIR) + "/bad_mjcf/";

struct BadMjcf {
  std::string file;                   ///< in tests/data/bad_mjcf
  std::string location;               ///< "FILE:LINE" the message must start with (FILE relative to kBadDir)
  std::vector<std::string> expected;  ///< substrings the message must contain
};

const std::vector<BadMjcf> kBadMjcfs = {
    {"unknown_element.xml", "unknown_element.xml:5", {"unknown element <geometry>", "inside <body>"}},
    {"bad_number.xml", "bad_number.xml:6", {"<geom name='ball'>", "'size'", "not a number", "'0.1x'"}},
    {"nan_position.xml", "nan_position.xml:4", {"<body name='arm'>", "'pos'", "not finite", "nan"}},
    {"missing_mesh.xml", "missing_mesh.xml:4", {"<mesh name='hull'>", "mesh file not found", "no_such_mesh.stl"}},
    {"missing_include.xml", "missing_include.xml:3", {"<include>", "cannot read included file", "no_such_file.xml"}},
    {"include_cycle.xml", "", {"include_cycle_b.xml:3", "<include>", "include cycle", "include_cycle.xml"}},
    {"unknown_class.xml", "unknown_class.xml:9", {"<geom>", "unknown default class 'heavy'"}},
    {"negative_mass.xml", "negative_mass.xml:6", {"<inertial>", "'mass'", ">= 0", "-2"}},
    {"negative_geom_mass.xml", "negative_geom_mass.xml:6", {"<geom name='bob'>", "'mass'", "-0.5"}},
    {"unknown_joint_type.xml", "unknown_joint_type.xml:5", {"<joint name='elbow'>", "'type'", "'revolute'", "hinge"}},
    {"unknown_attribute.xml", "unknown_attribute.xml:6", {"<geom>", "unknown attribute 'radius'", "'0.1'"}},
    {"malformed_xml.xml", "malformed_xml.xml", {"malformed XML"}},
    {"wrong_count.xml", "wrong_count.xml:5", {"<joint name='hinge'>", "'axis'", "expected 3 numbers, got 2", "'0 1'"}},
    {"duplicate_body.xml", "duplicate_body.xml:8", {"<body name='link'>", "duplicate body name 'link'"}},
    {"unknown_actuator_joint.xml", "unknown_actuator_joint.xml:10", {"<motor>", "unknown joint 'knee'"}},
    {"negative_size.xml", "negative_size.xml:6", {"<geom name='rod'>", "'size'", "-0.05 0.2"}},
    {"plane_on_body.xml", "plane_on_body.xml:6", {"<geom name='floor'>", "plane", "worldbody"}},
    {"nested_free_joint.xml", "nested_free_joint.xml:8", {"<freejoint name='loose_joint'>", "free joint", "world"}},
    {"bad_range.xml", "bad_range.xml:5", {"<joint name='elbow'>", "'range'", "lower 30", "upper -30"}},
    {"wrong_root.xml", "wrong_root.xml:2", {"root element is <robot>", "expected <mujoco>"}},
};

class MjcfBadInputTest : public ::testing::TestWithParam<BadMjcf> {};

TEST_P(MjcfBadInputTest, ThrowsMjcfErrorWithFileLineElementAndValue) {
  const BadMjcf& bad = GetParam();
  const std::string path = kBadDir + bad.file;
  ASSERT_TRUE(fs::is_regular_file(path)) << path;
  try {
    multibody::ModelBuilder builder("bad");
    add_mjcf(builder, path);
    ADD_FAILURE() << path << " loaded without error";
  } catch (const MjcfError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind(kBadDir + bad.location, 0), 0u) << "message does not start with " << bad.location << ": "
                                                          << what;
    for (const std::string& s : bad.expected)
      EXPECT_NE(what.find(s), std::string::npos) << "message lacks \"" << s << "\": " << what;
  } catch (const std::exception& e) {
    ADD_FAILURE() << path << " threw a " << typeid(e).name() << " instead of MjcfError: " << e.what();
  }
}

TEST_P(MjcfBadInputTest, CliExitsWithStatusOne) {
  if (testing::kCli.empty()) GTEST_SKIP() << "coulomb_cli not built";
  const BadMjcf& bad = GetParam();
  if (bad.file == "wrong_root.xml") GTEST_SKIP() << "a URDF is a valid model file for the CLI";
  const std::string out = (fs::temp_directory_path() / ("coulomb_bad_mjcf_" + bad.file)).string();
  const testing::RunResult r =
      testing::run_cli({"simulate", kBadDir + bad.file, "-o", out, "--duration", "0.01", "--no-html", "--quiet"});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(testing::contains(r.err, bad.expected.front())) << r.err;
  // One error line, not a dump of the file.
  EXPECT_LE(std::count(r.err.begin(), r.err.end(), '\n'), 2) << r.err;
  fs::remove_all(out);
}

INSTANTIATE_TEST_SUITE_P(MjcfBadFiles, MjcfBadInputTest, ::testing::ValuesIn(kBadMjcfs),
                         [](const ::testing::TestParamInfo<BadMjcf>& info) {
                           return info.param.file.substr(0, info.param.file.find('.'));
                         });

TEST(MjcfBadInputFolderTest, EveryFileHasAnExpectation) {
  std::set<std::string> on_disk, in_table;
  for (const auto& entry : fs::directory_iterator(kBadDir))
    if (entry.path().extension() == ".xml" && entry.path().filename() != "include_cycle_b.xml")
      on_disk.insert(entry.path().filename().string());
  for (const BadMjcf& b : kBadMjcfs) in_table.insert(b.file);
  EXPECT_EQ(on_disk, in_table);
}

}  // namespace
}  // namespace coulomb::io
