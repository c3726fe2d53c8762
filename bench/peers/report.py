#!/usr/bin/env python3
"""docs/benchmarks-peers.md from the outputs of peers.py (simulate.json) and
coulomb_rigid_peer_bench (rigid.json), with two plots (needs matplotlib and numpy: the bench venv).

  report.py --simulate simulate.json --rigid rigid.json -o docs/benchmarks-peers.md
            [--images docs/images] [--commit HASH]
"""
import argparse
import json
import math
import os
import statistics

ENGINE_LABEL = {"coulomb_sap": "coulomb SAP", "coulomb_lagged": "coulomb lagged", "mujoco_newton": "MuJoCo Newton",
                "mujoco_cg": "MuJoCo CG", "drake_sap": "Drake SAP", "drake_lagged": "Drake lagged"}
# One colour per engine in every plot (the piles run fewer engines than the other scenes).
ENGINE_COLOR = {e: f"C{i}" for i, e in enumerate(ENGINE_LABEL)}
CLUTTER = ["clutter", "clutter_80", "clutter_160", "clutter_320"]  # falling from the scenes' columns
PILES = ["pile_40", "pile_80", "pile_160", "pile_320"]  # the same piles settled: the scaling


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def summary(runs):
    """scene → engine → medians (and the range of steps/s) over the seeds."""
    out = {}
    for r in runs:
        out.setdefault(r["scene"], {}).setdefault(r["engine"], []).append(r)
    table = {}
    for scene, engines in out.items():
        for engine, rs in engines.items():
            ok = [r for r in rs if "error" not in r]
            row = {"n": len(ok), "errors": [r["error"] for r in rs if "error" in r]}
            if ok:
                for key in ("steps_per_s", "wall_steps_per_s", "iterations", "iterations_window", "contacts",
                            "penetration_end", "slip_window", "fallen", "failures"):
                    row[key] = med([r.get(key) for r in ok])
                row["min_steps_per_s"] = min(r["steps_per_s"] for r in ok)
                row["max_steps_per_s"] = max(r["steps_per_s"] for r in ok)
                # ratio per seed against each peer, then the median (the same starting state)
            table.setdefault(scene, {})[engine] = row
    return out, table


def seed_ratio(by_engine, a, b):
    """Median over seeds of steps/s(a) / steps/s(b) on the same seed, with its range."""
    ra = {r["seed"]: r["steps_per_s"] for r in by_engine.get(a, []) if "error" not in r}
    rb = {r["seed"]: r["steps_per_s"] for r in by_engine.get(b, []) if "error" not in r}
    xs = [ra[s] / rb[s] for s in ra if s in rb]
    if not xs:
        return None
    return statistics.median(xs), min(xs), max(xs)


def best_mujoco_ratio(by_engine, coulomb):
    """Per seed: coulomb ÷ the faster of MuJoCo Newton and CG; the median and range."""
    rc = {r["seed"]: r["steps_per_s"] for r in by_engine.get(coulomb, []) if "error" not in r}
    best = {}
    for e in ("mujoco_newton", "mujoco_cg"):
        for r in by_engine.get(e, []):
            if "error" not in r:
                best[r["seed"]] = max(best.get(r["seed"], 0.0), r["steps_per_s"])
    xs = [rc[s] / best[s] for s in rc if s in best]
    return (statistics.median(xs), min(xs), max(xs)) if xs else None


def fmt_ratio(x):
    if x is None:
        return "—"
    m, lo, hi = x
    return f"**{m:.2f}** ({lo:.2f}–{hi:.2f})"


def fmt(x, spec):
    return "—" if x is None else format(x, spec)


def fit_exponent(points):
    """Least-squares slope of log(cost per step) against log(objects); points: (objects, cost).
    Also instructions.py's, on instructions per step."""
    pts = [(math.log(n), math.log(c)) for n, c in points if c]
    if len(pts) < 2:
        return None
    mx = sum(p[0] for p in pts) / len(pts)
    my = sum(p[1] for p in pts) / len(pts)
    sxx = sum((p[0] - mx) ** 2 for p in pts)
    return sum((p[0] - mx) * (p[1] - my) for p in pts) / sxx if sxx else None


def plots(sim, table, images):
    import matplotlib
    import matplotlib.ticker
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    os.makedirs(images, exist_ok=True)
    scenes = sim["scenes"]
    exps = {"settled": {}, "falling": {}}
    fig, ax = plt.subplots(figsize=(7.0, 5.0))
    for series, names, style in (("settled", PILES, "o-"), ("falling", CLUTTER, "x:")):
        for e, label in ENGINE_LABEL.items():
            pts = [(scenes[s]["num_free_bodies"], table[s][e]["steps_per_s"]) for s in names
                   if s in table and e in table[s] and table[s][e].get("steps_per_s")]
            if not pts:
                continue
            k = fit_exponent([(n, 1.0 / s) for n, s in pts])  # cost per step: 1 / steps per second
            exps[series][e] = k
            ax.loglog([p[0] for p in pts], [p[1] for p in pts], style, alpha=1.0 if series == "settled" else 0.5,
                      color=ENGINE_COLOR[e],
                      label=f"{label}, {series} (cost ∝ n^{k:.2f})" if k is not None else f"{label}, {series}")
    ax.set_xlabel("objects in the clutter pile")
    ax.set_ylabel("steps per second (median over starting states)")
    ax.set_title("Clutter 40–320 with walls, δt = 10 ms: settled piles (solid), falling (dotted)", fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(images, "peers_scaling.png"), dpi=110)
    plt.close(fig)

    fig, axes = plt.subplots((len(scenes) + 3) // 4, 4, figsize=(13, 3.1 * ((len(scenes) + 3) // 4)))
    for ax in list(axes.flat)[len(scenes):]:
        ax.set_visible(False)
    for ax, s in zip(axes.flat, [s for s in scenes]):
        for e, label in ENGINE_LABEL.items():
            row = table.get(s, {}).get(e)
            if not row or row.get("steps_per_s") is None:
                continue
            ax.loglog([row["steps_per_s"]], [max(row["penetration_end"], 1e-7) * 1e3], "o", label=label,
                      color=ENGINE_COLOR[e])
        ax.set_title(s, fontsize=9)
        ax.set_xlabel("steps/s", fontsize=8)
        ax.set_ylabel("penetration at end [mm]", fontsize=8)
        ax.grid(True, which="both", alpha=0.3)
        ax.tick_params(labelsize=7)
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())  # overlapping labels otherwise
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=6, fontsize=8)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    fig.savefig(os.path.join(images, "peers_penetration.png"), dpi=100)
    plt.close(fig)
    return exps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--simulate", required=True)
    ap.add_argument("--rigid")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--images", default="docs/images")
    ap.add_argument("--commit", default="unknown")
    args = ap.parse_args()
    sim = json.load(open(args.simulate))
    by_scene, table = summary(sim["runs"])
    exps = plots(sim, table, args.images)
    rel_images = os.path.relpath(args.images, os.path.dirname(os.path.abspath(args.output)))
    v = sim["versions"]
    L = []
    w = L.append
    w("# coulomb against today's peers (MuJoCo 4, Drake, Pinocchio)")
    w("")
    w("<!-- generated by `make bench-peers` (scripts/bench_peers.sh, bench/peers/report.py); do not edit -->")
    w("")
    w(f"- commit `{args.commit}`; run {sim['started']} – {sim['ended']}; load average before "
      f"{' '.join(sim['load_before'])}, after {' '.join(sim['load_after'])}")
    w(f"- machine: {sim['machine']['nproc']} cores ({sim['machine']['cpu']}), **shared with other engineers "
      f"building at the same time: noisy**. Only the ratios measured in the same run, per starting state, mean "
      f"anything; absolute steps/s do not.")
    w(f"- peers (PyPI, in `make bench-peers`'s venv `build/bench-venv`): mujoco {v.get('mujoco')}, "
      f"drake {v.get('drake')} (the newest the registry offers here; the issue's 1.58 is not available), "
      f"pin {v.get('pin')}; Python {sim['machine']['python']}")
    w(f"- {sim['seeds']} starting states per scene (seeds 1…{sim['seeds']}: every translational coordinate offset "
      f"by U[−{sim['perturbation']:g}, {sim['perturbation']:g}] m); the engines run one after the other on each "
      f"state, their order rotating with the seed. Medians over the states; ratios are per state, then the median "
      f"(range in parentheses).")
    if sim.get("repeats", 1) > 1:
        w(f"- coulomb and MuJoCo run every state up to {sim['repeats']} times (while their CPU time stays under "
          f"2 s) and keep the least time; everything else they report repeats exactly. Drake runs each state once "
          f"(its ratios are far from the targets).")
    w("- pile_40 … pile_320: the clutter scenes' piles settled first. `coulomb_peer_bench export --settle 4` "
      "simulates each scene with coulomb for 4 s (the piles land by about 2.5 s), and the starting states perturb "
      "that configuration, at rest. Every engine then runs from the same resting pile: the cost per step of n "
      "objects at rest, which the falling runs (mostly free fall in their 1–3 s) do not measure.")
    w("")
    w("## Forward simulation: ratios (coulomb ÷ peer, steps/s, only the step calls timed)")
    w("")
    w("| scene | n_v | steps | coulomb SAP ÷ best MuJoCo | coulomb lagged ÷ best MuJoCo | coulomb SAP ÷ Drake SAP "
      "| coulomb lagged ÷ Drake lagged |")
    w("|---|---:|---:|---|---|---|---|")
    for s, meta in sim["scenes"].items():
        be = by_scene.get(s, {})
        w(f"| {s} | {meta['nv']} | {meta['steps']} | {fmt_ratio(best_mujoco_ratio(be, 'coulomb_sap'))} | "
          f"{fmt_ratio(best_mujoco_ratio(be, 'coulomb_lagged'))} | {fmt_ratio(seed_ratio(be, 'coulomb_sap', 'drake_sap'))} | "
          f"{fmt_ratio(seed_ratio(be, 'coulomb_lagged', 'drake_lagged'))} |")
    w("")
    w("Targets (issue 16): ≥ 1.0 against the faster MuJoCo solver at equal or smaller penetration, ≥ 2 against "
      "Drake's same approximation. \"—\": the peer failed on every state (see the notes under the scene), or "
      "was not run (the settled piles run the SAP approximation only).")
    w("")
    w("## Per scene: speed and accuracy side by side (medians over the starting states)")
    w("")
    w("Penetration: the largest overlap at the final state, each engine's own collision query. Slip: the mean over "
      "the last `window` steps of the per-step mean tangential speed at the contacts that carry load. Iterations: "
      "solver iterations per step over the run / over the window (coulomb: SAP Newton iterations; MuJoCo: "
      "solver_niter, the largest over islands; Drake does not expose its SAP iteration count to Python).")
    for s, meta in sim["scenes"].items():
        w("")
        c = meta["contact"]
        w(f"### {s}")
        w("")
        settled = (f"starting from {meta['scene_file']} settled for {meta['settle']:g} s, "
                   if meta.get("settle") else "")
        w(f"{settled}n_v = {meta['nv']}, {meta['num_bodies']} bodies, δt = {meta['time_step']:g} s, {meta['steps']} steps "
          f"(window {meta['window']}), integrator {meta['integrator']}; contact μ = {c['mu']:g}, "
          f"k = {c['stiffness']:.3g} N/m, τ_d = {c['dissipation_time']:g} s (SAP), "
          f"d = {c['hunt_crossley_dissipation']:g} s/m, v_s = {c['stiction_tolerance']:g} m/s (lagged); "
          f"model checks passed: " + ", ".join(f"{e} {n}" if isinstance(n, int) else f"{e} **{n}**"
                                                for e, n in meta["checks"].items()))
        w("")
        w("| engine | steps/s (range) | wall steps/s | it/step (all / window) | contacts | penetration [mm] "
          "| slip [m/s] | fallen | failed runs |")
        w("|---|---|---:|---|---:|---:|---:|---:|---|")
        for e, label in ENGINE_LABEL.items():
            row = table.get(s, {}).get(e)
            if not row:
                continue
            if not row["n"]:
                w(f"| {label} | failed: {row['errors'][0][:120]} | | | | | | | {len(row['errors'])} |")
                continue
            it = ("—" if row["iterations"] is None else
                  f"{row['iterations']:.2f} / {row['iterations_window']:.2f}")
            w(f"| {label} | {row['steps_per_s']:,.0f} ({row['min_steps_per_s']:,.0f}–{row['max_steps_per_s']:,.0f}) "
              f"| {row['wall_steps_per_s']:,.0f} | {it} | {fmt(row['contacts'], '.1f')} | "
              f"{1e3 * row['penetration_end']:.3f} | {row['slip_window']:.2e} | {row['fallen']:.0f} | "
              f"{len(row['errors'])}{': ' + row['errors'][0][:100] if row['errors'] else ''} |")
    w("")
    w("## Scaling with the number of objects")
    w("")
    w(f"![steps/s against objects]({rel_images}/peers_scaling.png)")
    w("")
    def exponent_list(series):
        return ", ".join(f"{ENGINE_LABEL[e]} k = {k:.2f}" for e, k in exps[series].items() if k is not None)
    w("Fitted exponent of the cost per step, cost ∝ n^k over 40, 80, 160, 320 objects (least squares on the "
      f"medians). **Settled piles** (pile_40 … pile_320, the measure of scaling): {exponent_list('settled')}. "
      f"Falling piles (clutter … clutter_320): {exponent_list('falling')}; these are not a measure of scaling: "
      "the large piles run fewer steps and their columns are up to 9.6 m tall, so most of their objects are "
      "still in free fall when the run ends.")
    w("")
    w("## Penetration against speed")
    w("")
    w(f"![penetration against steps/s]({rel_images}/peers_penetration.png)")
    if args.rigid and os.path.exists(args.rigid):
        rigid = json.load(open(args.rigid))
        w("")
        w("## Rigid-body algorithms against Pinocchio (C++)")
        w("")
        w(f"Pinocchio {rigid['pinocchio_version']}'s C++ library as the `pin` wheel ships it (headers and "
          "libpinocchio_default, its explicit template instantiations compiled by the wheel's builders), linked "
          "with libcoulomb into one program (bench/peers/rigid_bench.cc): same model (Pinocchio's built from "
          "coulomb's, specialised joints for unit axes), same random state, same process; the results are first "
          "checked equal (M, τ, v̇ after the change of floating-base coordinates). Median ns per call over "
          "interleaved samples; each call includes its own kinematics.")
        w("")
        w("| model | n_v | algorithm | coulomb [ns] | Pinocchio [ns] | coulomb ÷ Pinocchio (speed) | check (rel. diff) |")
        w("|---|---:|---|---:|---:|---:|---:|")
        for r in rigid["results"]:
            for alg in ("rnea", "crba", "aba"):
                cns, pns = r["ns"][alg]["coulomb"], r["ns"][alg]["pinocchio"]
                w(f"| {r['model']} | {r['nv']} | {alg.upper()} | {cns:,.0f} | {pns:,.0f} | **{pns / cns:.2f}** | "
                  f"{r['check'][alg]:.1e} |")
        w("")
        w(f"{rigid['results'][0]['samples']} samples of {rigid['results'][0]['batch']} calls each.")
    w("")
    w(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "report_notes.md")).read().rstrip())
    w("")
    with open(args.output, "w") as f:
        f.write("\n".join(L))


if __name__ == "__main__":
    main()
