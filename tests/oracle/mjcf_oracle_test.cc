// Oracle test: coulomb's MJCF loader against MuJoCo 2.2.2 (libmujoco-dev) loading the same file,
// on MuJoCo's own sample models (Debian libmujoco-samples, /usr/share/mujoco/model).
//
// At random states (seeded; hinge/slide uniform inside their range or in [−π, π] / [−0.5, 0.5]
// when unlimited, free joints at random positions and uniformly random orientations, velocities
// and accelerations uniform in [−2, 2]):
//   mass matrix   coulomb crba()          vs  mj_fullM(qM) after mj_forward (armature in both)
//   bias          coulomb bias_forces()   vs  qfrc_bias (C v + gravity; no passive forces)
//   inverse dyn.  coulomb rnea()          vs  qfrc_inverse + qfrc_passive of mj_inverse with the
//                                             constraints disabled: MuJoCo's inverse dynamics
//                                             subtracts the passive (spring, damper) forces, which
//                                             coulomb's rnea leaves to the force laws; so both sides
//                                             are M a + bias (armature included)
//   passive       −damping ⊙ v − stiffness ⊙ (q − springref) from the loader's joints and
//                 Model::damping() vs qfrc_passive (the joint spring/damper mapping)
// Error measure: max |coulomb − MuJoCo| / max |MuJoCo|, tolerance 1e-9. MuJoCo computes the body
// inertias from the same geoms (density 1000, capsule = cylinder + hemispheres, …), so the two
// agree up to MuJoCo's principal-axes decomposition of each body's inertia.
//
// Free joints: coulomb's v = [ω_W; ṗ_W] (joint.h), MuJoCo's qvel = [ṗ_W; ω_B]; with R = R_WB,
// v_mj = T v_c, T = [[0, 1], [Rᵀ, 0]] per free joint (identity on 1-dof joints, with the
// coordinate permutation by joint name), and M_c = Tᵀ M_mj T, τ_c = Tᵀ τ_mj; accelerations map
// by the same T (d/dt(Rᵀ ω_W) = Rᵀ ω̇_W), see mujoco_oracle_test.cc.
#include <mujoco/mujoco.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "coulomb/io/mjcf_loader.h"
#include "coulomb/io/scene_loader.h"
#include "coulomb/multibody.h"
#include "coulomb/simulation/simulator.h"

namespace coulomb {
namespace {

namespace mb = multibody;
using Eigen::MatrixXd;
using Eigen::VectorXd;

constexpr double kTol = 1e-9;
constexpr int kNumStates = 6;
const std::string kSamples = "/usr/share/mujoco/model/";

struct MjModelDeleter {
  void operator()(mjModel* m) const { mj_deleteModel(m); }
};
struct MjDataDeleter {
  void operator()(mjData* d) const { mj_deleteData(d); }
};

struct MuJoCo {
  std::unique_ptr<mjModel, MjModelDeleter> m;
  std::unique_ptr<mjData, MjDataDeleter> d;
  explicit MuJoCo(const std::string& path) {
    char error[1024] = "";
    m.reset(mj_loadXML(path.c_str(), nullptr, error, sizeof error));
    if (!m) throw std::runtime_error("MuJoCo could not load " + path + ": " + error);
    d.reset(mj_makeData(m.get()));
  }
  std::string joint_name(int j) const {
    const char* n = mj_id2name(m.get(), mjOBJ_JOINT, j);
    return n != nullptr && n[0] != '\0' ? std::string(n) : "joint" + std::to_string(j);
  }
};

double relative_error(const MatrixXd& a, const MatrixXd& b) {
  return (a - b).cwiseAbs().maxCoeff() / std::max(b.cwiseAbs().maxCoeff(), 1e-12);
}

struct Comparison {
  double mass_matrix = 0.0, bias = 0.0, inverse = 0.0, passive = 0.0;
};

/// Compares coulomb's model of `file` with MuJoCo's at kNumStates random states.
Comparison compare(const std::string& file, unsigned seed, double tol = kTol) {
  const io::MjcfModel cm = io::load_mjcf(file);
  const mb::Model& model = cm.model;
  MuJoCo mj(file);
  // Inverse dynamics without constraint forces (contacts at random states, joint limits):
  // coulomb's rnea has none either.
  mj.m->opt.disableflags |= mjDSBL_CONSTRAINT;
  const mjModel* m = mj.m.get();
  mjData* d = mj.d.get();
  EXPECT_EQ(model.nv(), m->nv) << file;
  EXPECT_EQ(model.nq(), m->nq) << file;
  if (model.nv() != m->nv || model.nq() != m->nq) return {};
  for (int k = 0; k < 3; ++k) EXPECT_EQ(model.gravity()[k], m->opt.gravity[k]);
  const int nv = m->nv;

  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  Comparison worst;
  for (int trial = 0; trial < kNumStates; ++trial) {
    VectorXd q = model.neutral_configuration(), qpos = VectorXd::Zero(m->nq);
    MatrixXd T = MatrixXd::Zero(nv, nv);  // v_mj = T v_c
    VectorXd spring_k = VectorXd::Zero(nv), spring_ref = VectorXd::Zero(nv), q_dof = VectorXd::Zero(nv);
    for (int j = 0; j < m->njnt; ++j) {
      const std::string name = mj.joint_name(j);
      const int b = model.joint_body(name);
      EXPECT_GE(b, 1) << "coulomb has no joint " << name;
      if (b < 1) return {};
      const mb::Joint& joint = model.body(b).joint;
      const int qa = m->jnt_qposadr[j], va = m->jnt_dofadr[j];
      if (m->jnt_type[j] == mjJNT_FREE) {
        EXPECT_EQ(joint.type, mb::JointType::kFloating) << name;
        Eigen::Vector4d quat;
        std::normal_distribution<double> normal;
        for (int k = 0; k < 4; ++k) quat[k] = normal(rng);
        quat.normalize();
        for (int k = 0; k < 3; ++k) q[joint.q_index + k] = qpos[qa + k] = u(rng);
        for (int k = 0; k < 4; ++k) q[joint.q_index + 3 + k] = qpos[qa + 3 + k] = quat[k];
        const Eigen::Matrix3d R = Eigen::Quaterniond(quat[0], quat[1], quat[2], quat[3]).toRotationMatrix();
        T.block<3, 3>(va, joint.v_index + 3) = Eigen::Matrix3d::Identity();
        T.block<3, 3>(va + 3, joint.v_index) = R.transpose();
        continue;
      }
      EXPECT_EQ(joint.type, m->jnt_type[j] == mjJNT_HINGE ? mb::JointType::kRevolute : mb::JointType::kPrismatic)
          << name;
      double lo = m->jnt_range[2 * j], hi = m->jnt_range[2 * j + 1];
      if (!m->jnt_limited[j]) lo = m->jnt_type[j] == mjJNT_HINGE ? -M_PI : -0.5, hi = -lo;
      q[joint.q_index] = qpos[qa] = std::uniform_real_distribution<double>(lo, hi)(rng);
      T(va, joint.v_index) = 1.0;
      // The loader's spring record for the passive-force check.
      for (const io::MjcfJoint& mj_joint : cm.attachment.joints)
        if (mj_joint.name == name) {
          spring_k[joint.v_index] = mj_joint.stiffness;
          spring_ref[joint.v_index] = mj_joint.springref;
        }
      q_dof[joint.v_index] = q[joint.q_index];
    }
    VectorXd v(nv), a(nv);
    for (int i = 0; i < nv; ++i) v[i] = u(rng), a[i] = u(rng);
    const VectorXd qvel = T * v, qacc = T * a;

    // MuJoCo.
    std::copy(qpos.data(), qpos.data() + m->nq, d->qpos);
    std::copy(qvel.data(), qvel.data() + nv, d->qvel);
    std::fill(d->ctrl, d->ctrl + m->nu, 0.0);
    mj_forward(m, d);
    Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> full(nv, nv);
    mj_fullM(m, full.data(), d->qM);
    const MatrixXd M_mj = full;
    const VectorXd bias_mj = Eigen::Map<const VectorXd>(d->qfrc_bias, nv);
    std::copy(qacc.data(), qacc.data() + nv, d->qacc);
    mj_inverse(m, d);
    const VectorXd passive_mj = Eigen::Map<const VectorXd>(d->qfrc_passive, nv);
    const VectorXd inverse_mj = Eigen::Map<const VectorXd>(d->qfrc_inverse, nv) + passive_mj;

    // coulomb.
    mb::Workspace ws(model);
    const MatrixXd M_c = mb::crba(model, ws, q);
    const VectorXd bias_c = mb::bias_forces(model, ws, q, v);
    const VectorXd tau_c = mb::rnea(model, ws, q, v, a);
    const VectorXd passive_c = -model.damping().cwiseProduct(v) - spring_k.cwiseProduct(q_dof - spring_ref);

    if (model.damping().norm() > 0.0 || spring_k.norm() > 0.0) {
      EXPECT_GT(passive_mj.norm(), 0.0) << "MuJoCo's passive forces should not vanish";
    }
    const MatrixXd Tt = T.transpose();
    const double e_M = relative_error(M_c, Tt * M_mj * T);
    const double e_b = relative_error(bias_c, Tt * bias_mj);
    const double e_i = relative_error(tau_c, Tt * inverse_mj);
    const double e_p = relative_error(passive_c, Tt * passive_mj);
    EXPECT_LE(e_M, tol) << file << " trial " << trial << ": mass matrix";
    EXPECT_LE(e_b, tol) << file << " trial " << trial << ": bias";
    EXPECT_LE(e_i, tol) << file << " trial " << trial << ": inverse dynamics";
    EXPECT_LE(e_p, tol) << file << " trial " << trial << ": passive forces";
    worst.mass_matrix = std::max(worst.mass_matrix, e_M);
    worst.bias = std::max(worst.bias, e_b);
    worst.inverse = std::max(worst.inverse, e_i);
    worst.passive = std::max(worst.passive, e_p);
  }
  std::printf("%-55s nv %4d  M %.2e  bias %.2e  ID %.2e  passive %.2e\n", file.c_str(), nv, worst.mass_matrix,
              worst.bias, worst.inverse, worst.passive);
  return worst;
}

class MjcfSampleModel : public ::testing::TestWithParam<std::string> {};

TEST_P(MjcfSampleModel, DynamicsEqualMuJoCo) {
  const std::string file = kSamples + GetParam();
  ASSERT_TRUE(std::filesystem::exists(file)) << file << " missing: install libmujoco-samples (scripts/install-deps.sh)";
  compare(file, 17);
}

// Every sample model whose dynamics coulomb represents (the others are below).
INSTANTIATE_TEST_SUITE_P(Samples, MjcfSampleModel,
                         ::testing::Values("humanoid/humanoid.xml", "humanoid100/humanoid100.xml",
                                           "humanoid/22_humanoids.xml"),
                         [](const auto& info) {
                           std::string s = info.param;
                           for (char& c : s)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return s;
                         });

// coulomb's own example model: a two-joint body, armature, a welded pedestal, a free box.
TEST(MjcfExampleModel, DynamicsEqualMuJoCo) {
  compare(std::string(COULOMB_SOURCE_DIR) + "/examples/models/mjcf_arm.xml", 29);
}

// The mug (a mesh geom with density): MuJoCo 2.2 computes mesh inertias with its legacy method
// unless <compiler exactmeshinertia="true">; coulomb computes the exact solid inertia of the
// closed mesh. On a copy of mug.xml with exactmeshinertia="true" the two agree to 1.7e-8
// (measured; tolerance 1e-7): MuJoCo stores mesh vertices in single precision (mjModel::mesh_vert
// is float), so its volume and inertia carry float rounding (~6e-8 relative per coordinate); with
// the legacy default they differ by 48% (the original file is in MjcfPartlySupported below, where
// the loader's warning names the mesh).
TEST(MjcfMeshInertia, MugWithExactMeshInertiaEqualsMuJoCo) {
  const std::filesystem::path source = kSamples + "mug";
  ASSERT_TRUE(std::filesystem::exists(source / "mug.xml"));
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "coulomb_mjcf_mug_exact";
  std::filesystem::create_directories(dir);
  for (const auto& entry : std::filesystem::directory_iterator(source))
    std::filesystem::copy_file(entry.path(), dir / entry.path().filename(),
                               std::filesystem::copy_options::overwrite_existing);
  std::ifstream in(source / "mug.xml");
  std::string xml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string root = "<mujoco model=\"mug\">";
  ASSERT_NE(xml.find(root), std::string::npos);
  xml.replace(xml.find(root), root.size(), root + "<compiler exactmeshinertia=\"true\"/>");
  std::ofstream(dir / "mug.xml") << xml;
  const Comparison c = compare((dir / "mug.xml").string(), 31, 1e-7);
  EXPECT_GT(c.mass_matrix + 1.0, 1.0);  // compared (compare() returns zeros when it could not)
  std::filesystem::remove_all(dir);
}

// The humanoid dropped from its initial pose (torso at 1.4 m, free joint) for 5 s: coulomb as
// `coulomb simulate humanoid.xml` runs it (io::load_scene_or_model: the file's own floor plane,
// option timestep 0.005, geom friction, joint springs and dampers, armature; SAP with its own
// contact approximation, the MJCF default, and the default contact parameters) against MuJoCo's
// own mj_step on the same file. In both the humanoid pitches forward, lands on its head and ends
// upside down, the torso's z axis pointing down (measured: torso at 0.279 m in coulomb, 0.272 m in
// MuJoCo); the final torso heights agree within 5 cm although the contact models differ (MuJoCo's
// soft constraints with solref/solimp, coulomb's compliant SAP contact). coulomb's humanoid is at
// rest; MuJoCo's still tips slowly (max |qvel| ≈ 0.3).
TEST(MjcfHumanoidDrop, FinalRootHeightMatchesMuJoCo) {
  const std::string file = kSamples + "humanoid/humanoid.xml";
  ASSERT_TRUE(std::filesystem::exists(file)) << file;
  constexpr double kDuration = 5.0;

  MuJoCo mj(file);
  mj_resetData(mj.m.get(), mj.d.get());
  const int mj_steps = static_cast<int>(std::lround(kDuration / mj.m->opt.timestep));
  for (int i = 0; i < mj_steps; ++i) mj_step(mj.m.get(), mj.d.get());
  const double mj_height = mj.d->qpos[2];
  double mj_speed = 0.0;
  for (int i = 0; i < mj.m->nv; ++i) mj_speed = std::max(mj_speed, std::abs(mj.d->qvel[i]));

  io::Scene scene = io::load_scene_or_model(file);
  EXPECT_EQ(scene.time_step, mj.m->opt.timestep);
  simulation::SimulatorParameters params;
  params.time_step = scene.time_step;
  simulation::Simulator sim(std::move(scene), params);
  const mb::Model& model = sim.model();
  const int root = model.joint_body("root");
  ASSERT_GE(root, 1);
  const int qz = model.body(root).joint.q_index + 2;
  const double start = sim.q()[qz];
  EXPECT_NEAR(start, mj.m->qpos0[2], 1e-12);
  int failures = 0;
  const int steps = static_cast<int>(std::lround(kDuration / params.time_step));
  for (int i = 0; i < steps; ++i)
    if (sim.step().status != solvers::sap::SapSolverStatus::kSuccess) ++failures;
  const double height = sim.q()[qz];
  const double speed = sim.v().cwiseAbs().maxCoeff();
  std::printf("humanoid 5 s: root height coulomb %.4f m, MuJoCo %.4f m (start %.2f); max |v| coulomb %.3g, MuJoCo "
              "%.3g; failures %d\n",
              height, mj_height, start, speed, mj_speed, failures);
  EXPECT_EQ(failures, 0);
  EXPECT_LT(height, start - 0.8) << "the humanoid should have fallen";
  // Upside down in both: the torso's z axis points down.
  const Eigen::Vector4d quat = sim.q().segment<4>(qz + 1);
  const Eigen::Matrix3d R = Eigen::Quaterniond(quat[0], quat[1], quat[2], quat[3]).normalized().toRotationMatrix();
  mjtNum R_mj[9];
  mju_quat2Mat(R_mj, mj.d->qpos + 3);
  EXPECT_LT(R(2, 2), -0.8);
  EXPECT_LT(R_mj[8], -0.8);
  EXPECT_NEAR(height, mj_height, 0.05);
  EXPECT_LT(speed, 0.5) << "coulomb's humanoid should be (nearly) at rest after 5 s";
}

// Sample models with elements coulomb does not simulate: the loader's single warning lists them
// (with their lines); where MuJoCo's model has the same bodies and joints (the unsupported
// elements add forces, not degrees of freedom), the dynamics are compared too.
struct PartlySupported {
  std::string file;
  std::vector<std::string> listed;  // substrings the warning must contain
  bool same_dofs = false;           // compare M, bias, ID with MuJoCo
  bool unsupported = true;          // the file has unsupported elements (one "not supported" warning)
};

class MjcfPartlySupported : public ::testing::TestWithParam<PartlySupported> {};

TEST_P(MjcfPartlySupported, OneWarningListsTheUnsupportedElements) {
  const PartlySupported& p = GetParam();
  const std::string file = kSamples + p.file;
  ASSERT_TRUE(std::filesystem::exists(file)) << file;
  const io::MjcfModel cm = io::load_mjcf(file);
  int listing = 0;
  std::string text;
  for (const std::string& w : cm.attachment.warnings) {
    text += w + "\n";
    if (w.find("not supported") != std::string::npos) ++listing;
  }
  EXPECT_EQ(listing, p.unsupported ? 1 : 0) << text;
  for (const std::string& s : p.listed) EXPECT_NE(text.find(s), std::string::npos) << "missing " << s << " in:\n" << text;
  std::printf("%s:\n%s", p.file.c_str(), text.c_str());
  if (p.same_dofs) compare(file, 23);
}

INSTANTIATE_TEST_SUITE_P(
    Samples, MjcfPartlySupported,
    ::testing::Values(PartlySupported{"tendon_arm/arm26.xml", {"<tendon> (line", "<muscle> (line"}, true},
                      PartlySupported{"slider_crank/slider_crank.xml", {"cranksite transmission"}, true},
                      PartlySupported{"adhesion/active_adhesion.xml",
                                      {"<composite>", "<joint> (line 103)", "<tendon>", "<adhesion>", "<sensor>",
                                       "<option viscosity>"},
                                      false},
                      PartlySupported{"mug/mug.xml", {"exactmeshinertia", "<geom> (line 32)"}, false, false},
                      PartlySupported{"hammock/hammock.xml", {"<composite>"}, false},
                      PartlySupported{"composite/cloth.xml", {"<composite>"}, false},
                      PartlySupported{"composite/rope.xml", {"<composite>"}, false},
                      PartlySupported{"composite/softbox.xml", {"<composite>"}, false},
                      PartlySupported{"flag/flag.xml", {"<composite>"}, false}),
    [](const auto& info) {
      std::string s = info.param.file;
      for (char& c : s)
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
      return s;
    });

}  // namespace
}  // namespace coulomb
