#!/usr/bin/env python3
"""coulomb against today's peers, same scenes, same run (`make bench-peers`; docs/benchmarks-peers.md).

  peers.py run --peer-bench build/bin/coulomb_peer_bench -o build/bench-peers/simulate.json
               [--scenes a1_drop clutter ...] [--seeds 5] [--steps-scale 1.0] [--repeats 3]

For every scene: `coulomb_peer_bench export` writes the neutral description with the starting
states (seed 1…N, every translational coordinate offset by U[−1e-9, 1e-9] m); MuJoCo (Newton
and CG) and Drake (SAP and lagged) models are built from it (models.py) and checked equal to
coulomb's at q0 (masses, centres of mass, inertias, body, joint and geometry poses) before
anything is timed. Then, for seed after seed, every engine simulates the same number of steps
from the same starting state, one after the other (the order of the engines rotates with the
seed), so that all engines share the machine's state of the moment:
  coulomb_sap, coulomb_lagged   coulomb_peer_bench simulate (C++, a separate process)
  mujoco_newton, mujoco_cg      mujoco.mj_step(m, d, nstep=steps): the loop in MuJoCo's C library
  drake_sap, drake_lagged       Simulator.AdvanceTo(t + δt) from Python, one call per step
Only the steps are timed (thread CPU time; wall time beside it): coulomb's and MuJoCo's loops of
steps as a whole (two clock reads per run: on some machines a thread CPU clock read is a system
call of 0.4–0.5 µs, a sixth of a small scene's step), Drake's steps one by one (milliseconds each).
MuJoCo's per-step statistics come from a second, untimed run from the same state that must end at
the timed run's state to the bit. coulomb and MuJoCo run each
state up to --repeats times in one process (while their CPU time stays under 2 s; coulomb's runs
inside one coulomb_peer_bench process, each from a new Simulator) and keep the least time:
their other results repeat exactly, and on a shared machine the least time is the one least
disturbed. Drake runs once. The pile_* scenes start from the clutter piles settled by coulomb
(coulomb_peer_bench export --settle 4): the scaling with the number of objects. Per run: steps/s,
iterations per step (coulomb: SAP Newton iterations; MuJoCo: solver_niter, the largest over
islands; Drake: not exposed to Python), mean contacts, the max penetration at the final state
(each engine's own collision query), the steady slip (mean over the last `window` steps of the
per-step mean tangential speed over the contacts that carry load; Drake: from its
ContactResults, evaluated on a copy of the context so that the timed step is not served from a
cache) and the bodies that fell below z = −0.5 m.
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

# name, scene file (examples/scenes/*.yaml), steps, steady window (the last W steps), settle [s].
# Fewer steps for the large piles (time: Drake takes seconds per step there);
# docs/benchmarks-peers.md states them. settle > 0: the starting states perturb the pile that
# coulomb reaches after `settle` seconds from the scene's q0, at rest (coulomb_peer_bench export
# --settle): the cost per step of a resting pile of n objects, for the scaling. The falling
# piles (settle 0) spend their short runs mostly in free fall, which no engine pays much for.
SCENES = [
    ("a1_drop", "a1_drop", 1000, 100, 0.0),
    ("humanoid_drop", "humanoid_drop", 2000, 200, 0.0),
    ("box_stack", "box_stack", 300, 50, 0.0),
    ("spring_cylinder", "spring_cylinder", 250, 50, 0.0),
    ("clutter", "clutter", 300, 50, 0.0),
    ("clutter_80", "clutter_80", 200, 40, 0.0),
    ("clutter_160", "clutter_160", 150, 30, 0.0),
    ("clutter_320", "clutter_320", 100, 20, 0.0),
    ("pile_40", "clutter", 60, 20, 4.0),
    ("pile_80", "clutter_80", 60, 20, 4.0),
    ("pile_160", "clutter_160", 40, 20, 4.0),
    ("pile_320", "clutter_320", 30, 10, 4.0),
]
# The settled piles skip the lagged approximations: coulomb's takes 25–74 Newton iterations per
# step at k = 10¹² and Drake's fails on every falling pile (docs/sap.md).
PILE_ENGINES = ["coulomb_sap", "mujoco_newton", "mujoco_cg", "drake_sap"]
ENGINES = ["coulomb_sap", "coulomb_lagged", "mujoco_newton", "mujoco_cg", "drake_sap", "drake_lagged"]
FALLEN_Z = -0.5


def thread_time():
    return time.thread_time_ns() * 1e-9


def wall_time():
    return time.perf_counter_ns() * 1e-9


def result(engine, seed, steps, window, cpu, wall, iterations, iterations_window, contacts, penetration, slip,
           fallen, failures=0):
    return {"engine": engine, "seed": seed, "steps": steps, "window": window, "cpu_s": cpu, "wall_s": wall,
            "steps_per_s": steps / cpu, "wall_steps_per_s": steps / wall,
            "iterations": iterations, "iterations_window": iterations_window, "contacts": contacts / steps,
            "penetration_end": penetration, "slip_window": slip / window, "fallen": fallen, "failures": failures}


# ---- coulomb ----

def run_coulomb(peer_bench, scene_file, approximation, seed, steps, window, perturbation, q_file=None, repeats=1):
    """One coulomb_peer_bench process runs the state up to `repeats` times (each from a new Simulator,
    under the same 2 s CPU budget as `repeated`) and keeps the least time, as MuJoCo's runs do in this
    process: a process's first run pays one-time costs (the first touch of code and heap pages;
    spring_cylinder's 250 steps took 1.19 ms cold against 0.92–0.95 ms warm); MuJoCo's runs all share
    this process, so only its first run of the bench could pay them, and the least time drops it.
    The runs must end at the same configuration to the bit (checked there)."""
    command = [peer_bench, "simulate", scene_file, "--approximation", approximation, "--seed", str(seed),
               "--steps", str(steps), "--window", str(window), "--perturbation", repr(perturbation),
               "--repeats", str(repeats)]
    if q_file:
        command += ["--q-file", q_file]
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    r = json.loads(out)
    r.pop("final_q", None)
    r.pop("source", None)
    return r


# ---- MuJoCo ----

def repeated(run, repeats, budget_s=2.0):
    """Runs `run()` up to `repeats` times, stopping once the runs' CPU time reaches `budget_s`; keeps
    the run with the least CPU time (the results other than time are deterministic) and lists the
    times of all. The machine is shared: a run can only be slowed by the others' load, never sped
    up, so the least time is the estimate least disturbed by it."""
    runs, spent = [], 0.0
    while len(runs) < max(1, repeats) and (not runs or spent < budget_s):
        r = run()
        runs.append(r)
        spent += r["cpu_s"]
    best = min(runs, key=lambda r: r["cpu_s"])
    best["cpu_s_runs"] = [r["cpu_s"] for r in runs]
    return best


def run_mujoco(engine, m, qmap, q, seed, steps, window, repeats):
    """Times `steps` steps of MuJoCo from q (zero velocity) as one call, mj_step(m, d, nstep=steps):
    the loop runs in MuJoCo's C library and the clock is read twice per run, not per step (a thread
    CPU clock read is a system call of 0.4–0.5 µs on some machines, a sixth of a small scene's
    step). Up to `repeats` timed runs, the least time kept (`repeated`). A separate untimed run then
    steps one call at a time from the same state for the per-step statistics, and must end at the
    timed runs' final state to the bit (MuJoCo is deterministic), which is checked."""
    import mujoco
    import numpy as np

    def start():
        d = mujoco.MjData(m)
        d.qpos[qmap] = q
        d.qvel[:] = 0.0
        return d

    final = {}

    def timed():
        d = start()
        w0 = wall_time()
        c0 = thread_time()
        mujoco.mj_step(m, d, nstep=steps)
        cpu = thread_time() - c0
        wall = wall_time() - w0
        final["qpos"] = d.qpos.copy()
        return {"cpu_s": cpu, "wall_s": wall}

    t = repeated(timed, repeats)
    d = start()
    iterations = iterations_window = contacts = slip = 0.0
    jac_a = np.zeros((3, m.nv))
    jac_b = np.zeros((3, m.nv))
    force = np.zeros(6)
    for k in range(steps):
        mujoco.mj_step(m, d)
        n_islands = int(d.nisland)
        it = int(max(d.solver_niter[:n_islands])) if n_islands > 0 else int(d.solver_niter[0])
        iterations += it
        contacts += d.ncon
        if k < steps - window:
            continue
        iterations_window += it
        # d.contact and the kinematics are the step's start, qvel the new velocities.
        total, count = 0.0, 0
        for i in range(d.ncon):
            c = d.contact[i]
            if c.efc_address < 0:
                continue
            mujoco.mj_contactForce(m, d, i, force)
            if not force[0] > 0.0:
                continue
            mujoco.mj_jac(m, d, jac_a, None, c.pos, m.geom_bodyid[c.geom1])
            mujoco.mj_jac(m, d, jac_b, None, c.pos, m.geom_bodyid[c.geom2])
            v = (jac_b - jac_a) @ d.qvel
            n = c.frame[:3]
            total += float(np.linalg.norm(v - v.dot(n) * n))
            count += 1
        slip += total / count if count else 0.0
    if not np.array_equal(d.qpos, final["qpos"]):
        raise RuntimeError("the untimed run did not repeat the timed one (final qpos differs)")
    mujoco.mj_forward(m, d)
    penetration = max([0.0] + [-float(d.contact[i].dist) for i in range(d.ncon)])
    fallen = sum(1 for j in range(m.njnt)
                 if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE and d.qpos[m.jnt_qposadr[j] + 2] < FALLEN_Z)
    failures = int(d.warning[mujoco.mjtWarning.mjWARN_BADQACC].number)
    r = result(engine, seed, steps, window, t["cpu_s"], t["wall_s"], iterations / steps, iterations_window / window,
               contacts, penetration, slip, fallen, failures)
    r["cpu_s_runs"] = t["cpu_s_runs"]
    return r


# ---- Drake ----

def drake_slip(dm, context):
    """Mean slip speed over the point contacts with a positive normal force, from the plant's
    ContactResults on a copy of `context` (the contact solve of the step that starts there)."""
    copy = context.Clone()
    results = dm.plant.get_contact_results_output_port().Eval(dm.plant.GetMyContextFromRoot(copy))
    total, count = 0.0, 0
    for i in range(results.num_point_pair_contacts()):
        info = results.point_pair_contact_info(i)
        if info.contact_force().dot(info.point_pair().nhat_BA_W) != 0.0:
            total += info.slip_speed()
            count += 1
    return total / count if count else 0.0


def run_drake(engine, dm, q, seed, steps, window):
    from pydrake.systems.analysis import Simulator
    context = dm.new_context(q)
    simulator = Simulator(dm.diagram, context)
    simulator.Initialize()
    dt = dm.export["time_step"]
    cpu = wall = 0.0
    contacts = slip = 0.0
    query_port = dm.plant.get_geometry_query_input_port()
    for k in range(steps):
        if k >= steps - window:
            slip += drake_slip(dm, simulator.get_context())
        w0 = wall_time()
        c0 = thread_time()
        simulator.AdvanceTo((k + 1) * dt)
        cpu += thread_time() - c0
        wall += wall_time() - w0
    pc = dm.plant.GetMyContextFromRoot(simulator.get_context())
    pairs = query_port.Eval(pc).ComputePointPairPenetration()
    penetration = max([0.0] + [p.depth for p in pairs])
    positions = dm.plant.GetPositions(pc)
    fallen = sum(1 for b in dm.export["bodies"] if b["joint"]["type"] == "floating"
                 and positions[dm.qmap[b["joint"]["q_index"] + 2]] < FALLEN_Z)
    r = result(engine, seed, steps, window, cpu, wall, None, None, 0, penetration, slip, fallen)
    r["contacts"] = None  # the per-step count is not exposed cheaply; the final one:
    r["contacts_end"] = len(pairs)
    return r


# ---- the run ----

def versions():
    from importlib import metadata
    out = {}
    for p in ("mujoco", "drake", "pin", "numpy"):
        try:
            out[p] = metadata.version(p)
        except metadata.PackageNotFoundError:
            out[p] = None
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run")
    run.add_argument("--peer-bench", default=os.path.join(ROOT, "build", "bin", "coulomb_peer_bench"))
    run.add_argument("-o", "--output", required=True)
    run.add_argument("--scenes", nargs="*", default=[s[0] for s in SCENES])
    run.add_argument("--engines", nargs="*", default=ENGINES)
    run.add_argument("--seeds", type=int, default=5)
    run.add_argument("--perturbation", type=float, default=1e-9)
    run.add_argument("--steps-scale", type=float, default=1.0, help="multiplies every scene's step count")
    run.add_argument("--repeats", type=int, default=3,
                     help="runs of coulomb and MuJoCo per state (while their CPU time stays under 2 s); the "
                          "least time is kept. Drake runs once (its ratios are far from the targets).")
    args = parser.parse_args()

    known = {s[0]: s[1:] for s in SCENES}
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    runs, scenes_meta = [], {}
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    load_before = open("/proc/loadavg").read().split()[:3]
    for name in args.scenes:
        if name not in known:
            parser.error(f"unknown scene {name} (known: {', '.join(known)})")
        stem, steps, window, settle = known[name]
        steps = max(10, int(round(steps * args.steps_scale)))
        window = max(5, min(steps, int(round(window * args.steps_scale))))
        scene_file = os.path.join(ROOT, "examples", "scenes", stem + ".yaml")
        export = json.loads(subprocess.run([args.peer_bench, "export", scene_file, "--seeds", str(args.seeds),
                                            "--perturbation", repr(args.perturbation), "--settle", repr(settle)],
                                           check=True, capture_output=True, text=True).stdout)
        print(f"peers: {name}: {len(export['bodies'])} bodies, n_v = {export['nv']}, {steps} steps"
              + (f", from the pile settled for {settle:g} s" if settle else ""), file=sys.stderr)
        meta = {"steps": steps, "window": window, "nv": export["nv"], "time_step": export["time_step"],
                "scene_file": stem, "settle": settle,
                "num_bodies": len(export["bodies"]),
                "num_free_bodies": sum(1 for b in export["bodies"] if b["joint"]["type"] == "floating"),
                "contact": export["contact"], "integrator": export["integrator"], "checks": {}}
        engines = {}
        for e in [e for e in args.engines if not settle or e in PILE_ENGINES]:
            try:
                if e.startswith("mujoco"):
                    m, qmap = models.mujoco_model(export, "Newton" if e == "mujoco_newton" else "CG")
                    meta["checks"][e] = models.check_mujoco(export, m, qmap)
                    engines[e] = (m, qmap)
                elif e.startswith("drake"):
                    dm = models.DrakeModel(export, e.split("_")[1])
                    meta["checks"][e] = dm.check()
                    engines[e] = dm
                else:
                    engines[e] = None
            except Exception as error:  # a peer that cannot build the scene is reported, not fatal
                meta["checks"][e] = f"error: {error}"
                print(f"peers: {name}: {e}: {error}", file=sys.stderr)
        scenes_meta[name] = meta
        order = [e for e in args.engines if e in engines]
        q_file = os.path.join(os.path.dirname(os.path.abspath(args.output)), "starting_q.json")
        for i, state in enumerate(export["starting_states"]):
            seed, q = state["seed"], state["q"]
            if settle:  # coulomb_peer_bench reads the settled state from the file, as the peers from `q`
                with open(q_file, "w") as f:
                    json.dump(q, f)
            rotated = order[i % len(order):] + order[:i % len(order)]
            for e in rotated:
                try:
                    if e.startswith("coulomb"):
                        r = run_coulomb(args.peer_bench, scene_file, e.split("_")[1], seed, steps, window,
                                        args.perturbation, q_file if settle else None, args.repeats)
                    elif e.startswith("mujoco"):
                        m, qmap = engines[e]
                        r = run_mujoco(e, m, qmap, q, seed, steps, window, args.repeats)
                    else:
                        r = run_drake(e, engines[e], q, seed, steps, window)
                except Exception as error:
                    print(f"peers: {name} {e} seed {seed}: {error}", file=sys.stderr)
                    r = {"engine": e, "seed": seed, "error": str(error)}
                r["scene"] = name
                runs.append(r)
                if "error" not in r:
                    print(f"peers:   {name} seed {seed} {e:15s} {r['steps_per_s']:10.1f} steps/s  "
                          f"pen {1e3 * r['penetration_end']:.3f} mm  slip {r['slip_window']:.2e} m/s", file=sys.stderr)
    out = {"started": started, "ended": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
           "load_before": load_before, "load_after": open("/proc/loadavg").read().split()[:3],
           "machine": {"nproc": os.cpu_count(), "cpu": cpu_name(), "python": platform.python_version()},
           "versions": versions(), "seeds": args.seeds, "perturbation": args.perturbation, "repeats": args.repeats,
           "scenes": scenes_meta, "runs": runs}
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    with open(args.output, "w") as f:
        json.dump(out, f, indent=1)


def cpu_name():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


if __name__ == "__main__":
    main()
