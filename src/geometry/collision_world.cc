// CollisionWorld on FCL 0.7: one fcl::CollisionObjectd per (bounded) geometry in a
// DynamicAABBTree broadphase whose boxes are grown by the margin; half-spaces are kept out of
// the tree (their boxes are infinite) and paired with every other geometry directly. Worlds
// with few bounded pairs that may collide (at most kMaxListedPairs) skip the tree: the pairs
// are listed once at construction and their boxes tested directly, with FCL's AABB overlap test,
// which gives the same candidate pairs as the tree (whose leaf-pair test is that test) for
// less work than refitting and rebalancing it every step.
// Narrowphase: half-space pairs and box–box pairs go to contact_manifold.cc; everything else
// asks FCL for one point (collide() when overlapping, distance() within the margin) and, when
// a box face is involved and the shape rests on it, replaces it by a face manifold. Pairs with a
// static non-convex mesh go to static_mesh_contact.cc (the mesh's triangles in an FCL BVH).
//
// FCL conventions relied on (checked by tests/geometry/collision_world_test.cc):
//  - collide(): Contact::normal is a unit vector from o1 into o2; Contact::pos is a point in
//    the overlap whose position between the surfaces depends on the algorithm (midway for
//    sphere–sphere, elsewhere for GJK/EPA), so it is moved along the normal onto the plane
//    midway between the two support planes.
//  - distance(): DistanceResult::nearest_points are in the world frame (o1's first).
#include "coulomb/geometry/collision_world.h"

#include <algorithm>
#include <limits>
#include <cmath>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_set>
#include <utility>

#include <fcl/broadphase/broadphase_dynamic_AABB_tree.h>
#include <fcl/geometry/shape/box.h>
#include <fcl/geometry/shape/capsule.h>
#include <fcl/geometry/shape/convex.h>
#include <fcl/geometry/shape/cylinder.h>
#include <fcl/geometry/shape/sphere.h>
#include <fcl/narrowphase/collision.h>
#include <fcl/narrowphase/collision_object.h>
#include <fcl/narrowphase/distance.h>

#include "contact_manifold.h"
#include "static_mesh_contact.h"

namespace coulomb::geometry {

using math::Transform;
using math::Vector3;

namespace {

// A CollisionObject whose broadphase box we set ourselves (tight, grown by the margin) instead
// of FCL's bounding-sphere box of a rotated shape.
class GeometryObject : public fcl::CollisionObjectd {
 public:
  GeometryObject(const std::shared_ptr<fcl::CollisionGeometryd>& geometry, int index)
      : fcl::CollisionObjectd(geometry) {
    setUserData(reinterpret_cast<void*>(static_cast<std::intptr_t>(index)));
  }
  int index() const { return static_cast<int>(reinterpret_cast<std::intptr_t>(getUserData())); }
  void set_aabb(const Vector3& lo, const Vector3& hi) {
    aabb.min_ = lo;
    aabb.max_ = hi;
  }
};

std::shared_ptr<fcl::CollisionGeometryd> make_fcl_geometry(const Shape& s) {
  switch (s.type) {
    case ShapeType::kSphere: return std::make_shared<fcl::Sphered>(s.radius);
    case ShapeType::kBox: return std::make_shared<fcl::Boxd>(s.size);
    case ShapeType::kCapsule: return std::make_shared<fcl::Capsuled>(s.radius, s.length);
    case ShapeType::kCylinder: return std::make_shared<fcl::Cylinderd>(s.radius, s.length);
    case ShapeType::kHalfSpace: break;  // never given to FCL
    case ShapeType::kConvexMesh: {
      auto vertices = std::make_shared<std::vector<Vector3>>(s.vertices);
      auto faces = std::make_shared<std::vector<int>>();
      faces->reserve(4 * s.triangles.size());
      for (const auto& t : s.triangles) {
        faces->push_back(3);
        faces->insert(faces->end(), t.begin(), t.end());
      }
      return std::make_shared<fcl::Convexd>(vertices, static_cast<int>(s.triangles.size()), faces);
    }
    case ShapeType::kMesh: return internal::make_static_mesh_bvh(s);
  }
  throw std::invalid_argument(std::string("CollisionWorld: no FCL geometry for shape type ") + shape_type_name(s.type));
}

bool is_box(const Shape& s) { return s.type == ShapeType::kBox; }

// Shapes that can rest on a box face with more than one point.
bool rests_with_face(const Shape& s) {
  return s.type == ShapeType::kCapsule || s.type == ShapeType::kCylinder || s.type == ShapeType::kConvexMesh;
}

// A normal within ~2.6° of a box face normal counts as a face contact.
constexpr double kFaceMinCos = 0.999;

// Broadphase by listed pairs when the bounded pairs that may collide are at most this many.
constexpr size_t kMaxListedPairs = 2048;

// fcl::AABB::overlap on (lo, hi) boxes: closed boxes, touching counts.
bool boxes_overlap(const Vector3& lo_a, const Vector3& hi_a, const Vector3& lo_b, const Vector3& hi_b) {
  if ((lo_a.array() > hi_b.array()).any()) return false;
  if ((hi_a.array() < lo_b.array()).any()) return false;
  return true;
}

struct BroadphaseCollector {
  const CollisionWorld* world = nullptr;
  std::vector<std::pair<int, int>>* pairs = nullptr;
};

bool collect_pair(fcl::CollisionObjectd* o1, fcl::CollisionObjectd* o2, void* data) {
  auto* collector = static_cast<BroadphaseCollector*>(data);
  const int i = static_cast<GeometryObject*>(o1)->index();
  const int j = static_cast<GeometryObject*>(o2)->index();
  if (collector->world->can_collide(i, j)) collector->pairs->emplace_back(std::min(i, j), std::max(i, j));
  return false;  // never stop early
}

}  // namespace

struct CollisionWorld::Impl {
  // Filtering data copied from the Model (so that the world does not keep a reference to it).
  std::vector<int> body_parent;     ///< per body: parent body (−1 for the world)
  std::vector<std::pair<int, int>> excluded;  ///< options.excluded_body_pairs as (min, max), sorted
  std::vector<char> body_floating;  ///< per body: joint to the parent is a floating joint

  std::vector<std::shared_ptr<fcl::CollisionGeometryd>> fcl_geometries;  ///< per geometry; null for half-spaces
  std::vector<std::unique_ptr<GeometryObject>> objects;  ///< per geometry; null for half-spaces
  std::vector<int> halfspaces;                           ///< indices of half-space geometries
  std::vector<int> rank;  ///< per geometry: position in the order by (name, index)
  fcl::DynamicAABBTreeCollisionManagerd manager;  ///< not used (nor updated) when listed_pairs
  std::vector<Transform> X_WG;  ///< per geometry, after update_poses()
  std::vector<Vector3> aabb_lo, aabb_hi;  ///< per bounded geometry: world box grown by the margin
  std::vector<Vector3> mesh_center, mesh_half;  ///< convex meshes: centre and half size of their vertices' box in G
  std::vector<internal::MeshAdjacency> mesh_adjacency;  ///< convex meshes: vertex neighbours (else empty)
  std::vector<int> mesh_lowest;  ///< convex meshes: lowest vertex over a half-space at the last query (warm start)
  std::vector<internal::Polytope> polytopes;  ///< boxes and convex meshes: faces (else empty)
  /// Speculative margins: per body, a bound on the distance of its geometry from its origin and
  /// the extra margin set by set_speculative_margins() (all 0 by default).
  std::vector<double> body_radius, body_extra;
  /// Broadphase without the tree: every bounded pair (a < b) that may collide.
  bool listed_pairs = false;
  std::vector<std::pair<int, int>> bounded_pairs;

  // Per-call buffers, reused.
  std::vector<std::pair<int, int>> pairs;
  std::vector<internal::PairContact> pair_contacts;
  internal::ManifoldScratch manifold_scratch;
  internal::StaticMeshScratch static_mesh_scratch;
  std::vector<Vector3> face_polygon;  ///< world polygon of the face a capsule or cylinder rests on
  fcl::CollisionRequestd collision_request{4, true};
  fcl::CollisionResultd collision_result;
  // Nearest points on; signed distance off: FCL 0.7's signed-distance path is less accurate for
  // separated shapes (≈5e-7 m and 1e-3 rad off for two spheres), and overlap is collide()'s job.
  fcl::DistanceRequestd distance_request{true};
  fcl::DistanceResultd distance_result;

  // One FCL point for the pair (a, b) (A = a): true and *c filled when φ ≤ margin.
  bool fcl_point(const std::vector<Geometry>& g, int a, int b, double margin, internal::PairContact* c);
};

bool CollisionWorld::Impl::fcl_point(const std::vector<Geometry>& g, int a, int b, double margin,
                                     internal::PairContact* c) {
  const fcl::CollisionObjectd* oa = objects[static_cast<size_t>(a)].get();
  const fcl::CollisionObjectd* ob = objects[static_cast<size_t>(b)].get();
  const Shape& sa = g[static_cast<size_t>(a)].shape;
  const Shape& sb = g[static_cast<size_t>(b)].shape;
  const Transform& Xa = X_WG[static_cast<size_t>(a)];
  const Transform& Xb = X_WG[static_cast<size_t>(b)];

  collision_result.clear();
  fcl::collide(oa, ob, collision_request, collision_result);
  if (collision_result.isCollision() && collision_result.numContacts() > 0) {
    size_t deepest = 0;
    for (size_t i = 1; i < collision_result.numContacts(); ++i) {
      if (collision_result.getContact(i).penetration_depth > collision_result.getContact(deepest).penetration_depth)
        deepest = i;
    }
    const fcl::Contactd& contact = collision_result.getContact(deepest);
    Vector3 n = contact.normal;  // from o1 = A into o2 = B
    const double len = n.norm();
    if (!(len > 0.0) || !std::isfinite(len)) {
      n = Xb.p - Xa.p;
      n = n.norm() > 0.0 ? Vector3(n.normalized()) : Vector3(Vector3::UnitZ());
    } else {
      n /= len;
    }
    // Overlap along n is [min over B, max over A]; put the point on its mid-plane.
    const double top_a = internal::support(sa, Xa, n);
    const double bottom_b = -internal::support(sb, Xb, -n);
    const double mid = 0.5 * (top_a + bottom_b);
    c->n_W = n;
    c->p_W = contact.pos + (mid - n.dot(contact.pos)) * n;
    c->phi = -contact.penetration_depth;
    return true;
  }

  distance_result.clear();
  const double d = fcl::distance(oa, ob, distance_request, distance_result);
  if (d > margin) return false;
  Vector3 n = distance_result.nearest_points[1] - distance_result.nearest_points[0];
  if (d >= 0.0 && n.norm() > 1e-12) {
    c->n_W = n.normalized();
    c->p_W = 0.5 * (distance_result.nearest_points[0] + distance_result.nearest_points[1]);
    c->phi = d;
    return true;
  }
  // Touching within FCL's tolerances: collide() saw no overlap but distance() found no gap
  // (it returns a negative value without witness points then), or the witness points
  // coincide. Report a touching contact along the centre-to-centre line, on the mid-plane
  // between the support planes.
  n = Xb.p - Xa.p;
  n = n.norm() > 0.0 ? Vector3(n.normalized()) : Vector3(Vector3::UnitZ());
  const double mid = 0.5 * (internal::support(sa, Xa, n) - internal::support(sb, Xb, -n));
  const Vector3 centre = 0.5 * (Xa.p + Xb.p);
  c->n_W = n;
  c->p_W = centre + (mid - n.dot(centre)) * n;
  c->phi = 0.0;
  return true;
}

CollisionWorld::CollisionWorld(const multibody::Model& model, std::vector<Geometry> geometries,
                               CollisionOptions options)
    : geometries_(std::move(geometries)), options_(options), impl_(std::make_unique<Impl>()) {
  if (!(std::isfinite(options_.margin) && options_.margin >= 0.0))
    throw std::invalid_argument("CollisionWorld: options.margin = " + std::to_string(options_.margin) +
                                " must be non-negative and finite");
  const int nb = model.num_bodies();
  impl_->body_radius.assign(static_cast<size_t>(nb), 0.0);
  impl_->body_extra.assign(static_cast<size_t>(nb), 0.0);
  impl_->body_parent.resize(static_cast<size_t>(nb));
  impl_->body_floating.resize(static_cast<size_t>(nb));
  for (const auto& [a, b] : options_.excluded_body_pairs) {
    if (a < 0 || a >= nb || b < 0 || b >= nb)
      throw std::invalid_argument("CollisionWorld: options.excluded_body_pairs has the body pair (" + std::to_string(a) +
                                  ", " + std::to_string(b) + "), outside [0, " + std::to_string(nb) + ")");
    impl_->excluded.emplace_back(std::min(a, b), std::max(a, b));
  }
  std::sort(impl_->excluded.begin(), impl_->excluded.end());
  for (int b = 0; b < nb; ++b) {
    impl_->body_parent[static_cast<size_t>(b)] = model.body(b).parent;
    impl_->body_floating[static_cast<size_t>(b)] = model.body(b).joint.type == multibody::JointType::kFloating;
  }

  std::unordered_set<std::string> names;
  const int ng = static_cast<int>(geometries_.size());
  impl_->fcl_geometries.resize(static_cast<size_t>(ng));
  impl_->objects.resize(static_cast<size_t>(ng));
  impl_->X_WG.resize(static_cast<size_t>(ng));
  impl_->aabb_lo.resize(static_cast<size_t>(ng));
  impl_->mesh_center.assign(static_cast<size_t>(ng), Vector3::Zero());
  impl_->mesh_half.assign(static_cast<size_t>(ng), Vector3::Zero());
  impl_->mesh_adjacency.assign(static_cast<size_t>(ng), {});
  impl_->mesh_lowest.assign(static_cast<size_t>(ng), 0);
  impl_->polytopes.assign(static_cast<size_t>(ng), {});
  impl_->aabb_hi.resize(static_cast<size_t>(ng));
  std::vector<fcl::CollisionObjectd*> registered;
  for (int i = 0; i < ng; ++i) {
    const Geometry& g = geometries_[static_cast<size_t>(i)];
    const std::string context = "geometry '" + g.name + "' (index " + std::to_string(i) + ")";
    if (!g.name.empty() && !names.insert(g.name).second)
      throw std::invalid_argument(context + ": duplicate geometry name '" + g.name + "'");
    if (g.body < 0 || g.body >= nb)
      throw std::invalid_argument(context + ": body = " + std::to_string(g.body) + " is not a body of model '" +
                                  model.name() + "' (it has " + std::to_string(nb) + ")");
    if (!g.X_BG.R.allFinite() || !g.X_BG.p.allFinite() ||
        !(g.X_BG.R.transpose() * g.X_BG.R).isApprox(math::Matrix3::Identity(), 1e-9) ||
        g.X_BG.R.determinant() < 0.0)
      throw std::invalid_argument(context + ": X_BG is not a finite rigid transform");
    g.shape.validate(context);
    if (g.shape.type == ShapeType::kMesh && g.body != 0)
      throw std::invalid_argument(context + ": a (non-convex) mesh must be static, on the world body 0 (a fixed body), "
                                  "not on body " + std::to_string(g.body) + " ('" + model.body(g.body).name +
                                  "'); use its convex hull for a moving body");

    impl_->X_WG[static_cast<size_t>(i)] = g.X_BG;  // bodies at the identity until update_poses()
    if (g.shape.type == ShapeType::kHalfSpace) {  // handled analytically, outside the tree
      impl_->halfspaces.push_back(i);
      continue;
    }
    {  // r_b: |p_BG| + the radius of the shape's bounding sphere about G's origin
      double shape_radius = 0.0;
      switch (g.shape.type) {
        case ShapeType::kSphere: shape_radius = g.shape.radius; break;
        case ShapeType::kBox: shape_radius = 0.5 * g.shape.size.norm(); break;
        case ShapeType::kCapsule: shape_radius = g.shape.radius + 0.5 * g.shape.length; break;
        case ShapeType::kCylinder: shape_radius = std::hypot(g.shape.radius, 0.5 * g.shape.length); break;
        case ShapeType::kConvexMesh:
        case ShapeType::kMesh:
          for (const Vector3& p : g.shape.vertices) shape_radius = std::max(shape_radius, p.norm());
          break;
        case ShapeType::kHalfSpace: break;  // not reached
      }
      double& r = impl_->body_radius[static_cast<size_t>(g.body)];
      r = std::max(r, g.X_BG.p.norm() + shape_radius);
    }
    if (g.shape.type == ShapeType::kConvexMesh || g.shape.type == ShapeType::kMesh) {
      Vector3 mn = Vector3::Constant(std::numeric_limits<double>::infinity()), mx = -mn;
      for (const Vector3& v : g.shape.vertices) mn = mn.cwiseMin(v), mx = mx.cwiseMax(v);
      impl_->mesh_center[static_cast<size_t>(i)] = 0.5 * (mn + mx);
      impl_->mesh_half[static_cast<size_t>(i)] = 0.5 * (mx - mn);
      if (g.shape.type == ShapeType::kConvexMesh)
        impl_->mesh_adjacency[static_cast<size_t>(i)] = internal::mesh_adjacency(g.shape);
    }
    impl_->polytopes[static_cast<size_t>(i)] = internal::make_polytope(g.shape);
    impl_->fcl_geometries[static_cast<size_t>(i)] = make_fcl_geometry(g.shape);
    auto object = std::make_unique<GeometryObject>(impl_->fcl_geometries[static_cast<size_t>(i)], i);
    object->setTransform(internal::to_fcl(g.X_BG));
    Vector3 lo, hi;
    internal::world_aabb(g.shape, g.X_BG, options_.margin, &lo, &hi);
    object->set_aabb(lo, hi);
    impl_->aabb_lo[static_cast<size_t>(i)] = lo;
    impl_->aabb_hi[static_cast<size_t>(i)] = hi;
    registered.push_back(object.get());
    impl_->objects[static_cast<size_t>(i)] = std::move(object);
  }
  std::vector<int> order(static_cast<size_t>(ng));
  for (int i = 0; i < ng; ++i) order[static_cast<size_t>(i)] = i;
  std::sort(order.begin(), order.end(), [&](int x, int y) {
    const std::string& nx = geometries_[static_cast<size_t>(x)].name;
    const std::string& ny = geometries_[static_cast<size_t>(y)].name;
    return nx != ny ? nx < ny : x < y;
  });
  impl_->rank.resize(static_cast<size_t>(ng));
  for (int r = 0; r < ng; ++r) impl_->rank[static_cast<size_t>(order[static_cast<size_t>(r)])] = r;
  impl_->manager.registerObjects(registered);
  impl_->manager.setup();
  // Few candidate pairs: list them (bounded geometries only, a < b) instead of using the tree.
  impl_->listed_pairs = true;
  for (int a = 0; a < ng && impl_->listed_pairs; ++a) {
    if (impl_->objects[static_cast<size_t>(a)] == nullptr) continue;
    for (int b = a + 1; b < ng; ++b) {
      if (impl_->objects[static_cast<size_t>(b)] == nullptr || !can_collide(a, b)) continue;
      if (impl_->bounded_pairs.size() == kMaxListedPairs) {
        impl_->listed_pairs = false;
        break;
      }
      impl_->bounded_pairs.emplace_back(a, b);
    }
  }
  if (!impl_->listed_pairs) impl_->bounded_pairs = {};
}

CollisionWorld::~CollisionWorld() = default;
CollisionWorld::CollisionWorld(CollisionWorld&&) noexcept = default;
CollisionWorld& CollisionWorld::operator=(CollisionWorld&&) noexcept = default;

void CollisionWorld::update_poses(const multibody::Workspace& ws) {
  const int ng = static_cast<int>(geometries_.size());
  for (int i = 0; i < ng; ++i) {
    const Geometry& g = geometries_[static_cast<size_t>(i)];
    if (static_cast<size_t>(g.body) >= ws.X_WB.size())
      throw std::invalid_argument("CollisionWorld::update_poses: workspace has " + std::to_string(ws.X_WB.size()) +
                                  " body poses, geometry '" + g.name + "' needs body " + std::to_string(g.body));
    Transform& X = impl_->X_WG[static_cast<size_t>(i)];
    X = ws.X_WB[static_cast<size_t>(g.body)] * g.X_BG;
    GeometryObject* object = impl_->objects[static_cast<size_t>(i)].get();
    if (object == nullptr) continue;
    object->setTransform(internal::to_fcl(X));
    Vector3 lo, hi;
    const double inflate = options_.margin + impl_->body_extra[static_cast<size_t>(g.body)];
    if (g.shape.type == ShapeType::kConvexMesh || g.shape.type == ShapeType::kMesh) {
      // The box of the mesh's local bounds, rotated: conservative, and O(1) where transforming
      // every vertex of a mesh hull (hundreds for a robot link) dominated update_poses.
      const Vector3& c_G = impl_->mesh_center[static_cast<size_t>(i)];
      const Vector3& h_G = impl_->mesh_half[static_cast<size_t>(i)];
      const Vector3 c = X.R * c_G + X.p, h = X.R.cwiseAbs() * h_G + Vector3::Constant(inflate);
      lo = c - h;
      hi = c + h;
    } else {
      internal::world_aabb(g.shape, X, inflate, &lo, &hi);
    }
    object->set_aabb(lo, hi);
    impl_->aabb_lo[static_cast<size_t>(i)] = lo;
    impl_->aabb_hi[static_cast<size_t>(i)] = hi;
  }
  if (!impl_->listed_pairs) impl_->manager.update();
}

void CollisionWorld::set_speculative_margins(const multibody::Workspace& ws, double time_step) {
  if (!(time_step > 0.0) || !std::isfinite(time_step))
    throw std::invalid_argument("CollisionWorld::set_speculative_margins: time step must be > 0, got " +
                                std::to_string(time_step));
  const size_t nb = impl_->body_extra.size();
  if (ws.V_B.size() < nb)
    throw std::invalid_argument("CollisionWorld::set_speculative_margins: workspace has " + std::to_string(ws.V_B.size()) +
                                " body velocities, the world needs " + std::to_string(nb));
  for (size_t b = 1; b < nb; ++b) {  // body 0, the world, does not move: its extra stays 0
    const math::SpatialMotion& V = ws.V_B[b];
    const double speed = V.v.norm() + V.w.norm() * impl_->body_radius[b];
    // Only the travel beyond the fixed margin: slow bodies (resting piles) keep exactly the
    // fixed margin, so speculative contacts cannot feed back into a resting state.
    impl_->body_extra[b] = std::isfinite(speed) ? std::max(0.0, time_step * speed - options_.margin) : 0.0;
  }
}

void CollisionWorld::clear_speculative_margins() { std::fill(impl_->body_extra.begin(), impl_->body_extra.end(), 0.0); }

double CollisionWorld::speculative_margin(int body) const {
  if (body < 0 || body >= static_cast<int>(impl_->body_extra.size()))
    throw std::out_of_range("CollisionWorld::speculative_margin: body " + std::to_string(body) + " out of range");
  return impl_->body_extra[static_cast<size_t>(body)];
}

const math::Transform& CollisionWorld::pose(int g) const {
  if (g < 0 || g >= static_cast<int>(geometries_.size()))
    throw std::out_of_range("CollisionWorld::pose: geometry index " + std::to_string(g) + " out of range [0, " +
                            std::to_string(geometries_.size()) + ")");
  return impl_->X_WG[static_cast<size_t>(g)];
}

bool CollisionWorld::can_collide(int a, int b) const {
  const int ng = static_cast<int>(geometries_.size());
  if (a < 0 || a >= ng || b < 0 || b >= ng)
    throw std::out_of_range("CollisionWorld::can_collide: geometry index (" + std::to_string(a) + ", " +
                            std::to_string(b) + ") out of range [0, " + std::to_string(ng) + ")");
  if (a == b) return false;
  const Geometry& ga = geometries_[static_cast<size_t>(a)];
  const Geometry& gb = geometries_[static_cast<size_t>(b)];
  if ((ga.group & gb.mask) == 0u || (gb.group & ga.mask) == 0u) return false;
  if (ga.body == gb.body) return false;  // includes world–world
  // Parent and child joined by a joint (a floating joint joins nothing physically).
  const auto joined = [&](int child, int parent) {
    return impl_->body_parent[static_cast<size_t>(child)] == parent && !impl_->body_floating[static_cast<size_t>(child)];
  };
  if (joined(ga.body, gb.body) || joined(gb.body, ga.body)) return false;
  if (ga.robot >= 0 && ga.robot == gb.robot && !(ga.self_collision && gb.self_collision)) return false;
  if (!impl_->excluded.empty() &&
      std::binary_search(impl_->excluded.begin(), impl_->excluded.end(),
                         std::make_pair(std::min(ga.body, gb.body), std::max(ga.body, gb.body))))
    return false;
  // A static mesh collides with convex shapes only (it is on the world body, and so are they).
  const auto static_only = [](const Shape& s) { return s.type == ShapeType::kMesh || s.type == ShapeType::kHalfSpace; };
  if (static_only(ga.shape) && static_only(gb.shape)) return false;
  return true;
}

void CollisionWorld::compute_contacts(std::vector<ContactPoint>& out) const {
  out.clear();
  Impl& im = *impl_;

  // Candidate pairs (a < b): broadphase over bounded geometries, plus every half-space with
  // every other geometry.
  im.pairs.clear();
  if (im.listed_pairs) {
    for (const auto& [a, b] : im.bounded_pairs) {
      const auto ia = static_cast<size_t>(a), ib = static_cast<size_t>(b);
      if (boxes_overlap(im.aabb_lo[ia], im.aabb_hi[ia], im.aabb_lo[ib], im.aabb_hi[ib])) im.pairs.emplace_back(a, b);
    }
  } else {
    BroadphaseCollector collector{this, &im.pairs};
    im.manager.collide(&collector, &collect_pair);
  }
  const int ng = static_cast<int>(geometries_.size());
  for (int h : im.halfspaces) {
    for (int g = 0; g < ng; ++g) {
      if (geometries_[static_cast<size_t>(g)].shape.type == ShapeType::kHalfSpace) continue;
      if (can_collide(h, g)) im.pairs.emplace_back(std::min(h, g), std::max(h, g));
    }
  }
  std::sort(im.pairs.begin(), im.pairs.end());
  im.pairs.erase(std::unique(im.pairs.begin(), im.pairs.end()), im.pairs.end());

  for (const auto& [a, b] : im.pairs) {
    // The narrowphase runs on the pair in rank order (by name), so that its result does not
    // depend on the order in which the geometries were listed; n_W is flipped back after.
    const bool swap = im.rank[static_cast<size_t>(b)] < im.rank[static_cast<size_t>(a)];
    const int first = swap ? b : a, second = swap ? a : b;
    const Shape& sa = geometries_[static_cast<size_t>(first)].shape;
    const Shape& sb = geometries_[static_cast<size_t>(second)].shape;
    const Transform& Xa = im.X_WG[static_cast<size_t>(first)];
    const Transform& Xb = im.X_WG[static_cast<size_t>(second)];
    const double margin = options_.margin + im.body_extra[static_cast<size_t>(geometries_[static_cast<size_t>(a)].body)] +
                          im.body_extra[static_cast<size_t>(geometries_[static_cast<size_t>(b)].body)];
    im.pair_contacts.clear();

    if (sa.type == ShapeType::kHalfSpace || sb.type == ShapeType::kHalfSpace) {
      const bool a_is_plane = sa.type == ShapeType::kHalfSpace;
      const internal::PlanarFace face = internal::halfspace_face(a_is_plane ? Xa : Xb);
      // A mesh hull whose bounding box lies wholly above the plane (beyond the margin) cannot
      // touch it: skip the per-vertex test (hundreds of vertices per robot link).
      const int shape_index = a_is_plane ? second : first;
      bool clear = false;
      if ((a_is_plane ? sb : sa).type == ShapeType::kConvexMesh) {
        const Vector3 c = 0.5 * (im.aabb_lo[static_cast<size_t>(shape_index)] + im.aabb_hi[static_cast<size_t>(shape_index)]);
        const Vector3 h = 0.5 * (im.aabb_hi[static_cast<size_t>(shape_index)] - im.aabb_lo[static_cast<size_t>(shape_index)]);
        clear = face.normal.dot(c - face.center) - face.normal.cwiseAbs().dot(h) > margin;
      }
      if (!clear)
        internal::face_manifold(a_is_plane ? sb : sa, a_is_plane ? Xb : Xa, face, margin, a_is_plane,
                                im.manifold_scratch, im.pair_contacts, &im.mesh_adjacency[static_cast<size_t>(shape_index)],
                                &im.mesh_lowest[static_cast<size_t>(shape_index)]);
    } else if (sa.type == ShapeType::kMesh || sb.type == ShapeType::kMesh) {
      // A static non-convex mesh against a convex shape (static_mesh_contact.h).
      const bool mesh_first = sa.type == ShapeType::kMesh;
      const int mesh = mesh_first ? first : second, other = mesh_first ? second : first;
      internal::static_mesh_contacts(
          mesh_first ? sa : sb,
          static_cast<const fcl::BVHModel<fcl::OBBRSSd>&>(*im.fcl_geometries[static_cast<size_t>(mesh)]),
          im.X_WG[static_cast<size_t>(mesh)], mesh_first ? sb : sa, *im.fcl_geometries[static_cast<size_t>(other)],
          im.X_WG[static_cast<size_t>(other)], im.aabb_lo[static_cast<size_t>(other)],
          im.aabb_hi[static_cast<size_t>(other)], margin, kFaceMinCos, mesh_first, im.static_mesh_scratch,
          im.pair_contacts);
    } else {
      bool done = false;
      if ((is_box(sa) && sb.type == ShapeType::kSphere) || (sa.type == ShapeType::kSphere && is_box(sb))) {
        // Sphere–box: exact and allocation-free (the A1's feet on a box ground).
        const bool box_first = is_box(sa);
        const Shape& sphere = box_first ? sb : sa;
        const Shape& box = box_first ? sa : sb;
        internal::PairContact pc;
        if (internal::sphere_box_point(sphere.radius, (box_first ? Xb : Xa).p, box.size, box_first ? Xa : Xb, margin, &pc)) {
          if (!box_first) pc.n_W = -pc.n_W;  // from A into B
          im.pair_contacts.push_back(pc);
        }
        done = true;
      } else if (is_box(sa) && is_box(sb)) {
        const internal::BoxBoxStatus status =
            internal::box_box_manifold(sa.size, Xa, sb.size, Xb, margin, im.pair_contacts);
        done = status != internal::BoxBoxStatus::kFallback;
      }
      internal::PairContact single;
      if (!done && im.fcl_point(geometries_, first, second, margin, &single)) {
        const internal::Polytope& pa = im.polytopes[static_cast<size_t>(first)];
        const internal::Polytope& pb = im.polytopes[static_cast<size_t>(second)];
        internal::PlanarFace face;
        if (!pa.empty() && !pb.empty()) {
          // Box or hull against hull: face points by clipping. (Two boxes reach here only when
          // box_box_manifold found an edge or corner contact: FCL's point stands.)
          if (!(is_box(sa) && is_box(sb)))
            internal::polytope_manifold(pa, Xa, pb, Xb, single.n_W, single.phi, margin, kFaceMinCos,
                                        im.manifold_scratch, im.pair_contacts);
        } else if (!pa.empty() && rests_with_face(sb)) {
          // A capsule or cylinder resting on a face of a box (the exact rectangle) or a hull.
          if (is_box(sa) ? internal::box_face_along(sa.size, Xa, single.n_W, kFaceMinCos, &face)
                         : internal::polytope_face_along(pa, Xa, single.n_W, kFaceMinCos, im.face_polygon, &face))
            internal::face_manifold(sb, Xb, face, margin, true, im.manifold_scratch, im.pair_contacts);
        } else if (!pb.empty() && rests_with_face(sa)) {
          if (is_box(sb) ? internal::box_face_along(sb.size, Xb, -single.n_W, kFaceMinCos, &face)
                         : internal::polytope_face_along(pb, Xb, -single.n_W, kFaceMinCos, im.face_polygon, &face))
            internal::face_manifold(sa, Xa, face, margin, false, im.manifold_scratch, im.pair_contacts);
        }
        if (im.pair_contacts.empty()) im.pair_contacts.push_back(single);
      }
    }
    for (const internal::PairContact& c : im.pair_contacts) {
      ContactPoint p;
      p.geometry_a = a;
      p.geometry_b = b;
      p.p_W = c.p_W;
      p.n_W = swap ? Vector3(-c.n_W) : c.n_W;
      p.phi = c.phi;
      out.push_back(p);
    }
  }

  const auto less = [](const ContactPoint& x, const ContactPoint& y) {
    if (x.geometry_a != y.geometry_a) return x.geometry_a < y.geometry_a;
    if (x.geometry_b != y.geometry_b) return x.geometry_b < y.geometry_b;
    if (x.p_W.x() != y.p_W.x()) return x.p_W.x() < y.p_W.x();
    if (x.p_W.y() != y.p_W.y()) return x.p_W.y() < y.p_W.y();
    return x.p_W.z() < y.p_W.z();
  };
  // Stable insertion sort (the order std::stable_sort gives): the points arrive grouped by pair
  // in (a, b) order, so only the few points of each pair move, and no buffer is allocated.
  for (size_t i = 1; i < out.size(); ++i) {
    if (!less(out[i], out[i - 1])) continue;
    const ContactPoint x = out[i];
    size_t j = i;
    for (; j > 0 && less(x, out[j - 1]); --j) out[j] = out[j - 1];
    out[j] = x;
  }
}

}  // namespace coulomb::geometry
