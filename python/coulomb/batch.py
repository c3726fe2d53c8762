"""Many independent rollouts of one scene: ``coulomb.batch.rollout``.

Each rollout is a whole simulation in C++ (``coulomb._core._rollout``, the GIL released): the
scene with one set of parameters (initial state, contact parameters, masses, PD gains and
targets, feed-forward), stepped for ``duration`` seconds, returning the chosen signals as NumPy
arrays and a summary. The rollouts run in a local process pool sized to the cores (the default),
in this process (``backend="inline"``), or as Ray tasks (``backend="ray"``) on a running cluster
(``address=``) or a local Ray instance it starts. Results are bitwise identical whichever backend
and however many workers: every rollout is the same C++ computation from the same inputs
(``wall_time`` aside, a measurement).

A worker that dies mid-batch (killed, out of memory) loses nothing: its rollouts run again, up to
``max_retries`` times (Ray's task retries; the local pool is restarted and the unfinished rollouts
resubmitted).
"""
from __future__ import annotations

import concurrent.futures as _futures
import multiprocessing as _mp
import os as _os
from concurrent.futures.process import BrokenProcessPool as _BrokenProcessPool
from typing import Any, Dict, List, Optional, Sequence, Union

__all__ = ["rollout", "SIGNALS", "PARAMETER_KEYS"]

#: Signals a rollout can record, one row per recorded state (the initial state first):
#: time (T,) [s], q (T, nq), v (T, nv), energy (T,) [J], contacts (T,), max_penetration (T,) [m],
#: solver_iterations (T,), momentum_error (T,), mean_slip (T,) [m/s], actuator_forces
#: (T, num_actuators) [N·m or N], generalized_contact_forces (T, nv). Step statistics are 0 in
#: the initial row.
SIGNALS = ("time", "q", "v", "energy", "contacts", "max_penetration", "solver_iterations", "momentum_error",
           "mean_slip", "actuator_forces", "generalized_contact_forces")
#: Keys of one rollout's parameters: q0 (nq,), v0 (nv,), contact {mu, stiffness, dissipation_time,
#: hunt_crossley_dissipation, stiction_tolerance}, mass_scale {body: factor}, mass {body: kg}, kp,
#: kd, q_target, v_target, actuation (a number or one per actuator), time_step [s], integrator,
#: solver, contact_approximation.
PARAMETER_KEYS = ("q0", "v0", "contact", "mass_scale", "mass", "kp", "kd", "q_target", "v_target", "actuation",
                  "time_step", "integrator", "solver", "contact_approximation")
_CONTACT_FIELDS = ("mu", "stiffness", "dissipation_time", "hunt_crossley_dissipation", "stiction_tolerance")

# Scenes loaded in this process, by their origin (each worker loads a scene once per batch origin).
_scene_cache: Dict[tuple, Any] = {}


def _scene_origin(scene) -> tuple:
    """A picklable description of the scene every worker loads: ("file", path) or ("text", yaml, base)."""
    from . import Scene
    if isinstance(scene, Scene):
        origin = getattr(scene, "_origin", None)
        if origin is None:
            raise ValueError("coulomb.batch: this Scene was not made by coulomb.load_scene; pass its file path or "
                             "YAML text (variations go into `parameters`)")
        return tuple(origin)
    if isinstance(scene, (str, _os.PathLike)):
        from . import load_scene
        return tuple(load_scene(scene)._origin)
    raise TypeError(f"coulomb.batch: scene must be a path, YAML text or a Scene, got {type(scene).__name__}")


def _changes(scene, origin: tuple) -> dict:
    """What was changed in a Scene object since it was loaded, as rollout parameters (the workers
    load the scene from its origin, then apply these before each rollout's own parameters). Masses
    come back as scale factors of the loaded ones."""
    import numpy as np
    base = _load(origin)
    changes: dict = {}
    for key in ("time_step", "integrator", "solver"):
        if getattr(scene, key) != getattr(base, key):
            changes[key] = getattr(scene, key)
    contact = {f: getattr(scene.contact, f) for f in _CONTACT_FIELDS
               if getattr(scene.contact, f) != getattr(base.contact, f)}
    if contact:
        changes["contact"] = contact
    if scene.contact.approximation != base.contact.approximation:
        changes["contact_approximation"] = scene.contact.approximation
    if not np.array_equal(scene.q0, base.q0):
        changes["q0"] = scene.q0
    if not np.array_equal(scene.v0, base.v0):
        changes["v0"] = scene.v0
    masses, base_masses = scene.model.body_masses, base.model.body_masses
    names = scene.model.body_names
    scale = {names[b]: float(masses[b] / base_masses[b]) for b in range(1, len(names))
             if masses[b] != base_masses[b] and base_masses[b] > 0}
    if scale:
        changes["mass_scale"] = scale
    return changes


def _merge(changes: dict, parameters: dict) -> dict:
    """A rollout's parameters over the scene's changes (contact fields and masses merged by key)."""
    merged = dict(changes)
    for key, value in parameters.items():
        if key == "contact" and "contact" in merged and isinstance(value, dict):
            merged["contact"] = {**merged["contact"], **value}
        elif key == "mass_scale" and "mass_scale" in merged and isinstance(value, dict):
            combined = dict(merged["mass_scale"])
            for body, factor in value.items():
                combined[body] = combined.get(body, 1.0) * factor
            merged["mass_scale"] = combined
        else:
            merged[key] = value
    return merged


def _load(origin: tuple):
    scene = _scene_cache.get(origin)
    if scene is None:
        from . import _core
        if origin[0] == "file":
            scene = _core._load_scene_file(origin[1])
        else:
            scene = _core._parse_scene(origin[1], "<string>", origin[2])
        _scene_cache.clear()  # one batch's scene at a time
        _scene_cache[origin] = scene
    return scene


def _run_one(origin: tuple, index: int, parameters: dict, duration: float, signals: Sequence[str],
             record_every: int, controller, decimation: int, pid_dir: Optional[str] = None) -> dict:
    """One rollout (in a worker process, a Ray worker or this process)."""
    from . import _core
    if pid_dir:  # tests (COULOMB_BATCH_PID_DIR): which process runs which rollout, to kill it mid-rollout
        with open(_os.path.join(pid_dir, f"{index}-{_os.getpid()}"), "w"):
            pass
    scene = _load(origin)
    if isinstance(controller, type) or (callable(controller) and not hasattr(controller, "update")):
        controller = controller()  # a factory: a fresh controller per rollout
    result = _core._rollout(scene, dict(parameters), float(duration), list(signals), int(record_every),
                            controller, int(decimation))
    result["index"] = index
    return result


def _default_workers() -> int:
    try:
        return len(_os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return _os.cpu_count() or 1


def _run_local(tasks: List[tuple], workers: int, max_retries: int, start_method: Optional[str]) -> List[dict]:
    results: Dict[int, dict] = {}
    attempts = {task[1]: 0 for task in tasks}
    pending = list(tasks)
    if start_method is None:
        start_method = "forkserver" if "forkserver" in _mp.get_all_start_methods() else "spawn"
    context = _mp.get_context(start_method)
    if start_method == "forkserver":
        # The server imports numpy and coulomb once; every worker is a fork of it (a new pool starts
        # in milliseconds instead of each worker importing them anew). The server process has run no
        # simulation: forking it is safe.
        context.set_forkserver_preload(["coulomb"])
    while pending:
        broken = False
        with _futures.ProcessPoolExecutor(max_workers=min(workers, len(pending)), mp_context=context) as pool:
            futures = {pool.submit(_run_one, *task): task for task in pending}
            for future in _futures.as_completed(futures):
                task = futures[future]
                try:
                    results[task[1]] = future.result()
                except _BrokenProcessPool:
                    broken = True  # a worker died: every unfinished rollout runs again
                except Exception as error:  # a rollout's own error (bad parameters, …): no retry
                    _add_note(error, f"coulomb.batch: in rollout {task[1]}")
                    for other in futures:
                        other.cancel()
                    raise
        pending = [task for task in pending if task[1] not in results]
        if broken:
            for task in pending:
                attempts[task[1]] += 1
                if attempts[task[1]] > max_retries:
                    raise RuntimeError(
                        f"coulomb.batch: rollout {task[1]} lost its worker process {attempts[task[1]]} times "
                        f"(max_retries={max_retries}): killed, out of memory, or — with start_method 'spawn' or "
                        f"'forkserver' — a script whose batch call is not under `if __name__ == \"__main__\":` "
                        f"(each worker imports the main module)")
    return [results[task[1]] for task in tasks]


def _run_ray(tasks: List[tuple], address: Optional[str], workers: Optional[int], max_retries: int) -> List[dict]:
    try:
        import ray
    except ImportError as error:  # pragma: no cover
        raise ImportError("coulomb.batch: backend='ray' needs the ray package (pip install ray)") from error
    started = False
    if not ray.is_initialized():
        if address is not None:
            ray.init(address=address, logging_level="WARNING")
        else:
            ray.init(num_cpus=workers or _default_workers(), include_dashboard=False, logging_level="WARNING",
                     _node_ip_address="127.0.0.1")
        started = True
    try:
        remote = ray.remote(num_cpus=1, max_retries=max_retries)(_run_one)
        origin_ref = ray.put(tasks[0][0])
        refs = [remote.remote(origin_ref, *task[1:]) for task in tasks]
        return list(ray.get(refs))
    finally:
        if started:
            ray.shutdown()


def _add_note(error: BaseException, note: str) -> None:
    if hasattr(error, "add_note"):
        error.add_note(note)


def rollout(scene: Union[str, "_os.PathLike[str]", Any], parameters: Optional[Sequence[dict]] = None,
            controller: Any = None, duration: Optional[float] = None,
            signals: Sequence[str] = ("time", "q", "v"), backend: str = "local", address: Optional[str] = None,
            workers: Optional[int] = None, record_every: int = 1, decimation: int = 1,
            max_retries: int = 3, start_method: Optional[str] = None) -> List[dict]:
    """Runs one rollout per entry of ``parameters`` and returns their results, in order.

    scene: a scene file path, YAML text, or a Scene from coulomb.load_scene. Each worker loads it
      from its file or text (the files it names must exist where the workers run); what was
      changed in a Scene object since (time_step, integrator, solver, contact, q0, v0, masses) is
      applied to every rollout before its own parameters (masses as scale factors; a rollout's
      mass_scale multiplies the scene's).
    parameters: one dict per rollout (keys: PARAMETER_KEYS; {} is the scene as it is). Default [{}].
    controller: None (the scene's PD actuators, with the parameters' gains, targets and
      feed-forward), or a Python controller (an object with update(state, results, commands), or a
      class / factory making one per rollout; it must be picklable for the process pool and Ray),
      called with the GIL held every ``decimation`` steps.
    duration: simulated time per rollout [s] (default: the scene's duration).
    signals: names from SIGNALS, recorded every ``record_every`` steps (and at the last step).
    backend: "local" (a process pool of ``workers`` processes, default one per core), "ray"
      (Ray tasks on the cluster at ``address``, or on a local Ray instance of ``workers`` CPUs that
      is started and shut down here; an already initialized Ray is used as is) or "inline" (this
      process, one rollout after the other). The local pool's processes are started with
      multiprocessing's ``start_method``: by default "forkserver" where there is one (Linux; the
      server imports coulomb once and forks the workers), else "spawn". Both import the main
      module in every worker, so a script must call rollout under ``if __name__ == "__main__":``;
      "fork" avoids that but is unsafe in a process that has threads.
    max_retries: how many times a rollout whose worker died runs again.
    Returns a list of dicts: each signal as an array (rows: the initial state, then every
    ``record_every``-th step), and final_q, final_v, final_time [s], steps, failures (steps whose
    solver did not converge), mean_solver_iterations, max_penetration_max [m], wall_time [s] (the
    only entry that is not bitwise reproducible) and index. Errors of a rollout (unknown parameter
    key, wrong size, …) are raised with the rollout's index in a note.
    """
    from . import load_scene
    origin = _scene_origin(scene)
    if parameters is None:
        parameters = [{}]
    parameters = list(parameters)
    for i, p in enumerate(parameters):
        if not isinstance(p, dict):
            raise TypeError(f"coulomb.batch: parameters[{i}] must be a dict, got {type(p).__name__}")
    if duration is None:
        duration = (scene if not isinstance(scene, (str, _os.PathLike)) else load_scene(scene)).duration
    unknown = [s for s in signals if s not in SIGNALS]
    if unknown:
        raise ValueError(f"coulomb.batch: unknown signal(s) {unknown} (known: {', '.join(SIGNALS)})")
    if workers is not None and workers < 1:
        raise ValueError(f"coulomb.batch: workers must be ≥ 1, got {workers}")
    if max_retries < 0:
        raise ValueError(f"coulomb.batch: max_retries must be ≥ 0, got {max_retries}")
    pid_dir = _os.environ.get("COULOMB_BATCH_PID_DIR")
    changes = {}
    if not isinstance(scene, (str, _os.PathLike)):
        changes = _changes(scene, origin)
    tasks = [(origin, i, _merge(changes, p), float(duration), tuple(signals), int(record_every), controller,
              int(decimation), pid_dir)
             for i, p in enumerate(parameters)]
    if not tasks:
        return []
    if backend == "inline":
        results = []
        for task in tasks:
            try:
                results.append(_run_one(*task))
            except Exception as error:
                _add_note(error, f"coulomb.batch: in rollout {task[1]}")
                raise
        return results
    if backend == "local":
        return _run_local(tasks, workers or _default_workers(), max_retries, start_method)
    if backend == "ray":
        return _run_ray(tasks, address, workers, max_retries)
    raise ValueError(f"coulomb.batch: unknown backend '{backend}' (local, ray, inline)")
