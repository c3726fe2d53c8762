// CRBA: symmetry, positive definiteness, columns from RNEA, and ½ vᵀ M v = kinetic energy; the
// per-tree CRBA (crba_trees) against RNEA columns and the dense crba on forests of several trees.
#include "coulomb/multibody/crba.h"

#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>

#include "coulomb/multibody/energy.h"
#include "coulomb/multibody/momentum.h"
#include "coulomb/multibody/rnea.h"
#include "../../src/linalg/block_kernels.h"  // force_baseline_block_kernels: both copies of the fill
#include "test_models.h"

namespace coulomb::multibody {
namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;

// The mass matrix's fill is compiled twice (x86-64 baseline; AVX2 + FMA, chosen at run time):
// both copies are checked.
TEST(CrbaTest, SymmetricPositiveDefiniteAndMatchesRneaColumns) {
  for (bool baseline : {true, false}) {
    linalg::internal::force_baseline_block_kernels(baseline);
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
  linalg::internal::force_baseline_block_kernels(false);
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

// Random link inertias (0.5–2 kg, centre of mass within 0.2 m of the link origin, random
// rotational inertia) and random unit joint axes, for the hand-built models below.
struct RandomLinks {
  std::mt19937& rng;
  std::uniform_real_distribution<double> um{0.5, 2.0}, uc{-0.2, 0.2};
  std::normal_distribution<double> n{0.0, 1.0};
  math::SpatialInertia inertia() {
    return math::SpatialInertia::FromCenterOfMass(um(rng), math::Vector3(uc(rng), uc(rng), uc(rng)),
                                                  testing::random_rotational_inertia(rng));
  }
  math::Vector3 axis() { return math::Vector3(n(rng), n(rng), n(rng)).normalized(); }
};

// Floating joints on the world take short paths: every floating root's mass-matrix block is
// formed in closed form ([R I_o Rᵀ, [R h]×; [R h]×ᵀ, m 1]), and a body whose joint frame is the
// world's (Model::floating_in_world) skips the products by the identity in the kinematic passes.
// Three trees cover the cases: a floating base under a tilted and offset joint frame (the
// general passes), a floating base with the world's frame and children, and a lone free body
// with armature. Truth: RNEA's columns, the composed transforms, and p = M v.
TEST(CrbaTest, FloatingRootsWithAndWithoutAJointFrameMatchRneaColumns) {
  std::mt19937 rng(33);
  ModelBuilder b("floating_roots");
  RandomLinks draw{rng};
  auto inertia = [&]() { return draw.inertia(); };
  auto axis = [&]() { return draw.axis(); };
  JointSpec tilted = testing::floating("tilted_joint");
  tilted.X_PJ = testing::random_transform(rng);
  JointSpec free_joint = testing::floating("free_joint");
  free_joint.armature = 0.25;
  b.add_link("tilted", "world", tilted, inertia());
  b.add_link("tilted_arm", "tilted", testing::revolute("tilted_arm_joint", axis(), testing::random_transform(rng)), inertia());
  b.add_link("base", "world", testing::floating("base_joint"), inertia());
  b.add_link("leg", "base", testing::revolute("leg_joint", axis(), testing::random_transform(rng)), inertia());
  b.add_link("foot", "leg", testing::prismatic("foot_joint", axis(), testing::random_transform(rng)), inertia());
  b.add_link("free", "world", free_joint, inertia());
  const Model model = b.build();
  const int tilted_body = model.body_index("tilted"), base = model.body_index("base"), free = model.body_index("free");
  EXPECT_FALSE(model.floating_in_world(tilted_body));
  EXPECT_TRUE(model.floating_in_world(base));
  EXPECT_TRUE(model.floating_in_world(free));
  EXPECT_FALSE(model.floating_in_world(model.body_index("leg")));
  Workspace ws(model);
  for (int trial = 0; trial < 5; ++trial) {
    const VectorXd q = random_configuration(model, rng);
    const VectorXd v = testing::random_vector(rng, model.nv());
    // Poses: X_WB composed joint by joint from joint_transform.
    forward_kinematics(model, ws, q);
    for (int i = 1; i < model.num_bodies(); ++i) {
      const Joint& j = model.body(i).joint;
      const math::Transform X_WB = ws.X_WB[model.body(i).parent] * joint_transform(j, q.data() + j.q_index);
      EXPECT_LT((ws.X_WB[i].R - X_WB.R).cwiseAbs().maxCoeff(), 1e-15) << model.body(i).name;
      EXPECT_LT((ws.X_WB[i].p - X_WB.p).cwiseAbs().maxCoeff(), 1e-15) << model.body(i).name;
    }
    const MatrixXd M = crba(model, ws, q);
    const VectorXd zero = VectorXd::Zero(model.nv());
    const VectorXd g = generalized_gravity(model, ws, q);
    MatrixXd M_rnea(model.nv(), model.nv());
    for (int i = 0; i < model.nv(); ++i) M_rnea.col(i) = rnea(model, ws, q, zero, VectorXd::Unit(model.nv(), i)) - g;
    EXPECT_LT(testing::relative_error(M, M_rnea), 1e-11) << "trial " << trial;
    for (int root : {tilted_body, base, free}) {  // the closed-form blocks are symmetric to the bit
      const int iv = model.body(root).joint.v_index;
      EXPECT_EQ(MatrixXd(M.block<6, 6>(iv, iv)), MatrixXd(M.block<6, 6>(iv, iv).transpose())) << model.body(root).name;
    }
    const MatrixXd blocks = crba_trees(model, ws, q).dense();
    EXPECT_EQ(blocks, M) << "trial " << trial;
    generalized_momentum(model, ws, q, v);
    EXPECT_LT(testing::relative_error(ws.momentum, M * v), 1e-12) << "trial " << trial;
  }
}

// A forest of five trees whose links are added interleaved (ModelBuilder::build renumbers them
// tree by tree): a random fixed-base tree with armature, a random floating tree, a free box,
// a revolute-prismatic chain on the world and a second free body.
Model make_forest(std::mt19937& rng) {
  ModelBuilder b("forest");
  RandomLinks draw{rng};
  auto inertia = [&]() { return draw.inertia(); };
  auto axis = [&]() { return draw.axis(); };
  auto with_armature = [&](JointSpec j) {
    j.armature = 0.1 + 0.05 * draw.um(rng);
    return j;
  };
  b.add_link("a0", "world", with_armature(testing::revolute("a0_joint", axis())), inertia());
  b.add_link("f0", "world", testing::floating("f0_joint"), inertia());
  b.add_link("a1", "a0", with_armature(testing::revolute("a1_joint", axis(), testing::random_transform(rng))), inertia());
  b.add_link("box", "world", testing::floating("box_joint"), inertia());
  b.add_link("f1", "f0", testing::revolute("f1_joint", axis(), testing::random_transform(rng)), inertia());
  b.add_link("a2", "a0", with_armature(testing::prismatic("a2_joint", axis(), testing::random_transform(rng))), inertia());
  b.add_link("c0", "world", testing::revolute("c0_joint", axis(), testing::random_transform(rng)), inertia());
  b.add_link("f2", "f0", testing::prismatic("f2_joint", axis(), testing::random_transform(rng)), inertia());
  b.add_link("c1", "c0", testing::prismatic("c1_joint", axis(), testing::random_transform(rng)), inertia());
  b.add_link("f3", "f1", testing::fixed("f3_joint", testing::random_transform(rng)), inertia());
  b.add_link("ball", "world", testing::floating("ball_joint"), inertia());
  b.add_link("a3", "a2", with_armature(testing::revolute("a3_joint", axis(), testing::random_transform(rng))), inertia());
  return b.build();
}

TEST(CrbaTreesTest, BlocksAreTheDenseMassMatrixOfEachTreeAndRneaColumns) {
  std::mt19937 rng(21);
  const Model model = make_forest(rng);
  Workspace ws(model);
  const TreeMassMatrix& trees = ws.M_trees;
  ASSERT_EQ(trees.num_trees(), 5);
  ASSERT_EQ(trees.nv(), model.nv());
  // The trees tile the bodies and the velocities in order.
  int next_body = 1, next_v = 0;
  for (const TreeMassMatrix::Tree& t : trees.trees()) {
    EXPECT_EQ(t.first_body, next_body);
    EXPECT_EQ(t.v_start, next_v);
    for (int b = t.first_body; b < t.end_body; ++b) EXPECT_EQ(model.body(b).tree, t.first_body);
    next_body = t.end_body;
    next_v += t.nv;
  }
  EXPECT_EQ(next_body, model.num_bodies());
  EXPECT_EQ(next_v, model.nv());
  for (int trial = 0; trial < 5; ++trial) {
    const VectorXd q = random_configuration(model, rng);
    crba_trees(model, ws, q);
    const MatrixXd blocks = ws.M_trees.dense();
    // Independent truth: column i of M is RNEA(q, 0, e_i) − RNEA(q, 0, 0) (RNEA adds the
    // armature term armature_i v̇_i itself).
    const VectorXd zero = VectorXd::Zero(model.nv());
    const VectorXd g = generalized_gravity(model, ws, q);
    MatrixXd M_rnea(model.nv(), model.nv());
    for (int i = 0; i < model.nv(); ++i) M_rnea.col(i) = rnea(model, ws, q, zero, VectorXd::Unit(model.nv(), i)) - g;
    ASSERT_TRUE(model.has_armature());
    EXPECT_LT(testing::relative_error(blocks, M_rnea), 1e-11) << "trial " << trial;
    // The dense crba: every tree's block equal, every entry between trees zero.
    const MatrixXd M = crba(model, ws, q);
    EXPECT_LT(testing::relative_error(M, M_rnea), 1e-11);
    for (int a = 0; a < trees.num_trees(); ++a)
      for (int b = 0; b < trees.num_trees(); ++b) {
        const TreeMassMatrix::Tree &ta = trees.tree(a), &tb = trees.tree(b);
        const MatrixXd block = M.block(ta.v_start, tb.v_start, ta.nv, tb.nv);
        if (a == b) EXPECT_EQ((block - trees.block(a)).cwiseAbs().maxCoeff(), 0.0) << "tree " << a;
        else EXPECT_EQ(block.cwiseAbs().maxCoeff(), 0.0) << "trees " << a << ", " << b;
      }
    // From joint poses: the same numbers after forward kinematics at q.
    forward_kinematics(model, ws, q);
    EXPECT_EQ((crba_trees_from_joint_poses(model, ws).dense() - blocks).cwiseAbs().maxCoeff(), 0.0);
  }
}

TEST(CrbaTreesTest, DenseMassMatrixIsAllocatedOnlyWhenAskedFor) {
  // 300 free bodies: the dense M would be 1800² entries; the Workspace and crba_trees hold 300
  // blocks of 6 × 6.
  ModelBuilder b("bodies");
  std::mt19937 rng(3);
  for (int i = 0; i < 300; ++i)
    b.add_link("body" + std::to_string(i), "world", testing::floating("joint" + std::to_string(i)),
               math::SpatialInertia::FromCenterOfMass(1.0, math::Vector3::Zero(), testing::random_rotational_inertia(rng)));
  const Model model = b.build();
  Workspace ws(model);
  EXPECT_EQ(ws.M.size(), 0);
  const VectorXd q = random_configuration(model, rng);
  const TreeMassMatrix& M_trees = crba_trees(model, ws, q);
  EXPECT_EQ(ws.M.size(), 0);
  ASSERT_EQ(M_trees.num_trees(), 300);
  for (int t = 0; t < M_trees.num_trees(); ++t) ASSERT_EQ(M_trees.block(t).size(), 36);
  const MatrixXd& M = crba(model, ws, q);
  EXPECT_EQ(M.rows(), 1800);
  EXPECT_EQ(M.cols(), 1800);
  EXPECT_EQ((M - M_trees.dense()).cwiseAbs().maxCoeff(), 0.0);
}

}  // namespace
}  // namespace coulomb::multibody
