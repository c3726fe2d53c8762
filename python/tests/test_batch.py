"""coulomb.batch.rollout: the same results bit for bit in this process, in the local process pool
with one or two workers and on Ray; a worker killed mid-batch loses no rollout."""
import os
import signal
import threading
import time

import numpy as np
import pytest

import coulomb
from coulomb import batch
from conftest import SCENES

A1 = str(SCENES / "a1_stand.yaml")
SIGNALS = ["time", "q", "v", "energy", "contacts", "actuator_forces"]


def variations(n):
    """Initial state, contact parameters, masses and gains, all varying."""
    scene = coulomb.load_scene(A1)
    out = []
    for i in range(n):
        v0 = np.zeros(scene.model.nv)
        v0[3] = 0.05 * i
        out.append({
            "v0": v0,
            "contact": {"mu": 0.5 + 0.1 * i, "stiffness": 1e5 * (1 + 0.2 * i)},
            "mass_scale": {"base": 1.0 + 0.05 * i},
            "kp": 40.0 + 5 * i,
            "kd": [1.0 + 0.1 * i] * len(scene.actuators),
        })
    return out


def same(a, b):
    assert a.keys() == b.keys()
    for key in a:
        if key == "wall_time":
            continue
        if isinstance(a[key], np.ndarray):
            assert a[key].dtype == b[key].dtype and np.array_equal(a[key], b[key]), key
        else:
            assert a[key] == b[key], key


@pytest.fixture(scope="module")
def reference():
    return batch.rollout(A1, variations(4), duration=0.1, signals=SIGNALS, backend="inline")


def test_rollout_results_and_variations(reference):
    assert [r["index"] for r in reference] == [0, 1, 2, 3]
    r = reference[0]
    assert r["q"].shape == (101, 19) and r["v"].shape == (101, 18) and r["time"].shape == (101,)
    assert r["actuator_forces"].shape == (101, 12) and r["steps"] == 100 and r["failures"] == 0
    assert r["time"][-1] == pytest.approx(0.1) and np.array_equal(r["final_q"], r["q"][-1])
    # Every variation changes the run.
    finals = [tuple(x["final_q"]) for x in reference]
    assert len(set(finals)) == 4


def test_rollout_equals_simulator_stepped_from_python(reference):
    scene = coulomb.load_scene(A1)
    p = variations(4)[2]
    scene.v0 = p["v0"]
    scene.contact.mu = p["contact"]["mu"]
    scene.contact.stiffness = p["contact"]["stiffness"]
    scene.scale_body_mass("base", p["mass_scale"]["base"])
    sim = coulomb.Simulator(scene)
    for a in range(sim.num_actuators):
        sim.set_pd_gains(a, p["kp"], p["kd"][a])
    sim.advance(100)
    assert np.array_equal(sim.q, reference[2]["final_q"]) and np.array_equal(sim.v, reference[2]["final_v"])


@pytest.mark.parametrize("workers", [1, 2])
def test_local_pool_bitwise_identical(reference, workers):
    results = batch.rollout(coulomb.load_scene(A1), variations(4), duration=0.1, signals=SIGNALS, workers=workers)
    for a, b in zip(reference, results):
        same(a, b)


def test_parameter_errors_name_the_key():
    with pytest.raises(ValueError, match="unknown key 'friction'") as info:
        batch.rollout(A1, [{}, {"friction": 1.0}], duration=0.01, backend="inline")
    assert any("rollout 1" in note for note in getattr(info.value, "__notes__", []))
    with pytest.raises(ValueError, match=r"parameters\['kp'\] has 3 entries; the scene has 12 actuators"):
        batch.rollout(A1, [{"kp": [1, 2, 3]}], duration=0.01, backend="inline")
    with pytest.raises(IndexError, match="no_body"):
        batch.rollout(A1, [{"mass": {"no_body": 2.0}}], duration=0.01, backend="local", workers=1)
    with pytest.raises(ValueError, match="unknown signal"):
        batch.rollout(A1, [{}], signals=["torque"])


class Hold:
    """A Python controller for the batch: holds the first state's joint positions."""

    def update(self, state, results, commands):
        if not hasattr(self, "target"):
            self.target = state.q[7:].copy()
        commands.q_target[:] = self.target


def test_python_controller_in_rollouts():
    inline = batch.rollout(A1, [{}, {"kp": 60.0}], controller=Hold, duration=0.05, backend="inline")
    pooled = batch.rollout(A1, [{}, {"kp": 60.0}], controller=Hold, duration=0.05, workers=2)
    for a, b in zip(inline, pooled):
        same(a, b)


KILL_DURATION = 3.0  # s of clutter per rollout: long enough (0.2–1 s of wall time) to be killed mid-way


def kill_first_worker(pid_dir, stop):
    """Waits for the first rollout to start, then kills its process (SIGKILL) mid-rollout."""
    while not stop.is_set():
        names = os.listdir(pid_dir)
        if names:
            time.sleep(0.02)
            pid = int(sorted(names)[0].split("-")[1])
            os.kill(pid, signal.SIGKILL)
            return pid
        time.sleep(0.002)


def run_with_a_kill(tmp_path, monkeypatch, **kwargs):
    pid_dir = tmp_path / "pids"
    pid_dir.mkdir()
    monkeypatch.setenv("COULOMB_BATCH_PID_DIR", str(pid_dir))
    stop = threading.Event()
    killed = []
    killer = threading.Thread(target=lambda: killed.append(kill_first_worker(str(pid_dir), stop)))
    killer.start()
    try:
        results = batch.rollout(str(SCENES / "clutter.yaml"), [{"contact": {"mu": 0.2 * (1 + i)}} for i in range(4)],
                                duration=KILL_DURATION, signals=["q"], **kwargs)
    finally:
        stop.set()
        killer.join()
    started = sorted(os.listdir(pid_dir))
    return results, killed, started


def test_local_pool_survives_a_killed_worker(tmp_path, monkeypatch):
    expected = batch.rollout(str(SCENES / "clutter.yaml"), [{"contact": {"mu": 0.2 * (1 + i)}} for i in range(4)],
                             duration=KILL_DURATION, signals=["q"], backend="inline")
    results, killed, started = run_with_a_kill(tmp_path, monkeypatch, workers=2)
    assert killed and killed[0] is not None
    assert len(started) > 4  # some rollout started twice: it ran again after the kill
    assert [r["index"] for r in results] == [0, 1, 2, 3]
    for a, b in zip(expected, results):
        same(a, b)


ray = pytest.importorskip("ray") if not os.environ.get("COULOMB_REQUIRE_RAY") else __import__("ray")


@pytest.fixture(scope="module")
def local_ray():
    """A real Ray instance on loopback, started here and shut down at the end."""
    ray.init(num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1", logging_level="ERROR",
             log_to_driver=False)
    yield
    ray.shutdown()


def test_ray_bitwise_identical(reference, local_ray):
    results = batch.rollout(A1, variations(4), duration=0.1, signals=SIGNALS, backend="ray")
    for a, b in zip(reference, results):
        same(a, b)


def test_ray_retries_a_killed_worker(tmp_path, monkeypatch, local_ray):
    expected = batch.rollout(str(SCENES / "clutter.yaml"), [{"contact": {"mu": 0.2 * (1 + i)}} for i in range(4)],
                             duration=KILL_DURATION, signals=["q"], backend="inline")
    results, killed, started = run_with_a_kill(tmp_path, monkeypatch, backend="ray")
    assert killed and killed[0] is not None
    assert len(started) > 4
    for a, b in zip(expected, results):
        same(a, b)


def test_changes_to_a_scene_object_reach_the_rollouts():
    """A Scene changed after loading (contact, masses, initial velocity) rolls out as changed,
    in every backend, and as a Simulator of the same Scene runs."""
    scene = coulomb.load_scene(A1)
    scene.contact.mu = 0.3
    scene.scale_body_mass("base", 1.25)
    v0 = np.zeros(scene.model.nv)
    v0[3] = 0.2
    scene.v0 = v0
    sim = coulomb.Simulator(scene)
    sim.advance(50)
    inline = batch.rollout(scene, [{}, {"contact": {"stiffness": 2e5}}], duration=0.05, backend="inline")
    pooled = batch.rollout(scene, [{}, {"contact": {"stiffness": 2e5}}], duration=0.05, workers=2)
    assert np.array_equal(inline[0]["final_q"], sim.q) and np.array_equal(inline[0]["final_v"], sim.v)
    assert not np.array_equal(inline[1]["final_q"], sim.q)  # the rollout's own parameter on top
    for a, b in zip(inline, pooled):
        same(a, b)
    fresh = batch.rollout(A1, [{}], duration=0.05, backend="inline")[0]
    assert not np.array_equal(fresh["final_q"], sim.q)
