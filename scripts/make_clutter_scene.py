#!/usr/bin/env python3
"""Writes a clutter scene (Castro, Permenter and Han, SAP, Sec. VI-C) as coulomb scene YAML.

Objects stand in four columns at (±0.15, ±0.15) m, alternating spheres (radius 5 cm, 0.524 kg)
and boxes (10 cm edge, 1 kg), 12 cm apart (2 cm gaps, so that they drop) from z = 0.06 m up;
object i is in column i // per_column at level i % per_column, and is a sphere when
column + level is even. Each object is offset horizontally by up to ±1 cm and each box turned
about z by up to ±0.3 rad. The first 10 levels of every column use the offsets of
examples/scenes/clutter.yaml (so `--objects 40` regenerates clutter.yaml and, with
`--no-walls`, clutter_no_walls.yaml byte for byte); higher levels draw theirs from
random.Random(seed, column, level), so the output is reproducible.

  scripts/make_clutter_scene.py --objects 80 -o examples/scenes/clutter_80.yaml
  scripts/make_clutter_scene.py --objects 160 -o examples/scenes/clutter_160.yaml
  scripts/make_clutter_scene.py --objects 320 -o examples/scenes/clutter_320.yaml
  scripts/make_clutter_scene.py --objects 40 | diff - examples/scenes/clutter.yaml
  scripts/make_clutter_scene.py --objects 40 --no-walls | diff - examples/scenes/clutter_no_walls.yaml
"""
import argparse
import random
import sys

COLUMNS = 4
COLUMN_SIGNS = [(1, 1), (-1, 1), (-1, -1), (1, -1)]  # column centres at 0.15 * sign
COLUMN_OFFSET = 0.15
LEVEL_Z0, LEVEL_DZ = 0.06, 0.12
JITTER, MAX_YAW = 0.01, 0.3

# clutter.yaml's offsets (dx, dy [m], yaw [rad] or None for a sphere), per column, levels 0-9.
CLUTTER_40 = [
    [(0.003, 0.01, None), (0.0091, -0.0074, 0.235), (-0.0053, -0.0001, None), (-0.0077, 0.0075, 0.128),
     (0.0073, -0.0099, None), (0.0058, 0.0057, -0.293), (-0.0088, 0.0023, None), (-0.0036, -0.0088, 0.005),
     (0.0097, 0.0094, None), (0.0011, -0.0037, 0.291)],
    [(-0.01, -0.0045, 0.124), (0.0015, 0.0096, None), (0.0096, -0.0084, -0.294), (-0.004, 0.0015, None),
     (-0.0086, 0.0063, 0.01), (0.0062, -0.01, None), (0.007, 0.007, 0.29), (-0.008, 0.0007, None),
     (-0.0049, -0.0079, -0.142), (0.0093, 0.0098, None)],
    [(0.0025, -0.0052, None), (-0.0099, -0.0029, 0.015), (0.0, 0.0091, None), (0.0099, -0.0092, 0.288),
     (-0.0026, 0.0032, None), (-0.0093, 0.005, -0.146), (0.0049, -0.0098, None), (0.008, 0.0081, -0.222),
     (-0.007, -0.001, None), (-0.0062, -0.0068, 0.247)],
    [(0.0086, 0.01, 0.287), (0.004, -0.0065, None), (-0.0096, -0.0013, -0.151), (-0.0015, 0.0082, None),
     (0.01, -0.0097, -0.219), (-0.0011, 0.0047, None), (-0.0097, 0.0034, 0.25), (0.0036, -0.0093, None),
     (0.0088, 0.0089, 0.105), (-0.0059, -0.0026, None)],
]

SPHERE_COLOR = "[0.8, 0.3, 0.2, 1]"
BOX_COLOR = "[0.2, 0.5, 0.8, 1]"

WALLS_HEADER = """description: >
  Clutter (Castro, Permenter and Han, SAP, Sec. VI-C): {n} objects dropped into an open-top
  80 x 80 x 80 cm box container (inner size; floor and four 5 cm thick walls, fixed). Four
  columns of {per} objects each, alternating spheres (radius 5 cm, 0.524 kg) and boxes (10 cm
  edge, 1 kg), stacked 2 cm apart so that they drop. mu = 1, k = 1e12 N/m, tau_d = dt = 10 ms.
{generated}time_step: 0.01
duration: 10.0
gravity: [0, 0, -9.81]
solver: sap
integrator: implicit-euler
contact_approximation: sap   # the paper's model (coulomb's default is lagged)
contact: {{mu: 1.0, stiffness: 1.0e12, dissipation_time: 0.01}}
collision: {{margin: 0.002}}
bodies:
  - name: container             # inner 0.8 x 0.8 m, walls 0.8 m high; floor top at z = 0
    fixed: true
    color: [0.55, 0.45, 0.35, 0.6]
    shapes:
      - {{name: floor, type: box, size: [0.9, 0.9, 0.05], position: [0, 0, -0.025]}}
      - {{name: wall_px, type: box, size: [0.05, 0.9, 0.8], position: [0.425, 0, 0.4]}}
      - {{name: wall_nx, type: box, size: [0.05, 0.9, 0.8], position: [-0.425, 0, 0.4]}}
      - {{name: wall_py, type: box, size: [0.8, 0.05, 0.8], position: [0, 0.425, 0.4]}}
      - {{name: wall_ny, type: box, size: [0.8, 0.05, 0.8], position: [0, -0.425, 0.4]}}
"""

NO_WALLS_HEADER = """description: >
  Clutter without walls: the {n} objects of clutter.yaml (four columns of {per}, alternating
  spheres of radius 5 cm, 0.524 kg, and 10 cm boxes, 1 kg) dropped onto a floor, where the
  columns topple and spread. mu = 1, k = 1e12 N/m, tau_d = dt = 10 ms.
{generated}time_step: 0.01
duration: 10.0
gravity: [0, 0, -9.81]
solver: sap
integrator: implicit-euler
contact_approximation: sap   # the paper's model (coulomb's default is lagged)
contact: {{mu: 1.0, stiffness: 1.0e12, dissipation_time: 0.01}}
collision: {{margin: 0.002}}
bodies:
  - name: floor                 # top surface at z = 0
    fixed: true
    color: [0.55, 0.45, 0.35, 1]
    shapes: [{{type: box, size: [4, 4, 0.1], position: [0, 0, -0.05]}}]
"""


def offsets(column, level, seed):
    """(dx, dy, yaw or None) of the object at column, level."""
    if level < len(CLUTTER_40[column]):
        return CLUTTER_40[column][level]
    rng = random.Random(f"{seed}/{column}/{level}")
    dx = round(rng.uniform(-JITTER, JITTER), 4)
    dy = round(rng.uniform(-JITTER, JITTER), 4)
    yaw = round(rng.uniform(-MAX_YAW, MAX_YAW), 3)
    return dx, dy, (None if (column + level) % 2 == 0 else yaw)


def scene(n, walls=True, seed=0):
    if n <= 0 or n % COLUMNS:
        raise ValueError(f"--objects must be a positive multiple of {COLUMNS}, got {n}")
    per = n // COLUMNS
    generated = "" if n == 40 else (
        f"# generated by scripts/make_clutter_scene.py --objects {n}{'' if walls else ' --no-walls'}"
        f"{'' if seed == 0 else f' --seed {seed}'}\n")
    out = (WALLS_HEADER if walls else NO_WALLS_HEADER).format(n=n, per=per, generated=generated)
    width = max(2, len(str(n - 1)))
    for i in range(n):
        column, level = divmod(i, per)
        sx, sy = COLUMN_SIGNS[column]
        dx, dy, yaw = offsets(column, level, seed)
        x = round(sx * COLUMN_OFFSET + dx, 4)
        y = round(sy * COLUMN_OFFSET + dy, 4)
        z = round(LEVEL_Z0 + LEVEL_DZ * level, 4)
        sphere = (column + level) % 2 == 0
        name = f"{'sphere' if sphere else 'box'}_{i:0{width}d}"
        if sphere:
            out += (f"  - {{name: {name}, mass: 0.524, shapes: [{{type: sphere, radius: 0.05}}], "
                    f"position: [{x!r}, {y!r}, {z!r}], color: {SPHERE_COLOR}}}\n")
        else:
            out += (f"  - {{name: {name}, mass: 1.0, shapes: [{{type: box, size: [0.1, 0.1, 0.1]}}], "
                    f"position: [{x!r}, {y!r}, {z!r}], rpy: [0, 0, {yaw!r}], color: {BOX_COLOR}}}\n")
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--objects", type=int, default=40, help="number of objects, a multiple of 4 (default 40)")
    parser.add_argument("--no-walls", action="store_true", help="a 4 x 4 m floor instead of the walled container")
    parser.add_argument("--seed", type=int, default=0, help="seed of the offsets above level 10 (default 0)")
    parser.add_argument("-o", "--output", help="output file (default: standard output)")
    args = parser.parse_args()
    try:
        text = scene(args.objects, walls=not args.no_walls, seed=args.seed)
    except ValueError as e:
        parser.error(str(e))
    if args.output:
        with open(args.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
