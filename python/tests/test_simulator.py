"""Simulator from Python: bitwise the same run as `coulomb simulate`, zero-copy state views,
contacts as structured arrays, run-time actuation, Python controllers, writers, memory."""
import json
import subprocess

import numpy as np
import pytest

import coulomb
from conftest import REPO, SCENES, rss_bytes


def run_python(scene_path, steps, out_dir, html=False, states=None):
    scene = coulomb.load_scene(str(scene_path))
    sim = coulomb.Simulator(scene)
    with coulomb.Recorder(sim, str(out_dir), html=html) as recorder:
        if states is not None:
            states.append(sim.q.copy())
        for _ in range(steps):
            sim.step()
            recorder.record(sim)
            if states is not None:
                states.append(sim.q.copy())
    return sim


@pytest.mark.parametrize("name,duration", [("a1_drop.yaml", 0.3), ("clutter.yaml", 0.5), ("a1_stand.yaml", 0.2)])
def test_trajectory_bitwise_identical_to_cli(cli, tmp_path, name, duration):
    """The same scene through `coulomb simulate` (C++ alone) and through Python: trajectory.csv
    byte for byte (poses, velocities, joint positions, torques and contact forces, 9 digits), and
    every state to the last bit against the same run in a C++ loop (coulomb.batch's rollout)."""
    subprocess.run([str(cli), "simulate", str(SCENES / name), "-o", str(tmp_path / "cli"), "--duration",
                    str(duration), "--no-html", "--quiet"], check=True, cwd=REPO)
    scene = coulomb.load_scene(str(SCENES / name))
    steps = int(round(duration / scene.time_step))
    states = []
    sim = run_python(SCENES / name, steps, tmp_path / "py", states=states)
    cli_rows = (tmp_path / "cli" / "trajectory.csv").read_bytes()
    py_rows = (tmp_path / "py" / "trajectory.csv").read_bytes()
    assert cli_rows.count(b"\n") == steps + 2  # header, t = 0, one row per step
    assert py_rows == cli_rows
    assert (tmp_path / "py" / "steps.csv").read_text().count("\n") == steps + 1
    stats_cli = json.loads((tmp_path / "cli" / "stats.json").read_text())
    stats_py = json.loads((tmp_path / "py" / "stats.json").read_text())
    for key in ("steps", "solver_iterations", "contacts", "max_penetration_m", "failures", "energy"):
        assert stats_py[key] == stats_cli[key], key
    batch = coulomb.batch.rollout(str(SCENES / name), [{}], duration=duration, backend="inline", signals=["q"])[0]
    assert batch["q"].shape == (steps + 1, sim.model.nq)
    assert np.array_equal(batch["q"], np.array(states))  # every step, every bit
    assert np.array_equal(batch["final_q"], sim.q) and np.array_equal(batch["final_v"], sim.v)


def test_state_views_are_zero_copy_and_read_only():
    sim = coulomb.Simulator(coulomb.load_scene(str(SCENES / "a1_drop.yaml")))
    q = sim.q
    assert q.shape == (19,) and not q.flags.writeable
    assert np.shares_memory(q, sim.q)  # the same simulator memory every time
    before = q.copy()
    sim.step()
    assert not np.array_equal(q, before)  # the view follows the simulator
    assert np.array_equal(q, sim.q)
    with pytest.raises(ValueError):
        q[0] = 1.0
    del sim  # the view keeps the simulator alive
    assert np.isfinite(q).all()


def test_set_state_and_errors():
    scene = coulomb.load_scene(str(SCENES / "a1_stand.yaml"))
    sim = coulomb.Simulator(scene)
    q = sim.q.copy()
    q[2] = 0.6
    sim.set_state(q, np.zeros(sim.model.nv))
    assert sim.q[2] == 0.6
    with pytest.raises(ValueError, match="q has 2 entries"):
        sim.set_state(np.zeros(2), np.zeros(sim.model.nv))
    with pytest.raises(ValueError, match="no_joint"):
        sim.actuator_index("no_joint")
    with pytest.raises(ValueError, match="kp"):
        sim.set_pd_gains(0, -1.0, 0.0)
    with pytest.raises(ValueError, match="time_step must be a finite number > 0, got -1"):
        scene.time_step = -1.0
    with pytest.raises(ValueError, match="integrator"):
        coulomb.Simulator(scene, integrator="rk4")


def test_scene_errors_name_file_line_key_value(tmp_path):
    text = ("time_step: 0.01\nbodies:\n  - name: ball\n    mass: 1.0\n"
            "    shapes: [{type: sphere, radius: -0.05}]\n")
    with pytest.raises(coulomb.SceneError, match=r"<string>:5: .*radius.*-0\.05"):
        coulomb.load_scene(text)
    path = tmp_path / "broken.yaml"
    path.write_text(text)
    with pytest.raises(coulomb.SceneError, match=r"broken\.yaml:5: .*radius.*-0\.05"):
        coulomb.load_scene(path)
    with pytest.raises(FileNotFoundError, match="nowhere.yaml"):
        coulomb.load_scene("nowhere.yaml")
    scene = coulomb.load_scene((SCENES / "a1_drop.yaml").read_text(), base_directory=str(SCENES))
    assert scene.model.nv == 18


def test_contacts_structured_array():
    sim = coulomb.Simulator(coulomb.load_scene(str(SCENES / "a1_stand.yaml")))
    sim.advance(1000)  # 1 s: settled
    contacts = sim.contacts()
    assert contacts.dtype == coulomb.CONTACT_DTYPE
    assert len(contacts) == sim.last_step.contacts == 4  # the four feet
    np.testing.assert_allclose(np.linalg.norm(contacts["n_W"], axis=1), 1.0)
    assert np.all(contacts["phi"] < 2e-3)
    names = sim.model.body_names
    assert {names[b] for b in contacts["body_b"]} == {"FR_calf", "FL_calf", "RR_calf", "RL_calf"}
    np.testing.assert_allclose(contacts["force_W"], contacts["impulse_W"] / sim.time_step)
    results = sim.last_results()
    assert np.array_equal(results.contacts, contacts)
    # Standing still: the feet carry the robot's weight.
    weight = sim.model.total_mass * 9.81
    assert contacts["force_W"][:, 2].sum() == pytest.approx(weight, rel=0.02)
    assert results.contact_wrenches.shape == (sim.model.nbodies, 6)
    np.testing.assert_allclose(results.contact_wrenches[:, 3:].sum(axis=0), contacts["force_W"].sum(axis=0), atol=1e-9)
    assert results.actuator_forces.shape == (12,)
    assert set(np.unique(contacts["region"])) <= {0, 1, 2}


def test_actuation_api_matches_python_controller():
    """Feed-forward set once from Python and the same feed-forward written by a Python
    controller every step give the same trajectory, bit for bit."""
    scene = coulomb.load_scene(str(SCENES / "a1_stand.yaml"))
    u = np.linspace(-1.0, 1.0, len(scene.actuators))

    a = coulomb.Simulator(scene)
    a.set_actuation(u)
    a.set_pd_gains("FR_calf_joint", 30.0, 1.0)

    class FeedForward(coulomb.Controller):
        calls = 0

        def update(self, state, results, commands):
            assert state.q.shape == (19,) and commands.actuation.shape == (12,)
            commands.actuation[:] = u
            commands.kp[commands.kp.shape[0] - 12 + 2] = 30.0  # FR_calf_joint is actuator 2
            commands.kd[2] = 1.0
            FeedForward.calls += 1

    b = coulomb.Simulator(scene)
    assert b.actuator_index("FR_calf_joint") == 2
    b.set_controller(FeedForward(), decimation=2)
    for _ in range(100):
        a.step()
        b.step()
    assert FeedForward.calls == 50
    assert np.array_equal(a.q, b.q) and np.array_equal(a.v, b.v)
    np.testing.assert_array_equal(b.commands.actuation, u)


def test_pd_targets_and_external_wrench():
    scene = coulomb.load_scene(str(SCENES / "a1_stand.yaml"))
    sim = coulomb.Simulator(scene)
    target = np.array([a.q_target for a in scene.actuators])
    target[1] += 0.2  # FR thigh
    sim.set_pd_targets(target)
    for _ in range(500):
        sim.step()
    joint = sim.model.position_names.index("FR_thigh_joint")
    assert sim.q[joint] == pytest.approx(target[1], abs=0.05)
    sim.add_external_wrench("base", force=[0.0, 0.0, sim.model.total_mass * 9.81 * 3])
    for _ in range(200):
        sim.step()
    assert sim.q[2] > 0.5  # lifted by three times its weight
    sim.clear_external_wrenches()
    with pytest.raises(IndexError, match="no_body"):
        sim.add_external_wrench("no_body", force=[0, 0, 1])


def test_controller_exception_propagates():
    sim = coulomb.Simulator(coulomb.load_scene(str(SCENES / "a1_stand.yaml")))

    class Broken(coulomb.Controller):
        def update(self, state, results, commands):
            raise KeyError("from the controller")

    sim.set_controller(Broken())
    with pytest.raises(KeyError, match="from the controller"):
        sim.step()
    sim.set_controller(None)
    sim.step()
    with pytest.raises(TypeError, match="update"):
        sim.set_controller(object())


def test_recorder_writes_replay_and_report(tmp_path):
    run_python(SCENES / "a1_drop.yaml", 100, tmp_path, html=True)
    stats = json.loads((tmp_path / "stats.json").read_text())
    assert stats["steps"] == 100 and stats["failures"] == 0
    replay = (tmp_path / "replay.html").read_text()
    assert replay.startswith("<!DOCTYPE html>") or "<html" in replay[:200]
    assert "steps.csv" not in (tmp_path / "report.html").read_text()[:0]
    assert (tmp_path / "report.html").stat().st_size > 10_000


def test_memory_does_not_grow_over_10000_steps():
    """10,000 steps reading the state and every result each step: the resident set size after
    the first 1,000 steps (warm-up) stays where it was."""
    sim = coulomb.Simulator(coulomb.load_scene(str(SCENES / "a1_stand.yaml")))

    def run(steps):
        total = 0.0
        for _ in range(steps):
            stats = sim.step()
            results = sim.last_results()
            contacts = results.contacts
            total += stats.energy + sim.q[2] + sim.v[0] + contacts["force_W"].sum()
            total += results.generalized_contact_forces.sum() + results.contact_wrenches.sum()
            total += sim.contacts()["phi"].sum() + results.actuator_forces.sum()
        return total

    run(1000)
    before = rss_bytes()
    assert np.isfinite(run(9000))
    grown = rss_bytes() - before
    assert grown < 1_000_000, f"RSS grew by {grown} bytes over 9,000 steps"


def test_inverse_dynamics_on_a_standing_a1():
    """The A1 at rest on its four feet (examples/cpp/id_stance.cc from Python): with q̈_des = 0
    every formulation's contact forces carry the robot's weight within 1e-6, within the torque
    limits (examples/scenes/a1_id.yaml, the scene of the C++ example)."""
    scene = coulomb.load_scene(str(SCENES / "a1_id.yaml"))
    actuated = coulomb.actuated_dofs(scene)
    assert actuated == list(range(6, 18))
    weight = scene.model.total_mass * 9.81
    for formulation in ("lcp-noslip", "lcp-coulomb", "qp-coulomb", "qp-noslip"):
        inverse = coulomb.InverseDynamics(scene, formulation=formulation)
        r = inverse.solve(scene.q0, np.zeros(scene.model.nv), np.zeros(12), 1e-3)
        assert r["ok"], (formulation, r["message"])
        assert r["tau"].shape == (12,) and r["force_W"].shape == (4, 3)
        assert r["force_W"][:, 2].sum() == pytest.approx(weight, rel=1e-6), formulation
        assert np.abs(r["tau"]).max() < 33.5  # within the A1's effort limit
    with pytest.raises(ValueError, match="formulation"):
        coulomb.InverseDynamics(scene, formulation="lcp")


def test_step_releases_the_gil():
    """While a thread is inside Simulator.advance (C++ steps), this thread keeps running Python:
    the longest pause it sees is a small part of the advance (holding the GIL would pause it for
    the whole advance)."""
    import threading
    import time

    sim = coulomb.Simulator(coulomb.load_scene(str(SCENES / "a1_drop.yaml")))
    span = {}

    def work():
        span["start"] = time.perf_counter()
        sim.advance(15000)  # long enough to measure: 0.4 s at 37,000 steps/s (a1_drop, 2026-11)
        span["end"] = time.perf_counter()

    thread = threading.Thread(target=work)
    thread.start()
    last, longest = time.perf_counter(), 0.0
    while thread.is_alive():
        now = time.perf_counter()
        longest, last = max(longest, now - last), now
    thread.join()
    duration = span["end"] - span["start"]
    assert duration > 0.1
    assert longest < duration / 3, f"paused {longest:.3f} s during a {duration:.3f} s advance"
