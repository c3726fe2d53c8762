// Oracle test: coulomb's joint-space dynamics against MuJoCo 2.2.2 (libmujoco-dev), which
// loads the same URDF files directly with mj_loadXML.
//
// Compared at random states (seeded; 1-dof joints uniform inside their limits, or in [−π, π]
// when unlimited; velocities and accelerations uniform in [−2, 2]):
//   mass matrix   coulomb crba()         vs  mj_fullM(qM)  after mj_forward
//   bias          coulomb bias_forces()  vs  qfrc_bias     (C v + gravity)
//   inverse dyn.  coulomb rnea()         vs  mj_rne(m, d, 1, ·) with qacc set (M a + bias)
// Error measure: max |coulomb − MuJoCo| / max |MuJoCo| (with a 1e-12 absolute floor).
//
// Two comparisons per model:
//  1. Algorithms (tolerance 1e-8, measured ~1e-13): coulomb's model rebuilt with MuJoCo's own
//     body inertias, so that both libraries integrate the same rigid bodies.
//  2. End to end from the URDF (tolerance 1e-7, measured ≤ 4e-8): coulomb's model as its URDF
//     loader builds it. MuJoCo's compiler stores each body's rotational inertia as principal
//     moments + a principal-axes quaternion, found by an iterative eigen-solver (mju_eig3); for
//     the URDFs with off-diagonal inertia entries (Panda, A1) the inertia it reconstructs
//     differs from the file's: by ~1e-11 kg·m² on the A1 (FR_hip iyz 4.66e-7 → 4.6599732e-7)
//     and by up to 4.6e-7 kg·m² on panda_link1, whose two large principal moments are nearly
//     equal (ixx 0.70337, iyy 0.70661; iyz 0.019169 → 0.0191694570), where the eigen-solver
//     converges slowly. That shows up as a few 1e-8 relative in M. The KUKA iiwa (diagonal
//     inertias) agrees to 1e-15 end to end. The test also checks every body's 6×6 spatial
//     inertia against MuJoCo's to 1e-6 of its largest entry (measured: 9e-8 Panda, 6e-10 A1,
//     5e-18 iiwa), so that a real loader error cannot hide in comparison 2.
//
// Coordinates are matched by joint name (mj_id2name(mjOBJ_JOINT) vs Model::dof_names() /
// position_names(); qpos address jnt_qposadr, dof address jnt_dofadr). MuJoCo's URDF importer
// fuses links welded by fixed joints (for the fixed-base A1 even the trunk into the world) and
// drops massless links; joint-space quantities do not change.
//
// Armature: MuJoCo adds dof_armature to the diagonal of qM (not in mj_rne). The importer sets
// it to 0 for these files; the test forces it to 0 anyway, because a URDF has no armature and
// coulomb's M is the pure rigid-body mass matrix. Joint damping (Panda) only enters MuJoCo's
// qfrc_passive, which is not compared.
//
// Floating base (A1): MuJoCo gets a temporary copy of a1.urdf whose `floating_base` joint is
// `floating` (a free joint on the trunk, whose frame is the `base` link's: identity origin);
// coulomb loads a1.urdf with UrdfOptions{.floating = true} (floating joint on the massless
// `base`, trunk welded to it). coulomb's floating v = [ω_W, ṗ_WB] (both in the world, the free
// joint's frame; joint.h); MuJoCo's free-joint qvel = [ṗ_WB (world), ω_B (body)]. With R = R_WB:
//   v_mj = T v_c,  T = [[0, 1], [Rᵀ, 0]] on the free joint, identity on the 12 leg joints.
// Generalized forces map by power equivalence, τ_c = Tᵀ τ_mj, so M_c = Tᵀ M_mj T. Accelerations
// map without a Ṫv term: d/dt(Rᵀ ω_W) = Rᵀ ω̇_W − ω_B × ω_B = Rᵀ ω̇_W, so a_mj = T a_c (the
// Tdot_v field below stays zero):
//   rnea_c(q, v, a) = Tᵀ mj_rne(a_mj),   bias_c = Tᵀ qfrc_bias.
#include <mujoco/mujoco.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "coulomb/io/urdf_loader.h"
#include "coulomb/multibody.h"

namespace coulomb {
namespace {

namespace mb = multibody;
using Eigen::MatrixXd;
using Eigen::VectorXd;

constexpr double kAlgorithmTol = 1e-8;  // same inertias in both libraries
constexpr double kUrdfTol = 1e-7;       // MuJoCo's inertia import error, see the top of the file
constexpr double kInertiaTol = 1e-6;    // body inertias, relative to the largest entry (see top)
constexpr double kAbsFloor = 1e-12;
constexpr int kNumStates = 8;

std::string model_path(const std::string& file) { return std::string(COULOMB_SHARED_DIR) + "/models/" + file; }

struct MjModelDeleter {
  void operator()(mjModel* m) const { mj_deleteModel(m); }
};
struct MjDataDeleter {
  void operator()(mjData* d) const { mj_deleteData(d); }
};

/// A MuJoCo model + data loaded from a URDF, armature zeroed.
struct MuJoCo {
  std::unique_ptr<mjModel, MjModelDeleter> m;
  std::unique_ptr<mjData, MjDataDeleter> d;

  explicit MuJoCo(const std::string& path) {
    char error[1024] = "";
    m.reset(mj_loadXML(path.c_str(), nullptr, error, sizeof error));
    if (!m) throw std::runtime_error("MuJoCo could not load " + path + ": " + error);
    for (int i = 0; i < m->nv; ++i) m->dof_armature[i] = 0.0;
    d.reset(mj_makeData(m.get()));
  }

  int joint_id(const std::string& name) const { return mj_name2id(m.get(), mjOBJ_JOINT, name.c_str()); }
  int free_joint() const {
    for (int j = 0; j < m->njnt; ++j)
      if (m->jnt_type[j] == mjJNT_FREE) return j;
    return -1;
  }

  /// mj_forward at (qpos, qvel): M (dense) and qfrc_bias; then mj_rne with qacc.
  void evaluate(const VectorXd& qpos, const VectorXd& qvel, const VectorXd& qacc, MatrixXd& M, VectorXd& bias,
                VectorXd& tau) {
    const int nv = m->nv;
    std::copy(qpos.data(), qpos.data() + m->nq, d->qpos);
    std::copy(qvel.data(), qvel.data() + nv, d->qvel);
    std::fill(d->ctrl, d->ctrl + m->nu, 0.0);
    mj_forward(m.get(), d.get());
    Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> full(nv, nv);
    mj_fullM(m.get(), full.data(), d->qM);
    M = full;
    bias = Eigen::Map<const VectorXd>(d->qfrc_bias, nv);
    std::copy(qacc.data(), qacc.data() + nv, d->qacc);  // mj_forward overwrote qacc
    tau.resize(nv);
    mj_rne(m.get(), d.get(), 1, tau.data());
  }

  /// Spatial inertia of MuJoCo body `b` about its frame origin, in its frame.
  math::SpatialInertia body_inertia(int b) const {
    mjtNum R[9];
    mju_quat2Mat(R, m->body_iquat + 4 * b);
    const Eigen::Matrix3d R_BI = Eigen::Map<const Eigen::Matrix<double, 3, 3, Eigen::RowMajor>>(R);
    const Eigen::Vector3d principal(m->body_inertia[3 * b], m->body_inertia[3 * b + 1], m->body_inertia[3 * b + 2]);
    const Eigen::Matrix3d I_com = R_BI * principal.asDiagonal() * R_BI.transpose();
    const Eigen::Vector3d com(m->body_ipos[3 * b], m->body_ipos[3 * b + 1], m->body_ipos[3 * b + 2]);
    return math::SpatialInertia::FromCenterOfMass(m->body_mass[b], com, I_com);
  }
};

/// The MuJoCo body that corresponds to coulomb body b: the body of the joint with the same
/// name, or of the free joint for coulomb's floating joint.
int mujoco_body_of(const mb::Model& model, const MuJoCo& mj, int b) {
  const mb::Joint& joint = model.body(b).joint;
  const int j = joint.type == mb::JointType::kFloating ? mj.free_joint() : mj.joint_id(joint.name);
  return j < 0 ? -1 : mj.m->jnt_bodyid[j];
}

/// coulomb's model with every body's inertia replaced by MuJoCo's (same joints and frames).
mb::Model with_mujoco_inertias(const mb::Model& model, const MuJoCo& mj) {
  mb::ModelBuilder builder(model.name() + "_mujoco_inertias");
  for (int b = 1; b < model.num_bodies(); ++b) {
    const mb::Body& body = model.body(b);
    const int mj_body = mujoco_body_of(model, mj, b);
    if (mj_body < 0) throw std::runtime_error("no MuJoCo body for " + body.name);
    mb::JointSpec spec;
    spec.name = body.joint.name;
    spec.type = body.joint.type;
    spec.X_PJ = body.joint.X_PJ;  // in the parent body's frame = the parent's first link frame
    spec.axis = body.joint.axis;
    spec.limits = body.joint.limits;
    builder.add_link(body.name, model.body(body.parent).name, spec, mj.body_inertia(mj_body));
  }
  mb::Model rebuilt = builder.build();
  rebuilt.set_gravity(model.gravity());
  return rebuilt;
}

double relative_error(const MatrixXd& coulomb_value, const MatrixXd& mujoco_value) {
  const double scale = mujoco_value.cwiseAbs().maxCoeff();
  return (coulomb_value - mujoco_value).cwiseAbs().maxCoeff() / std::max(scale, kAbsFloor);
}

void expect_close(const MatrixXd& coulomb_value, const MatrixXd& mujoco_value, double tol, const std::string& what,
                  double* worst) {
  ASSERT_EQ(coulomb_value.rows(), mujoco_value.rows()) << what;
  ASSERT_EQ(coulomb_value.cols(), mujoco_value.cols()) << what;
  const double err = relative_error(coulomb_value, mujoco_value);
  *worst = std::max(*worst, err);
  EXPECT_LE(err, tol) << what << "\ncoulomb:\n"
                      << coulomb_value << "\nMuJoCo:\n"
                      << mujoco_value << "\ndifference:\n"
                      << coulomb_value - mujoco_value;
}

/// A state in both coordinate systems: v_mj = T v, a_mj = T a + Ṫv.
struct State {
  VectorXd q, v, a;  // coulomb
  VectorXd qpos;     // MuJoCo
  MatrixXd T;
  VectorXd Tdot_v;
};

State random_state(const mb::Model& model, const MuJoCo& mj, std::mt19937& rng) {
  std::uniform_real_distribution<double> uniform(-2.0, 2.0);
  State s;
  const int n = model.nv();
  s.q = model.neutral_configuration();
  s.v.resize(n);
  s.a.resize(n);
  s.qpos = VectorXd::Zero(mj.m->nq);
  s.T = MatrixXd::Zero(n, n);
  s.Tdot_v = VectorXd::Zero(n);
  for (int i = 0; i < n; ++i) {
    s.v[i] = uniform(rng);
    s.a[i] = uniform(rng);
  }
  for (int b = 1; b < model.num_bodies(); ++b) {
    const mb::Joint& joint = model.body(b).joint;
    if (joint.type == mb::JointType::kFloating) {
      const int j = mj.free_joint();
      if (j < 0) throw std::runtime_error("MuJoCo has no free joint for " + joint.name);
      const int qa = mj.m->jnt_qposadr[j], va = mj.m->jnt_dofadr[j];
      Eigen::Vector4d quat;  // uniformly random unit quaternion (w, x, y, z)
      std::normal_distribution<double> normal;
      for (int k = 0; k < 4; ++k) quat[k] = normal(rng);
      quat.normalize();
      for (int k = 0; k < 3; ++k) s.q[joint.q_index + k] = s.qpos[qa + k] = uniform(rng);
      for (int k = 0; k < 4; ++k) s.q[joint.q_index + 3 + k] = s.qpos[qa + 3 + k] = quat[k];
      const Eigen::Matrix3d R = Eigen::Quaterniond(quat[0], quat[1], quat[2], quat[3]).toRotationMatrix();
      s.T.block<3, 3>(va, joint.v_index + 3) = Eigen::Matrix3d::Identity();  // ṗ_W
      s.T.block<3, 3>(va + 3, joint.v_index) = R.transpose();                // ω_B = Rᵀ ω_W
      continue;
    }
    if (joint.nv != 1) continue;
    const int j = mj.joint_id(joint.name);
    if (j < 0) throw std::runtime_error("MuJoCo has no joint named " + joint.name);
    double lo = joint.limits.lower, hi = joint.limits.upper;
    if (!std::isfinite(lo) || !std::isfinite(hi)) lo = -M_PI, hi = M_PI;
    s.q[joint.q_index] = s.qpos[mj.m->jnt_qposadr[j]] = std::uniform_real_distribution<double>(lo, hi)(rng);
    s.T(mj.m->jnt_dofadr[j], joint.v_index) = 1.0;
  }
  return s;
}

/// Checks that the coordinates correspond one to one (names, types, sizes).
void check_coordinates(const mb::Model& model, const MuJoCo& mj) {
  ASSERT_EQ(model.nv(), mj.m->nv) << "number of degrees of freedom";
  ASSERT_EQ(model.nq(), mj.m->nq) << "number of configuration coordinates";
  for (int k = 0; k < 3; ++k) ASSERT_DOUBLE_EQ(model.gravity()[k], mj.m->opt.gravity[k]);
  int matched = 0;
  for (int b = 1; b < model.num_bodies(); ++b) {
    const mb::Joint& joint = model.body(b).joint;
    if (joint.type == mb::JointType::kFloating) {
      const int j = mj.free_joint();
      ASSERT_GE(j, 0) << "MuJoCo has no free joint";
      matched += 6;
      continue;
    }
    if (joint.nv != 1) continue;
    const int j = mj.joint_id(joint.name);
    ASSERT_GE(j, 0) << "MuJoCo has no joint named " << joint.name;
    EXPECT_STREQ(mj_id2name(mj.m.get(), mjOBJ_JOINT, j), joint.name.c_str());
    EXPECT_EQ(mj.m->jnt_type[j], joint.type == mb::JointType::kRevolute ? mjJNT_HINGE : mjJNT_SLIDE) << joint.name;
    EXPECT_EQ(model.dof_names()[joint.v_index], joint.name);
    EXPECT_EQ(model.position_names()[joint.q_index], joint.name);
    ++matched;
  }
  ASSERT_EQ(matched, model.nv()) << "coordinates matched by joint name";
}

/// Every moving coulomb body's spatial inertia against MuJoCo's (they differ by MuJoCo's
/// principal-axes round trip only). Returns the largest relative difference.
double compare_body_inertias(const mb::Model& model, const MuJoCo& mj) {
  double worst = 0;
  for (int b = 1; b < model.num_bodies(); ++b) {
    const int mj_body = mujoco_body_of(model, mj, b);
    EXPECT_GE(mj_body, 0) << model.body(b).name;
    if (mj_body < 0) continue;
    const math::Matrix6 I_c = model.body(b).inertia.matrix(), I_mj = mj.body_inertia(mj_body).matrix();
    const double err = (I_c - I_mj).cwiseAbs().maxCoeff() / std::max(I_mj.cwiseAbs().maxCoeff(), kAbsFloor);
    worst = std::max(worst, err);
    EXPECT_LE(err, kInertiaTol) << "body " << model.body(b).name << " (MuJoCo body "
                                << mj_id2name(mj.m.get(), mjOBJ_BODY, mj_body) << ")\ncoulomb:\n"
                                << I_c << "\nMuJoCo:\n"
                                << I_mj;
  }
  return worst;
}

/// Compares M, bias and inverse dynamics at kNumStates random states.
void compare_dynamics(const mb::Model& model, MuJoCo& mj, double tol, const std::string& label, unsigned seed) {
  SCOPED_TRACE(label);
  check_coordinates(model, mj);
  if (::testing::Test::HasFatalFailure()) return;
  std::mt19937 rng(seed);
  mb::Workspace ws(model);
  double worst_M = 0, worst_bias = 0, worst_tau = 0;
  for (int k = 0; k < kNumStates; ++k) {
    SCOPED_TRACE("state " + std::to_string(k));
    const State s = random_state(model, mj, rng);
    MatrixXd M_mj;
    VectorXd bias_mj, tau_mj;
    mj.evaluate(s.qpos, s.T * s.v, s.T * s.a + s.Tdot_v, M_mj, bias_mj, tau_mj);

    const MatrixXd M_c = mb::crba(model, ws, s.q);
    const VectorXd bias_c = mb::bias_forces(model, ws, s.q, s.v);
    const VectorXd tau_c = mb::rnea(model, ws, s.q, s.v, s.a);
    expect_close(M_c, s.T.transpose() * M_mj * s.T, tol, "mass matrix", &worst_M);
    expect_close(bias_c, s.T.transpose() * (M_mj * s.Tdot_v + bias_mj), tol, "bias C v + g", &worst_bias);
    expect_close(tau_c, s.T.transpose() * tau_mj, tol, "inverse dynamics", &worst_tau);
  }
  std::printf("[ oracle   ] %-40s n_v = %2d, %d states: max rel. error M %.1e, bias %.1e, rnea %.1e (tol %.0e)\n",
              label.c_str(), model.nv(), kNumStates, worst_M, worst_bias, worst_tau, tol);
}

/// Both comparisons for one model.
void compare_model(const std::string& name, const mb::Model& model, MuJoCo& mj) {
  const double inertia_error = compare_body_inertias(model, mj);
  std::printf("[ oracle   ] %-40s body inertias: max rel. difference %.1e (tol %.0e)\n", name.c_str(), inertia_error,
              kInertiaTol);
  const mb::Model same_inertias = with_mujoco_inertias(model, mj);
  compare_dynamics(same_inertias, mj, kAlgorithmTol, name + ", MuJoCo's inertias", 20240611);
  compare_dynamics(model, mj, kUrdfTol, name + ", from the URDF", 20240611);
}

void compare_fixed_base(const std::string& file) {
  SCOPED_TRACE(file);
  const io::UrdfModel urdf = io::load_urdf(model_path(file));
  MuJoCo mj(model_path(file));
  compare_model(file, urdf.model, mj);
}

TEST(MuJoCoOracle, KukaIiwaFixedBase) { compare_fixed_base("kuka_iiwa_robot.urdf"); }
TEST(MuJoCoOracle, PandaFixedBase) { compare_fixed_base("panda_collision.urdf"); }
TEST(MuJoCoOracle, A1FixedBase) { compare_fixed_base("a1.urdf"); }
// The benchmarks' humanoid (examples/models/humanoid.urdf, 21 revolute joints on the pelvis; 27
// DOFs with its floating base in humanoid_drop): a model written here, checked by MuJoCo's own
// URDF reading and dynamics.
TEST(MuJoCoOracle, HumanoidFixedBase) {
  const std::string file = std::string(COULOMB_SOURCE_DIR) + "/examples/models/humanoid.urdf";
  SCOPED_TRACE(file);
  const io::UrdfModel urdf = io::load_urdf(file);
  EXPECT_EQ(urdf.model.nv(), 21);
  MuJoCo mj(file);
  compare_model("humanoid.urdf", urdf.model, mj);
}

// ---------------------------------------------------------------------------------------------
// The KUKA iiwa figure of ../shared/models/README.md (MuJoCo and DART agree to 9 digits).

TEST(MuJoCoOracle, KukaIiwaReadmeFigure) {
  const std::string file = "kuka_iiwa_robot.urdf";
  const io::UrdfModel urdf = io::load_urdf(model_path(file));
  const mb::Model& model = urdf.model;
  ASSERT_EQ(model.nv(), 7);
  MuJoCo mj(model_path(file));
  ASSERT_EQ(mj.m->nv, 7);

  const double expected[7] = {0.023646060, -1.098808470, -0.137727902, -4.320081239,
                              0.105160862, -0.343535487, 0.000214662};
  // The README's coordinate i is joint iiwa_joint_{i+1}.
  VectorXd q(7), v(7), a(7), qpos(7), qvel(7), qacc(7);
  std::vector<int> coulomb_index(7), mujoco_index(7);
  for (int i = 0; i < 7; ++i) {
    const std::string name = "iiwa_joint_" + std::to_string(i + 1);
    const int b = model.joint_body(name);
    ASSERT_GE(b, 0) << name;
    coulomb_index[i] = model.body(b).joint.v_index;
    const int j = mj.joint_id(name);
    ASSERT_GE(j, 0) << name;
    mujoco_index[i] = mj.m->jnt_dofadr[j];
    q[model.body(b).joint.q_index] = qpos[mj.m->jnt_qposadr[j]] = 0.1 * (i % 7);
    v[coulomb_index[i]] = qvel[mujoco_index[i]] = 0.05 * (i % 5);
    a[coulomb_index[i]] = qacc[mujoco_index[i]] = 0.2 * (i % 3) - 0.1;
  }
  mb::Workspace ws(model);
  const VectorXd tau_c = mb::rnea(model, ws, q, v, a);
  MatrixXd M_mj;
  VectorXd bias_mj, tau_mj;
  mj.evaluate(qpos, qvel, qacc, M_mj, bias_mj, tau_mj);

  for (int i = 0; i < 7; ++i) {
    EXPECT_NEAR(tau_c[coulomb_index[i]], expected[i], 5e-10) << "coulomb, iiwa_joint_" << i + 1;
    EXPECT_NEAR(tau_mj[mujoco_index[i]], expected[i], 5e-10) << "MuJoCo, iiwa_joint_" << i + 1;
  }
  std::printf("[ oracle   ] iiwa README state, tau coulomb:");
  for (int i = 0; i < 7; ++i) std::printf(" %.9f", tau_c[coulomb_index[i]]);
  std::printf("\n[ oracle   ] iiwa README state, tau MuJoCo: ");
  for (int i = 0; i < 7; ++i) std::printf(" %.9f", tau_mj[mujoco_index[i]]);
  std::printf("\n");
}

// ---------------------------------------------------------------------------------------------
// Floating-base A1.

/// A temporary directory removed at destruction.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    path = std::filesystem::temp_directory_path() /
           ("coulomb_oracle_" + std::to_string(::getpid()) + "_" + std::to_string(std::random_device{}()));
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

/// Writes a copy of a1.urdf whose `floating_base` joint is floating, so that MuJoCo gives the
/// trunk a free joint. The original stays untouched (MPL-2.0: changes go in a separate file).
std::string write_floating_a1(const TempDir& dir) {
  std::ifstream in(model_path("a1.urdf"));
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string xml = buffer.str();
  const std::string from = "<joint name=\"floating_base\" type=\"fixed\">";
  const std::string to = "<joint name=\"floating_base\" type=\"floating\">";
  const auto pos = xml.find(from);
  if (pos == std::string::npos || xml.find(from, pos + 1) != std::string::npos)
    throw std::runtime_error("a1.urdf: expected exactly one fixed joint named floating_base");
  xml.replace(pos, from.size(), to);
  const std::string path = (dir.path / "a1_floating.urdf").string();
  std::ofstream(path) << xml;
  return path;
}

TEST(MuJoCoOracle, A1FloatingBase) {
  const io::UrdfModel urdf = io::load_urdf(model_path("a1.urdf"), {.floating = true});
  const mb::Model& model = urdf.model;
  TempDir dir;
  MuJoCo mj(write_floating_a1(dir));

  ASSERT_EQ(model.nv(), 18);
  ASSERT_EQ(model.nq(), 19);
  ASSERT_EQ(mj.m->nv, 18);
  ASSERT_EQ(mj.m->nq, 19);
  EXPECT_NEAR(model.total_mass(), 13.741, 1e-9);
  double mj_mass = 0;
  for (int b = 0; b < mj.m->nbody; ++b) mj_mass += mj.m->body_mass[b];
  EXPECT_NEAR(model.total_mass(), mj_mass, 1e-9);

  // MuJoCo's free joint: on the trunk, child of the world at the identity, whose frame is the
  // URDF `base` link's (floating_base has the identity origin).
  const int free_joint = mj.joint_id("floating_base");
  ASSERT_GE(free_joint, 0);
  ASSERT_EQ(mj.m->jnt_type[free_joint], mjJNT_FREE);
  ASSERT_EQ(mj.free_joint(), free_joint);
  const int mj_trunk = mj.m->jnt_bodyid[free_joint];
  EXPECT_STREQ(mj_id2name(mj.m.get(), mjOBJ_BODY, mj_trunk), "trunk");
  ASSERT_EQ(mj.m->body_parentid[mj_trunk], 0);
  for (int k = 0; k < 3; ++k) ASSERT_EQ(mj.m->body_pos[3 * mj_trunk + k], 0.0);
  ASSERT_EQ(mj.m->body_quat[4 * mj_trunk], 1.0);

  // coulomb's floating joint: on the body of the `base` link, attached to the world at the
  // identity, with the trunk welded to it at the identity.
  const int base_body = model.frame(model.frame_index("base")).body;
  const mb::Joint& root = model.body(base_body).joint;
  ASSERT_EQ(root.type, mb::JointType::kFloating);
  ASSERT_EQ(model.body(base_body).parent, 0);
  ASSERT_TRUE(root.X_PJ.R.isIdentity(0.0));
  ASSERT_TRUE(root.X_PJ.p.isZero(0.0));
  const mb::Frame& trunk = model.frame(model.frame_index("trunk"));
  ASSERT_EQ(trunk.body, base_body);
  ASSERT_TRUE(trunk.X_BF.R.isIdentity(0.0));
  ASSERT_TRUE(trunk.X_BF.p.isZero(0.0));
  EXPECT_EQ(model.position_names()[root.q_index + 3], root.name + ".qw");
  EXPECT_EQ(model.dof_names()[root.v_index], root.name + ".wx");
  EXPECT_EQ(model.dof_names()[root.v_index + 3], root.name + ".vx");

  compare_model("a1.urdf (floating base)", model, mj);
}

}  // namespace
}  // namespace coulomb
