// CRBA: symmetry, positive definiteness, columns from RNEA, and ½ vᵀ M v = kinetic energy.
#include "coulomb/multibody/crba.h"

#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>

#include "coulomb/multibody/energy.h"
#include "coulomb/multibody/rnea.h"
#include "test_models.h"

namespace coulomb::multibody {
namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;

TEST(CrbaTest, SymmetricPositiveDefiniteAndMatchesRneaColumns) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 10; ++trial) {
    const Model model = testing::make_random_tree(rng, 15, trial % 2 == 0, trial % 3 == 0);
    Workspace ws(model);
    const VectorXd q = random_configuration(model, rng);
    const MatrixXd M = crba(model, ws, q);
    EXPECT_LT((M - M.transpose()).cwiseAbs().maxCoeff(), 1e-12 * M.cwiseAbs().maxCoeff());
    Eigen::LLT<MatrixXd> llt(M);
    EXPECT_EQ(llt.info(), Eigen::Success);
    EXPECT_GT(Eigen::SelfAdjointEigenSolver<MatrixXd>(M).eigenvalues().minCoeff(), 0.0);
    // Column i of M is RNEA(q, 0, e_i) − RNEA(q, 0, 0).
    const VectorXd zero = VectorXd::Zero(model.nv());
    const VectorXd g = generalized_gravity(model, ws, q);
    MatrixXd M_rnea(model.nv(), model.nv());
    for (int i = 0; i < model.nv(); ++i) M_rnea.col(i) = rnea(model, ws, q, zero, VectorXd::Unit(model.nv(), i)) - g;
    EXPECT_LT(testing::relative_error(M, M_rnea), 1e-11);
    // Kinetic energy summed body by body equals ½ vᵀ M v.
    const VectorXd v = testing::random_vector(rng, model.nv());
    EXPECT_NEAR(kinetic_energy(model, ws, q, v), 0.5 * v.dot(M * v), 1e-11 * std::max(1.0, v.dot(M * v)));
  }
}

TEST(CrbaTest, SeparateTreesAreDecoupled) {
  std::mt19937 rng(9);
  const Model model = testing::make_random_tree(rng, 6, true, true);
  Workspace ws(model);
  const MatrixXd M = crba(model, ws, random_configuration(model, rng));
  const int box = model.body_index("free_box");
  const int iv = model.body(box).joint.v_index;
  EXPECT_EQ(M.block(iv, 0, 6, iv).cwiseAbs().maxCoeff(), 0.0);
  // A free body's block is Sᵀ I S with S = blockdiag(R_WBᵀ, R_WBᵀ) (velocities in the world
  // frame, joint.h): its spatial inertia re-expressed with world axes at the body origin.
  const math::Matrix3 R = ws.X_PB[box].R;
  math::Matrix6 S = math::Matrix6::Zero();
  S.topLeftCorner<3, 3>() = R.transpose();
  S.bottomRightCorner<3, 3>() = R.transpose();
  EXPECT_LT((M.block<6, 6>(iv, iv) - S.transpose() * model.body(box).inertia.matrix() * S).cwiseAbs().maxCoeff(),
            1e-13);
}

}  // namespace
}  // namespace coulomb::multibody
