// Shared declarations of the coulomb._core bindings (one file per part of the API).
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <memory>

#include <Eigen/Core>

#include "coulomb/scene/scene.h"
#include "coulomb/simulation/simulator.h"

namespace coulomb::python {

namespace nb = nanobind;
using namespace nanobind::literals;

void bind_model(nb::module_& m);
void bind_scene(nb::module_& m);
void bind_simulator(nb::module_& m);
void bind_output(nb::module_& m);
void bind_rollout(nb::module_& m);
void bind_inverse_dynamics(nb::module_& m);

/// A 1-d float64 vector from a NumPy array, a list or any sequence of numbers (through
/// numpy.asarray when it is not already an array nanobind takes). Raises TypeError naming `what`.
inline Eigen::VectorXd to_vector(nb::handle x, const char* what) {
  Eigen::VectorXd out;
  if (nb::try_cast(x, out)) return out;
  nb::object array = nb::module_::import_("numpy").attr("asarray")(x, "dtype"_a = "float64");
  if (nb::try_cast(array, out)) return out;
  throw nb::type_error((std::string(what) + ": expected a 1-d array of numbers").c_str());
}

/// A read-only NumPy view of `data` (shape `shape`, C order), kept valid by `owner` (the Python
/// object that owns the memory, e.g. the Simulator).
template <typename T>
nb::ndarray<nb::numpy, const T> readonly_view(const T* data, std::initializer_list<size_t> shape, nb::handle owner) {
  return nb::ndarray<nb::numpy, const T>(data, shape.size(), shape.begin(), owner);
}

/// A NumPy array that owns a copy of `data` (n entries, shape `shape`).
template <typename T>
nb::ndarray<nb::numpy, T> owned_copy(const T* data, size_t n, std::initializer_list<size_t> shape) {
  T* copy = new T[n > 0 ? n : 1];
  std::copy(data, data + n, copy);
  nb::capsule owner(copy, [](void* p) noexcept { delete[] static_cast<T*>(p); });
  return nb::ndarray<nb::numpy, T>(copy, shape.size(), shape.begin(), owner);
}

inline nb::ndarray<nb::numpy, double> copy_vector(const Eigen::VectorXd& x) {
  return owned_copy(x.data(), static_cast<size_t>(x.size()), {static_cast<size_t>(x.size())});
}

/// Row-major copy of a matrix.
inline nb::ndarray<nb::numpy, double> copy_matrix(const Eigen::MatrixXd& A) {
  Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> R = A;
  return owned_copy(R.data(), static_cast<size_t>(R.size()), {static_cast<size_t>(A.rows()), static_cast<size_t>(A.cols())});
}

/// Simulator parameters as `coulomb simulate` derives them from a scene (solver, L-stable friction
/// model, time step, integrator): the same run from Python and from the command line.
simulation::SimulatorParameters parameters_from_scene(const scene::Scene& scene);

/// A copy of a step's results with the time step, so that forces (impulse / δt) can be given.
struct StepResultsCopy {
  simulation::StepResults results;
  double time_step = 0.0;
};

/// The state a Python controller sees (copies).
struct StateCopy {
  double time = 0.0;
  Eigen::VectorXd q, v;
};

/// A simulation::Controller that calls `target.update(state, results, commands)` (a Python object)
/// with the GIL held: state a StateCopy, results a StepResultsCopy, commands the simulator's own
/// Commands (changed in place).
std::shared_ptr<simulation::Controller> make_callback_controller(nb::object target, double time_step);

/// One packed contact record of Simulator.contacts() (the NumPy structured dtype
/// coulomb.CONTACT_DTYPE mirrors it field by field, python/coulomb/__init__.py).
struct ContactRecord {
  std::int32_t body_a, body_b, geometry_a, geometry_b;
  double p_W[3];
  double n_W[3];
  double phi;
  double impulse_normal;
  double impulse_tangential[2];
  double impulse_W[3];
  double force_W[3];
  double slip_speed;
  std::int32_t region;
  std::int32_t padding;
};

/// The contacts of a StepResults as a byte array of ContactRecord (n × sizeof(ContactRecord)).
nb::ndarray<nb::numpy, std::uint8_t> contact_records(const simulation::StepResults& results, double time_step);

}  // namespace coulomb::python
