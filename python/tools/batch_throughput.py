"""Throughput of coulomb.batch.rollout (docs/python.md, "Batch throughput"): N rollouts of a scene
for D seconds with 1 worker, then W workers (local process pool), then on a local Ray instance of W
CPUs. Usage: python python/tools/batch_throughput.py [SCENE] [--rollouts N] [--duration D]
[--workers W] [--no-ray]. Each rollout starts from a slightly different friction coefficient.
Prints wall times (pool start-up included) and the speed-ups over one worker; checks that every
backend returned the same results bit for bit.
"""
import argparse
import time

import numpy as np

import coulomb
from coulomb import batch


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("scene", nargs="?", default="examples/scenes/clutter.yaml")
    parser.add_argument("--rollouts", type=int, default=64)
    parser.add_argument("--duration", type=float, default=1.0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--no-ray", action="store_true")
    args = parser.parse_args()

    parameters = [{"contact": {"mu": 1.0 - 0.005 * i}} for i in range(args.rollouts)]
    runs = [("local, 1 worker", dict(backend="local", workers=1)),
            (f"local, {args.workers} workers", dict(backend="local", workers=args.workers))]
    if not args.no_ray:
        runs.append((f"ray, {args.workers} CPUs", dict(backend="ray", workers=args.workers)))

    reference, base = None, None
    print(f"{args.rollouts} rollouts of {args.scene} for {args.duration} s")
    for name, options in runs:
        start = time.perf_counter()
        results = batch.rollout(args.scene, parameters, duration=args.duration, signals=["q"], **options)
        wall = time.perf_counter() - start
        inside = sum(r["wall_time"] for r in results)
        if reference is None:
            reference, base = results, wall
        else:
            assert all(np.array_equal(a["q"], b["q"]) for a, b in zip(reference, results)), name
        print(f"  {name:18s} {wall:7.2f} s wall ({inside:6.2f} s in C++ steps)   speed-up {base / wall:.2f}x")


if __name__ == "__main__":  # the pool's processes import this module
    main()
