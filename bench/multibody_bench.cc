// Rigid-body algorithm benchmarks: coulomb vs MuJoCo 2.2.2 on the same model and the same
// random state, in the same run (TARGETS.md: RNEA and CRBA ≥ MuJoCo's mj_rne / mj_crb).
//
// Benchmarks are named ALGORITHM/MODEL/IMPLEMENTATION:
//   RNEA/<model>/coulomb          multibody::rnea(q, v, a)      (includes its own kinematics)
//   RNEA/<model>/mujoco           mj_kinematics + mj_comPos + mj_comVel + mj_rne(flg_acc = 1)
//                                 (everything mj_rne needs from q, v: the fair comparison)
//   RNEA/<model>/mujoco_rne_only  mj_rne alone, the kinematics computed beforehand
//   CRBA/<model>/coulomb          multibody::crba(q)            (includes its own kinematics)
//   CRBA/<model>/mujoco           mj_kinematics + mj_comPos + mj_crb
//   CRBA/<model>/mujoco_crb_only  mj_crb alone
// Models: kuka_iiwa (fixed base, 7 dof) and a1 (floating base, 18 dof; MuJoCo loads a copy of
// a1.urdf, written to a temporary directory, whose `floating_base` joint is floating).
// scripts/bench_report.sh turns the JSON output into docs/benchmarks.md.
#include <mujoco/mujoco.h>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>

#include <unistd.h>

#include "coulomb/io/urdf_loader.h"
#include "coulomb/multibody.h"

namespace {

namespace mb = coulomb::multibody;
using Eigen::VectorXd;

std::string model_path(const std::string& file) { return std::string(COULOMB_SHARED_DIR) + "/models/" + file; }

/// One model loaded by both libraries, with one random state in both coordinate systems.
struct Setup {
  mb::Model model;
  std::unique_ptr<mb::Workspace> ws;
  VectorXd q, v, a;  // coulomb coordinates
  mjModel* m = nullptr;
  mjData* d = nullptr;
  VectorXd qpos, qvel, qacc;  // MuJoCo coordinates, the same state
  std::vector<mjtNum> rne_out;

  Setup(const Setup&) = delete;
  Setup& operator=(const Setup&) = delete;
  Setup(const std::string& coulomb_urdf, bool floating, const std::string& mujoco_urdf) {
    model = coulomb::io::load_urdf(coulomb_urdf, {.floating = floating}).model;
    ws = std::make_unique<mb::Workspace>(model);
    char error[1024] = "";
    m = mj_loadXML(mujoco_urdf.c_str(), nullptr, error, sizeof error);
    if (!m) throw std::runtime_error("MuJoCo could not load " + mujoco_urdf + ": " + error);
    for (int i = 0; i < m->nv; ++i) m->dof_armature[i] = 0.0;
    d = mj_makeData(m);
    if (m->nv != model.nv() || m->nq != model.nq())
      throw std::runtime_error("coulomb and MuJoCo disagree on the size of " + coulomb_urdf);

    std::mt19937 rng(12345);
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    q = model.neutral_configuration();
    v.resize(model.nv());
    a.resize(model.nv());
    qpos.setZero(m->nq);
    qvel.setZero(m->nv);
    qacc.setZero(m->nv);
    for (int i = 0; i < model.nv(); ++i) {
      v[i] = uniform(rng);
      a[i] = uniform(rng);
    }
    for (int b = 1; b < model.num_bodies(); ++b) {
      const mb::Joint& joint = model.body(b).joint;
      if (joint.type == mb::JointType::kFloating) {
        // MuJoCo's free joint is the only one: qpos = [p; quat], qvel = [ṗ_W; ω_B].
        Eigen::Quaterniond quat(uniform(rng), uniform(rng), uniform(rng), uniform(rng));
        quat.normalize();
        const double pose[7] = {uniform(rng), uniform(rng), uniform(rng), quat.w(), quat.x(), quat.y(), quat.z()};
        int free_joint = -1;
        for (int j = 0; j < m->njnt; ++j)
          if (m->jnt_type[j] == mjJNT_FREE) free_joint = j;
        if (free_joint < 0) throw std::runtime_error("MuJoCo model has no free joint");
        const int qa = m->jnt_qposadr[free_joint], va = m->jnt_dofadr[free_joint];
        for (int k = 0; k < 7; ++k) q[joint.q_index + k] = qpos[qa + k] = pose[k];
        const Eigen::Matrix3d R = quat.toRotationMatrix();
        // coulomb's floating v = [ω_W; ṗ_W] (world frame, joint.h): ω_B = Rᵀ ω_W, and the
        // accelerations map the same way (d/dt(Rᵀ ω_W) = Rᵀ ω̇_W).
        qvel.segment<3>(va) = v.segment<3>(joint.v_index + 3);
        qvel.segment<3>(va + 3) = R.transpose() * v.segment<3>(joint.v_index);
        qacc.segment<3>(va) = a.segment<3>(joint.v_index + 3);
        qacc.segment<3>(va + 3) = R.transpose() * a.segment<3>(joint.v_index);
        continue;
      }
      if (joint.nv != 1) continue;
      const int j = mj_name2id(m, mjOBJ_JOINT, joint.name.c_str());
      if (j < 0) throw std::runtime_error("MuJoCo has no joint " + joint.name);
      double lo = joint.limits.lower, hi = joint.limits.upper;
      if (!std::isfinite(lo) || !std::isfinite(hi)) lo = -3.14, hi = 3.14;
      q[joint.q_index] = qpos[m->jnt_qposadr[j]] = lo + (hi - lo) * 0.5 * (1.0 + uniform(rng));
      qvel[m->jnt_dofadr[j]] = v[joint.v_index];
      qacc[m->jnt_dofadr[j]] = a[joint.v_index];
    }
    std::copy(qpos.data(), qpos.data() + m->nq, d->qpos);
    std::copy(qvel.data(), qvel.data() + m->nv, d->qvel);
    std::copy(qacc.data(), qacc.data() + m->nv, d->qacc);
    rne_out.resize(m->nv);
  }
  ~Setup() {
    mj_deleteData(d);
    mj_deleteModel(m);
  }
};

/// A copy of a1.urdf with the `floating_base` joint floating, for MuJoCo's free joint.
std::string floating_a1_path() {
  static const std::string path = [] {
    std::ifstream in(model_path("a1.urdf"));
    std::stringstream buffer;
    buffer << in.rdbuf();
    std::string xml = buffer.str();
    const std::string from = "<joint name=\"floating_base\" type=\"fixed\">";
    const auto pos = xml.find(from);
    if (pos == std::string::npos) throw std::runtime_error("a1.urdf: no fixed joint floating_base");
    xml.replace(pos, from.size(), "<joint name=\"floating_base\" type=\"floating\">");
    const auto dir = std::filesystem::temp_directory_path() / ("coulomb_bench_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const std::string file = (dir / "a1_floating.urdf").string();
    std::ofstream(file) << xml;
    return file;
  }();
  return path;
}

Setup& setup(const std::string& name) {
  if (name == "kuka_iiwa") {
    static Setup s(model_path("kuka_iiwa_robot.urdf"), false, model_path("kuka_iiwa_robot.urdf"));
    return s;
  }
  if (name == "a1") {
    static Setup s(model_path("a1.urdf"), true, floating_a1_path());
    return s;
  }
  throw std::runtime_error("unknown benchmark model " + name);
}

// ---- RNEA ----

void rnea_coulomb(benchmark::State& state, const std::string& name) {
  Setup& s = setup(name);
  for (auto _ : state) {
    const VectorXd& tau = mb::rnea(s.model, *s.ws, s.q, s.v, s.a);
    benchmark::DoNotOptimize(tau.data());
    benchmark::ClobberMemory();
  }
}

void rnea_mujoco(benchmark::State& state, const std::string& name) {
  Setup& s = setup(name);
  for (auto _ : state) {
    mj_kinematics(s.m, s.d);
    mj_comPos(s.m, s.d);
    mj_comVel(s.m, s.d);
    mj_rne(s.m, s.d, 1, s.rne_out.data());
    benchmark::DoNotOptimize(s.rne_out.data());
    benchmark::ClobberMemory();
  }
}

void rnea_mujoco_rne_only(benchmark::State& state, const std::string& name) {
  Setup& s = setup(name);
  mj_kinematics(s.m, s.d);
  mj_comPos(s.m, s.d);
  mj_comVel(s.m, s.d);
  for (auto _ : state) {
    mj_rne(s.m, s.d, 1, s.rne_out.data());
    benchmark::DoNotOptimize(s.rne_out.data());
    benchmark::ClobberMemory();
  }
}

// ---- CRBA ----

void crba_coulomb(benchmark::State& state, const std::string& name) {
  Setup& s = setup(name);
  for (auto _ : state) {
    const Eigen::MatrixXd& M = mb::crba(s.model, *s.ws, s.q);
    benchmark::DoNotOptimize(M.data());
    benchmark::ClobberMemory();
  }
}

void crba_mujoco(benchmark::State& state, const std::string& name) {
  Setup& s = setup(name);
  for (auto _ : state) {
    mj_kinematics(s.m, s.d);
    mj_comPos(s.m, s.d);
    mj_crb(s.m, s.d);
    benchmark::DoNotOptimize(s.d->qM);
    benchmark::ClobberMemory();
  }
}

void crba_mujoco_crb_only(benchmark::State& state, const std::string& name) {
  Setup& s = setup(name);
  mj_kinematics(s.m, s.d);
  mj_comPos(s.m, s.d);
  for (auto _ : state) {
    mj_crb(s.m, s.d);
    benchmark::DoNotOptimize(s.d->qM);
    benchmark::ClobberMemory();
  }
}

/// Cross-check before timing: the two libraries must compute the same torques on the state
/// they are timed on (guards against benchmarking a wrong mapping).
void check_same_result(const std::string& name) {
  Setup& s = setup(name);
  mj_kinematics(s.m, s.d);
  mj_comPos(s.m, s.d);
  mj_comVel(s.m, s.d);
  mj_rne(s.m, s.d, 1, s.rne_out.data());
  const VectorXd tau = mb::rnea(s.model, *s.ws, s.q, s.v, s.a);
  // Compare the 1-dof joint torques, matched by name (for the floating base the free-joint
  // rows differ by the change of coordinates; the oracle test checks those).
  double max_diff = 0.0, scale = 1e-9;
  for (int b = 1; b < s.model.num_bodies(); ++b) {
    const mb::Joint& joint = s.model.body(b).joint;
    if (joint.nv != 1) continue;
    const int j = mj_name2id(s.m, mjOBJ_JOINT, joint.name.c_str());
    const double t_mj = s.rne_out[s.m->jnt_dofadr[j]];
    max_diff = std::max(max_diff, std::abs(tau[joint.v_index] - t_mj));
    scale = std::max(scale, std::abs(t_mj));
  }
  if (max_diff > 1e-8 * scale) {
    std::fprintf(stderr, "%s: coulomb and MuJoCo joint torques differ by %g (scale %g)\n", name.c_str(), max_diff,
                 scale);
    std::exit(1);
  }
}

const int registered = [] {
  for (const std::string name : {"kuka_iiwa", "a1"}) {
    benchmark::RegisterBenchmark(("RNEA/" + name + "/coulomb").c_str(), rnea_coulomb, name);
    benchmark::RegisterBenchmark(("RNEA/" + name + "/mujoco").c_str(), rnea_mujoco, name);
    benchmark::RegisterBenchmark(("RNEA/" + name + "/mujoco_rne_only").c_str(), rnea_mujoco_rne_only, name);
    benchmark::RegisterBenchmark(("CRBA/" + name + "/coulomb").c_str(), crba_coulomb, name);
    benchmark::RegisterBenchmark(("CRBA/" + name + "/mujoco").c_str(), crba_mujoco, name);
    benchmark::RegisterBenchmark(("CRBA/" + name + "/mujoco_crb_only").c_str(), crba_mujoco_crb_only, name);
  }
  return 0;
}();

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  check_same_result("kuka_iiwa");
  check_same_result("a1");
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  std::error_code ec;
  std::filesystem::remove_all(std::filesystem::path(floating_a1_path()).parent_path(), ec);
  return 0;
}
