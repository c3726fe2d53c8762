// Shape: validation messages, volumes and mass properties against closed forms.
#include "coulomb/geometry/shape.h"

#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

namespace coulomb::geometry {
namespace {

using math::Matrix3;
using math::SpatialInertia;
using math::Transform;
using math::Vector3;

constexpr double kPi = std::numbers::pi;

// Expects `f` to throw std::invalid_argument whose message contains every string in `parts`.
template <typename F>
void expect_invalid(F&& f, std::initializer_list<std::string> parts) {
  try {
    f();
    ADD_FAILURE() << "no exception";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    for (const std::string& p : parts) EXPECT_NE(what.find(p), std::string::npos) << "'" << p << "' not in: " << what;
  }
}

void expect_inertia_near(const SpatialInertia& I, double mass, const Vector3& h, const Matrix3& I_o, double tol) {
  EXPECT_NEAR(I.mass, mass, tol * std::max(1.0, mass));
  EXPECT_LE((I.h - h).cwiseAbs().maxCoeff(), tol * std::max(1.0, h.cwiseAbs().maxCoeff()));
  EXPECT_LE((I.I_o - I_o).cwiseAbs().maxCoeff(), tol * std::max(1.0, I_o.cwiseAbs().maxCoeff()))
      << "got\n" << I.I_o << "\nexpected\n" << I_o;
}

// A box of full edge lengths `size` as a closed, outward-facing triangle mesh centred at the
// origin.
Shape box_mesh(const Vector3& size) {
  const Vector3 h = 0.5 * size;
  std::vector<Vector3> v;
  for (int i = 0; i < 8; ++i)
    v.emplace_back((i & 1) ? h.x() : -h.x(), (i & 2) ? h.y() : -h.y(), (i & 4) ? h.z() : -h.z());
  // Vertex i has bits (x, y, z); faces listed counter-clockwise seen from outside.
  std::vector<std::array<int, 3>> t = {
      {0, 2, 3}, {0, 3, 1},  // z−
      {4, 5, 7}, {4, 7, 6},  // z+
      {0, 1, 5}, {0, 5, 4},  // y−
      {2, 6, 7}, {2, 7, 3},  // y+
      {0, 4, 6}, {0, 6, 2},  // x−
      {1, 3, 7}, {1, 7, 5},  // x+
  };
  return Shape::ConvexMesh(v, t);
}

TEST(ShapeTest, TypeNames) {
  EXPECT_STREQ(shape_type_name(ShapeType::kSphere), "sphere");
  EXPECT_STREQ(shape_type_name(ShapeType::kBox), "box");
  EXPECT_STREQ(shape_type_name(ShapeType::kCapsule), "capsule");
  EXPECT_STREQ(shape_type_name(ShapeType::kCylinder), "cylinder");
  EXPECT_STREQ(shape_type_name(ShapeType::kHalfSpace), "halfspace");
  EXPECT_STREQ(shape_type_name(ShapeType::kConvexMesh), "convex_mesh");
}

TEST(ShapeTest, FactoriesSetFields) {
  const Shape s = Shape::Capsule(0.1, 0.4);
  EXPECT_EQ(s.type, ShapeType::kCapsule);
  EXPECT_EQ(s.radius, 0.1);
  EXPECT_EQ(s.length, 0.4);
  const Shape b = Shape::Box(Vector3(1, 2, 3));
  EXPECT_EQ(b.type, ShapeType::kBox);
  EXPECT_EQ(b.size, Vector3(1, 2, 3));
  EXPECT_EQ(Shape::HalfSpace().type, ShapeType::kHalfSpace);
  EXPECT_EQ(Shape::Cylinder(0.2, 0.5).type, ShapeType::kCylinder);
  EXPECT_EQ(Shape::Sphere(0.2).radius, 0.2);
}

TEST(ShapeTest, ValidateNamesFieldAndValue) {
  expect_invalid([] { Shape::Sphere(-1.0).validate("scene.yaml: body 'ball' shape 0"); },
                 {"scene.yaml: body 'ball' shape 0", "radius", "-1"});
  expect_invalid([] { Shape::Sphere(0.0).validate("ctx"); }, {"sphere radius", "0"});
  expect_invalid([] { Shape::Box(Vector3(1, 0, 1)).validate("ctx"); }, {"ctx", "box", "size.y", "0"});
  expect_invalid([] { Shape::Box(Vector3(1, 1, std::numeric_limits<double>::infinity())).validate("ctx"); },
                 {"size.z", "inf"});
  expect_invalid([] { Shape::Capsule(0.1, std::nan("")).validate("ctx"); }, {"capsule length", "nan"});
  expect_invalid([] { Shape::Cylinder(-0.5, 1.0).validate("ctx"); }, {"cylinder radius", "-0.5"});
  expect_invalid([] { Shape::ConvexMesh({}, {}).validate("ctx"); }, {"convex_mesh vertices", "0"});
  Shape bad_index = box_mesh(Vector3(1, 1, 1));
  bad_index.triangles[3][1] = 8;
  expect_invalid([&] { bad_index.validate("ctx"); }, {"triangles[3][1]", "8"});
  Shape inward = box_mesh(Vector3(1, 1, 1));
  for (auto& t : inward.triangles) std::swap(t[1], t[2]);
  expect_invalid([&] { inward.validate("ctx"); }, {"volume", "-1", "outward"});
  Shape nan_vertex = box_mesh(Vector3(1, 1, 1));
  nan_vertex.vertices[5].x() = std::nan("");
  expect_invalid([&] { nan_vertex.validate("ctx"); }, {"vertices[5]"});

  EXPECT_NO_THROW(Shape::Sphere(0.1).validate("ctx"));
  EXPECT_NO_THROW(Shape::Box(Vector3(1, 2, 3)).validate("ctx"));
  EXPECT_NO_THROW(Shape::Capsule(0.1, 0.2).validate("ctx"));
  EXPECT_NO_THROW(Shape::Cylinder(0.1, 0.2).validate("ctx"));
  EXPECT_NO_THROW(Shape::HalfSpace().validate("ctx"));
  EXPECT_NO_THROW(box_mesh(Vector3(1, 2, 3)).validate("ctx"));
}

TEST(ShapeTest, Volumes) {
  EXPECT_NEAR(Shape::Sphere(0.5).volume(), 4.0 / 3.0 * kPi * 0.125, 1e-15);
  EXPECT_NEAR(Shape::Box(Vector3(0.1, 0.2, 0.3)).volume(), 0.006, 1e-17);
  EXPECT_NEAR(Shape::Cylinder(0.1, 0.5).volume(), kPi * 0.01 * 0.5, 1e-16);
  EXPECT_NEAR(Shape::Capsule(0.1, 0.5).volume(), kPi * 0.01 * 0.5 + 4.0 / 3.0 * kPi * 0.001, 1e-16);
  EXPECT_TRUE(std::isinf(Shape::HalfSpace().volume()));
  EXPECT_NEAR(box_mesh(Vector3(0.1, 0.2, 0.3)).volume(), 0.006, 1e-16);
}

TEST(ShapeTest, SphereMassProperties) {
  const double r = 0.1, rho = 1000.0;
  const double m = rho * 4.0 / 3.0 * kPi * r * r * r;  // 4.18879 kg
  const SpatialInertia I = Shape::Sphere(r).mass_properties(rho);
  expect_inertia_near(I, m, Vector3::Zero(), Vector3::Constant(2.0 / 5.0 * m * r * r).asDiagonal(), 1e-14);
  EXPECT_NEAR(I.mass, 4.1887902047863905, 1e-12);
}

TEST(ShapeTest, BoxMassProperties) {
  const double a = 0.1, b = 0.2, c = 0.3, rho = 500.0;
  const double m = rho * a * b * c;  // 3 kg
  const SpatialInertia I = Shape::Box(Vector3(a, b, c)).mass_properties(rho);
  expect_inertia_near(I, m, Vector3::Zero(),
                      Vector3(m * (b * b + c * c) / 12, m * (a * a + c * c) / 12, m * (a * a + b * b) / 12).asDiagonal(),
                      1e-14);
  EXPECT_NEAR(I.I_o(0, 0), 3.0 * 0.13 / 12.0, 1e-15);
}

TEST(ShapeTest, CylinderMassProperties) {
  const double r = 0.1, L = 0.5, rho = 800.0;
  const double m = rho * kPi * r * r * L;
  const SpatialInertia I = Shape::Cylinder(r, L).mass_properties(rho);
  const double Ixx = m * (3 * r * r + L * L) / 12.0;
  expect_inertia_near(I, m, Vector3::Zero(), Vector3(Ixx, Ixx, m * r * r / 2).asDiagonal(), 1e-14);
}

// ∫ over the capsule of (x² + y²) and of (y² + z²) by slicing along z: a disc of radius a(z)
// contributes π a⁴/2 to Izz and π a⁴/4 + z² π a² to Ixx. a² is polynomial in z on each of the
// three pieces, so composite Simpson with many panels is essentially exact.
void capsule_by_slicing(double r, double L, double* volume, double* Ixx, double* Izz) {
  *volume = *Ixx = *Izz = 0.0;
  auto a2 = [&](double z) {
    const double e = std::max(0.0, std::abs(z) - 0.5 * L);
    return r * r - e * e;
  };
  auto integrate = [&](double z0, double z1) {
    const int n = 2000;  // even
    const double h = (z1 - z0) / n;
    for (int i = 0; i <= n; ++i) {
      const double z = z0 + i * h;
      const double w = (i == 0 || i == n) ? 1.0 : (i % 2 ? 4.0 : 2.0);
      const double s = std::max(0.0, a2(z));
      *volume += w * h / 3.0 * kPi * s;
      *Izz += w * h / 3.0 * kPi * s * s / 2.0;
      *Ixx += w * h / 3.0 * (kPi * s * s / 4.0 + z * z * kPi * s);
    }
  };
  integrate(-0.5 * L - r, -0.5 * L);
  integrate(-0.5 * L, 0.5 * L);
  integrate(0.5 * L, 0.5 * L + r);
}

TEST(ShapeTest, CapsuleMassPropertiesMatchHemisphereClosedForm) {
  const double r = 0.1, L = 0.4, rho = 1000.0;
  const SpatialInertia I = Shape::Capsule(r, L).mass_properties(rho);
  // Closed form via each hemisphere's centre of mass (3r/8 from its flat face): about its
  // centroid a hemisphere has 83/320 m_h r² transversally, then the parallel-axis term
  // m_h (L/2 + 3r/8)².
  const double m_c = rho * kPi * r * r * L, m_h = rho * 2.0 / 3.0 * kPi * r * r * r;
  const double d = 0.5 * L + 3.0 * r / 8.0;
  const double Ixx = m_c * (3 * r * r + L * L) / 12.0 + 2.0 * (83.0 / 320.0 * m_h * r * r + m_h * d * d);
  const double Izz = m_c * r * r / 2.0 + 2.0 * (2.0 / 5.0) * m_h * r * r;
  expect_inertia_near(I, m_c + 2 * m_h, Vector3::Zero(), Vector3(Ixx, Ixx, Izz).asDiagonal(), 1e-14);

  double V, Ixx_s, Izz_s;
  capsule_by_slicing(r, L, &V, &Ixx_s, &Izz_s);
  EXPECT_NEAR(I.mass, rho * V, 1e-10);
  EXPECT_NEAR(I.I_o(0, 0), rho * Ixx_s, 1e-10);
  EXPECT_NEAR(I.I_o(1, 1), rho * Ixx_s, 1e-10);
  EXPECT_NEAR(I.I_o(2, 2), rho * Izz_s, 1e-10);
}

TEST(ShapeTest, ConvexMeshBoxMatchesBoxFormula) {
  const Vector3 size(0.3, 0.2, 0.5);
  const double rho = 700.0;
  const SpatialInertia box = Shape::Box(size).mass_properties(rho);
  const SpatialInertia mesh = box_mesh(size).mass_properties(rho);
  expect_inertia_near(mesh, box.mass, box.h, box.I_o, 1e-13);
}

TEST(ShapeTest, ConvexMeshOffsetAndRotatedBoxMatchesTransformedBox) {
  // The same box with its vertices moved by X_GM: the mesh's inertia about G's origin must be
  // the box inertia carried over by X_GM (parallel axis + rotation).
  const Vector3 size(0.3, 0.2, 0.5);
  const double rho = 700.0;
  const Transform X_GM(Eigen::AngleAxisd(0.7, Vector3(1, 2, 3).normalized()).toRotationMatrix(), Vector3(0.4, -0.2, 1.1));
  Shape mesh = box_mesh(size);
  for (Vector3& v : mesh.vertices) v = X_GM.act(v);
  const SpatialInertia expected = X_GM.act(Shape::Box(size).mass_properties(rho));
  const SpatialInertia got = mesh.mass_properties(rho);
  expect_inertia_near(got, expected.mass, expected.h, expected.I_o, 1e-12);
  EXPECT_LE((got.com() - X_GM.p).norm(), 1e-14);
}

TEST(ShapeTest, ConvexMeshTetrahedron) {
  // Unit right tetrahedron (0, e1, e2, e3): V = 1/6, centroid (1/4, 1/4, 1/4),
  // ∫x² dV = 1/60, ∫xy dV = 1/120, so I_o = [[1/30, −1/120, −1/120], …].
  const Shape tet = Shape::ConvexMesh({Vector3::Zero(), Vector3::UnitX(), Vector3::UnitY(), Vector3::UnitZ()},
                                      {{0, 2, 1}, {0, 1, 3}, {0, 3, 2}, {1, 2, 3}});
  ASSERT_NO_THROW(tet.validate("tet"));
  Matrix3 I;
  I << 1.0 / 30, -1.0 / 120, -1.0 / 120, -1.0 / 120, 1.0 / 30, -1.0 / 120, -1.0 / 120, -1.0 / 120, 1.0 / 30;
  expect_inertia_near(tet.mass_properties(1.0), 1.0 / 6.0, Vector3::Constant(1.0 / 24.0), I, 1e-15);
}

TEST(ShapeTest, HalfSpaceHasNoMassProperties) {
  expect_invalid([] { Shape::HalfSpace().mass_properties(1000.0); }, {"halfspace"});
  expect_invalid([] { Shape::Sphere(0.1).mass_properties(-1.0); }, {"density", "-1"});
}

}  // namespace
}  // namespace coulomb::geometry
