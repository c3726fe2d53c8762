"""Cost of Simulator.step() called from Python against the same steps in a C++ loop (docs/python.md,
"Overhead"). Usage: python python/tools/step_overhead.py [SCENE] [--steps N] [--repeats R]

Per repeat, interleaved: (a) C++ — coulomb.batch's rollout function, the step loop wholly in C++
(no signal recorded); (b) Python — a fresh Simulator and `for _ in range(N): sim.step()`; (c)
Python reading results — the same loop reading q, v and the contacts every step. Both start from
the scene's initial state, so they take the same steps. Prints the medians per step and the ratios, and the\ntime per step spent outside Simulator::step (StepStats.wall_time measures the inside).
"""
import argparse
import statistics
import time

import coulomb
from coulomb import _core

parser = argparse.ArgumentParser()
parser.add_argument("scene", nargs="?", default="examples/scenes/a1_drop.yaml")
parser.add_argument("--steps", type=int, default=1000)
parser.add_argument("--repeats", type=int, default=7)
args = parser.parse_args()

scene = coulomb.load_scene(args.scene)
duration = args.steps * scene.time_step
cpp, py, py_read, outside = [], [], [], []
for _ in range(args.repeats):
    result = _core._rollout(scene, {}, duration, [], 1000000, None, 1)
    cpp.append(result["wall_time"] / result["steps"])

    sim = coulomb.Simulator(scene)
    inside = 0.0
    start = time.perf_counter()
    for _ in range(args.steps):
        inside += sim.step().wall_time
    elapsed = time.perf_counter() - start
    py.append(elapsed / args.steps)
    outside.append((elapsed - inside) / args.steps)
    assert (sim.q == result["final_q"]).all()  # the same steps

    sim = coulomb.Simulator(scene)
    start = time.perf_counter()
    for _ in range(args.steps):
        sim.step()
        q, v, contacts = sim.q, sim.v, sim.contacts()
    py_read.append((time.perf_counter() - start) / args.steps)

c, p, r = statistics.median(cpp), statistics.median(py), statistics.median(py_read)
print(f"{args.scene}: {args.steps} steps, median of {args.repeats}")
print(f"  C++ loop                      {c * 1e6:8.1f} us/step")
print(f"  Python sim.step()             {p * 1e6:8.1f} us/step   ratio {p / c:.3f}")
print(f"  of which outside Simulator::step (binding, loop) {statistics.median(outside) * 1e6:6.2f} us/step")
print(f"  Python step + q, v, contacts  {r * 1e6:8.1f} us/step   ratio {r / c:.3f}")
