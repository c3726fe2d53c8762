// TreeMassMatrix: the trees of a model, y = M x block by block against the dense product, and
// the error on a wrongly sized x.
#include "coulomb/multibody/tree_mass_matrix.h"

#include <gtest/gtest.h>

#include "coulomb/multibody/crba.h"
#include "test_models.h"

namespace coulomb::multibody {
namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;

TEST(TreeMassMatrixTest, MultiplyMatchesTheDenseProduct) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 4; ++trial) {
    const Model model = testing::make_random_tree(rng, 8, trial % 2 == 0, true, trial >= 2 ? 0.2 : 0.0);
    Workspace ws(model);
    const VectorXd q = random_configuration(model, rng);
    const TreeMassMatrix& M = crba_trees(model, ws, q);
    ASSERT_EQ(M.num_trees(), 2);  // the random tree and its free box
    const VectorXd x = testing::random_vector(rng, model.nv());
    VectorXd y;
    M.multiply(x, y);
    // Second algorithm: the dense crba's product.
    const VectorXd y_dense = crba(model, ws, q) * x;
    EXPECT_LT((y - y_dense).cwiseAbs().maxCoeff(), 1e-12 * std::max(1.0, y_dense.cwiseAbs().maxCoeff()));
  }
}

TEST(TreeMassMatrixTest, ModelWithoutTreesAndWrongSize) {
  const Model world = ModelBuilder("empty").build();
  const TreeMassMatrix none(world);
  EXPECT_EQ(none.num_trees(), 0);
  EXPECT_EQ(none.nv(), 0);
  EXPECT_EQ(none.dense().size(), 0);
  std::mt19937 rng(2);
  const Model model = testing::make_random_tree(rng, 4, true, true);
  const TreeMassMatrix M(model);
  VectorXd y;
  try {
    M.multiply(VectorXd::Zero(model.nv() + 1), y);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("x has " + std::to_string(model.nv() + 1) + " entries"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace coulomb::multibody
