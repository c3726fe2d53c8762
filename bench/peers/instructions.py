#!/usr/bin/env python3
"""Instructions per step: coulomb against MuJoCo 4, counted by callgrind (`make bench-instructions`).

  instructions.py run --peer-bench build/bin/coulomb_peer_bench -o build/bench-peers/instructions.json
                      [--scenes a1_drop clutter ...] [--seed 1] [--steps-scale 1.0] [--jobs 2]
  instructions.py report build/bench-peers/instructions.json -o docs/benchmarks-instructions.md

On a shared machine the wall-clock ratios of docs/benchmarks-peers.md move by ±0.3 between runs
of the same binaries; instruction counts do not move at all. For every scene this runs, under
valgrind's callgrind with collection switched on only inside the step call:
  coulomb SAP     coulomb_peer_bench simulate (Simulator::step), the scene's starting state `seed`
  MuJoCo Newton   mujoco.mj_step from this script (`child`), the same starting state and model
  MuJoCo CG       as peers.py (models.py), with each of MuJoCo's two solvers
The pile_* scenes start every engine from the clutter scene's pile settled by coulomb for 4 s
(peers.py's settled piles: the scaling with the number of objects); coulomb reads that state
from a file (simulate --q-file). The script reports instructions per step, their ratios
(MuJoCo ÷ coulomb: above 1, coulomb executes fewer) and each engine's solver iterations per step. Instructions are not time: MuJoCo's wheel is
compiled for AVX (256-bit registers in its vector loops), coulomb for the x86-64 baseline with
AVX2 + FMA copies of its block kernels chosen at run time, so one instruction does different
amounts of work; cache misses and dependency chains are not counted. The count is exactly
repeatable, which the timings here are not.
"""
import argparse
import concurrent.futures
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
import peers  # noqa: E402  (SCENES: the settled piles' source scenes)
from report import fit_exponent  # noqa: E402

# scene, steps: the same as peers.SCENES (fewer for the largest piles: callgrind runs ~50× slower).
SCENES = [
    ("a1_drop", 1000),
    ("humanoid_drop", 2000),
    ("box_stack", 300),
    ("spring_cylinder", 250),
    ("clutter", 300),
    ("clutter_80", 200),
    ("clutter_160", 150),
    ("clutter_320", 100),
    ("pile_40", 60),
    ("pile_80", 40),
    ("pile_160", 20),
    ("pile_320", 10),
]
# The settled piles, as peers.py defines them: name → (source scene, settle [s]). Each starts from
# the scene's pile after `settle` seconds of coulomb, at rest (coulomb_peer_bench export --settle).
PILES = {name: (stem, settle) for name, stem, _, _, settle in peers.SCENES if settle}


PERTURBATION = 1e-9  # peers.py's default: every translational coordinate offset by U[−1e-9, 1e-9] m


def callgrind_total(path):
    """Total instructions (Ir) in a callgrind output file: its `summary:` or `totals:` line."""
    total = None
    with open(path) as f:
        for line in f:
            if line.startswith("summary:") or line.startswith("totals:"):
                total = int(line.split()[1])
    if total is None:
        raise RuntimeError(f"{path}: no summary line (did the program crash?)")
    return total


def valgrind(toggle, out_file, command):
    """Runs `command` under callgrind, collecting only inside `toggle`; returns (Ir, stdout)."""
    cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}", f"--toggle-collect={toggle}"] + command
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(command[:3])}: exit {r.returncode}: {r.stderr.strip()[-400:]}")
    return callgrind_total(out_file), r.stdout


def run_coulomb(peer_bench, scene_file, seed, steps, work, q_file=None):
    start = ["--q-file", q_file] if q_file else ["--seed", str(seed), "--perturbation", repr(PERTURBATION)]
    ir, out = valgrind("coulomb::simulation::Simulator::step()", os.path.join(work, "coulomb.cg"),
                       [peer_bench, "simulate", scene_file, "--approximation", "sap", "--steps", str(steps),
                        "--window", str(min(steps, 10))] + start)
    r = json.loads(out)
    return {"instructions": ir, "per_step": ir / steps, "iterations_per_step": r["iterations"],
            "failures": r["failures"]}


def run_mujoco(export_file, solver, seed, steps, work):
    ir, out = valgrind("mj_step", os.path.join(work, f"mujoco-{solver}.cg"),
                       [sys.executable, os.path.abspath(__file__), "child", export_file, solver, str(seed), str(steps)])
    r = json.loads(out)
    return {"instructions": ir, "per_step": ir / steps, "iterations_per_step": r["iterations_per_step"]}


def child(export_file, solver, seed, steps):
    """MuJoCo (solver Newton or CG) from the export, `steps` calls of mj_step (the measured part), one JSON line."""
    import mujoco
    import models
    with open(export_file) as f:
        export = json.load(f)
    m, qmap = models.mujoco_model(export, solver)
    d = mujoco.MjData(m)
    state = next(s for s in export["starting_states"] if s["seed"] == seed)
    d.qpos[qmap] = state["q"]
    d.qvel[:] = 0.0
    iterations = 0
    for _ in range(steps):
        mujoco.mj_step(m, d)
        n = int(d.nisland)
        iterations += int(max(d.solver_niter[:n])) if n > 0 else int(d.solver_niter[0])
    print(json.dumps({"iterations_per_step": iterations / steps}))


def run(args):
    known = dict(SCENES)
    for name in args.scenes:
        if name not in known:
            raise SystemExit(f"instructions.py: unknown scene {name} (known: {', '.join(known)})")
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.scenes:
            steps = max(10, int(round(known[name] * args.steps_scale)))
            stem, settle = PILES.get(name, (name, 0.0))
            scene_file = os.path.join(ROOT, "examples", "scenes", stem + ".yaml")
            export = subprocess.run([args.peer_bench, "export", scene_file, "--seeds", str(args.seed),
                                     "--perturbation", repr(PERTURBATION), "--settle", repr(settle)],
                                    check=True, capture_output=True, text=True).stdout
            export_file = os.path.join(tmp, name + ".json")
            with open(export_file, "w") as f:
                f.write(export)
            q_file = None
            if settle:  # coulomb starts from the settled state in the file, as MuJoCo from `q`
                q_file = os.path.join(tmp, name + "-q.json")
                state = next(s for s in json.loads(export)["starting_states"] if s["seed"] == args.seed)
                with open(q_file, "w") as f:
                    json.dump(state["q"], f)
            work_c, work_m = os.path.join(tmp, name + "-c"), os.path.join(tmp, name + "-m")
            os.makedirs(work_c)
            os.makedirs(work_m)
            print(f"instructions: {name}: {steps} steps under callgrind ...", file=sys.stderr, flush=True)
            with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
                fc = pool.submit(run_coulomb, args.peer_bench, scene_file, args.seed, steps, work_c, q_file)
                fn = pool.submit(run_mujoco, export_file, "Newton", args.seed, steps, work_m)
                fg = pool.submit(run_mujoco, export_file, "CG", args.seed, steps, work_m)
                entry = {"steps": steps, "nv": json.loads(export)["nv"], "settle": settle}
                for key, fut in (("coulomb_sap", fc), ("mujoco_newton", fn), ("mujoco_cg", fg)):
                    try:
                        entry[key] = fut.result()
                    except Exception as error:  # reported, not fatal
                        entry[key] = {"error": str(error)}
            results[name] = entry
            c = entry["coulomb_sap"]
            for key in ("mujoco_newton", "mujoco_cg"):
                m = entry[key]
                if "error" not in c and "error" not in m:
                    print(f"instructions:   {name}: coulomb {c['per_step']:,.0f}/step, {key} {m['per_step']:,.0f}/step, "
                          f"ratio {m['per_step'] / c['per_step']:.2f}", file=sys.stderr, flush=True)
    import mujoco
    out = {"started": started, "ended": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "seed": args.seed,
           "versions": {"mujoco": mujoco.__version__, "python": platform.python_version(),
                        "valgrind": subprocess.run(["valgrind", "--version"], capture_output=True,
                                                   text=True).stdout.strip()},
           "commit": args.commit, "scenes": results}
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    with open(args.output, "w") as f:
        json.dump(out, f, indent=1)


def report(args):
    with open(args.input) as f:
        data = json.load(f)
    lines = ["# Instructions per step: coulomb against MuJoCo 4 (callgrind)", "",
             "<!-- generated by `make bench-instructions` (scripts/bench_instructions.sh, "
             "bench/peers/instructions.py); do not edit -->", "",
             f"- commit `{data['commit']}`; run {data['started']} – {data['ended']}; "
             f"{data['versions']['valgrind']}, mujoco {data['versions']['mujoco']} (its wheel, compiled for AVX), "
             f"Python {data['versions']['python']}",
             f"- one starting state per scene (seed {data['seed']}: the state peers.py's seed {data['seed']} uses); "
             "instructions counted by callgrind only inside the step call (`Simulator::step()`, `mj_step`), "
             "the same scene files and MuJoCo models as docs/benchmarks-peers.md; pile_40 … pile_320 start from "
             "the clutter piles settled by coulomb for 4 s, as there (fewer steps: callgrind runs some 50× "
             "slower, and MuJoCo Newton takes a third of a second per step on pile_320)",
             "- the count repeats exactly from run to run, unlike the timings of docs/benchmarks-peers.md on this "
             "shared machine (±0.3 in their ratios). It is not time: MuJoCo's AVX build and coulomb's "
             "x86-64 baseline (with AVX2 + FMA copies of its block kernels) do different work per "
             "instruction, and cache misses and dependency chains are not counted", "",
             "| scene | n_v | steps | coulomb SAP instr/step | MuJoCo Newton instr/step | MuJoCo CG instr/step | "
             "Newton ÷ coulomb | CG ÷ coulomb | fewer of the two ÷ coulomb | iterations/step coulomb / Newton / CG |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]

    def cell(x, fmt):
        if "error" in x:
            return "—"
        return fmt.format(x["per_step"]) + (" †" if "carried_from" in x else "")

    for name, e in data["scenes"].items():
        c, n, g = e["coulomb_sap"], e["mujoco_newton"], e["mujoco_cg"]
        if "error" in c:
            lines.append(f"| {name} | {e['nv']} | {e['steps']} | failed: {c['error'][:120]} | | | | | | |")
            continue
        ratio = {k: ("—" if "error" in x else f"**{x['per_step'] / c['per_step']:.2f}**") for k, x in (("n", n), ("g", g))}
        fewer = min((x["per_step"] for x in (n, g) if "error" not in x), default=None)
        best = "—" if fewer is None else f"**{fewer / c['per_step']:.2f}**"
        its = " / ".join("—" if "error" in x else f"{x['iterations_per_step']:.2f}" for x in (c, n, g))
        lines.append(f"| {name} | {e['nv']} | {e['steps']} | {c['per_step']:,.0f} | {cell(n, '{:,.0f}')} | "
                     f"{cell(g, '{:,.0f}')} | {ratio['n']} | {ratio['g']} | {best} | {its} |")
    errors = [f"- {name} {k}: {x['error']}" for name, e in data["scenes"].items()
              for k, x in e.items() if isinstance(x, dict) and "error" in x]
    lines += ["", "MuJoCo ÷ coulomb above 1: coulomb executes fewer instructions per step. \"Fewer of the two\": "
              "MuJoCo's solver that executes fewer instructions on the scene. Iterations: coulomb's SAP Newton "
              "iterations; MuJoCo's `solver_niter` (the largest over its islands).", ""]
    piles = [(int(name.split("_")[1]), e) for name, e in data["scenes"].items() if name in PILES]
    if len(piles) >= 2:
        def exponent(key):
            k = fit_exponent([(n, e[key]["per_step"]) for n, e in piles if "error" not in e[key]])
            return "—" if k is None else f"{k:.2f}"
        lines += [f"Settled piles ({', '.join(str(n) for n, _ in piles)} objects): instructions per step grow as "
                  f"n^k with k = {exponent('coulomb_sap')} for coulomb SAP, {exponent('mujoco_newton')} for "
                  f"MuJoCo Newton and {exponent('mujoco_cg')} for MuJoCo CG (least squares on the logarithms).", ""]
    # A MuJoCo count taken from an earlier run (its `carried_from` commit) where this run's child
    # failed: MuJoCo's count for a scene and starting state repeats to the instruction.
    carried = [f"- {name} {k}: from the run of `{x['carried_from']}`; in this run: {x.get('reason', 'failed')}"
               for name, e in data["scenes"].items() for k, x in e.items() if isinstance(x, dict) and "carried_from" in x]
    if carried:
        lines += ["† Carried from an earlier run of the same MuJoCo model and starting state (MuJoCo's counts "
                  "repeat to the instruction between runs):", ""] + carried + [""]
    if errors:
        lines += ["Failed runs:", ""] + errors + [""]
    with open(args.output, "w") as f:
        f.write("\n".join(lines))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("--peer-bench", default=os.path.join(ROOT, "build", "bin", "coulomb_peer_bench"))
    r.add_argument("-o", "--output", required=True)
    r.add_argument("--scenes", nargs="*", default=[s for s, _ in SCENES])
    r.add_argument("--seed", type=int, default=1)
    r.add_argument("--steps-scale", type=float, default=1.0, help="multiplies every scene's step count")
    r.add_argument("--jobs", type=int, default=2, help="how many of the three runs of a scene go side by side")
    r.add_argument("--commit", default="unknown")
    p = sub.add_parser("report")
    p.add_argument("input")
    p.add_argument("-o", "--output", required=True)
    c = sub.add_parser("child")
    c.add_argument("export")
    c.add_argument("solver", choices=["Newton", "CG"])
    c.add_argument("seed", type=int)
    c.add_argument("steps", type=int)
    args = parser.parse_args()
    if args.command == "run":
        run(args)
    elif args.command == "report":
        report(args)
    else:
        child(args.export, args.solver, args.seed, args.steps)


if __name__ == "__main__":
    main()
