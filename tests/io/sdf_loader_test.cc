// The SDF loader against two independent truths:
//  - coulomb's URDF loader: every URDF of ../shared/models is converted to SDF by libsdformat
//    itself (sdf::Root::Load of the URDF, then the SDF text of its element tree), and the Model
//    add_sdf builds from that text must equal the Model add_urdf builds from the URDF;
//  - hand computation from the numbers written in hand-made SDF files (world with frames,
//    relative_to poses, an include through COULOMB_MODEL_PATH).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <sdf/sdf.hh>

#include "coulomb/io/sdf_loader.h"
#include "coulomb/io/urdf_loader.h"
#include "coulomb/multibody.h"
#include "io/io_test_util.h"

namespace coulomb::io {
namespace {

namespace fs = std::filesystem;
using math::Matrix3;
using math::Transform;
using math::Vector3;
using multibody::JointType;
using multibody::Model;

const std::string kSdfData = std::string(COULOMB_TEST_DATA_DIR) + "/sdf";

using testing::ScopedEnv;

/// A fresh temporary directory, removed at the end of the scope.
class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = fs::temp_directory_path() / ("coulomb_sdf_test_" + std::to_string(rd()));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

/// Tolerance of the URDF round trip: 1e-12, plus 10× what libsdformat's conversion moved the
/// joint origins (conversion_change; ~1e-16 for most models).
double g_slack = 0.0;

void expect_near(const Matrix3& a, const Matrix3& b, double tol, const std::string& what) {
  tol += 10.0 * g_slack;
  EXPECT_LE((a - b).cwiseAbs().maxCoeff(), tol) << what << "\n" << a << "\nvs\n" << b;
}
void expect_near(const Vector3& a, const Vector3& b, double tol, const std::string& what) {
  tol += 10.0 * g_slack;
  EXPECT_LE((a - b).cwiseAbs().maxCoeff(), tol) << what << ": " << a.transpose() << " vs " << b.transpose();
}
void expect_limit_eq(double a, double b, const std::string& what) {
  if (std::isinf(a) || std::isinf(b))
    EXPECT_EQ(a, b) << what;
  else
    EXPECT_NEAR(a, b, 1e-12) << what;
}

// ------------------------------------------------------------------------------------------
// URDF → (libsdformat) → SDF → add_sdf  vs  URDF → add_urdf

bool same_file(const std::string& a, const std::string& b) {
  if (a.empty() || b.empty()) return a == b;
  std::error_code ec;
  return fs::equivalent(a, b, ec);
}

/// Every *.urdf below ../shared/models, sorted.
std::vector<std::string> shared_urdfs() {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(std::string(COULOMB_SHARED_DIR) + "/models"))
    if (e.is_regular_file() && e.path().extension() == ".urdf") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

Eigen::Matrix3d rotation(const ignition::math::Pose3d& pose) {
  const ignition::math::Matrix3d R(pose.Rot());
  Eigen::Matrix3d out;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) out(r, c) = R(r, c);
  return out;
}

/// How much libsdformat's conversion moved the numbers of the joint origins: the largest change
/// (rotation-matrix entries, positions) between a URDF joint's <origin rpy xyz>, read from the
/// URDF text with a regular expression and turned into a rotation by hand, and the pose
/// libsdformat gives that joint relative to its parent link in the converted SDF. libsdformat
/// stores roll-pitch-yaw angles; near pitch = ±π/2 (gimbal lock) their extraction from a
/// quaternion is ill-conditioned (ur5_robot.urdf's pitch 1.57079632679 comes out as
/// 1.570796326794897, a rotation change of 4.9e-12); elsewhere the change is ~1e-16.
double conversion_change(const std::string& urdf, const fs::path& sdf_file) {
  sdf::Root root;
  root.Load(sdf_file.string());
  const sdf::Model* model = root.Model();
  const std::string text = testing::text_without_comments(urdf);
  const std::regex joint_re("<joint\\b([^>]*)>([\\s\\S]*?)</joint>");
  const std::regex name_re("name\\s*=\\s*\"([^\"]+)\"");
  const std::regex parent_re("<parent\\b[^>]*link\\s*=\\s*\"([^\"]+)\"");
  const std::regex origin_re("<origin\\b([^>]*)/?>");
  const std::regex rpy_re("rpy\\s*=\\s*\"([^\"]+)\"");
  const std::regex xyz_re("xyz\\s*=\\s*\"([^\"]+)\"");
  double delta = 0.0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), joint_re); it != std::sregex_iterator(); ++it) {
    std::smatch name, origin, rpy, xyz;
    const std::string attributes = (*it)[1].str(), body = (*it)[2].str();
    if (!std::regex_search(attributes, name, name_re) || !std::regex_search(body, origin, origin_re)) continue;
    const sdf::Joint* joint = model->JointByName(name[1].str());
    std::smatch parent;
    if (!std::regex_search(body, parent, parent_re)) continue;
    // Joints whose parent link was lumped into another by libsdformat are offset by the lumped
    // joint's origin: not comparable one to one (the Model comparison covers them).
    if (joint == nullptr || joint->PoseRelativeTo() != parent[1].str() || joint->ParentLinkName() != parent[1].str())
      continue;
    const std::string o = origin[1].str();
    double r[3] = {0, 0, 0}, p[3] = {0, 0, 0};
    if (std::regex_search(o, rpy, rpy_re)) std::istringstream(rpy[1].str()) >> r[0] >> r[1] >> r[2];
    if (std::regex_search(o, xyz, xyz_re)) std::istringstream(xyz[1].str()) >> p[0] >> p[1] >> p[2];
    const ignition::math::Pose3d& pose = joint->RawPose();
    delta = std::max(delta, (rotation(pose) - testing::rpy_by_hand(r[0], r[1], r[2])).cwiseAbs().maxCoeff());
    delta = std::max(delta, (Vector3(pose.Pos().X(), pose.Pos().Y(), pose.Pos().Z()) - Vector3(p[0], p[1], p[2]))
                                .cwiseAbs()
                                .maxCoeff());
  }
  return delta;
}

/// libsdformat's own conversion of a URDF: the SDF text of the parsed element tree, written to
/// `out`. Returns "" on success or libsdformat's first error.
std::string convert_with_libsdformat(const std::string& urdf, const fs::path& out) {
  sdf::Root root;
  const sdf::Errors errors = root.Load(urdf);
  if (!errors.empty()) return errors.front().Message();
  if (root.Model() == nullptr) return "no <model> in the converted file";
  std::ofstream(out) << root.Element()->ToString("");
  return "";
}

/// Compares what does not depend on libsdformat lumping fixed-joint links into their parents.
/// Our ModelBuilder fuses welded links into bodies too, so the moving bodies, their joints and
/// their (summed) spatial inertias coincide; the URDF Model additionally keeps the lumped links
/// as frames, which the SDF does not have (their frames are compared where both exist).
void compare_models(const Model& u, const Model& s, const std::string& name) {
  SCOPED_TRACE(name);
  ASSERT_EQ(u.num_bodies(), s.num_bodies());
  ASSERT_EQ(u.nq(), s.nq());
  ASSERT_EQ(u.nv(), s.nv());
  // The same joints. libsdformat writes a converted URDF's joints sorted by name (urdfdom keeps
  // them in a map), and add_sdf keeps the SDF's declaration order, so the coordinate order may
  // differ: coordinates are matched by name (perm_v[i] = index in s of u's coordinate i).
  std::vector<int> perm_v(u.nv()), perm_q(u.nq());
  for (int i = 0; i < u.nv(); ++i) {
    const auto it = std::find(s.dof_names().begin(), s.dof_names().end(), u.dof_names()[i]);
    ASSERT_NE(it, s.dof_names().end()) << u.dof_names()[i];
    perm_v[i] = static_cast<int>(it - s.dof_names().begin());
  }
  for (int i = 0; i < u.nq(); ++i) {
    const auto it = std::find(s.position_names().begin(), s.position_names().end(), u.position_names()[i]);
    ASSERT_NE(it, s.position_names().end()) << u.position_names()[i];
    perm_q[i] = static_cast<int>(it - s.position_names().begin());
  }
  EXPECT_NEAR(u.total_mass(), s.total_mass(), 1e-12 * std::max(1.0, u.total_mass()));
  for (int b = 1; b < u.num_bodies(); ++b) {
    const multibody::Body& bu = u.body(b);
    const int bs_index = s.joint_body(bu.joint.name);
    ASSERT_GE(bs_index, 1) << "joint " << bu.joint.name << " missing in the SDF model";
    const multibody::Body& bs = s.body(bs_index);
    const std::string what = "body " + bu.name + " (joint " + bu.joint.name + ")";
    EXPECT_EQ(bu.name, bs.name) << what;
    EXPECT_EQ(bu.joint.type, bs.joint.type) << what;
    EXPECT_EQ(u.body(bu.parent).name, s.body(bs.parent).name) << what;
    expect_near(bu.joint.X_PJ.R, bs.joint.X_PJ.R, 1e-12, what + " X_PJ.R");
    expect_near(bu.joint.X_PJ.p, bs.joint.X_PJ.p, 1e-12, what + " X_PJ.p");
    if (bu.joint.nv == 1) expect_near(bu.joint.axis, bs.joint.axis, 1e-12, what + " axis");
    expect_limit_eq(bu.joint.limits.lower, bs.joint.limits.lower, what + " lower");
    expect_limit_eq(bu.joint.limits.upper, bs.joint.limits.upper, what + " upper");
    expect_limit_eq(bu.joint.limits.effort, bs.joint.limits.effort, what + " effort");
    expect_limit_eq(bu.joint.limits.velocity, bs.joint.limits.velocity, what + " velocity");
    EXPECT_NEAR(bu.joint.damping, bs.joint.damping, 1e-12) << what;
    EXPECT_NEAR(bu.joint.friction, bs.joint.friction, 1e-12) << what;
    EXPECT_NEAR(bu.inertia.mass, bs.inertia.mass, 1e-12) << what;
    expect_near(bu.inertia.h, bs.inertia.h, 1e-12, what + " first moment");
    expect_near(bu.inertia.I_o, bs.inertia.I_o, 1e-12, what + " rotational inertia");
  }
  for (const multibody::Frame& fs_ : s.frames()) {
    const int fu = u.frame_index(fs_.name);
    EXPECT_EQ(u.body(u.frame(fu).body).name, s.body(fs_.body).name) << "frame " << fs_.name;
    expect_near(u.frame(fu).X_BF.R, fs_.X_BF.R, 1e-12, "frame " + fs_.name + " R");
    expect_near(u.frame(fu).X_BF.p, fs_.X_BF.p, 1e-12, "frame " + fs_.name + " p");
  }
  // Dynamics at random states: mass matrix and RNEA (with gravity) to 1e-12 relative.
  std::mt19937 rng(7);
  multibody::Workspace wu(u), ws(s);
  for (int trial = 0; trial < 5; ++trial) {
    const Eigen::VectorXd q = multibody::random_configuration(u, rng);
    const Eigen::VectorXd v = Eigen::VectorXd::Random(u.nv());
    const Eigen::VectorXd a = Eigen::VectorXd::Random(u.nv());
    Eigen::VectorXd qs(s.nq()), vs(s.nv()), as(s.nv());
    for (int i = 0; i < u.nq(); ++i) qs[perm_q[i]] = q[i];
    for (int i = 0; i < u.nv(); ++i) {
      vs[perm_v[i]] = v[i];
      as[perm_v[i]] = a[i];
    }
    const Eigen::MatrixXd Mu = multibody::crba(u, wu, q);
    const Eigen::MatrixXd Ms = multibody::crba(s, ws, qs);
    const Eigen::VectorXd tu = multibody::rnea(u, wu, q, v, a);
    const Eigen::VectorXd ts = multibody::rnea(s, ws, qs, vs, as);
    double dM = 0.0, dtau = 0.0;
    for (int i = 0; i < u.nv(); ++i) {
      dtau = std::max(dtau, std::abs(tu[i] - ts[perm_v[i]]));
      for (int j = 0; j < u.nv(); ++j) dM = std::max(dM, std::abs(Mu(i, j) - Ms(perm_v[i], perm_v[j])));
    }
    const double tol = 1e-12 + 10.0 * g_slack;
    EXPECT_LE(dM, tol * std::max(1.0, Mu.cwiseAbs().maxCoeff())) << "M, trial " << trial;
    EXPECT_LE(dtau, tol * std::max(1.0, tu.cwiseAbs().maxCoeff())) << "tau, trial " << trial;
  }
}

TEST(SdfLoaderTest, EveryUrdfOfSharedModelsRoundTripsThroughLibsdformat) {
  const std::vector<std::string> urdfs = shared_urdfs();
  ASSERT_GE(urdfs.size(), 1u);
  TempDir tmp;
  int compared = 0;
  for (const std::string& urdf : urdfs) {
    SCOPED_TRACE(urdf);
    const fs::path sdf_path = tmp.path() / (fs::path(urdf).stem().string() + ".sdf");
    const std::string failure = convert_with_libsdformat(urdf, sdf_path);
    if (!failure.empty()) {
      std::cout << "[ SKIPPED  ] " << urdf << ": libsdformat cannot convert it: " << failure << "\n";
      continue;
    }
    // Meshes keep their URDF file names (libsdformat turns package://PKG/ into model://PKG/):
    // the converted file lives in a temporary directory, so the URDF's directory and its
    // ancestors (where package PKG lies) are put on the model path.
    std::string model_path;
    for (fs::path d = fs::weakly_canonical(fs::path(urdf).parent_path()); d != d.parent_path(); d = d.parent_path())
      model_path += (model_path.empty() ? "" : ":") + d.string();
    const ScopedEnv env("COULOMB_MODEL_PATH", model_path);

    g_slack = conversion_change(urdf, sdf_path);
    std::cout << "[   INFO   ] " << urdf << ": libsdformat's conversion moved joint origins by " << g_slack
              << " (tolerance 1e-12 + 10 x that)\n";
    multibody::ModelBuilder probe;
    const UrdfAttachment plain = add_urdf(probe, urdf);
    const bool world_root = plain.root_link == "world";
    for (const bool floating : {false, true}) {
      if (world_root && floating) continue;
      multibody::ModelBuilder bu, bs;
      UrdfAttachOptions uo;
      uo.floating = floating;
      const UrdfAttachment ua = add_urdf(bu, urdf, uo);
      SdfAttachOptions so;
      so.base = floating ? SdfAttachOptions::Base::kAsFile : SdfAttachOptions::Base::kWelded;
      const SdfAttachment sa = add_sdf(bs, sdf_path.string(), so);
      ASSERT_EQ(sa.models.size(), 1u);
      EXPECT_EQ(sa.models[0].floating_joint, floating ? "root_joint" : "");
      const Model mu = bu.build(), ms = bs.build();
      compare_models(mu, ms, urdf + (floating ? " (floating)" : " (welded)"));
      // Collisions: as many, and each SDF one equals a URDF one (same body, type, dimensions,
      // mesh file and pose in the body frame).
      EXPECT_EQ(sa.collisions.size(), ua.collisions.size());
      for (const UrdfCollision& c : sa.collisions) {
        const multibody::Frame& f = ms.frame(ms.frame_index(c.link));
        const Transform X_BG = f.X_BF * c.X_LG;
        const bool found = std::any_of(ua.collisions.begin(), ua.collisions.end(), [&](const UrdfCollision& d) {
          const multibody::Frame& g = mu.frame(mu.frame_index(d.link));
          const Transform Y_BG = g.X_BF * d.X_LG;
          return mu.body(g.body).name == ms.body(f.body).name && d.type == c.type &&
                 (Y_BG.p - X_BG.p).cwiseAbs().maxCoeff() < 1e-12 && (Y_BG.R - X_BG.R).cwiseAbs().maxCoeff() < 1e-12 &&
                 (d.size - c.size).cwiseAbs().maxCoeff() < 1e-12 && std::abs(d.radius - c.radius) < 1e-12 &&
                 std::abs(d.length - c.length) < 1e-12 && same_file(d.mesh_path, c.mesh_path) &&
                 (d.mesh_scale - c.mesh_scale).cwiseAbs().maxCoeff() < 1e-12;
        });
        EXPECT_TRUE(found) << "SDF collision " << c.name << " of " << c.link << " has no URDF counterpart";
      }
    }
    ++compared;
  }
  g_slack = 0.0;
  std::cout << "[   INFO   ] compared " << compared << " of " << urdfs.size() << " URDF models\n";
  EXPECT_GE(compared, 1);
}

// ------------------------------------------------------------------------------------------
// A world: ground plane, a pendulum hanging from the world through frames, two includes

TEST(SdfLoaderTest, WorldWithTwoModelsAndIncludesThroughModelPath) {
  const ScopedEnv env("COULOMB_MODEL_PATH", kSdfData + "/models");
  const SdfModel loaded = load_sdf(kSdfData + "/worlds/two_models.sdf");
  const Model& model = loaded.model;
  const SdfAttachment& a = loaded.attachment;
  EXPECT_EQ(a.name, "yard");
  expect_near(a.gravity, Vector3(0, 0, -9.8), 0.0, "gravity");
  expect_near(model.gravity(), Vector3(0, 0, -9.8), 0.0, "model gravity");
  ASSERT_EQ(a.models.size(), 4u);
  EXPECT_EQ(a.models[0].name, "ground");
  EXPECT_TRUE(a.models[0].is_static);
  EXPECT_EQ(a.models[0].floating_joint, "");
  EXPECT_EQ(a.models[1].name, "pendulum");
  EXPECT_EQ(a.models[1].root_link, "world");
  EXPECT_EQ(a.models[2].name, "bot1");
  EXPECT_EQ(a.models[2].floating_joint, "bot1/root_joint");
  EXPECT_EQ(a.models[3].name, "bot2");
  EXPECT_EQ(a.models[3].floating_joint, "bot2/root_joint");
  // nv: pendulum 1 + two box bots (6 + 1 each).
  EXPECT_EQ(model.nv(), 1 + 2 * 7);
  EXPECT_EQ(model.nq(), 1 + 2 * 8);
  EXPECT_EQ(a.joints, (std::vector<std::string>{"pendulum/hinge", "bot1/spin", "bot2/spin"}));

  // The ground: a plane (half-space) fused into the world.
  ASSERT_GE(a.collisions.size(), 1u);
  EXPECT_EQ(a.collisions[0].type, UrdfCollision::Type::kPlane);
  EXPECT_EQ(a.collisions[0].link, "ground/floor");
  EXPECT_EQ(model.frame(model.frame_index("ground/floor")).body, 0);

  // The pendulum: the joint frame is at the pivot, the model frame's (0, 0, 0.5) = world
  // (0, 2, 2); the bob's frame 0.4 m below it; axis x of the model (= world).
  const int hinge = model.joint_body("pendulum/hinge");
  ASSERT_GE(hinge, 1);
  const multibody::Joint& j = model.body(hinge).joint;
  EXPECT_EQ(j.type, JointType::kRevolute);
  expect_near(j.X_PJ.p, Vector3(0, 2, 2), 1e-15, "pivot");
  expect_near(j.X_PJ.R, Matrix3::Identity(), 1e-15, "pivot rotation");
  expect_near(j.axis, Vector3::UnitX(), 1e-15, "axis");
  EXPECT_EQ(j.limits.lower, -2);
  EXPECT_EQ(j.limits.upper, 2);
  EXPECT_EQ(j.limits.effort, 50);
  EXPECT_EQ(j.limits.velocity, 7);
  EXPECT_EQ(j.damping, 0.3);
  EXPECT_EQ(j.friction, 0.1);
  EXPECT_EQ(model.body(hinge).name, "pendulum/bob::hinge");
  const multibody::Frame& bob = model.frame(model.frame_index("pendulum/bob"));
  EXPECT_EQ(bob.body, hinge);
  expect_near(bob.X_BF.p, Vector3(0, 0, -0.4), 1e-15, "bob frame");
  // Hand-computed dynamics: M = Ixx + m d² = 0.01 + 3 · 0.4² ; gravity torque m g d sin q.
  multibody::Workspace ws(model);
  Eigen::VectorXd q = loaded.q0;
  for (const double angle : {0.0, 0.3, -1.1}) {
    q[j.q_index] = angle;
    const Eigen::MatrixXd M = multibody::crba(model, ws, q);
    EXPECT_NEAR(M(j.v_index, j.v_index), 0.01 + 3 * 0.16, 1e-14);
    const Eigen::VectorXd g = multibody::generalized_gravity(model, ws, q);
    EXPECT_NEAR(g[j.v_index], 3 * 9.8 * 0.4 * std::sin(angle), 1e-13);
  }
  // The capsule collision keeps its pose in the link frame.
  const auto rod = std::find_if(a.collisions.begin(), a.collisions.end(),
                                [](const UrdfCollision& c) { return c.name == "rod"; });
  ASSERT_NE(rod, a.collisions.end());
  EXPECT_EQ(rod->type, UrdfCollision::Type::kCapsule);
  EXPECT_EQ(rod->link, "pendulum/bob");
  EXPECT_EQ(rod->radius, 0.01);
  EXPECT_EQ(rod->length, 0.3);
  expect_near(rod->X_LG.p, Vector3(0, 0, 0.2), 0.0, "rod pose");

  // bot1: the include's pose replaces the model's own; bot2 keeps the model's <pose> 0 0 0.5.
  const SdfModelAttachment& bot1 = a.models[2];
  expect_near(bot1.X_W_root.p, Vector3(1, 0, 0.3), 1e-15, "bot1 position");
  Matrix3 Rz;
  Rz << 0, -1, 0, 1, 0, 0, 0, 0, 1;
  expect_near(bot1.X_W_root.R, Rz, 1e-15, "bot1 yaw 90 degrees");
  expect_near(a.models[3].X_W_root.p, Vector3(0, 0, 0.5), 1e-15, "bot2 position");
  const multibody::Joint& f1 = model.body(model.joint_body("bot1/root_joint")).joint;
  EXPECT_EQ(f1.type, JointType::kFloating);
  EXPECT_EQ(loaded.q0.segment<3>(f1.q_index), Vector3(1, 0, 0.3));
  EXPECT_NEAR(std::abs(loaded.q0[f1.q_index + 3]), std::sqrt(0.5), 1e-15);
  EXPECT_NEAR(std::abs(loaded.q0[f1.q_index + 6]), std::sqrt(0.5), 1e-15);
  // Each box bot: 2.5 kg in all; the rotor's joint is at its origin 0.25 m above the chassis.
  const multibody::Joint& spin = model.body(model.joint_body("bot1/spin")).joint;
  expect_near(spin.X_PJ.p, Vector3(0, 0, 0.25), 1e-15, "rotor joint");
  EXPECT_EQ(spin.limits.lower, -std::numeric_limits<double>::infinity());
  EXPECT_NEAR(model.total_mass(), 3 + 2 * 2.5, 1e-12);
  // Mass matrix of a free box bot at its initial pose: the translational block is 2.5 kg · 1.
  const Eigen::MatrixXd M = multibody::crba(model, ws, loaded.q0);
  EXPECT_LE((M.block<3, 3>(f1.v_index + 3, f1.v_index + 3) - 2.5 * Matrix3::Identity()).cwiseAbs().maxCoeff(), 1e-12);
  // The rotor's inertia about the spin axis, 0.002 kg·m², is its diagonal entry.
  EXPECT_NEAR(M(spin.v_index, spin.v_index), 0.002, 1e-15);

  // Without COULOMB_MODEL_PATH the include is not found: file:line of the <uri>.
  const ScopedEnv none("COULOMB_MODEL_PATH", "");
  try {
    load_sdf(kSdfData + "/worlds/two_models.sdf");
    FAIL() << "expected SdfError";
  } catch (const SdfError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("two_models.sdf:"), std::string::npos) << msg;
    EXPECT_NE(msg.find("model://box_bot"), std::string::npos) << msg;
  }
}

TEST(SdfLoaderTest, PrefixWeldedAndFloatingOptions) {
  const ScopedEnv env("COULOMB_MODEL_PATH", kSdfData + "/models");
  const std::string bot = kSdfData + "/models/box_bot/model.sdf";
  {
    multibody::ModelBuilder b;
    SdfAttachOptions o;
    o.prefix = "r/";
    o.base = SdfAttachOptions::Base::kWelded;
    o.X_W_file = Transform(Matrix3::Identity(), Vector3(0, 0, 1));
    const SdfAttachment a = add_sdf(b, bot, o);
    const Model m = b.build();
    EXPECT_EQ(m.nv(), 1);
    EXPECT_EQ(a.models[0].root_link, "r/chassis");
    EXPECT_EQ(a.models[0].floating_joint, "");
    // Welded at X_W_file · <model pose> = (0, 0, 1.5).
    EXPECT_EQ(m.frame(m.frame_index("r/chassis")).body, 0);
    expect_near(m.frame(m.frame_index("r/chassis")).X_BF.p, Vector3(0, 0, 1.5), 1e-15, "welded chassis");
  }
  {
    multibody::ModelBuilder b;
    const SdfAttachment a = add_sdf(b, bot);
    EXPECT_EQ(a.models[0].floating_joint, "root_joint");
    EXPECT_EQ(b.build().nv(), 7);
  }
}

TEST(SdfLoaderTest, BallJointIsASphericalJoint) {
  // The joint frame is 0.8 m above the bob's origin (its <pose> is in the child's frame): the
  // body sits at the joint, the bob's frame 0.8 m below it.
  const SdfModel loaded = load_sdf(kSdfData + "/ball_pendulum.sdf");
  const Model& model = loaded.model;
  ASSERT_EQ(model.nq(), 4);
  ASSERT_EQ(model.nv(), 3);
  const int b = model.joint_body("pivot");
  const multibody::Joint& j = model.body(b).joint;
  EXPECT_EQ(j.type, JointType::kBall);
  expect_near(j.X_PJ.p, Vector3(0, 0, 2), 1e-15, "pivot");
  expect_near(model.frame(model.frame_index("bob")).X_BF.p, Vector3(0, 0, -0.8), 1e-15, "bob frame");
  EXPECT_EQ(loaded.attachment.models[0].root_link, "world");
  // Conical pendulum from the file's numbers: tilted by θ and spinning about the vertical at
  // ω² = g / (L cos θ), it precesses steadily (zero acceleration; spherical bob inertia).
  const double L = 0.8, g = 9.81, theta = 0.4, omega = std::sqrt(g / (L * std::cos(theta)));
  Eigen::VectorXd q(4), v(3);
  q << std::cos(theta / 2), std::sin(theta / 2), 0, 0;
  v << 0, 0, omega;
  multibody::Workspace ws(model);
  EXPECT_LE(multibody::aba(model, ws, q, v, Eigen::VectorXd::Zero(3)).norm(), 1e-12);
}

TEST(SdfLoaderTest, IsSdfFileLooksAtTheRootElement) {
  EXPECT_TRUE(is_sdf_file(kSdfData + "/worlds/two_models.sdf"));
  EXPECT_TRUE(is_sdf_file(kSdfData + "/models/box_bot/model.sdf"));
  EXPECT_FALSE(is_sdf_file(kSdfData + "/models/box_bot/model.config"));
  EXPECT_FALSE(is_sdf_file(std::string(COULOMB_SHARED_DIR) + "/models/a1.urdf"));
  EXPECT_FALSE(is_sdf_file(kSdfData + "/no_such_file.sdf"));
}

// ------------------------------------------------------------------------------------------
// Bad input: every file of tests/data/bad_sdf holds one fault (its header comment says which).

struct BadSdf {
  std::string file;
  int line;                           ///< expected "file:line:" (0: no line)
  std::vector<std::string> expected;  ///< substrings the message must hold
};

const std::vector<BadSdf> kBadSdfs = {
    {"unknown_element.sdf", 8, {"link 'base'", "bogus_element", "not defined in SDF"}},
    {"bad_number.sdf", 9, {"link 'upper'", "<inertial><mass>", "not a number", "'1.x5'"}},
    {"nan_pose.sdf", 12, {"joint 'shoulder'", "<pose>"}},
    {"negative_mass.sdf", 8, {"link 'payload'", "<mass>", "negative", "-2.5"}},
    {"missing_mesh.sdf", 6, {"collision 'hull'", "meshes/no_such_shell.stl", "not found"}},
    {"missing_include.sdf", 6, {"model://no_such_model"}},
    {"kinematic_loop.sdf", 0, {"kinematic loop", "'j_ab'", "'j_bc'", "'j_ca'"}},
    {"two_parents.sdf", 10, {"link 'tip'", "two joints", "'j1'", "'j2'"}},
    {"universal_joint.sdf", 7, {"joint 'cross'", "'universal'", "not supported"}},
    {"nested_model.sdf", 4, {"model 'outer'", "nested", "'inner'"}},
    {"zero_axis.sdf", 10, {"joint 'spin'", "<xyz>", "zero vector"}},
    {"malformed_xml.sdf", 0, {"malformed XML"}},
    {"lower_above_upper.sdf", 10, {"joint 'knee_joint'", "<lower> 1.5", "<upper> -0.5"}},
    {"bad_version.sdf", 3, {"<sdf version> 'x1.8'", "not a version number"}},
};

class SdfBadInputTest : public ::testing::TestWithParam<BadSdf> {};

TEST_P(SdfBadInputTest, ThrowsSdfErrorNamingFileLineAndFault) {
  const BadSdf& bad = GetParam();
  const std::string path = std::string(COULOMB_TEST_DATA_DIR) + "/bad_sdf/" + bad.file;
  ASSERT_TRUE(fs::is_regular_file(path)) << path;
  const ScopedEnv env("COULOMB_MODEL_PATH", "");
  try {
    load_sdf(path);
    FAIL() << bad.file << ": expected SdfError";
  } catch (const SdfError& e) {
    const std::string msg = e.what();
    const std::string head = bad.line > 0 ? path + ":" + std::to_string(bad.line) + ":" : path + ":";
    EXPECT_EQ(msg.rfind(head, 0), 0u) << "expected the message to start with " << head << "\n" << msg;
    for (const std::string& s : bad.expected) EXPECT_NE(msg.find(s), std::string::npos) << "'" << s << "' not in: " << msg;
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, SdfBadInputTest, ::testing::ValuesIn(kBadSdfs),
                         [](const ::testing::TestParamInfo<BadSdf>& info) {
                           std::string name = fs::path(info.param.file).stem().string();
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

TEST(SdfBadInputFolderTest, EveryFileHasAnExpectation) {
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(std::string(COULOMB_TEST_DATA_DIR) + "/bad_sdf"))
    if (e.path().extension() == ".sdf") files.push_back(e.path().filename().string());
  std::sort(files.begin(), files.end());
  std::vector<std::string> table;
  for (const BadSdf& b : kBadSdfs) table.push_back(b.file);
  std::sort(table.begin(), table.end());
  EXPECT_EQ(files, table);
}

}  // namespace
}  // namespace coulomb::io
