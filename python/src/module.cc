// coulomb._core: the nanobind extension behind the Python package `coulomb` (python/coulomb).
#include "common.h"
#include "coulomb/io/scene_loader.h"
#include "coulomb/io/urdf_loader.h"

NB_MODULE(_core, m) {
  using namespace coulomb;
  namespace nb = nanobind;
  m.doc() = "coulomb's C++ library: models, rigid-body algorithms, scenes, the SAP simulator, writers and "
            "whole rollouts (coulomb.batch). Use it through the package `coulomb`.";
  // C++ exceptions keep their message (file, line, key and value): SceneError and UrdfError are
  // ValueErrors of their own; std::invalid_argument → ValueError, std::out_of_range → IndexError,
  // std::runtime_error → RuntimeError (nanobind's translations).
  nb::exception<io::SceneError>(m, "SceneError", PyExc_ValueError);
  nb::exception<io::UrdfError>(m, "UrdfError", PyExc_ValueError);
  python::bind_model(m);
  python::bind_scene(m);
  python::bind_simulator(m);
  python::bind_output(m);
  python::bind_rollout(m);
  python::bind_inverse_dynamics(m);
}
