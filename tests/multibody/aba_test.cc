// ABA inverts RNEA and agrees with M⁻¹(τ − b).
#include "coulomb/multibody/aba.h"

#include <gtest/gtest.h>

#include <Eigen/Cholesky>

#include "coulomb/multibody/crba.h"
#include "coulomb/multibody/rnea.h"
#include "test_models.h"

namespace coulomb::multibody {
namespace {

using Eigen::VectorXd;

TEST(AbaTest, InvertsRnea) {
  std::mt19937 rng(21);
  for (int trial = 0; trial < 12; ++trial) {
    const Model model = testing::make_random_tree(rng, 14, trial % 2 == 0, trial % 4 == 1);
    Workspace ws(model);
    const VectorXd q = random_configuration(model, rng);
    const VectorXd v = testing::random_vector(rng, model.nv(), 2.0);
    const VectorXd a = testing::random_vector(rng, model.nv(), 2.0);
    const VectorXd tau = rnea(model, ws, q, v, a);
    EXPECT_LT(testing::relative_error(aba(model, ws, q, v, tau), a), 1e-9);
    // And the same as solving M a = τ − b with the CRBA mass matrix.
    const VectorXd b = bias_forces(model, ws, q, v);
    const VectorXd a_crba = crba(model, ws, q).llt().solve(tau - b);
    EXPECT_LT(testing::relative_error(aba(model, ws, q, v, tau), a_crba), 1e-9);
  }
}

TEST(AbaTest, ExternalWrenchesInvertRnea) {
  std::mt19937 rng(22);
  const Model model = testing::make_random_tree(rng, 10, true, true);
  Workspace ws(model);
  const VectorXd q = random_configuration(model, rng);
  const VectorXd v = testing::random_vector(rng, model.nv()), a = testing::random_vector(rng, model.nv());
  std::vector<math::SpatialForce> f_ext(model.num_bodies());
  for (auto& f : f_ext) f = math::SpatialForce(testing::random_vector(rng, 6, 5.0));
  const VectorXd tau = rnea(model, ws, q, v, a, f_ext);
  EXPECT_LT(testing::relative_error(aba(model, ws, q, v, tau, f_ext), a), 1e-9);
}

// A floating joint whose parent moves (a free body attached to a swinging link, with a
// revolute child of its own): ABA's floating branch must pass its articulated inertia and bias
// on to the parent (the branch a floating root never takes).
TEST(AbaTest, FloatingJointOnAMovingParentInvertsRnea) {
  std::mt19937 rng(23);
  for (int trial = 0; trial < 6; ++trial) {
    ModelBuilder b("floating_mid_chain");
    auto inertia = [&]() {
      return math::SpatialInertia::FromCenterOfMass(1.0 + trial, math::Vector3(0.1, -0.05, 0.02 * trial),
                                                    testing::random_rotational_inertia(rng));
    };
    b.add_link("base", "world", testing::revolute("j0", math::Vector3(0.3, 1.0, -0.2), testing::random_transform(rng)),
               inertia());
    b.add_link("free", "base", testing::floating("free_joint"), inertia());
    b.add_link("tip", "free", testing::revolute("j2", math::Vector3(1.0, 0.0, 0.5), testing::random_transform(rng)),
               inertia());
    const Model model = b.build();
    Workspace ws(model);
    const VectorXd q = random_configuration(model, rng);
    const VectorXd v = testing::random_vector(rng, model.nv(), 2.0);
    const VectorXd a = testing::random_vector(rng, model.nv(), 2.0);
    const VectorXd tau = rnea(model, ws, q, v, a);
    EXPECT_LT(testing::relative_error(aba(model, ws, q, v, tau), a), 1e-9) << "trial " << trial;
  }
}

TEST(AbaTest, MasslessMovingLeafIsReported) {
  ModelBuilder b("massless");
  b.add_link("arm", "world", testing::revolute("j", math::Vector3::UnitZ()), math::SpatialInertia::Zero());
  const Model model = b.build();
  Workspace ws(model);
  const VectorXd z = VectorXd::Zero(1);
  try {
    aba(model, ws, z, z, z);
    FAIL() << "expected std::runtime_error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("'j'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace coulomb::multibody
