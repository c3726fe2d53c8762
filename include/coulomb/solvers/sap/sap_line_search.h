// The SAP line search (Castro et al. §IV-B/C; digest §3.3): ℓ(α) = ℓ_p(v + α Δv) and its
// first two derivatives in O(n) per α after one O(nnz) precomputation per Newton step, an
// exact search (safeguarded Newton–Raphson with bisection, "rtsafe", on dℓ/dα over
// [0, α_max]) and Armijo backtracking.
#pragma once

#include <limits>
#include <vector>

#include <Eigen/Core>

#include "coulomb/solvers/sap/sap_friction_cone_constraint.h"
#include "coulomb/solvers/sap/sap_problem.h"

namespace coulomb::solvers::sap {

/// ℓ(α) along v + α Δv. Precomputes Δv_c = J Δv, Δp = A Δv, Δvᵀ Δp and Δpᵀ (v − v*); then
///   ℓ(α)   = ℓ_A(0) + α Δpᵀ(v − v*) + ½ α² ΔvᵀΔp + Σ_i ℓ_i(v_c + α Δv_c)
///   ℓ'(α)  = Δpᵀ(v − v*) + α ΔvᵀΔp − Δv_cᵀ γ(α)
///   ℓ''(α) = ΔvᵀΔp + Δv_cᵀ G(α) Δv_c.
class SapLineSearchFunction {
 public:
  /// An empty function; call reset() before use.
  SapLineSearchFunction() = default;
  /// v, Δv: n_v; vc = J v: num_rows. Keeps references to `problem` only.
  SapLineSearchFunction(const SapProblem& problem, const Eigen::Ref<const Eigen::VectorXd>& v,
                        const Eigen::Ref<const Eigen::VectorXd>& vc, const Eigen::Ref<const Eigen::VectorXd>& dv);
  /// Re-targets the function to a new line; reuses its buffers (no allocation when the sizes
  /// have not grown).
  void reset(const SapProblem& problem, const Eigen::Ref<const Eigen::VectorXd>& v,
             const Eigen::Ref<const Eigen::VectorXd>& vc, const Eigen::Ref<const Eigen::VectorXd>& dv);
  /// As reset(), with v − v* and A(v − v*) (n_v each) already computed by the caller.
  void reset(const SapProblem& problem, const Eigen::Ref<const Eigen::VectorXd>& dv_minus,
             const Eigen::Ref<const Eigen::VectorXd>& A_dv_minus, const Eigen::Ref<const Eigen::VectorXd>& vc,
             const Eigen::Ref<const Eigen::VectorXd>& dv);

  /// Island mode (SapSolver on a problem whose constraints fall into independent islands: the
  /// cost is a sum of one term per island, each minimized along its own part of Δv): the line
  /// restricted to the constraints `constraints[0, count)` and the trees they touch. The caller
  /// passes v_c = J v and Δv_c = J Δv (num_rows each; they must outlive the calls to cost() and
  /// derivative()) and the island's scalars ℓ_A(0) = ½ (v − v*)ᵀA(v − v*), Δpᵀ(v − v*) and
  /// ΔvᵀΔp over its trees. Rows of other constraints are neither read nor written.
  void reset_island(const SapProblem& problem, const double* vc, const double* dvc, double cost_A0, double r0,
                    double dv_dp, const int* constraints, int count);
  /// ℓ(α) [J].
  double cost(double alpha) const;
  /// ℓ'(α); when second != nullptr also ℓ''(α).
  double derivative(double alpha, double* second = nullptr) const;

 private:
  void add_constraint(int i);  // into cones_ or others_

  const SapProblem* problem_ = nullptr;
  Eigen::VectorXd vc_, dvc_, dv_minus_, dp_, a_dv_minus_;
  // v_c and Δv_c the evaluations read: this object's vc_ and dvc_ after reset(), the caller's
  // after reset_island().
  const double* vc_data_ = nullptr;
  const double* dvc_data_ = nullptr;
  // The constraints on the line (all after reset(), the island's after reset_island()): the
  // frictional contacts (their inline kernel) and the others (the virtual calc_along).
  struct Cone {
    const SapFrictionConeConstraint* constraint;
    int row;
  };
  std::vector<Cone> cones_;
  std::vector<int> others_;
  // The contacts along the line for derivative()'s vector kernel, packed once per line (v_c and
  // Δv_c are fixed along it, only α moves): blocks of 4 contacts, each block kPackedFields
  // fields of 4 lanes (y(0), dy/dα, Δv_c, the cone's constants); the last block is padded with
  // contacts out of contact, which add nothing.
  void pack_cones();
  static constexpr int kPackedFields = 16;
  std::vector<double> packed_;
  int packed_blocks_ = 0;
  double cost_A0_ = 0.0, r0_ = 0.0, dv_dp_ = 0.0;
  mutable Eigen::VectorXd gamma_, vc_alpha_;
};

struct LineSearchOutcome {
  double alpha = 0.0;
  int iterations = 0;
  bool descent = true;  ///< false if ℓ'(0) ≥ 0: not a descent direction
};

/// Root of ℓ'(α) on [0, alpha_max] by rtsafe; α_max when ℓ'(α_max) ≤ 0. Stops when
/// |ℓ'(α)| ≤ f_tolerance · |ℓ'(0)| or the bracket is below machine precision.
/// d0: ℓ'(0) when the caller has it (SapSolver: Δvᵀ∇ℓ_p, from the evaluation that gave the
/// Newton step), saving one evaluation; NaN (the default) evaluates it.
LineSearchOutcome exact_line_search(const SapLineSearchFunction& f, double alpha_max, double f_tolerance,
                                    int max_iterations, double d0 = std::numeric_limits<double>::quiet_NaN());

/// Armijo backtracking: α = alpha_max ρᵏ for the first k with ℓ(α) < ℓ(0) + c α ℓ'(0).
LineSearchOutcome backtracking_line_search(const SapLineSearchFunction& f, double alpha_max, double rho, double c,
                                           int max_iterations);

}  // namespace coulomb::solvers::sap
