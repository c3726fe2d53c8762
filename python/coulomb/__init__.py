"""coulomb: multibody dynamics with frictional contact (SAP), from Python.

The C++ library through nanobind (coulomb._core): models and the rigid-body algorithms, scenes,
the Simulator (GIL released while stepping), step results with contacts as NumPy structured
arrays, Python controllers, the writers of ``coulomb simulate`` and whole rollouts in C++
(``coulomb.batch``). Units SI; quaternions (w, x, y, z). docs/python.md is the guide.
"""
from __future__ import annotations

import os as _os
from typing import Union as _Union

import numpy as _np

from . import _core
from ._core import (  # noqa: F401  (re-exported)
    Actuator,
    Commands,
    ContactDefaults,
    InverseDynamics,
    Model,
    Recorder,
    Scene,
    SceneError,
    Simulator,
    State,
    StepResults,
    StepStats,
    TrajectoryWriter,
    UrdfError,
    Workspace,
    actuated_dofs,
    joint_dofs,
    load_urdf,
    write_report,
)

__all__ = [
    "Actuator", "Commands", "ContactDefaults", "Controller", "InverseDynamics", "actuated_dofs", "joint_dofs", "Model", "Recorder", "Scene", "SceneError",
    "Simulator", "State", "StepResults", "StepStats", "TrajectoryWriter", "UrdfError", "Workspace",
    "CONTACT_DTYPE", "CONTACT_REGIONS", "aba", "bias_forces", "crba", "frame_jacobian", "frame_pose",
    "generalized_gravity", "load_scene", "load_urdf", "rnea", "write_report",
]

#: One contact of a step (StepResults.contacts, Simulator.contacts()): bodies and geometries
#: (indices into Model.body_names and Scene.geometry_names; the normal points from A into B),
#: contact point p_W and unit normal n_W (world frame [m]), signed distance phi at the start of
#: the step [m] (< 0: overlap), impulse γ on B: normal [N·s], tangential in the contact frame's
#: (t1, t2) [N·s] and in the world frame [N·s], force_W = impulse_W / δt [N], slip speed [m/s]
#: and region (index into CONTACT_REGIONS). The layout is the C++ record's (no copy to view it).
CONTACT_DTYPE = _np.dtype(
    {
        "names": ["body_a", "body_b", "geometry_a", "geometry_b", "p_W", "n_W", "phi", "impulse_normal",
                  "impulse_tangential", "impulse_W", "force_W", "slip_speed", "region"],
        "formats": ["<i4", "<i4", "<i4", "<i4", ("<f8", (3,)), ("<f8", (3,)), "<f8", "<f8", ("<f8", (2,)),
                    ("<f8", (3,)), ("<f8", (3,)), "<f8", "<i4"],
        "offsets": [0, 4, 8, 12, 16, 40, 64, 72, 80, 96, 120, 144, 152],
        "itemsize": 160,
    }
)
#: Names of the values of CONTACT_DTYPE's ``region`` field.
CONTACT_REGIONS = ("no_contact", "stiction", "sliding")

assert CONTACT_DTYPE.itemsize == _core._CONTACT_RECORD_SIZE, "contact record layout out of sync with the C++ side"


def _vector(x) -> _np.ndarray:
    return _np.ascontiguousarray(x, dtype=_np.float64)


def rnea(model: Model, q, v, vdot, workspace: Workspace | None = None) -> _np.ndarray:
    """Inverse dynamics (recursive Newton–Euler): τ = M(q) v̇ + C(q, v) v + ∂V/∂q, shape (nv,) [N·m or N].

    q: (nq,); v: (nv,) [rad/s, m/s]; vdot: (nv,) [rad/s², m/s²]. Raises ValueError naming a wrong
    size or a non-finite coordinate. ``workspace`` (a Workspace of this model) avoids allocating one.
    """
    return _core.rnea(model, _vector(q), _vector(v), _vector(vdot), workspace)


def crba(model: Model, q, workspace: Workspace | None = None) -> _np.ndarray:
    """Mass matrix M(q) (composite-rigid-body algorithm), shape (nv, nv), symmetric positive definite."""
    return _core.crba(model, _vector(q), workspace)


def aba(model: Model, q, v, tau, workspace: Workspace | None = None) -> _np.ndarray:
    """Forward dynamics (articulated-body algorithm): v̇ = M⁻¹ (τ − b(q, v)), shape (nv,) [rad/s², m/s²].

    tau: (nv,) [N·m or N].
    """
    return _core.aba(model, _vector(q), _vector(v), _vector(tau), workspace)


def bias_forces(model: Model, q, v, workspace: Workspace | None = None) -> _np.ndarray:
    """Bias forces b(q, v) = C(q, v) v + ∂V/∂q, shape (nv,) [N·m or N], so that M v̇ + b = τ."""
    return _core.bias_forces(model, _vector(q), _vector(v), workspace)


def generalized_gravity(model: Model, q, workspace: Workspace | None = None) -> _np.ndarray:
    """Generalized gravity ∂V/∂q, shape (nv,) [N·m or N]."""
    return _core.generalized_gravity(model, _vector(q), workspace)


def frame_jacobian(model: Model, q, frame: int | str, reference_frame: str = "local_world_aligned",
                   workspace: Workspace | None = None) -> _np.ndarray:
    """Frame Jacobian, shape (6, nv), rows [ω; v]: J v is the spatial velocity of ``frame`` (name or index).

    reference_frame: "local_world_aligned" (ω and the velocity of the frame's origin, world axes),
    "world" (the spatial velocity in world coordinates, at the world origin) or "local" (the
    frame's axes).
    """
    return _core.frame_jacobian(model, _vector(q), frame, reference_frame, workspace)


def frame_pose(model: Model, q, frame: int | str, workspace: Workspace | None = None) -> _np.ndarray:
    """Pose of ``frame`` (name or index) in the world, a 4 × 4 homogeneous transform [m]."""
    return _core.frame_pose(model, _vector(q), frame, workspace)


class Controller:
    """Base class of controllers written in Python (Simulator.set_controller).

    ``update(state, results, commands)`` is called before every control period's first step with
    the state at its start (State: time [s], q (nq,), v (nv,)), the last step's StepResults and
    the simulator's Commands, which it changes in place (``commands.actuation[:] = u``,
    ``commands.q_target[:] = …``): one entry per actuator, Scene.actuators order. The commands
    hold until changed. Any object with such an ``update`` method will do.
    """

    def update(self, state: State, results: StepResults, commands: Commands) -> None:  # pragma: no cover
        raise NotImplementedError


def load_scene(source: _Union[str, "_os.PathLike[str]"], base_directory: str | None = None) -> Scene:
    """Loads a scene (docs/scene-format.md) from a file path or from YAML text.

    ``source`` is a path when it is an os.PathLike or a string naming an existing file (or ending
    in .yaml/.yml: then a missing file raises FileNotFoundError); any other string is YAML text,
    whose relative model paths are resolved against ``base_directory`` (default: the current
    directory). Raises SceneError naming the file, line, key and value.
    """
    if isinstance(source, _os.PathLike) or (
        isinstance(source, str) and "\n" not in source and (
            _os.path.isfile(source) or source.endswith((".yaml", ".yml")))):
        path = _os.fspath(source)
        if not _os.path.isfile(path):
            raise FileNotFoundError(f"scene file not found: {path}")
        scene = _core._load_scene_file(path)
        scene._origin = ("file", _os.path.abspath(path))
        return scene
    if not isinstance(source, str):
        raise TypeError(f"load_scene: expected a path or YAML text, got {type(source).__name__}")
    base = _os.path.abspath(base_directory if base_directory is not None else _os.getcwd())
    scene = _core._parse_scene(source, "<string>", base)
    scene._origin = ("text", source, base)
    return scene


from . import batch  # noqa: E402,F401
