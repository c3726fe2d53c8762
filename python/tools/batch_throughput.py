"""Throughput of coulomb.batch.rollout (docs/python.md, "Batch throughput"): N rollouts of a scene
for D seconds with 1 worker and with W workers (local process pool), and on a local Ray instance of
W CPUs (started once beforehand, its start-up timed apart and its workers warmed up by one batch
that is not counted). The three run interleaved, R times; the machine is shared, so the medians are
what to read. Usage:
  python python/tools/batch_throughput.py [SCENE] [--rollouts N] [--duration D] [--workers W]
                                          [--repeats R] [--no-ray]
Each rollout has a slightly different friction coefficient. Wall times include starting the local
pool's processes. Checks that every backend returned the same results bit for bit.
"""
import argparse
import os
import statistics
import time

import numpy as np

from coulomb import batch


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("scene", nargs="?", default="examples/scenes/clutter.yaml")
    parser.add_argument("--rollouts", type=int, default=64)
    parser.add_argument("--duration", type=float, default=1.0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--no-ray", action="store_true")
    parser.add_argument("--start-method", default=None,
                        help="the local pool's (forkserver, spawn, fork; default: coulomb.batch's, forkserver on Linux)")
    args = parser.parse_args()

    parameters = [{"contact": {"mu": 1.0 - 0.005 * i}} for i in range(args.rollouts)]
    runs = {"local, 1 worker": dict(backend="local", workers=1, start_method=args.start_method),
            f"local, {args.workers} workers": dict(backend="local", workers=args.workers,
                                                   start_method=args.start_method)}
    if not args.no_ray:
        import ray
        start = time.perf_counter()
        ray.init(num_cpus=args.workers, include_dashboard=False, _node_ip_address="127.0.0.1", logging_level="ERROR")
        print(f"ray.init: {time.perf_counter() - start:.2f} s")
        batch.rollout(args.scene, parameters[:2 * args.workers], duration=0.1, backend="ray")  # warm-up
        runs[f"ray, {args.workers} CPUs"] = dict(backend="ray")

    print(f"{args.rollouts} rollouts of {args.scene} for {args.duration} s, {args.repeats} repeats; "
          f"local pool start method {args.start_method or 'default'}; load average before: {os.getloadavg()[0]:.2f}")
    walls = {name: [] for name in runs}
    inside = {name: [] for name in runs}
    reference = None
    for r in range(args.repeats):
        line = []
        for name, options in runs.items():
            start = time.perf_counter()
            results = batch.rollout(args.scene, parameters, duration=args.duration, signals=["q"], **options)
            walls[name].append(time.perf_counter() - start)
            inside[name].append(sum(x["wall_time"] for x in results))
            if reference is None:
                reference = results
            else:
                assert all(np.array_equal(a["q"], b["q"]) for a, b in zip(reference, results)), name
            line.append(f"{name} {walls[name][-1]:.2f} s")
        print(f"  repeat {r + 1}: " + ", ".join(line) + f"; load average {os.getloadavg()[0]:.2f}")
    base = statistics.median(walls["local, 1 worker"])
    print("medians:")
    for name in runs:
        wall = statistics.median(walls[name])
        print(f"  {name:18s} {wall:6.2f} s wall ({statistics.median(inside[name]):6.2f} s in C++ steps)"
              f"   speed-up {base / wall:.2f}x   (per repeat: "
              + ", ".join(f"{a / b:.2f}" for a, b in zip(walls["local, 1 worker"], walls[name])) + ")")


if __name__ == "__main__":  # the pool's processes import this module
    main()
