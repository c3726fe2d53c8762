#include "coulomb/io/fclib_reader.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <hdf5.h>
#include <hdf5_hl.h>

extern "C" {
#include <fclib.h>
}

#include "util/format.h"

namespace coulomb::io {

namespace {

namespace fs = std::filesystem;
using util::format_number;

// ---- HDF5 checks before libfclib reads (it exits on a missing dataset) -------------------------

// Silences HDF5's automatic error printing for its lifetime (errors are reported as FclibError).
class QuietHdf5 {
 public:
  QuietHdf5() {
    H5Eget_auto2(H5E_DEFAULT, &func_, &data_);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
  ~QuietHdf5() { H5Eset_auto2(H5E_DEFAULT, func_, data_); }
  QuietHdf5(const QuietHdf5&) = delete;
  QuietHdf5& operator=(const QuietHdf5&) = delete;

 private:
  H5E_auto2_t func_ = nullptr;
  void* data_ = nullptr;
};

class Hdf5File {
 public:
  explicit Hdf5File(const std::string& path) : path_(path) {
    if (!fs::exists(path)) throw FclibError(path + ": file not found");
    if (fs::is_directory(path)) throw FclibError(path + ": is a directory, not an FCLIB (HDF5) file");
    if (H5Fis_hdf5(path.c_str()) <= 0) throw FclibError(path + ": not an HDF5 file (FCLIB problems are HDF5 files)");
    id_ = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    if (id_ < 0) throw FclibError(path + ": HDF5 could not open the file");
  }
  ~Hdf5File() {
    if (id_ >= 0) H5Fclose(id_);
  }
  Hdf5File(const Hdf5File&) = delete;
  Hdf5File& operator=(const Hdf5File&) = delete;

  hid_t id() const { return id_; }
  const std::string& path() const { return path_; }

  // Whether every component of the absolute object path exists (H5Lexists needs the parents).
  bool exists(const std::string& object) const {
    size_t pos = 0;
    while (pos != std::string::npos) {
      pos = object.find('/', pos + 1);
      const std::string prefix = object.substr(0, pos);
      if (H5Lexists(id_, prefix.c_str(), H5P_DEFAULT) <= 0) return false;
    }
    return true;
  }

  [[noreturn]] void fail(const std::string& object, const std::string& what) const {
    throw FclibError(path_ + ": " + object + ": " + what);
  }

  // Number of elements of dataset `object` (1 for a scalar); fails if it is missing, not a
  // dataset, of another class than `expected` or of rank > 1.
  hsize_t size(const std::string& object, H5T_class_t expected) const {
    if (!exists(object)) fail(object, "missing");
    int rank = -1;
    if (H5LTget_dataset_ndims(id_, object.c_str(), &rank) < 0) fail(object, "is not a dataset");
    if (rank > 1) fail(object, "has rank " + std::to_string(rank) + ", expected a vector");
    hsize_t dims[1] = {1};
    H5T_class_t type_class = H5T_NO_CLASS;
    size_t type_size = 0;
    if (H5LTget_dataset_info(id_, object.c_str(), rank == 0 ? nullptr : dims, &type_class, &type_size) < 0)
      fail(object, "is not a dataset");
    if (type_class != expected)
      fail(object, expected == H5T_INTEGER ? "is not an integer dataset" : "is not a floating-point dataset");
    return rank == 0 ? 1 : dims[0];
  }

  int read_int(const std::string& object) const {
    if (size(object, H5T_INTEGER) != 1) fail(object, "must hold one integer");
    int value = 0;
    if (H5LTread_dataset_int(id_, object.c_str(), &value) < 0) fail(object, "could not be read");
    return value;
  }

  void expect_doubles(const std::string& object, hsize_t expected, const std::string& meaning) const {
    const hsize_t n = size(object, H5T_FLOAT);
    if (n != expected)
      fail(object, "has " + std::to_string(n) + " entries, expected " + std::to_string(expected) + " (" + meaning + ")");
  }

  void expect_string_if_present(const std::string& object) const {
    if (!exists(object)) return;
    H5T_class_t type_class = H5T_NO_CLASS;
    size_t type_size = 0;
    int rank = -1;
    if (H5LTget_dataset_ndims(id_, object.c_str(), &rank) < 0 || rank != 0) fail(object, "is not a string dataset");
    if (H5LTget_dataset_info(id_, object.c_str(), nullptr, &type_class, &type_size) < 0 || type_class != H5T_STRING)
      fail(object, "is not a string dataset");
  }

 private:
  std::string path_;
  hid_t id_ = -1;
};

// What the checks learnt about one stored matrix (for the conversion's index checks).
struct MatrixShape {
  int m = 0, n = 0, nz = 0, nzmax = 0;
  hsize_t stored_i = 0, stored_x = 0;  // entries actually in the file
};

// Checks the group `group` holds a CSparse matrix libfclib can read into its buffers: nzmax, m, n,
// nz; p, i, x with the sizes libfclib's writer gives them; the optional info datasets complete.
MatrixShape check_matrix(const Hdf5File& file, const std::string& group, int rows, int cols) {
  if (!file.exists(group)) file.fail(group, "missing");
  MatrixShape s;
  s.m = file.read_int(group + "/m");
  s.n = file.read_int(group + "/n");
  s.nz = file.read_int(group + "/nz");
  s.nzmax = file.read_int(group + "/nzmax");
  if (s.m < 0) file.fail(group + "/m", "is negative: " + std::to_string(s.m));
  if (s.n < 0) file.fail(group + "/n", "is negative: " + std::to_string(s.n));
  if (s.nzmax < 0) file.fail(group + "/nzmax", "is negative: " + std::to_string(s.nzmax));
  if (rows >= 0 && s.m != rows)
    file.fail(group + "/m", "is " + std::to_string(s.m) + ", expected " + std::to_string(rows));
  if (cols >= 0 && s.n != cols)
    file.fail(group + "/n", "is " + std::to_string(s.n) + ", expected " + std::to_string(cols));
  const hsize_t p = file.size(group + "/p", H5T_INTEGER);
  s.stored_i = file.size(group + "/i", H5T_INTEGER);
  s.stored_x = file.size(group + "/x", H5T_FLOAT);
  const auto nzmax = static_cast<hsize_t>(s.nzmax);
  if (s.nz >= 0) {  // triplet: i = row indices, p = column indices, nz of them
    if (s.nz > s.nzmax) file.fail(group + "/nz", "is " + std::to_string(s.nz) + " > nzmax " + std::to_string(s.nzmax));
    const auto nz = static_cast<hsize_t>(s.nz);
    if (p != nz) file.fail(group + "/p", "has " + std::to_string(p) + " entries, expected nz = " + std::to_string(s.nz));
    if (s.stored_i != nz)
      file.fail(group + "/i", "has " + std::to_string(s.stored_i) + " entries, expected nz = " + std::to_string(s.nz));
    if (s.stored_x < nz || s.stored_x > nzmax)
      file.fail(group + "/x", "has " + std::to_string(s.stored_x) + " entries, expected nz = " + std::to_string(s.nz) +
                                  " to nzmax = " + std::to_string(s.nzmax));
  } else if (s.nz == -1 || s.nz == -2) {  // CSC / CSR: p has n + 1 / m + 1 entries
    const auto outer = static_cast<hsize_t>(s.nz == -1 ? s.n : s.m) + 1;
    if (p != outer)
      file.fail(group + "/p", "has " + std::to_string(p) + " entries, expected " + std::to_string(outer) +
                                  (s.nz == -1 ? " (n + 1, compressed columns)" : " (m + 1, compressed rows)"));
    if (s.stored_i > nzmax || s.stored_x > nzmax)
      file.fail(group, "i and x have " + std::to_string(s.stored_i) + " and " + std::to_string(s.stored_x) +
                           " entries, more than nzmax = " + std::to_string(s.nzmax));
  } else {
    file.fail(group + "/nz", "is " + std::to_string(s.nz) + ": not a CSparse layout (>= 0 triplet, -1 CSC, -2 CSR)");
  }
  if (file.exists(group + "/conditioning")) {  // libfclib then reads all of the matrix info
    for (const char* name : {"/conditioning", "/determinant"}) file.size(group + name, H5T_FLOAT);
    file.read_int(group + "/rank");
    file.expect_string_if_present(group + "/comment");
  }
  return s;
}

void check_info(const Hdf5File& file, const std::string& group) {
  for (const char* name : {"/title", "/description", "/math_info"}) file.expect_string_if_present(group + name);
}

int check_spacedim(const Hdf5File& file, const std::string& object) {
  const int spacedim = file.read_int(object);
  if (spacedim != 3)
    file.fail(object, "is " + std::to_string(spacedim) + ": only 3-D frictional contact (spacedim 3) is supported");
  return spacedim;
}

// /solution: v (n_v, global only), u and r (3n_c), all present.
bool check_solution(const Hdf5File& file, int nv, int m) {
  if (!file.exists("/solution")) return false;
  if (nv > 0) file.expect_doubles("/solution/v", static_cast<hsize_t>(nv), "n_v global velocities");
  file.expect_doubles("/solution/u", static_cast<hsize_t>(m), "3 n_c local velocities");
  file.expect_doubles("/solution/r", static_cast<hsize_t>(m), "3 n_c impulses");
  return true;
}

int count_guesses(const Hdf5File& file) {
  if (!file.exists("/guesses/number_of_guesses")) return 0;
  return std::max(0, file.read_int("/guesses/number_of_guesses"));
}

// ---- conversion ------------------------------------------------------------------------------

Eigen::SparseMatrix<double> to_eigen(const fclib_matrix& a, const MatrixShape& shape, const std::string& source) {
  std::vector<Eigen::Triplet<double>> entries;
  auto add = [&](long k, int row, int col) {
    if (row < 0 || row >= a.m || col < 0 || col >= a.n)
      throw FclibError(source + ": entry " + std::to_string(k) + " at (" + std::to_string(row) + ", " +
                       std::to_string(col) + ") is outside the " + std::to_string(a.m) + " x " + std::to_string(a.n) +
                       " matrix");
    entries.emplace_back(row, col, a.x[k]);
  };
  if (a.nz >= 0) {
    // CSparse's triplet form (which the FCLIB files follow, though fclib.h's comment says
    // otherwise): i = row indices, p = column indices.
    for (int k = 0; k < a.nz; ++k) add(k, a.i[k], a.p[k]);
  } else {
    const int outer = a.nz == -1 ? a.n : a.m;
    const long stored = static_cast<long>(std::min(shape.stored_i, shape.stored_x));
    if (a.p[0] != 0) throw FclibError(source + "/p[0] is " + std::to_string(a.p[0]) + ", expected 0");
    for (int j = 0; j < outer; ++j) {
      if (a.p[j + 1] < a.p[j] || a.p[j + 1] > stored)
        throw FclibError(source + "/p[" + std::to_string(j + 1) + "] is " + std::to_string(a.p[j + 1]) +
                         ": pointers must be non-decreasing and at most the " + std::to_string(stored) +
                         " stored entries");
      for (int k = a.p[j]; k < a.p[j + 1]; ++k) {
        if (a.nz == -1)
          add(k, a.i[k], j);
        else
          add(k, j, a.i[k]);
      }
    }
  }
  Eigen::SparseMatrix<double> out(a.m, a.n);
  out.setFromTriplets(entries.begin(), entries.end());  // duplicates summed, as CSparse does
  return out;
}

Eigen::VectorXd to_vector(const double* x, int n) {
  Eigen::VectorXd v(n);
  for (int k = 0; k < n; ++k) v[k] = x[k];
  return v;
}

FclibInfo to_info(const fclib_info* info) {
  FclibInfo out;
  if (info == nullptr) return out;
  if (info->title) out.title = info->title;
  if (info->description) out.description = info->description;
  if (info->math_info) out.math_info = info->math_info;
  return out;
}

void free_info(fclib_info* info) {
  if (info == nullptr) return;
  std::free(info->title);
  std::free(info->description);
  std::free(info->math_info);
  std::free(info);
}

}  // namespace

FclibProblemKind fclib_problem_kind(const std::string& path) {
  const QuietHdf5 quiet;
  const Hdf5File file(path);
  if (file.exists("/fclib_global")) return FclibProblemKind::kGlobal;
  if (file.exists("/fclib_local")) return FclibProblemKind::kLocal;
  throw FclibError(path + ": not an FCLIB file (neither /fclib_global nor /fclib_local)");
}

FclibGlobalFile read_fclib_global(const std::string& path) {
  const QuietHdf5 quiet;
  MatrixShape M_shape, H_shape;
  bool has_solution = false;
  FclibGlobalFile out;
  out.path = path;
  int nv = 0, m = 0;
  {
    const Hdf5File file(path);
    if (!file.exists("/fclib_global")) {
      if (file.exists("/fclib_local"))
        throw FclibError(path + ": local problem (W, q, mu): not supported by `coulomb fclib` (SAP needs the primal M, H)");
      throw FclibError(path + ": not an FCLIB file (neither /fclib_global nor /fclib_local)");
    }
    check_spacedim(file, "/fclib_global/spacedim");
    if (file.exists("/fclib_global/G"))
      file.fail("/fclib_global/G", "equality constraints (G, b) are not supported by `coulomb fclib`");
    M_shape = check_matrix(file, "/fclib_global/M", -1, -1);
    nv = M_shape.m;
    if (M_shape.n != nv)
      file.fail("/fclib_global/M", "is " + std::to_string(M_shape.m) + " x " + std::to_string(M_shape.n) + ", not square");
    H_shape = check_matrix(file, "/fclib_global/H", nv, -1);
    m = H_shape.n;
    if (m % 3 != 0)
      file.fail("/fclib_global/H/n", "is " + std::to_string(m) + ", not a multiple of 3 (three columns per contact)");
    file.expect_doubles("/fclib_global/vectors/f", static_cast<hsize_t>(nv), "n_v = rows of M");
    file.expect_doubles("/fclib_global/vectors/w", static_cast<hsize_t>(m), "3 n_c = columns of H");
    file.expect_doubles("/fclib_global/vectors/mu", static_cast<hsize_t>(m / 3), "n_c = columns of H / 3");
    check_info(file, "/fclib_global/info");
    has_solution = check_solution(file, nv, m);
    out.num_guesses = count_guesses(file);
  }

  fclib_global* g = fclib_read_global(path.c_str());
  if (g == nullptr) throw FclibError(path + ": libfclib could not read the global problem");
  struct Deleter {
    void operator()(fclib_global* p) const {
      fclib_delete_global(p);  // frees the members, not p itself
      std::free(p);
    }
  };
  std::unique_ptr<fclib_global, Deleter> owner(g);
  out.problem.M = to_eigen(*g->M, M_shape, path + ": /fclib_global/M");
  out.problem.H = to_eigen(*g->H, H_shape, path + ": /fclib_global/H");
  out.problem.f = to_vector(g->f, nv);
  out.problem.w = to_vector(g->w, m);
  out.problem.mu = to_vector(g->mu, m / 3);
  out.info = to_info(g->info);
  free_info(g->info);  // ours to free: libfclib versions differ in whether they free the struct
  g->info = nullptr;
  try {
    solvers::check_global_contact_problem(out.problem, path + ": /fclib_global: ");
  } catch (const std::invalid_argument& e) {
    throw FclibError(e.what());
  }

  if (has_solution) {
    fclib_solution* s = fclib_read_solution(path.c_str());
    if (s == nullptr) throw FclibError(path + ": /solution could not be read");
    FclibSolution solution{to_vector(s->v, nv), to_vector(s->u, m), to_vector(s->r, m)};
    std::free(s->v);
    std::free(s->u);
    std::free(s->r);
    std::free(s);
    out.solution = std::move(solution);
  }
  return out;
}

FclibLocalFile read_fclib_local(const std::string& path) {
  const QuietHdf5 quiet;
  MatrixShape W_shape;
  bool has_solution = false;
  FclibLocalFile out;
  out.path = path;
  int m = 0;
  {
    const Hdf5File file(path);
    if (!file.exists("/fclib_local")) {
      if (file.exists("/fclib_global")) throw FclibError(path + ": holds a global problem, not a local one");
      throw FclibError(path + ": not an FCLIB file (neither /fclib_global nor /fclib_local)");
    }
    check_spacedim(file, "/fclib_local/spacedim");
    if (file.exists("/fclib_local/V") || file.exists("/fclib_local/R"))
      file.fail("/fclib_local/V", "mixed local problems (V, R, s) are not supported");
    W_shape = check_matrix(file, "/fclib_local/W", -1, -1);
    m = W_shape.m;
    if (W_shape.n != m) file.fail("/fclib_local/W", "is not square");
    if (m % 3 != 0) file.fail("/fclib_local/W/m", "is " + std::to_string(m) + ", not a multiple of 3");
    file.expect_doubles("/fclib_local/vectors/q", static_cast<hsize_t>(m), "3 n_c = rows of W");
    file.expect_doubles("/fclib_local/vectors/mu", static_cast<hsize_t>(m / 3), "n_c = rows of W / 3");
    check_info(file, "/fclib_local/info");
    has_solution = check_solution(file, 0, m);
    out.num_guesses = count_guesses(file);
  }
  fclib_local* l = fclib_read_local(path.c_str());
  if (l == nullptr) throw FclibError(path + ": libfclib could not read the local problem");
  struct Deleter {
    void operator()(fclib_local* p) const {
      fclib_delete_local(p);
      std::free(p);
    }
  };
  std::unique_ptr<fclib_local, Deleter> owner(l);
  out.W = to_eigen(*l->W, W_shape, path + ": /fclib_local/W");
  out.q = to_vector(l->q, m);
  out.mu = to_vector(l->mu, m / 3);
  out.info = to_info(l->info);
  free_info(l->info);
  l->info = nullptr;
  for (Eigen::Index i = 0; i < out.q.size(); ++i)
    if (!std::isfinite(out.q[i]))
      throw FclibError(path + ": /fclib_local/vectors/q[" + std::to_string(i) + "] is not finite: " + format_number(out.q[i]));
  for (Eigen::Index i = 0; i < out.mu.size(); ++i)
    if (!(out.mu[i] >= 0.0) || !std::isfinite(out.mu[i]))
      throw FclibError(path + ": /fclib_local/vectors/mu[" + std::to_string(i) + "] (friction coefficient of contact " +
                       std::to_string(i) + ") must be finite and >= 0, got " + format_number(out.mu[i]));
  if (has_solution) {
    fclib_solution* s = fclib_read_solution(path.c_str());
    if (s == nullptr) throw FclibError(path + ": /solution could not be read");
    FclibSolution solution{Eigen::VectorXd(), to_vector(s->u, m), to_vector(s->r, m)};
    std::free(s->u);
    std::free(s->r);
    std::free(s);
    out.solution = std::move(solution);
  }
  return out;
}

void write_fclib_global(const solvers::GlobalContactProblem& problem, const std::string& path, const FclibInfo& info,
                        const FclibSolution* solution) {
  try {
    solvers::check_global_contact_problem(problem, path + ": ");
  } catch (const std::invalid_argument& e) {
    throw FclibError(e.what());
  }
  const int nv = problem.num_dofs(), m = 3 * problem.num_contacts();
  if (solution != nullptr && (solution->v.size() != nv || solution->u.size() != m || solution->r.size() != m))
    throw FclibError(path + ": solution must have v (" + std::to_string(nv) + "), u and r (" + std::to_string(m) +
                     ") entries, got " + std::to_string(solution->v.size()) + ", " + std::to_string(solution->u.size()) +
                     ", " + std::to_string(solution->r.size()));
  const QuietHdf5 quiet;
  std::error_code ec;
  fs::remove(path, ec);

  // CSC copies that libfclib can take by non-const pointer.
  struct Csc {
    std::vector<int> p, i;
    std::vector<double> x;
    fclib_matrix matrix{};
  };
  auto to_csc = [](const Eigen::SparseMatrix<double>& A, Csc& c) {
    Eigen::SparseMatrix<double> a = A;
    a.makeCompressed();
    c.p.assign(a.outerIndexPtr(), a.outerIndexPtr() + a.cols() + 1);
    c.i.assign(a.innerIndexPtr(), a.innerIndexPtr() + a.nonZeros());
    c.x.assign(a.valuePtr(), a.valuePtr() + a.nonZeros());
    if (c.i.empty()) {  // HDF5 datasets of size 0 are fine, but keep the pointers valid
      c.i.push_back(0);
      c.x.push_back(0.0);
    }
    c.matrix.nzmax = static_cast<int>(a.nonZeros());
    c.matrix.m = static_cast<int>(a.rows());
    c.matrix.n = static_cast<int>(a.cols());
    c.matrix.p = c.p.data();
    c.matrix.i = c.i.data();
    c.matrix.x = c.x.data();
    c.matrix.nz = -1;
    c.matrix.info = nullptr;
  };
  Csc M, H;
  to_csc(problem.M, M);
  to_csc(problem.H, H);
  std::vector<double> f(problem.f.data(), problem.f.data() + nv), w(problem.w.data(), problem.w.data() + m),
      mu(problem.mu.data(), problem.mu.data() + m / 3);
  std::string title = info.title, description = info.description, math_info = info.math_info;
  fclib_info fi{title.data(), description.data(), math_info.data()};
  fclib_global g{};
  g.M = &M.matrix;
  g.H = &H.matrix;
  g.G = nullptr;
  g.mu = mu.data();
  g.f = f.data();
  g.b = nullptr;
  g.w = w.data();
  g.spacedim = 3;
  g.info = &fi;
  if (fclib_write_global(&g, path.c_str()) != 1) throw FclibError(path + ": libfclib could not write the global problem");
  if (solution != nullptr) {
    std::vector<double> v(solution->v.data(), solution->v.data() + nv), u(solution->u.data(), solution->u.data() + m),
        r(solution->r.data(), solution->r.data() + m);
    fclib_solution s{v.data(), u.data(), r.data(), nullptr};
    if (fclib_write_solution(&s, path.c_str()) != 1) throw FclibError(path + ": libfclib could not write the solution");
  }
}

}  // namespace coulomb::io
