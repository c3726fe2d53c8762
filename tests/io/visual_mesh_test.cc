// Visual geometry (issue 14): the <visual> elements of example-robot-data's Panda in UrdfModel and
// Scene, the DAE meshes read with their materials' colours, the vertex-clustering decimation
// (keeps the bounding box, meets the triangle budget) and replay.html's embedded visual meshes.
#include <algorithm>
#include <filesystem>
#include <regex>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "coulomb/geometry/mesh_loader.h"
#include "coulomb/geometry/visual_mesh.h"
#include "coulomb/io/replay_writer.h"
#include "coulomb/io/scene_loader.h"
#include "coulomb/io/urdf_loader.h"
#include "io/io_test_util.h"

namespace coulomb {
namespace {

namespace fs = std::filesystem;

const std::string kRobots = std::string(COULOMB_SOURCE_DIR) + "/../shared/models/example-robot-data/robots";
const std::string kPanda = kRobots + "/panda_description/urdf/panda.urdf";

int count_in_file(const std::string& path, const std::string& pattern) {
  const std::string text = testing::text_without_comments(path);
  const std::regex re(pattern);
  return static_cast<int>(std::distance(std::sregex_iterator(text.begin(), text.end(), re), std::sregex_iterator()));
}

TEST(VisualMesh, PandaUrdfVisuals) {
  const io::UrdfModel urdf = io::load_urdf(kPanda);
  // Independent count: the <visual> elements of the file.
  const int expected = count_in_file(kPanda, "<visual[\\s>]");
  ASSERT_EQ(expected, 11);
  ASSERT_EQ(static_cast<int>(urdf.visuals.size()), expected);
  std::set<std::string> links;
  for (const io::UrdfVisual& v : urdf.visuals) {
    EXPECT_EQ(v.type, io::UrdfVisual::Type::kMesh);
    ASSERT_FALSE(v.mesh_path.empty()) << v.mesh_filename;
    EXPECT_TRUE(fs::is_regular_file(v.mesh_path)) << v.mesh_path;
    EXPECT_EQ(fs::path(v.mesh_path).extension(), ".dae");
    EXPECT_FALSE(v.has_rgba);  // the Panda's colours are in its DAE files
    links.insert(v.link);
  }
  EXPECT_TRUE(links.count("panda_link0") && links.count("panda_hand") && links.count("panda_leftfinger"));
  const io::UrdfVisual& v0 = urdf.visuals.front();
  EXPECT_EQ(v0.link, "panda_link0");
  EXPECT_TRUE(fs::equivalent(v0.mesh_path, kRobots + "/panda_description/meshes/visual/link0.dae"));
  // No note: every visual mesh was found.
  for (const std::string& n : urdf.notes) EXPECT_EQ(n.find("<visual> mesh"), std::string::npos) << n;
}

TEST(VisualMesh, PandaSceneVisualsAndColours) {
  const scene::Scene scene = io::load_scene(std::string(COULOMB_SOURCE_DIR) + "/examples/scenes/panda_mesh.yaml");
  ASSERT_EQ(scene.visuals.size(), 11u);
  int on_world = 0;
  for (const geometry::VisualGeometry& v : scene.visuals) {
    EXPECT_EQ(v.type, geometry::VisualGeometry::Type::kMesh);
    EXPECT_GE(v.body, 0);
    EXPECT_LT(v.body, scene.model.num_bodies());
    on_world += v.body == 0;  // panda_link0 is welded to the world
  }
  EXPECT_EQ(on_world, 1);
  // The hand's DAE: several materials, light grey and dark grey diffuse colours.
  const auto hand = std::find_if(scene.visuals.begin(), scene.visuals.end(),
                                 [](const geometry::VisualGeometry& v) { return v.name.rfind("panda_hand/", 0) == 0; });
  ASSERT_NE(hand, scene.visuals.end());
  const geometry::VisualMesh mesh = geometry::load_visual_mesh(hand->mesh_file, hand->mesh_scale);
  EXPECT_GT(mesh.parts.size(), 1u);
  bool dark = false, light = false;
  for (const geometry::VisualMesh::Part& p : mesh.parts) {
    EXPECT_TRUE(p.has_rgba);
    dark = dark || p.rgba[0] < 0.3;
    light = light || p.rgba[0] > 0.85;
  }
  EXPECT_TRUE(dark && light);
  // The hand is about 20 cm wide (along y).
  const auto [lo, hi] = mesh.bounding_box();
  EXPECT_NEAR(hi.y() - lo.y(), 0.2, 0.03);
}

TEST(VisualMesh, DecimationKeepsBoundingBoxAndMeetsBudget) {
  const geometry::VisualMesh mesh = geometry::load_visual_mesh(kRobots + "/panda_description/meshes/visual/link6.dae");
  ASSERT_GT(mesh.num_triangles(), 20000);
  for (int budget : {20000, 5000, 1000}) {
    const geometry::VisualMesh small = geometry::decimate(mesh, budget);
    EXPECT_LE(small.num_triangles(), budget);
    EXPECT_GT(small.num_triangles(), budget / 4) << "the finest grid within the budget";
    const auto [lo, hi] = mesh.bounding_box();
    const auto [slo, shi] = small.bounding_box();
    const math::Vector3 size = hi - lo;
    for (int c = 0; c < 3; ++c) {
      EXPECT_LE(std::abs(slo[c] - lo[c]), 0.01 * size[c]) << "budget " << budget << " axis " << c;
      EXPECT_LE(std::abs(shi[c] - hi[c]), 0.01 * size[c]) << "budget " << budget << " axis " << c;
    }
    for (const geometry::VisualMesh::Part& p : small.parts)
      for (const std::array<int, 3>& t : p.triangles) {
        EXPECT_NE(t[0], t[1]);
        EXPECT_NE(t[1], t[2]);
        EXPECT_NE(t[0], t[2]);
        for (int k : t) EXPECT_LT(k, static_cast<int>(p.vertices.size()));
      }
  }
  // Under the budget: unchanged.
  EXPECT_EQ(geometry::decimate(mesh, 1000000).num_triangles(), mesh.num_triangles());
}

TEST(VisualMesh, ScaleAppliesPerAxis) {
  const std::string file = kRobots + "/panda_description/meshes/visual/finger.dae";
  const geometry::VisualMesh a = geometry::load_visual_mesh(file);
  const geometry::VisualMesh b = geometry::load_visual_mesh(file, math::Vector3(2.0, 1.0, 0.5));
  const auto [alo, ahi] = a.bounding_box();
  const auto [blo, bhi] = b.bounding_box();
  EXPECT_NEAR(bhi.x() - blo.x(), 2.0 * (ahi.x() - alo.x()), 1e-9);
  EXPECT_NEAR(bhi.y() - blo.y(), ahi.y() - alo.y(), 1e-9);
  EXPECT_NEAR(bhi.z() - blo.z(), 0.5 * (ahi.z() - alo.z()), 1e-9);
  EXPECT_THROW(geometry::load_visual_mesh(kRobots + "/no_such_file.dae"), geometry::MeshError);
}

TEST(VisualMesh, ReplayEmbedsEachMeshOnceWithinBudget) {
  const scene::Scene scene = io::load_scene(std::string(COULOMB_SOURCE_DIR) + "/examples/scenes/panda_mesh.yaml");
  io::ReplayOptions options;
  options.max_triangles_per_mesh = 3000;
  io::ReplayRecorder recorder(scene.model, scene.geometries, scene.visuals, options);
  recorder.record(0.0, scene.q0, contact::ContactSet{}, Eigen::VectorXd(), true);
  const std::string html = recorder.html();
  EXPECT_TRUE(recorder.notes().empty());
  // The finger mesh is used by both fingers and stored once: 10 distinct files for 11 visuals.
  const std::regex file_re("\"file\":\"([^\"]+)\",\"file_triangles\":(\\d+),\"triangles\":(\\d+)");
  int files = 0;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), file_re); it != std::sregex_iterator(); ++it) {
    ++files;
    EXPECT_LE(std::stoi((*it)[3].str()), 3000) << (*it)[1].str();
  }
  EXPECT_EQ(files, 10);
  EXPECT_LT(html.size(), 3000000u);
}

}  // namespace
}  // namespace coulomb
