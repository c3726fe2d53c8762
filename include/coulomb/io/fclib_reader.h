// FCLIB files (Acary, Brémond, Koziara, Pérignon, "FCLIB: a collection of discrete 3D frictional
// contact problems", INRIA RT-0444, 2014): HDF5 files holding one global problem (M, H, f, w, μ;
// solvers/global_contact_problem.h) or one local problem (Delassus W, q, μ), optionally a
// reference solution (v, u, r) and initial guesses. Read and written through Debian's
// libfclib-dev (fclib_read_global, fclib_read_local, fclib_read_solution, fclib_write_global,
// fclib_write_solution); HDF5 stays inside fclib_reader.cc.
//
// libfclib calls exit() when a dataset it expects is missing and reads datasets into buffers
// sized from the file's own m, n, nz, so every file is first checked with HDF5 (groups, datasets,
// their sizes against m, n, nz, nzmax) before libfclib sees it: a malformed file is an FclibError,
// never an exit or an overflow.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <Eigen/Core>
#include <Eigen/SparseCore>

#include "coulomb/solvers/global_contact_problem.h"

namespace coulomb::io {

/// Raised for a file that is not a usable FCLIB problem. what() starts with the path and names
/// the HDF5 object (field) and the offending value, e.g.
///   "box.hdf5: /fclib_global/vectors/mu[3] (friction coefficient of contact 3) is negative: -0.5"
///   "caps.hdf5: local problem (W, q, mu): not supported by `coulomb fclib` (SAP needs the primal M, H)"
class FclibError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class FclibProblemKind { kGlobal, kLocal };

struct FclibInfo {
  std::string title, description, math_info;
};

/// A solution or guess as stored (empty vectors for parts the file does not have).
struct FclibSolution {
  Eigen::VectorXd v;  ///< n_v global velocities (global problems)
  Eigen::VectorXd u;  ///< 3n_c local velocities, normal first
  Eigen::VectorXd r;  ///< 3n_c impulses, normal first [N·s]
};

struct FclibGlobalFile {
  std::string path;
  solvers::GlobalContactProblem problem;
  FclibInfo info;
  std::optional<FclibSolution> solution;  ///< /solution, when present
  int num_guesses = 0;                    ///< /guesses/number_of_guesses (not read: see read_fclib_global)
};

/// A local problem u = W r + q, C*_μ ∋ ũ ⊥ r ∈ C_μ (FCLIB §2.1).
struct FclibLocalFile {
  std::string path;
  Eigen::SparseMatrix<double> W;  ///< 3n_c × 3n_c Delassus operator [1/kg]
  Eigen::VectorXd q;              ///< 3n_c [m/s]
  Eigen::VectorXd mu;             ///< n_c
  FclibInfo info;
  std::optional<FclibSolution> solution;
  int num_guesses = 0;
};

/// Whether `path` holds a global or a local problem. Throws FclibError for a missing file, a
/// file that is not HDF5, or an HDF5 file with neither /fclib_global nor /fclib_local.
FclibProblemKind fclib_problem_kind(const std::string& path);

/// Reads the global problem of `path` (spacedim 3) and its solution when present, converting
/// CSparse matrices (triplet nz ≥ 0, CSC nz = −1, CSR nz = −2; duplicates summed) to Eigen.
/// Throws FclibError naming the file and field for: a missing or non-HDF5 file; a local problem
/// (with the "not supported" message above); missing datasets; sizes that do not match
/// (M n_v × n_v, H n_v × 3n_c, f, w, μ, solution v/u/r); spacedim ≠ 3; equality constraints
/// (G, b: not supported); out-of-range indices; NaN/inf; μ < 0; a non-symmetric M. Guesses are
/// counted, not read (libfclib opens the file read-write to read them).
FclibGlobalFile read_fclib_global(const std::string& path);

/// Reads a local problem (W, q, μ and the solution when present), with the same checks.
FclibLocalFile read_fclib_local(const std::string& path);

/// Writes `problem` as an FCLIB global problem (M and H in CSC), and `solution` (v, u, r: all
/// three sized as the problem says) when given, replacing `path`. Throws FclibError when the
/// problem is invalid (check_global_contact_problem) or the file cannot be written.
void write_fclib_global(const solvers::GlobalContactProblem& problem, const std::string& path,
                        const FclibInfo& info = {}, const FclibSolution* solution = nullptr);

}  // namespace coulomb::io
