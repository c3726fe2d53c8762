// Helpers shared by the scene benchmarks (contact_bench.cc, simulation_bench.cc): coulomb scene
// files, and the same scene for MuJoCo 2.2.2, built from the loaded coulomb Scene so that both
// engines start from the same bodies, inertias, shapes and initial state.
//
// MuJoCo model of a scene:
//  - scenes made of free bodies and fixed shapes (the clutter family): MJCF written here. Fixed
//    shapes (Scene body 0) are world geoms at their poses (a half-space becomes a plane); each
//    free body is a <body> with a <freejoint/> named after coulomb's floating joint, an explicit
//    <inertial> equal to coulomb's body inertia, and its shapes as geoms (box half-sizes,
//    sphere radius, capsule and cylinder radius + half-length along z).
//  - scenes with a URDF robot (a1_drop): MuJoCo loads a temporary copy of the URDF whose
//    `floating_base` joint is floating (as in tests/oracle/mujoco_oracle_test.cc), the MJCF it
//    compiles to is saved with mj_saveLastXML, a ground plane is inserted into its <worldbody>,
//    and the result is reloaded. The robot's geoms collide only with the plane (coulomb's
//    robots default to self_collision: false).
// Every geom gets friction μ = the scene's contact μ (condim 3; MuJoCo combines pair friction by
// max, so the pair's μ is μ). Contact softness stays at MuJoCo's defaults (solref 0.02 1,
// solimp 0.9 0.95 0.001): MuJoCo has no equivalent of coulomb's stiffness / dissipation time.
// Options: the scene's time step and gravity, elliptic cones, tolerance 1e-8, Newton (or the
// solver asked for), MuJoCo's default 100 iterations and semi-implicit Euler integrator.
#pragma once

#include <mujoco/mujoco.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <algorithm>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

#include <Eigen/Geometry>

#include "coulomb/io/scene_loader.h"
#include "coulomb/multibody/model.h"

namespace coulomb_bench {

namespace io = coulomb::io;
namespace mb = coulomb::multibody;
namespace geo = coulomb::geometry;

inline std::string scene_path(const std::string& name) {
  return std::string(COULOMB_SOURCE_DIR) + "/examples/scenes/" + name + ".yaml";
}

/// The scene `name` (examples/scenes/NAME.yaml), loaded once per process.
inline const io::Scene& scene(const std::string& name) {
  static std::map<std::string, io::Scene> cache;
  auto it = cache.find(name);
  if (it == cache.end()) it = cache.emplace(name, io::load_scene(scene_path(name))).first;
  return it->second;
}

/// A temporary folder of this process; every loader below removes it when done.
inline std::filesystem::path temp_dir() {
  const auto d = std::filesystem::temp_directory_path() / ("coulomb_scene_bench_" + std::to_string(::getpid()));
  std::filesystem::create_directories(d);
  return d;
}
inline void remove_temp_dir() {
  std::error_code ec;
  std::filesystem::remove_all(std::filesystem::temp_directory_path() /
                                  ("coulomb_scene_bench_" + std::to_string(::getpid())),
                              ec);
}

inline std::string fmt(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}
inline std::string vec3(const Eigen::Vector3d& v) { return fmt(v.x()) + " " + fmt(v.y()) + " " + fmt(v.z()); }
inline std::string quat(const Eigen::Matrix3d& R) {
  const Eigen::Quaterniond q(R);
  return fmt(q.w()) + " " + fmt(q.x()) + " " + fmt(q.y()) + " " + fmt(q.z());
}

/// `<geom .../>` for a coulomb shape at X (in its body's frame).
inline std::string geom_xml(const geo::Geometry& g, const std::string& extra = "") {
  const geo::Shape& s = g.shape;
  std::string type, size;
  switch (s.type) {
    case geo::ShapeType::kSphere: type = "sphere", size = fmt(s.radius); break;
    case geo::ShapeType::kBox: type = "box", size = vec3(0.5 * s.size); break;
    case geo::ShapeType::kCapsule: type = "capsule", size = fmt(s.radius) + " " + fmt(0.5 * s.length); break;
    case geo::ShapeType::kCylinder: type = "cylinder", size = fmt(s.radius) + " " + fmt(0.5 * s.length); break;
    case geo::ShapeType::kHalfSpace: type = "plane", size = "0 0 1"; break;
    case geo::ShapeType::kConvexMesh:
    case geo::ShapeType::kMesh:
      throw std::runtime_error("bench: meshes are not translated to MuJoCo (" + g.name + ")");
  }
  return "<geom name=\"" + g.name + "\" type=\"" + type + "\" size=\"" + size + "\" pos=\"" + vec3(g.X_BG.p) +
         "\" quat=\"" + quat(g.X_BG.R) + "\" condim=\"3\"" + extra + "/>";
}

/// MJCF for a scene of free bodies and fixed shapes (no robots).
inline std::string free_body_mjcf(const io::Scene& s) {
  const mb::Model& model = s.model;
  if (!s.robots.empty()) throw std::runtime_error("bench: free_body_mjcf does not take robots");
  std::ostringstream x;
  x << "<mujoco model=\"" << std::filesystem::path(s.source).stem().string() << "\">\n"
    << "  <compiler angle=\"radian\" inertiafromgeom=\"false\"/>\n"
    << "  <option timestep=\"" << fmt(s.time_step) << "\" gravity=\"" << vec3(model.gravity())
    << "\" cone=\"elliptic\" solver=\"Newton\" tolerance=\"1e-8\"/>\n"
    << "  <worldbody>\n";
  for (const geo::Geometry& g : s.geometries)
    if (g.body == 0) x << "    " << geom_xml(g) << "\n";
  for (int b = 1; b < model.num_bodies(); ++b) {
    const mb::Body& body = model.body(b);
    if (body.parent != 0 || body.joint.type != mb::JointType::kFloating)
      throw std::runtime_error("bench: body " + body.name + " is not a free body");
    const double* q = s.q0.data() + body.joint.q_index;
    const Eigen::Matrix3d I = body.inertia.inertia_about_com();
    x << "    <body name=\"" << body.name << "\" pos=\"" << fmt(q[0]) << " " << fmt(q[1]) << " " << fmt(q[2])
      << "\" quat=\"" << fmt(q[3]) << " " << fmt(q[4]) << " " << fmt(q[5]) << " " << fmt(q[6]) << "\">\n"
      << "      <freejoint name=\"" << body.joint.name << "\"/>\n"
      << "      <inertial pos=\"" << vec3(body.inertia.com()) << "\" mass=\"" << fmt(body.inertia.mass)
      << "\" fullinertia=\"" << fmt(I(0, 0)) << " " << fmt(I(1, 1)) << " " << fmt(I(2, 2)) << " " << fmt(I(0, 1))
      << " " << fmt(I(0, 2)) << " " << fmt(I(1, 2)) << "\"/>\n";
    for (const geo::Geometry& g : s.geometries)
      if (g.body == b) x << "      " << geom_xml(g) << "\n";
    x << "    </body>\n";
  }
  x << "  </worldbody>\n</mujoco>\n";
  return x.str();
}

inline mjModel* load_mjcf_string(const std::string& xml, const std::string& file_name) {
  const std::string file = (temp_dir() / file_name).string();
  std::ofstream(file) << xml;
  char error[2048] = "";
  mjModel* m = mj_loadXML(file.c_str(), nullptr, error, sizeof error);
  if (!m) throw std::runtime_error("MuJoCo could not load " + file + ": " + error);
  return m;
}

/// A1 scene (one floating URDF robot + fixed ground shapes): URDF → MJCF → + plane → reload.
inline mjModel* robot_mjmodel(const io::Scene& s, const std::string& tag) {
  if (s.robots.size() != 1 || !s.robots[0].floating)
    throw std::runtime_error("bench: robot_mjmodel expects one floating robot");
  std::ifstream in(s.robots[0].urdf_path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string urdf = buffer.str();
  const std::string from = "<joint name=\"floating_base\" type=\"fixed\">";
  const auto pos = urdf.find(from);
  if (pos == std::string::npos) throw std::runtime_error("bench: " + s.robots[0].urdf_path + ": no fixed joint floating_base");
  urdf.replace(pos, from.size(), "<joint name=\"floating_base\" type=\"floating\">");
  const std::string urdf_file = (temp_dir() / (tag + "_floating.urdf")).string();
  std::ofstream(urdf_file) << urdf;
  char error[2048] = "";
  mjModel* m0 = mj_loadXML(urdf_file.c_str(), nullptr, error, sizeof error);
  if (!m0) throw std::runtime_error("MuJoCo could not load " + urdf_file + ": " + error);
  const std::string saved = (temp_dir() / (tag + "_from_urdf.xml")).string();
  if (!mj_saveLastXML(saved.c_str(), m0, error, sizeof error))
    throw std::runtime_error("mj_saveLastXML failed: " + std::string(error));
  mj_deleteModel(m0);
  std::ifstream saved_in(saved);
  std::stringstream saved_buffer;
  saved_buffer << saved_in.rdbuf();
  std::string mjcf = saved_buffer.str();
  const auto wb = mjcf.find("<worldbody>");
  if (wb == std::string::npos) throw std::runtime_error("bench: no <worldbody> in " + saved);
  // The scene's ground: a plane at the top of the highest fixed shape (a1_drop: z = 0).
  double top = 0.0;
  bool any = false;
  for (const geo::Geometry& g : s.geometries)
    if (g.body == 0) {
      const double z = g.shape.type == geo::ShapeType::kBox ? g.X_BG.p.z() + 0.5 * g.shape.size.z() : g.X_BG.p.z();
      top = any ? std::max(top, z) : z;
      any = true;
    }
  mjcf.insert(wb + std::string("<worldbody>").size(),
              "\n    <geom name=\"ground_plane\" type=\"plane\" size=\"0 0 1\" pos=\"0 0 " + fmt(top) +
                  "\" contype=\"0\" conaffinity=\"1\" condim=\"3\"/>");
  mjModel* m = load_mjcf_string(mjcf, tag + ".xml");
  const int plane = mj_name2id(m, mjOBJ_GEOM, "ground_plane");
  for (int g = 0; g < m->ngeom; ++g)
    if (g != plane) m->geom_contype[g] = 1, m->geom_conaffinity[g] = 0;  // robot: only with the plane
  for (int i = 0; i < m->nv; ++i) m->dof_armature[i] = 0.0;
  return m;
}

/// The options of the comparison (see the top of the file), friction μ on every geom, and
/// room for contacts.
inline void configure(mjModel* m, const io::Scene& s, int solver) {
  m->opt.timestep = s.time_step;
  for (int k = 0; k < 3; ++k) m->opt.gravity[k] = s.model.gravity()[k];
  m->opt.cone = mjCONE_ELLIPTIC;
  m->opt.solver = solver;
  m->opt.tolerance = 1e-8;
  for (int g = 0; g < m->ngeom; ++g) {
    m->geom_friction[3 * g] = s.contact.mu;
    m->geom_condim[g] = 3;
  }
  // MuJoCo 2.2 preallocates: contacts, constraint rows (efc_AR is njmax²) and its stack.
  m->nconmax = std::max(m->nconmax, std::max(100, 6 * m->nbody));
  m->njmax = std::max(m->njmax, 3 * m->nconmax);
  m->nstack = std::max(m->nstack, 3 * m->nv * m->nv + 20 * m->njmax + 1000000);
}

/// MuJoCo model of scene `name` with `solver` (mjSOL_NEWTON, mjSOL_CG, mjSOL_PG).
inline mjModel* mujoco_model(const std::string& name, int solver) {
  const io::Scene& s = scene(name);
  mjModel* m = nullptr;
  try {
    m = s.robots.empty() ? load_mjcf_string(free_body_mjcf(s), name + ".xml") : robot_mjmodel(s, name);
  } catch (...) {
    remove_temp_dir();
    throw;
  }
  remove_temp_dir();
  configure(m, s, solver);
  return m;
}

/// MuJoCo's free joint of coulomb floating joint `name`: the joint of that name, else the only
/// free joint.
inline int mujoco_free_joint(const mjModel* m, const std::string& name) {
  const int j = mj_name2id(m, mjOBJ_JOINT, name.c_str());
  if (j >= 0 && m->jnt_type[j] == mjJNT_FREE) return j;
  int found = -1, count = 0;
  for (int k = 0; k < m->njnt; ++k)
    if (m->jnt_type[k] == mjJNT_FREE) found = k, ++count;
  if (count != 1) throw std::runtime_error("bench: no MuJoCo free joint for " + name);
  return found;
}

/// Writes coulomb's (q, v) into MuJoCo's qpos, qvel: free joints [p, quat] are the same
/// numbers, 1-dof joints are matched by name. Floating-joint velocities must be zero (all the
/// benchmark scenes start at rest; this keeps the mapping independent of coulomb's floating-
/// joint velocity convention).
inline void set_mujoco_state(const mjModel* m, mjData* d, const mb::Model& model, const Eigen::VectorXd& q,
                             const Eigen::VectorXd& v) {
  mju_zero(d->qvel, m->nv);
  for (int b = 1; b < model.num_bodies(); ++b) {
    const mb::Joint& joint = model.body(b).joint;
    if (joint.type == mb::JointType::kFloating) {
      const int j = mujoco_free_joint(m, joint.name);
      const int qa = m->jnt_qposadr[j];
      for (int k = 0; k < 7; ++k) d->qpos[qa + k] = q[joint.q_index + k];
      if (v.segment<6>(joint.v_index).cwiseAbs().maxCoeff() != 0.0)
        throw std::runtime_error("bench: floating joint " + joint.name + " must start at rest");
      continue;
    }
    if (joint.nv == 0) continue;
    if (joint.nv != 1) throw std::runtime_error("bench: joint " + joint.name + " has no MuJoCo counterpart");
    const int j = mj_name2id(m, mjOBJ_JOINT, joint.name.c_str());
    if (j < 0) throw std::runtime_error("bench: MuJoCo has no joint " + joint.name);
    d->qpos[m->jnt_qposadr[j]] = q[joint.q_index];
    d->qvel[m->jnt_dofadr[j]] = v[joint.v_index];
  }
}

}  // namespace coulomb_bench
