// Every file in tests/data/bad_urdf/ holds exactly one fault (stated in its header comment).
// load_urdf must reject each with a UrdfError whose message names the file and the specific
// fault (element name, value or kind of error).
#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <typeinfo>
#include <vector>

#include <gtest/gtest.h>

#include "coulomb/io/urdf_loader.h"

namespace coulomb::io {
namespace {

namespace fs = std::filesystem;

const std::string kBadDir = std::string(COULOMB_TEST_DATA_DIR) + "/bad_urdf/";

struct BadUrdf {
  std::string file;                   ///< file name in tests/data/bad_urdf
  std::vector<std::string> expected;  ///< substrings the message must contain (besides the file name)
};

// One entry per file; UrdfBadInputFolderTest.EveryFileHasAnExpectation keeps the table and the folder in step.
const std::vector<BadUrdf> kBadUrdfs = {
    {"missing_parent_link.urdf", {"joint 'elbow'", "parent link 'ghost_link'", "not declared"}},
    {"missing_child_link.urdf", {"joint 'wrist'", "child link 'phantom_link'", "not declared"}},
    {"kinematic_cycle.urdf", {"cycle", "'loop_a'", "'loop_b'", "'loop_c'", "'j_ca'"}},
    {"two_parents.urdf", {"link 'tip'", "two joints", "'j1'", "'j2'"}},
    {"two_roots.urdf", {"root links", "'base'", "'stray_root'"}},
    {"duplicate_link.urdf", {"duplicate link name 'arm'"}},
    {"negative_mass.urdf", {"link 'thigh'", "<mass value>", "negative", "-1.5"}},
    {"nan_mass.urdf", {"link 'payload'", "<mass value>", "not finite", "nan"}},
    {"nan_origin.urdf", {"joint 'hip'", "<origin xyz>", "not finite", "0 nan 0.2"}},
    {"inf_inertia.urdf", {"link 'flywheel'", "<inertia ixx>", "not finite", "inf"}},
    {"non_numeric_value.urdf", {"joint 'lift'", "<limit velocity>", "not a number", "fast"}},
    {"non_psd_inertia.urdf", {"link 'shin'", "not positive semidefinite", "ixy=2"}},
    {"triangle_inequality.urdf", {"link 'rod'", "triangle inequality", "izz=1"}},
    {"unknown_joint_type.urdf", {"joint 'hinge_joint'", "unknown joint type 'hinge'"}},
    {"planar_joint.urdf", {"joint 'slider_plane'", "'planar'", "not supported"}},
    {"zero_axis.urdf", {"joint 'spin'", "<axis xyz>", "zero vector"}},
    {"lower_above_upper.urdf", {"joint 'elbow'", "<limit lower> 1.5", "<limit upper> -0.5"}},
    {"malformed_xml.urdf", {"malformed XML"}},
    {"negative_damping.urdf", {"joint 'ankle'", "<dynamics damping>", "negative", "-0.25"}},
};

class UrdfBadInputTest : public testing::TestWithParam<BadUrdf> {};

TEST_P(UrdfBadInputTest, ThrowsUrdfErrorNamingFileAndFault) {
  const BadUrdf& bad = GetParam();
  const std::string path = kBadDir + bad.file;
  ASSERT_TRUE(fs::is_regular_file(path)) << path;
  for (const bool floating : {false, true}) {
    UrdfOptions options;
    options.floating = floating;
    try {
      load_urdf(path, options);
      ADD_FAILURE() << path << " loaded without error (floating = " << floating << ")";
    } catch (const UrdfError& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.rfind(path, 0), 0u) << "message does not start with the file name: " << what;
      for (const std::string& s : bad.expected)
        EXPECT_NE(what.find(s), std::string::npos) << "message lacks \"" << s << "\": " << what;
    } catch (const std::exception& e) {
      ADD_FAILURE() << path << " threw a " << typeid(e).name() << " instead of UrdfError: " << e.what();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(UrdfBadFiles, UrdfBadInputTest, testing::ValuesIn(kBadUrdfs),
                         [](const testing::TestParamInfo<BadUrdf>& info) {
                           std::string name = info.param.file.substr(0, info.param.file.find('.'));
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

TEST(UrdfBadInputFolderTest, EveryFileHasAnExpectation) {
  std::set<std::string> on_disk, in_table;
  for (const auto& entry : fs::directory_iterator(kBadDir))
    if (entry.path().extension() == ".urdf") on_disk.insert(entry.path().filename().string());
  for (const BadUrdf& b : kBadUrdfs) in_table.insert(b.file);
  EXPECT_EQ(on_disk, in_table);
  EXPECT_GE(on_disk.size(), 10u);
}

}  // namespace
}  // namespace coulomb::io
