#!/usr/bin/env python3
"""Measures memory and speed of `coulomb inspect` and `coulomb simulate` against the number of bodies.

Issue 18 ("Scale"): for each N, writes a pile of N free objects in a walled bin
(scripts/pile_scene.py), runs `coulomb inspect` on it and `coulomb simulate` for --steps steps
(10 ms each; --no-html, trajectory and steps written 10 times per simulated second), each under
/usr/bin/time -v, and reports the peak resident set size ("Maximum resident set size"), the wall
time, steps per second of the stepping loop (stats.json: steps / wall_time_s, which leaves out
loading and writing) and the output sizes. With --write-doc the table replaces the section
"## Scaling to 10,000 bodies" of docs/benchmarks.md (scripts/bench_report.sh keeps that section
when it regenerates the rest of the file).

  scripts/pile_scaling.py --sizes 100 1000 2000 5000 10000 --steps 100 --write-doc
  scripts/pile_scaling.py --sizes 1000 --steps 10 --html     # also measure replay.html and report.html
"""
import argparse
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SECTION = "## Scaling to 10,000 bodies"


def timed(cmd):
    """Runs cmd under /usr/bin/time -v; returns (peak RSS [MiB], wall time [s], exit code)."""
    p = subprocess.run(["/usr/bin/time", "-v"] + cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr)
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", p.stderr)
    seconds = None
    if wall:
        parts = [float(x) for x in wall.group(1).split(":")]
        seconds = sum(x * 60 ** i for i, x in enumerate(reversed(parts)))
    if p.returncode not in (0, 3):  # 3: some SAP solves did not converge (the run completes)
        sys.stderr.write(p.stderr[-2000:])
    return (int(rss.group(1)) / 1024 if rss else None), seconds, p.returncode


def size_mb(path):
    return os.path.getsize(path) / 1e6 if os.path.exists(path) else None


def measure(coulomb, n, steps, work, html):
    scene = os.path.join(work, f"pile_{n}.yaml")
    subprocess.run([sys.executable, os.path.join(HERE, "pile_scene.py"), "--bodies", str(n), "--duration",
                    f"{steps * 0.01:.10g}", "-o", scene], check=True)
    row = {"bodies": n, "dofs": 6 * n, "steps": steps}
    row["inspect_rss_mb"], row["inspect_s"], row["inspect_rc"] = timed([coulomb, "inspect", scene])
    out = os.path.join(work, f"out_{n}")
    cmd = [coulomb, "simulate", scene, "-o", out, "-q"]
    cmd += [] if html else ["--no-html", "--output-rate", "10"]
    row["simulate_rss_mb"], row["simulate_s"], row["simulate_rc"] = timed(cmd)
    stats_path = os.path.join(out, "stats.json")
    if os.path.exists(stats_path):
        stats = json.load(open(stats_path))
        row["stepped"] = stats["steps"]
        row["loop_s"] = stats["wall_time_s"]
        row["steps_per_s"] = stats["steps"] / stats["wall_time_s"] if stats["wall_time_s"] > 0 else None
        row["contacts_mean"] = stats["contacts"]["mean"]
        row["contacts_max"] = stats["contacts"]["max"]
        row["iterations_mean"] = stats["solver_iterations"]["mean"]
        row["failures"] = stats["failures"]
    for name in ("trajectory.csv", "steps.csv", "replay.html", "report.html"):
        row[name] = size_mb(os.path.join(out, name))
    shutil.rmtree(out, ignore_errors=True)
    return row


def fmt(x, digits=0):
    return "—" if x is None else f"{x:,.{digits}f}"


def table(rows):
    out = ["| bodies | DOFs | `inspect` peak RSS [MiB] | `inspect` wall [s] | `simulate` peak RSS [MiB] | `simulate` wall [s] "
           "| steps | steps/s (loop) | contacts mean / max | SAP iterations mean | trajectory.csv [MB] |",
           "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        out.append(f"| {r['bodies']:,} | {r['dofs']:,} | {fmt(r['inspect_rss_mb'])} | {fmt(r['inspect_s'], 1)} "
                   f"| {fmt(r['simulate_rss_mb'])} | {fmt(r['simulate_s'], 1)} | {r.get('stepped', '—')} "
                   f"| {fmt(r.get('steps_per_s'), 2)} | {fmt(r.get('contacts_mean'))} / {fmt(r.get('contacts_max'))} "
                   f"| {fmt(r.get('iterations_mean'), 1)} | {fmt(r['trajectory.csv'], 1)} |")
    return "\n".join(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--coulomb", default=os.path.join(ROOT, "build", "bin", "coulomb"), help="the CLI binary")
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 2000, 5000, 10000])
    parser.add_argument("--steps", type=int, default=100, help="steps of 10 ms per run (default 100)")
    parser.add_argument("--html", action="store_true", help="write replay.html and report.html and every step's "
                        "trajectory row (the defaults of `coulomb simulate`) instead of --no-html --output-rate 10")
    parser.add_argument("--work", help="folder for the scenes and outputs (default: a temporary folder)")
    parser.add_argument("--write-doc", action="store_true", help=f"replace '{SECTION}' in docs/benchmarks.md")
    parser.add_argument("--json", help="also write the rows to this JSON file")
    args = parser.parse_args()
    work = args.work or tempfile.mkdtemp(prefix="coulomb-pile-")
    os.makedirs(work, exist_ok=True)
    load_before = open("/proc/loadavg").read().split()[:3]
    start = datetime.datetime.utcnow()
    # The commit of the sources (the binary is assumed built from them), taken before the runs.
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                           text=True).stdout.strip()
    rows = []
    for n in args.sizes:
        rows.append(measure(args.coulomb, n, args.steps, work, args.html))
        print(json.dumps(rows[-1]), flush=True)
    load_after = open("/proc/loadavg").read().split()[:3]
    if args.json:
        json.dump(rows, open(args.json, "w"), indent=1)
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "unknown")
    run = (f"- run: {start:%Y-%m-%d %H:%M} UTC, coulomb commit {commit}{'+local changes' if dirty else ''}, "
           f"{os.cpu_count()} cores ({cpu}); load average before: {' '.join(load_before)}, after: {' '.join(load_after)}")
    command = (f"- command: `scripts/pile_scaling.py --sizes {' '.join(map(str, args.sizes))} --steps {args.steps}"
               f"{' --html' if args.html else ''} --write-doc` (Release build)")
    print(run)
    print(command)
    print(table(rows))
    if args.write_doc:
        path = os.path.join(ROOT, "docs", "benchmarks.md")
        text = open(path).read()
        body = open(os.path.join(HERE, "pile_scaling_section.md")).read()
        body = body.replace("{run}", run).replace("{command}", command).replace("{table}", table(rows))
        start_i = text.find("\n" + SECTION + "\n")
        if start_i < 0:
            text = text.rstrip() + "\n\n" + body.rstrip() + "\n"
        else:
            end_i = text.find("\n## ", start_i + 1)
            text = text[:start_i + 1] + body.rstrip() + "\n" + ("" if end_i < 0 else text[end_i:])
        open(path, "w").write(text)
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
