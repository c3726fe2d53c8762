#!/usr/bin/env python3
"""Black-box mutation campaign through the real `coulomb` binary (issue 18, acceptance).

Mutates URDF models (../shared/models/**/*.urdf, examples/models/*.urdf) and YAML scenes
(examples/scenes/*.yaml), and with --kinds mjcf,sdf MJCF files (examples/models/*.xml, MuJoCo's
samples in /usr/share/mujoco/model) and SDFormat files (examples/models/sdf, tests/data/sdf; family
b only, format-blind XML operators), runs every mutant through the command-line tool and
classifies what happened. Python 3 standard library only. docs/reliability.md ("Mutation campaign through the
CLI") describes the operators, the classes and the measured result.

Two families of mutants:
  (a) must-reject: one structure-aware fault that the documented format forbids (a NaN, an
      infinity, a non-number, an empty value, a negative mass, a zero time step, a deleted required
      element or key, a duplicate name or key, a dangling reference, a kinematic cycle, an unknown
      key or enum value, broken XML or YAML). The only correct outcome is exit status 1 with an
      error message that names the file; an accepted mutant is a "wrongly-accepted" finding.
      Only what include/coulomb/io/urdf_loader.h and docs/scene-format.md document as an error is
      here (a zero mass, a missing mesh file of a URDF, a huge but finite value are family b).
  (b) valid-or-clean: numeric perturbations and extreme finite values, byte flips, deleted,
      duplicated or swapped lines, elements, entries and values. Correct outcome: a clean error or
      a successful run.

Each mutant runs (timeout --timeout s each; process start-up dominates, so some commands run on
a fixed share of the mutants, chosen by index):
  coulomb inspect --json M                         every mutant
  coulomb inspect M (text; must agree with --json) mutants 0, 4, 8, ...
  coulomb dynamics M --json [--floating]           URDF mutants 0, 2, 4, ... (--floating on 2, 6, ...)
  coulomb simulate M -o DIR -q --duration D --no-html
                                                   when inspect accepted M; D = min(duration, 10
                                                   time steps) from inspect's JSON (a URDF runs on
                                                   a ground plane with the scene defaults); with
                                                   replay.html and report.html on mutants 0, 10, ...
Classes of a run: clean-error (exit 1, stderr "coulomb: error: ..." naming the mutant file, no
crash text, at most 12 lines), success (exit 0, or 3 = unconverged steps reported, with complete
finite outputs), crash (signal, exit >= 128, "terminate called", sanitizer or segfault text),
hang (timeout), nan-output (an accepted run whose stdout JSON, stats.json, trajectory.csv or
steps.csv holds NaN/inf/null where a number belongs (steps.csv may show an infinite momentum
error on a step whose status says the solve failed), or a stats.json status other than
"complete"), wrongly-accepted (family a, exit 0/3), unclean-error (exit 2 or another status, an
empty message, one not naming the file, or one longer than 12 lines), inconsistent (the text and
the JSON inspect disagree on accepting the mutant). Everything but clean-error and success is a
finding: the mutant, the command, stdout and stderr are saved under OUT/findings/.

Mutant i of a kind is a function of (--seed, kind, i) and the seed files alone, so `--count 500`
runs the first 500 mutants of `--count 20000`, and `--only urdf:1234` replays one. Before the
mutants, every seed (in the canonical form the mutants are written in) must run cleanly; a seed
that does not is left out and listed.

Mutants run with COULOMB_MODEL_PATH = the seed's folder and SHARED/models, so that the seed's
relative model and mesh paths still resolve from OUT/work/.

Usage:
  scripts/mutate_cli.py [--count N] [--start I] [--seed S] [--jobs J] [--timeout T] [--out DIR]
                        [--kinds urdf,scene] [--coulomb PATH] [--shared DIR] [--only KIND:I]
                        [--max-minutes M] [--progress N]
Exit status: 0 no finding, 1 findings (summary on stdout and in OUT/summary.json), 2 setup error.
"""
import argparse
import concurrent.futures
import copy
import csv
import glob
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Classes of a mutant (worst of its runs, in this order of severity).
SEVERITY = ["crash", "hang", "nan-output", "wrongly-accepted", "unclean-error", "inconsistent",
            "script-error", "clean-error", "success"]
FINDINGS = set(SEVERITY[:7])  # script-error: this script failed on the mutant (a bug here)
CRASH_TEXT = re.compile(r"terminate called|Segmentation fault|AddressSanitizer|LeakSanitizer|"
                        r"UndefinedBehaviorSanitizer|runtime error:|Traceback \(most recent|"
                        r"Assertion .* failed|core dumped|stack smashing detected|double free or corruption|"
                        r"free\(\): invalid|malloc\(\): |corrupted (size|double-linked|unsorted|top size)")
MAX_MESSAGE_LINES = 12
TEXT_INSPECT_EVERY = 4   # `coulomb inspect M` (text) on mutants 0, 4, 8, ... (and every seed)
DYNAMICS_EVERY = 2       # `coulomb dynamics M --json` on URDF mutants 0, 2, 4, ... (--floating on every other)
HTML_EVERY = 10          # simulate with replay.html and report.html on mutants 0, 10, 20, ...


# ==================================================================================================
# A small YAML reader and writer for the subset the scene files use: block mappings and
# sequences, flow mappings and sequences (possibly over several lines), plain and quoted scalars,
# comments, folded/literal block scalars. Scalars keep their text as written, so that writing the
# tree back gives the loader the same values.

class Scalar:
    def __init__(self, text):
        self.text = text  # as written: 1.0e5, .inf, sap, "quoted", '' (null)


class Seq:
    def __init__(self, items, flow=False):
        self.items = items
        self.flow = flow


class Map:
    def __init__(self, pairs, flow=False):
        self.pairs = pairs  # list of [key text, node]: duplicate keys are representable
        self.flow = flow

    def get(self, key):
        for k, v in self.pairs:
            if k == key:
                return v
        return None

    def has(self, key):
        return any(k == key for k, _ in self.pairs)


class YamlSubsetError(Exception):
    pass


def _strip_comment(line):
    quote = None
    for i, c in enumerate(line):
        if quote:
            if c == quote:
                quote = None
        elif c in "\"'":
            quote = c
        elif c == "#" and (i == 0 or line[i - 1] in " \t"):
            return line[:i].rstrip()
    return line.rstrip()


def _find_key_colon(text):
    """Index of the ':' that ends a block mapping key in `text`, or -1."""
    quote = None
    depth = 0
    for i, c in enumerate(text):
        if quote:
            if c == quote:
                quote = None
            continue
        if c in "\"'" and (i == 0 or text[i - 1] in " [{,"):
            quote = c
        elif c in "[{":
            depth += 1
        elif c in "]}":
            depth -= 1
        elif c == ":" and depth == 0 and (i + 1 == len(text) or text[i + 1] in " \t"):
            return i
    return -1


class _FlowParser:
    def __init__(self, text):
        self.s = text
        self.i = 0

    def ws(self):
        while self.i < len(self.s) and self.s[self.i] in " \t\n\r":
            self.i += 1

    def value(self, in_map_key=False):
        self.ws()
        if self.i >= len(self.s):
            raise YamlSubsetError("unexpected end of flow collection")
        c = self.s[self.i]
        if c == "[":
            self.i += 1
            items = []
            self.ws()
            if self.s[self.i] == "]":
                self.i += 1
                return Seq(items, True)
            while True:
                items.append(self.value())
                self.ws()
                if self.s[self.i] == ",":
                    self.i += 1
                    continue
                if self.s[self.i] == "]":
                    self.i += 1
                    return Seq(items, True)
                raise YamlSubsetError("expected , or ] in " + self.s)
        if c == "{":
            self.i += 1
            pairs = []
            self.ws()
            if self.s[self.i] == "}":
                self.i += 1
                return Map(pairs, True)
            while True:
                key = self.value(in_map_key=True)
                self.ws()
                if self.s[self.i] != ":":
                    raise YamlSubsetError("expected : in " + self.s)
                self.i += 1
                pairs.append([key.text, self.value()])
                self.ws()
                if self.s[self.i] == ",":
                    self.i += 1
                    continue
                if self.s[self.i] == "}":
                    self.i += 1
                    return Map(pairs, True)
                raise YamlSubsetError("expected , or } in " + self.s)
        if c in "\"'":
            j = self.s.index(c, self.i + 1)
            while c == '"' and self.s[j - 1] == "\\":
                j = self.s.index(c, j + 1)
            text = self.s[self.i:j + 1]
            self.i = j + 1
            return Scalar(text)
        j = self.i
        while j < len(self.s) and self.s[j] not in ",]}":
            if self.s[j] == ":" and (j + 1 == len(self.s) or self.s[j + 1] in " ,]}\n"):
                break
            j += 1
        text = self.s[self.i:j].strip()
        self.i = j
        return Scalar(text)


def _parse_flow(text):
    p = _FlowParser(text)
    node = p.value()
    p.ws()
    if p.i != len(p.s):
        raise YamlSubsetError("trailing text after flow collection: " + text)
    return node


def _balanced(text):
    depth = 0
    quote = None
    for c in text:
        if quote:
            if c == quote:
                quote = None
        elif c in "\"'":
            quote = c
        elif c in "[{":
            depth += 1
        elif c in "]}":
            depth -= 1
    return depth == 0


class _BlockParser:
    def __init__(self, text):
        self.raw = text.split("\n")
        # (indent, content) per line; None for blank and comment-only lines.
        self.lines = []
        for line in self.raw:
            stripped = _strip_comment(line)
            if stripped.strip() == "" or stripped.strip() == "---":
                self.lines.append(None)
            else:
                self.lines.append([len(stripped) - len(stripped.lstrip(" ")), stripped.strip()])
        self.i = 0

    def skip(self):
        while self.i < len(self.lines) and self.lines[self.i] is None:
            self.i += 1

    def peek(self):
        self.skip()
        return self.lines[self.i] if self.i < len(self.lines) else None

    def node(self, indent):
        line = self.peek()
        if line is None:
            return Scalar("")
        if line[1] == "-" or line[1].startswith("- "):
            return self.seq(line[0])
        return self.map(line[0])

    def inline_value(self, rest, parent_indent):
        """The value after 'key:' or '- ' on the current line (already consumed)."""
        if rest == "":
            nxt = self.peek()
            if nxt is None:
                return Scalar("")
            if nxt[0] > parent_indent:
                return self.node(nxt[0])
            if nxt[0] == parent_indent and (nxt[1] == "-" or nxt[1].startswith("- ")):
                return self.seq(nxt[0])
            return Scalar("")
        if rest[0] in ">|":
            # Block scalar: the following lines indented more than the parent, as one string.
            parts = []
            while self.i < len(self.raw):
                raw = self.raw[self.i]
                if raw.strip() and len(raw) - len(raw.lstrip(" ")) <= parent_indent:
                    break
                parts.append(raw.strip())
                self.i += 1
            joiner = " " if rest[0] == ">" else "\n"
            return Scalar(json.dumps(joiner.join(p for p in parts if p)))
        if rest[0] in "[{":
            text = rest
            while not _balanced(text):
                if self.i >= len(self.lines):
                    raise YamlSubsetError("unbalanced flow collection")
                if self.lines[self.i] is not None:
                    text += " " + self.lines[self.i][1]
                self.i += 1
            return _parse_flow(text)
        return Scalar(rest)

    def map(self, indent):
        pairs = []
        while True:
            line = self.peek()
            if line is None or line[0] < indent:
                break
            if line[0] > indent:
                raise YamlSubsetError("unexpected indentation at line %d" % (self.i + 1))
            if line[1] == "-" or line[1].startswith("- "):
                break
            colon = _find_key_colon(line[1])
            if colon < 0:
                raise YamlSubsetError("expected key: value at line %d: %s" % (self.i + 1, line[1]))
            key, rest = line[1][:colon].strip(), line[1][colon + 1:].strip()
            self.i += 1
            pairs.append([key, self.inline_value(rest, indent)])
        return Map(pairs)

    def seq(self, indent):
        items = []
        while True:
            line = self.peek()
            if line is None or line[0] != indent or not (line[1] == "-" or line[1].startswith("- ")):
                break
            rest = line[1][1:].lstrip(" ")
            if rest and _find_key_colon(rest) >= 0 and rest[0] not in "[{\"'":
                # "- key: value": a mapping whose keys are at the column of 'key'.
                line[0] = indent + (len(line[1]) - len(rest))
                line[1] = rest
                items.append(self.map(line[0]))
            else:
                self.i += 1
                items.append(self.inline_value(rest, indent))
        return Seq(items)


def parse_yaml(text):
    p = _BlockParser(text)
    node = p.node(0)
    if p.peek() is not None:
        raise YamlSubsetError("unparsed text at line %d" % (p.i + 1))
    return node


def _flow(node):
    if isinstance(node, Scalar):
        return node.text if node.text != "" else "null"
    if isinstance(node, Seq):
        return "[" + ", ".join(_flow(x) for x in node.items) + "]"
    return "{" + ", ".join(k + ": " + _flow(v) for k, v in node.pairs) + "}"


def _is_block(node):
    return isinstance(node, (Seq, Map)) and not node.flow and (node.items if isinstance(node, Seq) else node.pairs)


def _emit(node, indent, out):
    pad = " " * indent
    if isinstance(node, Map):
        for k, v in node.pairs:
            if _is_block(v):
                out.append(pad + k + ":")
                _emit(v, indent + 2, out)
            elif isinstance(v, Scalar) and v.text == "":
                out.append(pad + k + ":")
            else:
                out.append(pad + k + ": " + _flow(v))
    elif isinstance(node, Seq):
        for item in node.items:
            if _is_block(item):
                sub = []
                _emit(item, indent + 2, sub)
                sub[0] = pad + "- " + sub[0][indent + 2:]
                out.extend(sub)
            else:
                out.append(pad + "- " + _flow(item))
    else:
        out.append(pad + _flow(node))


def emit_yaml(node):
    out = []
    _emit(node, 0, out)
    return "\n".join(out) + "\n"


# ==================================================================================================
# Scene schema (docs/scene-format.md): which scalars are numbers and what range the format asks.

VEC3_KEYS = {"gravity", "com", "position", "rpy", "linear_velocity", "angular_velocity", "normal",
             "point_a", "point_b", "axis", "size"}
NUMERIC_KEYS = VEC3_KEYS | {"time_step", "duration", "mu", "stiffness", "dissipation_time",
                            "hunt_crossley_dissipation", "stiction_tolerance", "margin", "mass",
                            "inertia", "quaternion", "color", "collision_group", "collision_mask",
                            "radius", "length", "vertices", "triangles", "scale", "kp", "kd",
                            "target", "velocity_target", "effort_limit", "damping",
                            "rest_position"}
BOOL_KEYS = {"fixed", "floating", "self_collision", "place_on_ground", "convex", "speculative"}
ENUM_KEYS = {"solver": "sapp", "integrator": "rk4", "contact_approximation": "hydroelastic",
             "lstable_friction": "cones", "type": "cube", "joint_type": "planar"}
SHAPE_REQUIRED = {"sphere": ["radius"], "box": ["size"], "capsule": ["radius", "length"],
                  "cylinder": ["radius", "length"], "convex_mesh": ["vertices", "triangles"],
                  "mesh": ["file"]}


def walk(node, path=()):
    """Yields (path, node, container, key-or-index) for every node below `node`."""
    if isinstance(node, Map):
        for i, (k, v) in enumerate(node.pairs):
            yield path + (k,), v, node, i
            yield from walk(v, path + (k,))
    elif isinstance(node, Seq):
        for i, v in enumerate(node.items):
            yield path + (i,), v, node, i
            yield from walk(v, path + (i,))


def field_of(path):
    """(field key, index path below it) of a scalar: ('size', (1,)) for bodies.0.shapes.0.size.1."""
    k = len(path) - 1
    while k >= 0 and isinstance(path[k], int):
        k -= 1
    return (path[k] if k >= 0 else None), path[k + 1:], k


def is_joint_map_value(path):
    """A value (or element of one) in joint_positions / joint_velocities: any finite number."""
    for k in range(len(path) - 1):
        if path[k] in ("joint_positions", "joint_velocities") and isinstance(path[k + 1], str):
            return True
    return False


def numeric_scalars(tree):
    out = []
    for path, node, cont, idx in walk(tree):
        if not isinstance(node, Scalar):
            continue
        field, _, k = field_of(path)
        parent = path[k - 1] if k >= 1 else None
        if is_joint_map_value(path) or (field in NUMERIC_KEYS and parent != "description"):
            if _as_float(node.text) is not None:
                out.append((path, node, cont, idx))
    return out


def _as_float(text):
    t = text.strip()
    low = t.lower()
    if low in (".inf", "+.inf", "inf"):
        return math.inf
    if low in ("-.inf", "-inf"):
        return -math.inf
    if low in (".nan", "nan"):
        return math.nan
    if low.startswith("0x"):
        try:
            return float(int(t, 16))
        except ValueError:
            return None
    try:
        return float(t)
    except ValueError:
        return None


def range_rule(path):
    """The documented range of the number at `path`: 'pos', 'nonneg', 'dim', 'unit', 'uint32',
    'inertia', 'any'; and whether +inf is allowed there."""
    field, below, k = field_of(path)
    parent = path[k - 1] if k >= 1 else None
    grand = path[k - 2] if k >= 2 else None
    in_constraint = len(path) >= 3 and path[0] == "constraints" and k == 2
    if is_joint_map_value(path):
        return "any", False
    if parent == "contact":
        return {"mu": ("nonneg", False), "stiffness": ("pos", True), "dissipation_time": ("nonneg", False),
                "hunt_crossley_dissipation": ("nonneg", False),
                "stiction_tolerance": ("pos", False)}.get(field, ("any", False))
    if grand == "springs":
        return {"stiffness": ("nonneg", False), "damping": ("nonneg", False)}.get(field, ("any", False))
    if grand == "actuators":
        return {"kp": ("nonneg", False), "kd": ("nonneg", False),
                "effort_limit": ("pos", True)}.get(field, ("any", False))
    if in_constraint:
        return {"length": ("pos", False), "stiffness": ("pos", True), "damping": ("nonneg", False),
                "dissipation_time": ("nonneg", False)}.get(field, ("any", False))
    if len(path) == 1:
        return {"time_step": ("pos", False), "duration": ("pos", False)}.get(field, ("any", False))
    if parent == "collision" and field == "margin":
        return "nonneg", False
    if field == "mass":
        return "pos", False
    if field in ("radius", "length") or (field == "size" and len(below) == 1):
        return "dim", False
    if field == "color":
        return "unit", False
    if field in ("collision_group", "collision_mask"):
        return "uint32", False
    if field == "inertia" and len(below) == 1 and below[0] < 3:
        return "inertia", False
    return "any", False


def vector_nodes(tree):
    """Lists of fixed length: (path, node, allowed lengths)."""
    out = []
    for path, node, cont, idx in walk(tree):
        if not isinstance(node, Seq) or not isinstance(path[-1], str):
            continue
        field = path[-1]
        if is_joint_map_value(path):
            continue
        if field in VEC3_KEYS:
            out.append((path, node, {3}))
        elif field == "quaternion":
            out.append((path, node, {4}))
        elif field == "inertia":
            out.append((path, node, {6}))
        elif field == "color":
            out.append((path, node, {3, 4}))
    return out


def maps_in(tree):
    out = [((), tree)] if isinstance(tree, Map) else []
    for path, node, cont, idx in walk(tree):
        if isinstance(node, Map):
            out.append((path, node))
    return out


# ==================================================================================================
# Scene mutation operators. Each takes (tree, rng, info) and returns the mutated text or None when
# it does not apply to this seed. `info` is the seed's record (its directory, inspect JSON).

def _pick(rng, items):
    return items[rng.randrange(len(items))] if items else None


NONFINITE_YAML = [".nan", ".NaN", "nan", ".inf", "-.inf", "inf", "-inf", "+.inf"]


def s_nonfinite(tree, rng, info):
    cands = numeric_scalars(tree)
    path, node, cont, idx = _pick(rng, cands) or (None,) * 4
    if node is None:
        return None
    _, inf_ok = range_rule(path)
    choices = [v for v in NONFINITE_YAML if not (inf_ok and v in (".inf", "inf", "+.inf"))]
    node.text = _pick(rng, choices)
    return "%s = %s" % (_path_str(path), node.text)


def s_not_a_number(tree, rng, info):
    path, node, cont, idx = _pick(rng, numeric_scalars(tree)) or (None,) * 4
    if node is None:
        return None
    orig = node.text
    node.text = _pick(rng, ['abc', '""', "''", '"%s"' % orig, "1.2.3", "12abc", "0x", "--1", "1,5", "~", "null"])
    return "%s = %s" % (_path_str(path), node.text)


def s_out_of_range(tree, rng, info):
    cands = []
    for path, node, cont, idx in numeric_scalars(tree):
        rule, _ = range_rule(path)
        if rule != "any":
            cands.append((path, node, rule))
    path, node, rule = _pick(rng, cands) or (None,) * 3
    if node is None:
        return None
    x = abs(_as_float(node.text) or 1.0)
    if rule == "pos":
        node.text = _pick(rng, ["0", "0.0", "-0.0", repr(-max(x, 1e-3)), "-1", "-1e308"])
    elif rule == "nonneg":
        node.text = _pick(rng, [repr(-max(x, 1e-3)), "-1", "-1e-9", "-1e308"])
    elif rule == "dim":
        node.text = _pick(rng, ["0", "-0.05", repr(-max(x, 1e-3)), "1e308", "2e6", "1e-7", "1e-300"])
    elif rule == "unit":
        node.text = _pick(rng, ["1.5", "-0.1", "255", "1e308"])
    elif rule == "uint32":
        node.text = _pick(rng, ["-1", "0x100000000", "4294967296", "1.5", "1e308"])
    elif rule == "inertia":
        node.text = repr(-max(x, 1e-3))
    return "%s = %s (%s)" % (_path_str(path), node.text, rule)


def s_inertia_triangle(tree, rng, info):
    cands = [(p, n) for p, n, _ in vector_nodes(tree) if p[-1] == "inertia" and len(n.items) == 6]
    path, node = _pick(rng, cands) or (None, None)
    if node is None:
        return None
    iyy, izz = abs(_as_float(node.items[1].text)), abs(_as_float(node.items[2].text))
    ixx = 2.0 * (iyy + izz) + 1e-3
    node.items = [Scalar(repr(v)) for v in (ixx, iyy, izz, 0.0, 0.0, 0.0)]
    return "%s = [%r, %r, %r, 0, 0, 0] (triangle inequality)" % (_path_str(path), ixx, iyy, izz)


def s_zero_vector(tree, rng, info):
    cands = [(p, n) for p, n, _ in vector_nodes(tree) if p[-1] in ("quaternion", "normal", "axis")]
    path, node = _pick(rng, cands) or (None, None)
    if node is None:
        return None
    node.items = [Scalar("0") for _ in node.items]
    return "%s = zero vector" % _path_str(path)


def s_wrong_count(tree, rng, info):
    path, node, allowed = _pick(rng, vector_nodes(tree)) or (None,) * 3
    if node is None:
        return None
    n = len(node.items)
    choices = [m for m in (0, 1, n - 1, n + 1, 2, 5, 7) if m not in allowed and m >= 0]
    m = _pick(rng, choices)
    node.items = (node.items + [Scalar("0.5")] * 8)[:m]
    return "%s: %d numbers" % (_path_str(path), m)


def _required_keys(tree):
    """(map path, map, key) whose deletion the format forbids."""
    out = []
    bodies = tree.get("bodies") if isinstance(tree, Map) else None
    if isinstance(bodies, Seq):
        for i, b in enumerate(bodies.items):
            if not isinstance(b, Map):
                continue
            out.append((("bodies", i), b, "name"))
            fixed = b.get("fixed")
            if b.has("mass") and not (isinstance(fixed, Scalar) and fixed.text in ("true", "True", "TRUE")):
                out.append((("bodies", i), b, "mass"))
            shapes = b.get("shapes")
            if isinstance(shapes, Seq):
                for j, s in enumerate(shapes.items):
                    if isinstance(s, Map) and isinstance(s.get("type"), Scalar):
                        out.append((("bodies", i, "shapes", j), s, "type"))
                        for key in SHAPE_REQUIRED.get(s.get("type").text, []):
                            if s.has(key):
                                out.append((("bodies", i, "shapes", j), s, key))
    robots = tree.get("robots") if isinstance(tree, Map) else None
    if isinstance(robots, Seq):
        for i, r in enumerate(robots.items):
            if not isinstance(r, Map):
                continue
            for key in ("urdf", "mjcf", "sdf"):
                if r.has(key):
                    out.append((("robots", i), r, key))
            springs = r.get("springs")
            if isinstance(springs, Map):
                for j, (jn, s) in enumerate(springs.pairs):
                    if isinstance(s, Map) and s.has("stiffness"):
                        out.append((("robots", i, "springs", jn), s, "stiffness"))
            acts = r.get("actuators")
            if isinstance(acts, Map) and len(acts.pairs) == 1 and isinstance(acts.pairs[0][1], Map):
                if acts.pairs[0][1].has("kp"):
                    out.append((("robots", i, "actuators", acts.pairs[0][0]), acts.pairs[0][1], "kp"))
    cons = tree.get("constraints") if isinstance(tree, Map) else None
    if isinstance(cons, Seq):
        for i, c in enumerate(cons.items):
            if isinstance(c, Map):
                for key in ("type", "body_a", "body_b", "joint_type"):
                    if c.has(key):
                        out.append((("constraints", i), c, key))
    return out


def s_delete_required(tree, rng, info):
    path, m, key = _pick(rng, _required_keys(tree)) or (None,) * 3
    if m is None:
        return None
    m.pairs = [p for p in m.pairs if p[0] != key]
    return "deleted required %s.%s" % (_path_str(path), key)


def s_unknown_key(tree, rng, info):
    cands = [(p, m) for p, m in maps_in(tree) if m.pairs]
    path, m = _pick(rng, cands) or (None, None)
    if m is None:
        return None
    pair = _pick(rng, m.pairs)
    old = pair[0]
    if old.startswith(("'", '"')):
        return None
    pair[0] = _pick(rng, [old + "_x", old + "s", old[:-1] if len(old) > 1 else old + "z", "X" + old, old.upper() if old.upper() != old else old + "2"])
    if pair[0] in ("all", "ALL") or pair[0] == old:
        pair[0] = old + "_zz"
    return "key %s.%s renamed %s" % (_path_str(path), old, pair[0])


def s_duplicate_key(tree, rng, info):
    cands = [(p, m) for p, m in maps_in(tree) if m.pairs]
    path, m = _pick(rng, cands) or (None, None)
    if m is None:
        return None
    i = rng.randrange(len(m.pairs))
    m.pairs.insert(i + 1, [m.pairs[i][0], copy.deepcopy(m.pairs[i][1])])
    return "duplicate key %s.%s" % (_path_str(path), m.pairs[i][0])


def s_duplicate_name(tree, rng, info):
    cands = []
    for list_key in ("bodies", "robots", "constraints"):
        lst = tree.get(list_key)
        if not isinstance(lst, Seq):
            continue
        named = [(i, x) for i, x in enumerate(lst.items) if isinstance(x, Map) and isinstance(x.get("name"), Scalar)]
        for i, x in named:
            cands.append((list_key, lst, i, x))
    # Shapes of one body with names.
    bodies = tree.get("bodies")
    if isinstance(bodies, Seq):
        for b in bodies.items:
            if isinstance(b, Map) and isinstance(b.get("shapes"), Seq):
                shapes = b.get("shapes")
                for i, s in enumerate(shapes.items):
                    if isinstance(s, Map) and isinstance(s.get("name"), Scalar):
                        cands.append(("shapes", shapes, i, s))
    pick = _pick(rng, cands)
    if pick is None:
        return None
    list_key, lst, i, x = pick
    others = [j for j, y in enumerate(lst.items) if j != i and isinstance(y, Map)]
    if others and rng.random() < 0.5:
        j = _pick(rng, others)
        y = lst.items[j]
        name = x.get("name").text
        if y.has("name"):
            for p in y.pairs:
                if p[0] == "name":
                    p[1] = Scalar(name)
        else:
            y.pairs.insert(0, ["name", Scalar(name)])
        return "%s[%d].name = %s (as %s[%d])" % (list_key, j, name, list_key, i)
    lst.items.insert(i + 1, copy.deepcopy(x))
    return "%s[%d] duplicated (same name %s)" % (list_key, i, x.get("name").text)


def s_dangling(tree, rng, info):
    cands = []
    for path, node, cont, idx in walk(tree):
        if isinstance(node, Scalar) and isinstance(path[-1], str):
            if path[-1] in ("urdf", "mjcf", "sdf") and path[0] == "robots":
                cands.append((path, node, "no_such_model_%d.%s" % (rng.randrange(1000), path[-1] if path[-1] != "mjcf" else "xml")))
            elif path[-1] == "file" and "shapes" in path:
                cands.append((path, node, "../models/no_such_mesh_%d.stl" % rng.randrange(1000)))
            elif path[-1] in ("body_a", "body_b") and path[0] == "constraints":
                cands.append((path, node, "no_such_body_%d" % rng.randrange(1000)))
    for path, node, cont, idx in walk(tree):
        if isinstance(node, Map) and path and path[-1] in ("joint_positions", "joint_velocities", "actuators", "springs") and node.pairs:
            cands.append((path, node, None))
    pick = _pick(rng, cands)
    if pick is None:
        return None
    path, node, new = pick
    if new is None:
        pair = _pick(rng, node.pairs)
        old = pair[0]
        pair[0] = "no_such_joint_%d" % rng.randrange(1000)
        return "%s: joint %s -> %s" % (_path_str(path), old, pair[0])
    node.text = new
    return "%s = %s" % (_path_str(path), new)


def s_enum(tree, rng, info):
    cands = [(p, n) for p, n, c, i in walk(tree) if isinstance(n, Scalar) and isinstance(p[-1], str) and p[-1] in ENUM_KEYS
             and not is_joint_map_value(p) and (p[-1] != "type" or "shapes" in p or p[0] == "constraints")]
    path, node = _pick(rng, cands) or (None, None)
    if node is None:
        return None
    node.text = _pick(rng, [ENUM_KEYS[path[-1]], node.text + "x", node.text.upper() + "_", "1"])
    return "%s = %s" % (_path_str(path), node.text)


def s_bad_bool(tree, rng, info):
    cands = [(p, n) for p, n, c, i in walk(tree) if isinstance(n, Scalar) and isinstance(p[-1], str) and p[-1] in BOOL_KEYS]
    path, node = _pick(rng, cands) or (None, None)
    if node is None:
        return None
    node.text = _pick(rng, ["maybe", "2", "0.5", '"true"', "[true]", "tru"])
    return "%s = %s" % (_path_str(path), node.text)


def s_wrong_type(tree, rng, info):
    """A mapping or list where a scalar belongs, or the other way round."""
    cands = []
    for path, node, cont, idx in walk(tree):
        if not isinstance(path[-1], str) or is_joint_map_value(path):
            continue
        key = path[-1]
        if key in ("contact", "collision", "actuators", "springs", "joint_positions", "frame_a", "frame_b") and isinstance(node, Map):
            cands.append((cont, idx, key, _pick(rng, ["3", "[1, 2]", "abc"])))
        elif key in ("bodies", "robots", "constraints", "shapes") and isinstance(node, Seq):
            cands.append((cont, idx, key, _pick(rng, ["5", "{a: 1}", "abc"])))
        elif key in ("time_step", "duration", "mass", "radius", "mu", "kp", "margin") and isinstance(node, Scalar):
            cands.append((cont, idx, key, _pick(rng, ["[1, 2]", "{value: 1}", "[]"])))
        elif key in VEC3_KEYS and isinstance(node, Seq):
            cands.append((cont, idx, key, _pick(rng, ["1.0", "{x: 1, y: 2, z: 3}", "abc"])))
        elif key in ("name", "urdf", "solver", "type") and isinstance(node, Scalar) and (key != "type" or "shapes" in path or path[0] == "constraints"):
            cands.append((cont, idx, key, _pick(rng, ["[a, b]", "{a: 1}"])))
    pick = _pick(rng, cands)
    if pick is None:
        return None
    cont, idx, key, text = pick
    cont.pairs[idx][1] = _parse_flow(text) if text[0] in "[{" else Scalar(text)
    return "%s replaced by %s" % (key, text)


def s_rpy_and_quaternion(tree, rng, info):
    cands = [(p, m) for p, m in maps_in(tree) if (m.has("rpy") != m.has("quaternion"))
             and (not m.has("normal"))]
    path, m = _pick(rng, cands) or (None, None)
    if m is None:
        return None
    if m.has("rpy"):
        m.pairs.append(["quaternion", _parse_flow("[1, 0, 0, 0]")])
    else:
        m.pairs.append(["rpy", _parse_flow("[0, 0, 0]")])
    return "%s: both rpy and quaternion" % _path_str(path)


def s_fixed_with_velocity(tree, rng, info):
    cands = []
    for key in ("bodies", "robots"):
        lst = tree.get(key)
        if not isinstance(lst, Seq):
            continue
        for i, x in enumerate(lst.items):
            if not isinstance(x, Map):
                continue
            if key == "bodies":
                f = x.get("fixed")
                if isinstance(f, Scalar) and f.text == "true":
                    cands.append((key, i, x))
            elif x.has("urdf"):
                f = x.get("floating")
                if not (isinstance(f, Scalar) and f.text == "true"):
                    cands.append((key, i, x))
    key, i, x = _pick(rng, cands) or (None,) * 3
    if x is None:
        return None
    vkey = _pick(rng, ["linear_velocity", "angular_velocity"])
    x.pairs = [p for p in x.pairs if p[0] != vkey] + [[vkey, _parse_flow("[0, 0, 1]")]]
    return "%s[%d] (welded) given %s" % (key, i, vkey)


def s_bad_name(tree, rng, info):
    cands = []
    # Bodies: non-empty, not 'world' (a '/' is allowed); robots: non-empty, no '/', not 'world'.
    for key, bad in (("bodies", ["world", ""]), ("robots", ["a/b", "world", ""])):
        lst = tree.get(key)
        if isinstance(lst, Seq):
            for i, x in enumerate(lst.items):
                if isinstance(x, Map) and (key == "bodies" or x.has("name")):
                    cands.append((key, i, x, bad))
    key, i, x, bad = _pick(rng, cands) or (None,) * 4
    if x is None:
        return None
    name = _pick(rng, bad)
    name = '""' if name == "" else name
    for p in x.pairs:
        if p[0] == "name":
            p[1] = Scalar(name)
    return "%s[%d].name = %s" % (key, i, name)


S_MUST_REJECT = {
    "nonfinite": s_nonfinite, "not_a_number": s_not_a_number, "out_of_range": s_out_of_range,
    "inertia_triangle": s_inertia_triangle, "zero_vector": s_zero_vector, "wrong_count": s_wrong_count,
    "delete_required": s_delete_required, "unknown_key": s_unknown_key, "duplicate_key": s_duplicate_key,
    "duplicate_name": s_duplicate_name, "dangling_reference": s_dangling, "unknown_enum": s_enum,
    "bad_bool": s_bad_bool, "wrong_type": s_wrong_type, "rpy_and_quaternion": s_rpy_and_quaternion,
    "welded_with_velocity": s_fixed_with_velocity, "bad_name": s_bad_name,
}
# YAML syntax errors act on the text (see mutate_scene).
S_TEXT_MUST_REJECT = ["unbalanced_bracket"]


def s_perturb(tree, rng, info):
    path, node, cont, idx = _pick(rng, numeric_scalars(tree)) or (None,) * 4
    if node is None:
        return None
    x = _as_float(node.text)
    if not math.isfinite(x) or node.text.lower().startswith("0x"):
        return None
    if rng.random() < 0.7:
        y = x * math.exp(rng.uniform(-0.7, 0.7))
    else:
        y = x + rng.uniform(-0.1, 0.1) * max(abs(x), 0.1)
    node.text = repr(y)
    return "%s: %s -> %s" % (_path_str(path), repr(x), node.text)


EXTREME = ["0", "-0.0", "1e308", "-1e308", "1e-308", "5e-324", "1e6", "-1e6", "1e-6", "1e12", "1e-12", "-1"]


def s_extreme(tree, rng, info):
    path, node, cont, idx = _pick(rng, numeric_scalars(tree)) or (None,) * 4
    if node is None:
        return None
    node.text = _pick(rng, EXTREME)
    return "%s = %s" % (_path_str(path), node.text)


def s_swap_values(tree, rng, info):
    cands = [n for p, n, c, i in walk(tree) if isinstance(n, Scalar)]
    if len(cands) < 2:
        return None
    a, b = rng.sample(cands, 2)
    a.text, b.text = b.text, a.text
    return "swapped %s <-> %s" % (b.text, a.text)


def s_delete_entry(tree, rng, info):
    cands = [(p, n) for p, n, c, i in walk(tree) if isinstance(n, (Map, Seq)) and (n.pairs if isinstance(n, Map) else n.items)]
    cands.append(((), tree))
    path, node = _pick(rng, cands)
    if isinstance(node, Map):
        k = rng.randrange(len(node.pairs))
        key = node.pairs.pop(k)[0]
        return "deleted %s.%s" % (_path_str(path), key)
    k = rng.randrange(len(node.items))
    node.items.pop(k)
    return "deleted %s[%d]" % (_path_str(path), k)


def s_duplicate_entry(tree, rng, info):
    cands = [(p, n) for p, n, c, i in walk(tree) if isinstance(n, Seq) and n.items]
    path, node = _pick(rng, cands) or (None, None)
    if node is None:
        return None
    k = rng.randrange(len(node.items))
    node.items.insert(k, copy.deepcopy(node.items[k]))
    return "duplicated %s[%d]" % (_path_str(path), k)


S_VALID_OR_CLEAN = {
    "perturb": s_perturb, "extreme_value": s_extreme, "swap_values": s_swap_values,
    "delete_entry": s_delete_entry, "duplicate_entry": s_duplicate_entry,
}
TEXT_OPS = ["byte_flip", "delete_line", "duplicate_line", "swap_lines", "insert_chars", "truncate"]


def _path_str(path):
    out = ""
    for p in path:
        out += "[%d]" % p if isinstance(p, int) else ("." if out else "") + str(p)
    return out


# ==================================================================================================
# URDF mutation operators (ElementTree on the seed's text).

URDF_NUMERIC = {("origin", "xyz"): 3, ("origin", "rpy"): 3, ("axis", "xyz"): 3, ("limit", "lower"): 1,
                ("limit", "upper"): 1, ("limit", "effort"): 1, ("limit", "velocity"): 1,
                ("dynamics", "damping"): 1, ("dynamics", "friction"): 1, ("mass", "value"): 1,
                ("inertia", "ixx"): 1, ("inertia", "ixy"): 1, ("inertia", "ixz"): 1, ("inertia", "iyy"): 1,
                ("inertia", "iyz"): 1, ("inertia", "izz"): 1, ("box", "size"): 3, ("sphere", "radius"): 1,
                ("cylinder", "radius"): 1, ("cylinder", "length"): 1, ("mesh", "scale"): 3,
                ("color", "rgba"): 4, ("mimic", "multiplier"): 1, ("mimic", "offset"): 1,
                ("safety_controller", "soft_lower_limit"): 1, ("safety_controller", "soft_upper_limit"): 1,
                ("safety_controller", "k_position"): 1, ("safety_controller", "k_velocity"): 1,
                ("calibration", "rising"): 1, ("calibration", "falling"): 1}
ONE_DOF = ("revolute", "continuous", "prismatic")


def urdf_numeric_attributes(root):
    """(element, attribute) of every numeric attribute the loader checks: anywhere inside a
    top-level <link>, <joint> or <material>."""
    out = []
    for top in root:
        if top.tag not in ("link", "joint", "material"):
            continue
        for e in top.iter():
            for attr in e.attrib:
                if (e.tag, attr) in URDF_NUMERIC:
                    out.append((e, attr))
    return out


def _links(root):
    return [e for e in root if e.tag == "link"]


def _joints(root):
    return [e for e in root if e.tag == "joint"]


def _child_links(root):
    out = set()
    for j in _joints(root):
        c = j.find("child")
        if c is not None and "link" in c.attrib:
            out.add(c.get("link"))
    return out


def _root_links(root):
    children = _child_links(root)
    return [l.get("name") for l in _links(root) if l.get("name") not in children]


def u_nonfinite(root, rng):
    e, attr = _pick(rng, urdf_numeric_attributes(root)) or (None, None)
    if e is None:
        return None
    tokens = e.get(attr).split()
    k = rng.randrange(max(1, len(tokens)))
    bad = _pick(rng, ["nan", "NaN", "inf", "-inf", "Infinity", "-INF", "1e999", "-1e400", "+nan"])
    tokens = tokens or ["0"]
    tokens[k] = bad
    e.set(attr, " ".join(tokens))
    return "<%s %s> = %r" % (e.tag, attr, e.get(attr))


def u_not_a_number(root, rng):
    e, attr = _pick(rng, urdf_numeric_attributes(root)) or (None, None)
    if e is None:
        return None
    tokens = e.get(attr).split()
    n = URDF_NUMERIC[(e.tag, attr)]
    choice = rng.randrange(3)
    if choice == 0 or not tokens:
        value = _pick(rng, ["", " ", "abc", "1.2.3", "0x10", "1,5", "--1", "1e", "one"])
        if value.strip() and tokens:
            tokens[rng.randrange(len(tokens))] = value
            value = " ".join(tokens)
    elif choice == 1:  # wrong count
        m = _pick(rng, [c for c in (0, 1, 2, 3, 4, 5) if c != n])
        value = " ".join((tokens + ["0.5"] * 6)[:m])
    else:
        value = " ".join(tokens) + " " + _pick(rng, ["x", "1", "0 0"])
    e.set(attr, value)
    return "<%s %s> = %r" % (e.tag, attr, value)


def u_out_of_range(root, rng):
    cands = []
    for link in _links(root):
        inertial = link.find("inertial")
        if inertial is not None:
            mass = inertial.find("mass")
            if mass is not None and mass.get("value") is not None:
                cands.append(("mass", mass, link))
            inertia = inertial.find("inertia")
            if inertia is not None and all(inertia.get(a) is not None for a in ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")):
                cands.append(("inertia_negative", inertia, link))
                cands.append(("inertia_triangle", inertia, link))
        for col in link.findall("collision"):
            g = col.find("geometry")
            if g is None:
                continue
            for shape in g:
                if shape.tag in ("sphere", "box", "cylinder"):
                    cands.append(("collision_" + shape.tag, shape, link))
    for j in _joints(root):
        t = j.get("type")
        lim = j.find("limit")
        if t in ONE_DOF:
            cands.append(("zero_axis", j, j))
            if lim is not None:
                if lim.get("effort") is not None:
                    cands.append(("effort", lim, j))
                if lim.get("velocity") is not None:
                    cands.append(("velocity", lim, j))
                if t != "continuous" and lim.get("lower") is not None and lim.get("upper") is not None:
                    try:
                        if float(lim.get("lower")) < float(lim.get("upper")):
                            cands.append(("lower_gt_upper", lim, j))
                    except ValueError:
                        pass
        dyn = j.find("dynamics")
        if dyn is not None:
            for a in ("damping", "friction"):
                if dyn.get(a) is not None:
                    cands.append((a, dyn, j))
    pick = _pick(rng, cands)
    if pick is None:
        return None
    what, e, owner = pick
    name = owner.get("name")

    def neg(text):
        x = abs(float(text.split()[0])) if text.split() else 1.0
        return repr(-max(x, 1e-3) * rng.choice([1.0, 10.0]))
    if what == "mass":
        e.set("value", neg(e.get("value")))
    elif what == "inertia_negative":
        a = _pick(rng, ["ixx", "iyy", "izz"])
        scale = max(abs(float(e.get(k))) for k in ("ixx", "iyy", "izz"))
        e.set(a, repr(-max(scale, 1e-3)))
    elif what == "inertia_triangle":
        iyy, izz = abs(float(e.get("iyy"))), abs(float(e.get("izz")))
        for k in ("ixy", "ixz", "iyz"):
            e.set(k, "0")
        e.set("iyy", repr(iyy))
        e.set("izz", repr(izz))
        e.set("ixx", repr(2.0 * (iyy + izz) + 1e-3))
    elif what.startswith("collision_"):
        bad = _pick(rng, ["-0.05", "-1", "2e6", "1e308", "5e-7", "1e-300"])
        if e.tag == "box":
            size = (e.get("size") or "0.1 0.1 0.1").split()
            size = (size + ["0.1"] * 3)[:3]
            size[rng.randrange(3)] = bad
            e.set("size", " ".join(size))
        else:
            attrs = ["radius"] + (["length"] if e.tag == "cylinder" else [])
            e.set(_pick(rng, attrs), bad)
    elif what == "zero_axis":
        axis = e.find("axis")
        if axis is None:
            axis = ET.SubElement(e, "axis")
        axis.set("xyz", _pick(rng, ["0 0 0", "0.0 -0.0 0"]))
    elif what in ("effort", "velocity", "damping", "friction"):
        e.set(what, neg(e.get(what)))
    elif what == "lower_gt_upper":
        lo, hi = e.get("lower"), e.get("upper")
        e.set("lower", hi)
        e.set("upper", lo)
    return "%s of %s" % (what, name)


def u_delete_required(root, rng):
    cands = [("robot_name", root)]
    for link in _links(root):
        cands.append(("link_name", link))
        inertial = link.find("inertial")
        if inertial is not None:
            for sub in ("mass", "inertia"):
                if inertial.find(sub) is not None:
                    cands.append(("inertial_" + sub, inertial))
            if inertial.find("mass") is not None:
                cands.append(("mass_value", inertial.find("mass")))
            if inertial.find("inertia") is not None:
                cands.append(("inertia_attr", inertial.find("inertia")))
    for j in _joints(root):
        cands += [("joint_name", j), ("joint_type", j), ("parent", j), ("child", j)]
        lim = j.find("limit")
        if lim is not None and j.get("type") in ("revolute", "prismatic"):
            for a in ("effort", "velocity"):
                if a in lim.attrib:
                    cands.append(("limit_" + a, lim))
    what, e = _pick(rng, cands)
    if what == "robot_name":
        e.attrib.pop("name", None)
    elif what in ("link_name", "joint_name"):
        if rng.random() < 0.5:
            e.attrib.pop("name", None)
        else:
            e.set("name", "")
    elif what == "joint_type":
        e.attrib.pop("type", None)
    elif what in ("parent", "child"):
        sub = e.find(what)
        if sub is None:
            return None
        if rng.random() < 0.5:
            e.remove(sub)
        else:
            sub.attrib.pop("link", None)
    elif what.startswith("inertial_"):
        e.remove(e.find(what[len("inertial_"):]))
    elif what == "mass_value":
        e.attrib.pop("value", None)
    elif what == "inertia_attr":
        e.attrib.pop(_pick(rng, ["ixx", "ixy", "ixz", "iyy", "iyz", "izz"]), None)
    elif what.startswith("limit_"):
        e.attrib.pop(what[len("limit_"):], None)
    return "deleted %s (%s)" % (what, e.get("name") or e.tag)


def u_duplicate_name(root, rng):
    what = _pick(rng, [w for w in ("link", "joint") if root.find(w) is not None])
    if what is None:
        return None
    elems = [e for e in root if e.tag == what]
    e = _pick(rng, elems)
    if rng.random() < 0.5 or len(elems) < 2:
        dup = copy.deepcopy(e)
        if what == "joint":
            # Same name, but a child of its own (a new leaf link), so that only the name clashes.
            ET.SubElement(root, "link", {"name": "mutant_leaf_link"})
            ch = dup.find("child")
            if ch is not None:
                ch.set("link", "mutant_leaf_link")
        root.append(dup)
        return "duplicated <%s name=%r>" % (what, e.get("name"))
    other = _pick(rng, [x for x in elems if x is not e])
    old = other.get("name")
    other.set("name", e.get("name"))
    return "<%s %r> renamed to %r" % (what, old, e.get("name"))


def u_dangling_link(root, rng):
    j = _pick(rng, _joints(root))
    if j is None:
        return None
    which = _pick(rng, ["parent", "child"])
    sub = j.find(which)
    if sub is None:
        return None
    sub.set("link", "no_such_link_%d" % rng.randrange(1000))
    return "joint %s: <%s link=%r>" % (j.get("name"), which, sub.get("link"))


def u_cycle(root, rng):
    links = [l.get("name") for l in _links(root)]
    roots = _root_links(root)
    children = sorted(_child_links(root))
    if not children or not roots:
        return None
    if rng.random() < 0.5:
        # A joint from a descendant back to the root: no root is left.
        parent, child, what = _pick(rng, children), roots[0], "cycle"
    else:
        # A second parent for a link that has one.
        child = _pick(rng, children)
        parent = _pick(rng, [l for l in links if l != child])
        what = "second parent"
    j = ET.SubElement(root, "joint", {"name": "mutant_extra_joint", "type": _pick(rng, ["fixed", "revolute", "continuous"])})
    ET.SubElement(j, "parent", {"link": parent})
    ET.SubElement(j, "child", {"link": child})
    if j.get("type") == "revolute":
        ET.SubElement(j, "limit", {"lower": "-1", "upper": "1", "effort": "1", "velocity": "1"})
    return "%s: joint %s -> %s" % (what, parent, child)


def u_delete_joint(root, rng):
    j = _pick(rng, _joints(root))
    if j is None:
        return None
    root.remove(j)
    return "deleted joint %s (two roots)" % j.get("name")


def u_joint_type(root, rng):
    j = _pick(rng, _joints(root))
    if j is None:
        return None
    j.set("type", _pick(rng, ["planar", "hinge", "Revolute", "ball", "", "revolute2", "screw"]))
    return "joint %s type=%r" % (j.get("name"), j.get("type"))


def u_root_element(root, rng):
    root.tag = _pick(rng, ["robt", "model", "sdf", "mujoco_x", "Robot"])
    return "root element <%s>" % root.tag


def u_world_link(root, rng):
    children = sorted(_child_links(root))
    if not children:
        return None
    old = _pick(rng, children)
    for l in _links(root):
        if l.get("name") == old:
            l.set("name", "world")
    for j in _joints(root):
        for which in ("parent", "child"):
            sub = j.find(which)
            if sub is not None and sub.get("link") == old:
                sub.set("link", "world")
    return "non-root link %s renamed world" % old


def u_mimic(root, rng):
    cands = [j for j in _joints(root) if j.get("type") in ONE_DOF]
    j = _pick(rng, cands)
    if j is None:
        return None
    m = j.find("mimic")
    if m is None:
        m = ET.SubElement(j, "mimic")
    leader = _pick(rng, ["no_such_joint", j.get("name"), ""])
    m.set("joint", leader)
    return "joint %s <mimic joint=%r>" % (j.get("name"), leader)


U_MUST_REJECT = {
    "nonfinite": u_nonfinite, "not_a_number": u_not_a_number, "out_of_range": u_out_of_range,
    "delete_required": u_delete_required, "duplicate_name": u_duplicate_name,
    "dangling_reference": u_dangling_link, "cycle_or_two_parents": u_cycle, "delete_joint": u_delete_joint,
    "bad_joint_type": u_joint_type, "bad_root_element": u_root_element, "world_link": u_world_link,
    "bad_mimic": u_mimic,
}
U_TEXT_MUST_REJECT = ["truncate_xml"]


def u_perturb(root, rng):
    e, attr = _pick(rng, urdf_numeric_attributes(root)) or (None, None)
    if e is None:
        return None
    tokens = e.get(attr).split()
    if not tokens:
        return None
    k = rng.randrange(len(tokens))
    try:
        x = float(tokens[k])
    except ValueError:
        return None
    y = x * math.exp(rng.uniform(-0.7, 0.7)) if rng.random() < 0.7 else x + rng.uniform(-0.1, 0.1) * max(abs(x), 0.1)
    tokens[k] = repr(y)
    e.set(attr, " ".join(tokens))
    return "<%s %s> %r -> %r" % (e.tag, attr, x, y)


def u_extreme(root, rng):
    e, attr = _pick(rng, urdf_numeric_attributes(root)) or (None, None)
    if e is None:
        return None
    tokens = e.get(attr).split()
    if not tokens:
        return None
    tokens[rng.randrange(len(tokens))] = _pick(rng, EXTREME)
    e.set(attr, " ".join(tokens))
    return "<%s %s> = %r" % (e.tag, attr, e.get(attr))


def u_zero_mass(root, rng):
    masses = [m for m in root.iter("mass") if m.get("value") is not None]
    m = _pick(rng, masses)
    if m is None:
        return None
    m.set("value", _pick(rng, ["0", "0.0", "1e-9"]))
    return "<mass value=%s>" % m.get("value")


def u_swap_values(root, rng):
    attrs = urdf_numeric_attributes(root)
    if len(attrs) < 2:
        return None
    (e1, a1), (e2, a2) = rng.sample(attrs, 2)
    v1, v2 = e1.get(a1), e2.get(a2)
    e1.set(a1, v2)
    e2.set(a2, v1)
    return "swapped <%s %s> <-> <%s %s>" % (e1.tag, a1, e2.tag, a2)


def _all_elements_with_parent(root):
    return [(p, c) for p in root.iter() for c in p]


def u_delete_element(root, rng):
    p, c = _pick(rng, _all_elements_with_parent(root)) or (None, None)
    if c is None:
        return None
    p.remove(c)
    return "deleted <%s %s>" % (c.tag, c.get("name") or "")


def u_duplicate_element(root, rng):
    cands = [(p, c) for p, c in _all_elements_with_parent(root) if p is not root]
    p, c = _pick(rng, cands) or (None, None)
    if c is None:
        return None
    p.insert(list(p).index(c), copy.deepcopy(c))
    return "duplicated <%s> in <%s>" % (c.tag, p.tag)


def u_delete_attribute(root, rng):
    cands = [(e, a) for e in root.iter() for a in e.attrib]
    e, a = _pick(rng, cands) or (None, None)
    if e is None:
        return None
    e.attrib.pop(a)
    return "deleted <%s %s>" % (e.tag, a)


def u_missing_mesh(root, rng):
    meshes = [m for m in root.iter("mesh") if m.get("filename")]
    m = _pick(rng, meshes)
    if m is None:
        return None
    m.set("filename", _pick(rng, ["no_such_mesh.stl", "package://no_such_package/mesh.dae", "file:///no/such/file.obj"]))
    return "<mesh filename=%r> (a warning: URDF meshes that are not found are skipped)" % m.get("filename")


def u_zero_size(root, rng):
    shapes = [s for c in root.iter("collision") for g in c.iter("geometry") for s in g if s.tag in ("sphere", "box", "cylinder")]
    s = _pick(rng, shapes)
    if s is None:
        return None
    if s.tag == "box":
        s.set("size", "0 0 0")
    else:
        s.set("radius", "0")
    return "<collision><%s> of size 0 (skipped with a warning)" % s.tag


U_VALID_OR_CLEAN = {
    "perturb": u_perturb, "extreme_value": u_extreme, "zero_mass": u_zero_mass, "swap_values": u_swap_values,
    "delete_element": u_delete_element, "duplicate_element": u_duplicate_element,
    "delete_attribute": u_delete_attribute, "missing_mesh": u_missing_mesh, "zero_size_collision": u_zero_size,
}


# ==================================================================================================
# MJCF and SDFormat files (--kinds mjcf,sdf): family (b) only, format-blind XML operators on every
# number the file holds (attribute values and element texts that are lists of numbers: MJCF's
# pos="0 0 1", SDF's <pose>0 0 1 0 0 0</pose>), on elements and attributes, and the text
# operators. Their loaders' documented errors are covered by tests/data/bad_mjcf and bad_sdf and
# by the fuzz harnesses, not by must-reject mutants here.

def _is_number(token):
    try:
        float(token)
        return True
    except ValueError:
        return False


def xml_numeric_slots(root):
    """(element, attribute) pairs whose value is a list of numbers; attribute None: the text."""
    slots = []
    for e in root.iter():
        for a, v in e.attrib.items():
            tokens = v.split()
            if tokens and all(_is_number(t) for t in tokens):
                slots.append((e, a))
        if len(e) == 0 and e.text and e.text.strip() and all(_is_number(t) for t in e.text.split()):
            slots.append((e, None))
    return slots


def _slot_get(e, a):
    return e.get(a) if a is not None else e.text


def _slot_set(e, a, value):
    if a is not None:
        e.set(a, value)
    else:
        e.text = value


def _slot_name(e, a):
    return "<%s %s>" % (e.tag, a) if a is not None else "<%s> text" % e.tag


def x_perturb(root, rng):
    e, a = _pick(rng, xml_numeric_slots(root)) or (None, None)
    if e is None:
        return None
    tokens = _slot_get(e, a).split()
    k = rng.randrange(len(tokens))
    x = float(tokens[k])
    y = x * math.exp(rng.uniform(-0.7, 0.7)) if rng.random() < 0.7 else x + rng.uniform(-0.1, 0.1) * max(abs(x), 0.1)
    tokens[k] = repr(y)
    _slot_set(e, a, " ".join(tokens))
    return "%s %r -> %r" % (_slot_name(e, a), x, y)


def x_extreme(root, rng):
    e, a = _pick(rng, xml_numeric_slots(root)) or (None, None)
    if e is None:
        return None
    tokens = _slot_get(e, a).split()
    tokens[rng.randrange(len(tokens))] = _pick(rng, EXTREME)
    _slot_set(e, a, " ".join(tokens))
    return "%s = %r" % (_slot_name(e, a), _slot_get(e, a))


def x_swap_values(root, rng):
    slots = xml_numeric_slots(root)
    if len(slots) < 2:
        return None
    (e1, a1), (e2, a2) = rng.sample(slots, 2)
    v1, v2 = _slot_get(e1, a1), _slot_get(e2, a2)
    _slot_set(e1, a1, v2)
    _slot_set(e2, a2, v1)
    return "swapped %s <-> %s" % (_slot_name(e1, a1), _slot_name(e2, a2))


X_VALID_OR_CLEAN = {
    "perturb": x_perturb, "extreme_value": x_extreme, "swap_values": x_swap_values,
    "delete_element": u_delete_element, "duplicate_element": u_duplicate_element,
    "delete_attribute": u_delete_attribute,
}
XML_KINDS = {"urdf": ".urdf", "mjcf": ".xml", "sdf": ".sdf"}
KINDS = ("urdf", "scene", "mjcf", "sdf")


# ==================================================================================================
# Text operators (family b for both kinds; unbalanced_bracket and truncate_xml are family a).

def text_op(op, text, rng):
    data = bytearray(text.encode("utf-8"))
    lines = text.split("\n")
    if op == "byte_flip":
        n = rng.randint(1, 3)
        where = []
        for _ in range(n):
            k = rng.randrange(len(data))
            data[k] ^= 1 << rng.randrange(8)
            where.append(k)
        return bytes(data), "flipped bits at bytes %s" % where
    if op == "delete_line":
        k = rng.randrange(len(lines))
        del lines[k]
        return "\n".join(lines).encode("utf-8"), "deleted line %d" % (k + 1)
    if op == "duplicate_line":
        k = rng.randrange(len(lines))
        lines.insert(k, lines[k])
        return "\n".join(lines).encode("utf-8"), "duplicated line %d" % (k + 1)
    if op == "swap_lines":
        k = rng.randrange(max(1, len(lines) - 1))
        j = min(len(lines) - 1, k + rng.choice([1, 1, 2, 5]))
        lines[k], lines[j] = lines[j], lines[k]
        return "\n".join(lines).encode("utf-8"), "swapped lines %d and %d" % (k + 1, j + 1)
    if op == "insert_chars":
        k = rng.randrange(len(data) + 1)
        junk = "".join(rng.choice("{}[]:,-#&*!|>'\"%@`\t\n<>/=? \\0123456789.eE+\x00\xff") for _ in range(rng.randint(1, 4)))
        return bytes(data[:k]) + junk.encode("utf-8", "surrogateescape") + bytes(data[k:]), "inserted %r at byte %d" % (junk, k)
    if op == "truncate":
        k = rng.randrange(len(data))
        return bytes(data[:k]), "truncated to %d bytes" % k
    if op == "truncate_xml":
        end = text.rfind("</robot>")
        if end <= 0:
            return None, None
        k = rng.randrange(end + len("</robot>") - 1)
        return bytes(data[:len(text[:k].encode("utf-8"))]), "truncated to %d characters (before </robot> closes)" % k
    if op == "unbalanced_bracket":
        cands = [i for i, line in enumerate(lines) if ("]" in line or "[" in line) and not line.lstrip().startswith("description")]
        if not cands:
            return None, None
        i = rng.choice(cands)
        line = lines[i]
        if "]" in line and rng.random() < 0.6:
            k = line.rfind("]")
            lines[i] = line[:k] + line[k + 1:]
            what = "removed the last ']' of line %d" % (i + 1)
        else:
            k = line.find("[")
            lines[i] = line[:k] + "[" + line[k:] if k >= 0 else line + "]"
            what = "added a '[' on line %d" % (i + 1)
        return "\n".join(lines).encode("utf-8"), what
    raise ValueError(op)


# ==================================================================================================
# Seeds, mutants and runs.

class Seed:
    def __init__(self, kind, path, text):
        self.kind = kind
        self.path = path
        self.name = os.path.splitext(os.path.basename(path))[0]
        self.text = text
        self.canonical = None  # scene: the emitted tree; URDF: the ElementTree serialization
        self.time_step = None
        self.duration = None
        self.model_path = None


def find_seeds(kind, shared):
    if kind == "urdf":
        files = sorted(glob.glob(os.path.join(shared, "models", "**", "*.urdf"), recursive=True))
        files += sorted(glob.glob(os.path.join(REPO, "examples", "models", "*.urdf")))
    elif kind == "mjcf":  # and MuJoCo's sample models (libmujoco-samples) when installed
        files = sorted(glob.glob(os.path.join(REPO, "examples", "models", "*.xml")))
        files += sorted(glob.glob(os.path.join("/usr/share/mujoco/model", "**", "*.xml"), recursive=True))
        files = [f for f in files if "<mujoco" in open(f, encoding="utf-8", errors="replace").read(4096)]
    elif kind == "sdf":
        files = sorted(glob.glob(os.path.join(REPO, "examples", "models", "sdf", "**", "*.sdf"), recursive=True))
        files += sorted(glob.glob(os.path.join(REPO, "tests", "data", "sdf", "**", "*.sdf"), recursive=True))
    else:
        files = sorted(glob.glob(os.path.join(REPO, "examples", "scenes", "*.yaml")))
    seeds = []
    for f in files:
        with open(f, encoding="utf-8") as fh:
            seeds.append(Seed(kind, os.path.abspath(f), fh.read()))
    return seeds


def serialize_urdf(root):
    return ET.tostring(root, encoding="unicode")


def _operators(kind, family):
    """(structural operators, text operators) of a kind and family."""
    if kind == "scene":
        return (S_MUST_REJECT, S_TEXT_MUST_REJECT) if family == "a" else (S_VALID_OR_CLEAN, TEXT_OPS)
    if kind == "urdf":
        return (U_MUST_REJECT, U_TEXT_MUST_REJECT) if family == "a" else (U_VALID_OR_CLEAN, TEXT_OPS)
    return X_VALID_OR_CLEAN, TEXT_OPS  # mjcf, sdf: family b only


def make_mutant(seed_list, kind, seed, index):
    """(seed, family, operator, description, bytes) of mutant `index`; deterministic."""
    rng = random.Random("%s:%s:%d" % (seed, kind, index))
    for _attempt in range(50):
        s = rng.choice(seed_list)
        family = "a" if rng.random() < 0.5 and kind in ("urdf", "scene") else "b"
        structural, text_ops = _operators(kind, family)
        op = rng.choice(sorted(structural) + text_ops)
        if op in structural:
            if kind == "scene":
                tree = parse_yaml(s.canonical)
                what = structural[op](tree, rng, s)
                data = emit_yaml(tree).encode("utf-8") if what is not None else None
            else:
                root = ET.fromstring(s.canonical)
                what = structural[op](root, rng)
                data = serialize_urdf(root).encode("utf-8") if what is not None else None
        else:
            data, what = text_op(op, s.canonical, rng)
        if data is None:
            continue
        return s, family, op, what, data
    raise RuntimeError("no applicable mutation for %s %d" % (kind, index))


def run(cmd, env, timeout):
    start = time.monotonic()
    try:
        p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                           stdin=subprocess.DEVNULL)
        return {"cmd": cmd, "rc": p.returncode, "stdout": p.stdout.decode("utf-8", "replace"),
                "stderr": p.stderr.decode("utf-8", "replace"), "seconds": time.monotonic() - start,
                "timeout": False}
    except subprocess.TimeoutExpired as e:
        return {"cmd": cmd, "rc": None, "stdout": (e.stdout or b"").decode("utf-8", "replace"),
                "stderr": (e.stderr or b"").decode("utf-8", "replace"), "seconds": timeout, "timeout": True}


def _nonfinite_in_json(x, path="", allowed_null=()):
    """First path holding a null (nlohmann writes NaN/inf as null), a NaN/inf float, or a 'nan'
    string; "inf" strings are how inspect writes documented infinities."""
    if x is None:
        if path.rsplit(".", 1)[-1] in allowed_null:
            return None
        return path or "<root>"
    if isinstance(x, float) and not math.isfinite(x):
        return path
    if isinstance(x, str) and x.lower() in ("nan", "-nan"):
        return path
    if isinstance(x, dict):
        for k, v in x.items():
            r = _nonfinite_in_json(v, path + "." + k, allowed_null)
            if r:
                return r
    if isinstance(x, list):
        for i, v in enumerate(x):
            r = _nonfinite_in_json(v, "%s[%d]" % (path, i), allowed_null)
            if r:
                return r
    return None


INSPECT_NULLABLE = ("lowest_collision_point", "ground_height", "height_above_ground")
NAN_TOKEN = re.compile(r"(?<![A-Za-z_])[-+]?(nan|inf|infinity)(?![A-Za-z_])", re.I)


def classify_error(r, mutant_name):
    """clean-error or unclean-error (with the reason) for a run that failed."""
    err = r["stderr"]
    if r["rc"] != 1:
        return "unclean-error", "exit status %s for a bad input file (1 expected)" % r["rc"]
    idx = err.find("coulomb: error:")
    if idx < 0:
        return "unclean-error", "no 'coulomb: error:' line on stderr"
    message = err[idx:].rstrip("\n")
    if mutant_name not in message:
        return "unclean-error", "the message does not name the file %s" % mutant_name
    if message.count("\n") + 1 > MAX_MESSAGE_LINES:
        return "unclean-error", "the message has %d lines" % (message.count("\n") + 1)
    return "clean-error", None


def classify_run(r, mutant_name, check_output):
    """(class, reason) of one command; check_output(r) checks an accepted run's outputs."""
    if r["timeout"]:
        return "hang", "no exit within the timeout"
    if r["rc"] < 0 or r["rc"] >= 128:
        return "crash", "exit status %d (signal)" % r["rc"]
    m = CRASH_TEXT.search(r["stderr"])
    if m:
        return "crash", "stderr holds %r" % m.group(0)
    if r["rc"] in (0, 3):
        reason = check_output(r)
        if reason:
            return "nan-output", reason
        return "success", None
    return classify_error(r, mutant_name)


def check_json_stdout(r, allowed_null=()):
    try:
        d = json.loads(r["stdout"])
    except ValueError as e:
        return "stdout is not JSON: %s" % e
    bad = _nonfinite_in_json(d, "", allowed_null)
    return "stdout JSON has a non-finite value at %s" % bad if bad else None


def check_text_stdout(r):
    m = re.search(r"(?<![A-Za-z_])-?nan(?![A-Za-z_])", r["stdout"], re.I)
    return "stdout text holds %r" % m.group(0) if m else None


def check_simulation_outputs(out_dir, expect_steps, html):
    stats_path = os.path.join(out_dir, "stats.json")
    try:
        with open(stats_path, encoding="utf-8") as fh:
            stats = json.load(fh)
    except (OSError, ValueError) as e:  # UnicodeDecodeError is a ValueError
        return "stats.json missing or not JSON: %s" % e
    if stats.get("status") != "complete":
        return "stats.json status %r" % stats.get("status")
    bad = _nonfinite_in_json(stats)
    if bad:
        return "stats.json has a non-finite value at %s" % bad
    if expect_steps is not None and stats.get("steps") != expect_steps:
        return "stats.json steps %r, expected %d" % (stats.get("steps"), expect_steps)
    for name in ("trajectory.csv", "steps.csv"):
        try:
            # Names come from the mutant (bytes flipped, commas): read leniently, split as CSV.
            with open(os.path.join(out_dir, name), encoding="utf-8", errors="replace", newline="") as fh:
                parsed = list(csv.reader(fh))
        except (OSError, csv.Error) as e:
            return "%s missing or not CSV: %s" % (name, e)
        # trajectory.csv: the header, t = 0 and a row per step; steps.csv: the header and a row per step.
        if len(parsed) < (2 if name == "trajectory.csv" or expect_steps != 0 else 1):
            return "%s has %d rows" % (name, len(parsed))
        header = parsed[0]
        for k, cells in enumerate(parsed[1:], 2):
            if len(cells) != len(header):
                return "%s row %d has %d columns, the header %d" % (name, k, len(cells), len(header))
            failed = name == "steps.csv" and cells[header.index("status")] != "success" if "status" in header else False
            for column, cell in zip(header, cells):
                if NAN_TOKEN.fullmatch(cell.strip()):
                    # A failed solve reports an infinite momentum error (its status says so).
                    if failed and column == "momentum_error" and "nan" not in cell.lower():
                        continue
                    return "%s row %d column %s holds %r" % (name, k, column, cell)
    if html:
        for name in ("replay.html", "report.html"):
            if not os.path.isfile(os.path.join(out_dir, name)) or os.path.getsize(os.path.join(out_dir, name)) == 0:
                return "%s missing" % name
    return None


class Campaign:
    def __init__(self, args):
        self.args = args
        self.coulomb = args.coulomb
        self.out = os.path.abspath(args.out)
        self.work = os.path.join(self.out, "work")
        self.findings_dir = os.path.join(self.out, "findings")
        self.lock = threading.Lock()
        self.results = []
        self.done = 0
        self.seeds = {}
        self.deadline = None

    def env_for(self, seed):
        env = dict(os.environ)
        env["COULOMB_MODEL_PATH"] = os.pathsep.join(
            [os.path.dirname(seed.path), os.path.join(self.args.shared, "models")] +
            ([os.environ["COULOMB_MODEL_PATH"]] if os.environ.get("COULOMB_MODEL_PATH") else []))
        return env

    def prepare_seeds(self, kind):
        """Canonical form of every seed, and a baseline run that must succeed (else the seed is
        left out and reported)."""
        kept, dropped = [], []
        parsed = []
        for s in find_seeds(kind, self.args.shared):
            try:
                if kind == "scene":
                    s.canonical = emit_yaml(parse_yaml(s.text))
                else:
                    s.canonical = serialize_urdf(ET.fromstring(s.text))
            except (YamlSubsetError, ET.ParseError, ValueError, IndexError) as e:
                dropped.append((s.path, "cannot parse: %s" % e))
                continue
            parsed.append(s)

        def baseline(s):
            return self.run_mutant(kind, s, "baseline", "seed", "(unmutated, canonical form)",
                                   s.canonical.encode("utf-8"), "seed-%s-%s" % (kind, s.name), check_seed=True)
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, self.args.jobs)) as pool:
            results = list(pool.map(baseline, parsed))
        for s, result in zip(parsed, results):
            if result["class"] != "success":
                dropped.append((s.path, "%s: %s" % (result["class"], result["reason"])))
            else:
                kept.append(s)
        return kept, dropped

    def run_mutant(self, kind, s, family, op, what, data, label, index=0, check_seed=False):
        ext = XML_KINDS.get(kind, ".yaml")
        d = os.path.join(self.work, label)
        os.makedirs(d, exist_ok=True)
        name = "%s_%s%s" % (label, s.name, ext)
        path = os.path.join(d, name)
        with open(path, "wb") as fh:
            fh.write(data)
        env = self.env_for(s)
        t = self.args.timeout
        runs = []
        cls, reason = "success", None

        def add(r, c, why):
            nonlocal cls, reason
            r["class"], r["reason"] = c, why
            runs.append(r)
            if SEVERITY.index(c) < SEVERITY.index(cls):
                cls, reason = c, "%s: %s" % (" ".join(os.path.basename(x) if x == path else x for x in r["cmd"][1:]), why)

        ij = run([self.coulomb, "inspect", "--json", path], env, t)
        c, why = classify_run(ij, name, lambda r: check_json_stdout(r, INSPECT_NULLABLE))
        add(ij, c, why)
        accepted = c in ("success", "nan-output")
        # Process start-up (~60 ms) dominates a run: the text inspect and `dynamics` run on a
        # fixed share of the mutants (by index, so reruns do the same).
        if index % TEXT_INSPECT_EVERY == 0:
            it = run([self.coulomb, "inspect", path], env, t)
            c, why = classify_run(it, name, check_text_stdout)
            add(it, c, why)
            if (c in ("success", "nan-output")) != accepted and c not in ("crash", "hang"):
                add(it, "inconsistent", "inspect %s it, inspect --json %s it" % (
                    "rejected" if accepted else "accepted", "accepted" if accepted else "rejected"))
        accepted_any = accepted
        if kind == "urdf" and index % DYNAMICS_EVERY == 0:
            floating = (index // DYNAMICS_EVERY) % 2 == 1
            dy = run([self.coulomb, "dynamics", path, "--json"] + (["--floating"] if floating else []), env, t)
            c, why = classify_run(dy, name, check_json_stdout)
            add(dy, c, why)
            accepted_any = accepted or c in ("success", "nan-output")
        if accepted:
            try:
                info = json.loads(ij["stdout"])
            except ValueError:
                info = {}
            html = index % HTML_EVERY == 0 and not check_seed
            out_dir = os.path.join(d, "out")
            # At most 10 steps: the scene's (or the model file's default) time step from inspect.
            dt, scene_duration = info.get("time_step"), info.get("duration")
            if not isinstance(dt, (int, float)) or not isinstance(scene_duration, (int, float)):
                dt, scene_duration = None, None
            duration = min(scene_duration, 10 * dt) if dt else None
            cmd = [self.coulomb, "simulate", path, "-o", out_dir, "-q"]
            expect = None
            if duration is not None and math.isfinite(duration) and duration > 0:
                cmd += ["--duration", repr(duration)]
                # The step count the CLI computes: ceil(duration / dt - 1e-9) (0 for a duration
                # under 1e-9 of a step).
                expect = max(0, math.ceil(duration / dt - 1e-9)) if dt and math.isfinite(duration / dt) else None
            if not html:
                cmd.append("--no-html")
            sm = run(cmd, env, t)
            c, why = classify_run(sm, name, lambda r: check_simulation_outputs(out_dir, expect, html))
            add(sm, c, why)
        if family == "a" and accepted_any:
            add(runs[0], "wrongly-accepted", "a must-reject mutant (%s: %s) was accepted" % (op, what))
        if check_seed:
            shutil.rmtree(d, ignore_errors=True)
            return {"class": cls, "reason": reason}
        result = {"kind": kind, "index": index, "seed": os.path.relpath(s.path, REPO), "family": family,
                  "operator": op, "mutation": what, "class": cls, "reason": reason,
                  "seconds": sum(r["seconds"] for r in runs),
                  "runs": [{"cmd": r["cmd"], "rc": r["rc"], "class": r["class"]} for r in runs]}
        if cls in FINDINGS:
            self.save_finding(result, path, runs, s)
        shutil.rmtree(d, ignore_errors=True)
        return result

    def write_summary(self, elapsed, partial=False):
        summary = summarize(list(self.results), self.kinds, elapsed, self.args, self.dropped)
        summary["partial"] = partial
        with open(os.path.join(self.out, "summary.json"), "w", encoding="utf-8") as fh:
            json.dump(summary, fh, indent=2)
        return summary

    def save_finding(self, result, path, runs, seed):
        dest = os.path.join(self.findings_dir, "%s-%05d-%s" % (result["kind"], result["index"], result["class"]))
        shutil.rmtree(dest, ignore_errors=True)
        os.makedirs(dest)
        shutil.copy(path, dest)
        with open(os.path.join(dest, "finding.json"), "w", encoding="utf-8") as fh:
            json.dump(result, fh, indent=2)
        with open(os.path.join(dest, "runs.txt"), "w", encoding="utf-8") as fh:
            fh.write("# environment: COULOMB_MODEL_PATH=%s\n" % self.env_for(seed)["COULOMB_MODEL_PATH"])
            for r in runs:
                fh.write("$ %s\n# exit %s, %.2f s, class %s%s\n" % (
                    " ".join(r["cmd"]), "timeout" if r["timeout"] else r["rc"], r["seconds"], r["class"],
                    (": " + r["reason"]) if r.get("reason") else ""))
                fh.write("--- stderr\n%s\n--- stdout (first 4000 characters)\n%s\n\n" % (r["stderr"], r["stdout"][:4000]))

    def one(self, kind, index):
        if self.deadline is not None and time.monotonic() > self.deadline:
            return None  # --max-minutes reached: left out (the summary says how many ran)
        s, family, op, what, data = make_mutant(self.seeds[kind], kind, self.args.seed, index)
        try:
            r = self.run_mutant(kind, s, family, op, what, data, "%s-%05d" % (kind, index), index)
        except Exception as e:  # a bug of this script: reported, never a silently lost mutant
            r = {"kind": kind, "index": index, "seed": os.path.relpath(s.path, REPO), "family": family,
                 "operator": op, "mutation": what, "class": "script-error", "reason": repr(e), "seconds": 0.0,
                 "runs": []}
        with self.lock:
            self.results.append(r)
            self.done += 1
            if r["class"] in FINDINGS:
                print("FINDING %s %d: %s (%s/%s, seed %s): %s\n  %s" % (kind, index, r["class"], family, op,
                      r["seed"], what, r["reason"]), flush=True)
            if self.args.progress and self.done % self.args.progress == 0:
                el = time.monotonic() - self.t0
                print("... %d mutants in %.0f s (%.1f/s)" % (self.done, el, self.done / el), flush=True)
                self.write_summary(el, partial=True)
        return r


def summarize(results, kinds, elapsed, args, dropped):
    summary = {"date": time.strftime("%Y-%m-%d %H:%M:%S"), "command": " ".join([os.path.relpath(sys.argv[0], REPO)] + sys.argv[1:]),
               "seed": args.seed, "start": args.start, "count": args.count, "jobs": args.jobs, "timeout_s": args.timeout,
               "elapsed_s": round(elapsed, 1), "dropped_seeds": dropped, "kinds": {}}
    for kind in kinds:
        rs = [r for r in results if r["kind"] == kind]
        done = sorted(r["index"] for r in rs)
        prefix = args.start
        for i in done:
            if i != prefix:
                break
            prefix += 1
        k = {"mutants": len(rs), "first_index": args.start, "complete_through_index": prefix - 1,
             "classes": {}, "by_family": {}, "by_operator": {}, "findings": []}
        for r in rs:
            k["classes"][r["class"]] = k["classes"].get(r["class"], 0) + 1
            fam = k["by_family"].setdefault(r["family"], {})
            fam[r["class"]] = fam.get(r["class"], 0) + 1
            op = k["by_operator"].setdefault("%s/%s" % (r["family"], r["operator"]), {})
            op[r["class"]] = op.get(r["class"], 0) + 1
            if r["class"] in FINDINGS:
                k["findings"].append({x: r[x] for x in ("index", "class", "family", "operator", "mutation", "seed", "reason")})
        k["findings"].sort(key=lambda f: f["index"])
        k["cpu_seconds_in_runs"] = round(sum(r["seconds"] for r in rs), 1)
        k["seconds_per_mutant"] = round(elapsed * max(1, args.jobs) / max(1, len(results)), 3)
        summary["kinds"][kind] = k
    summary["findings"] = sum(len(k["findings"]) for k in summary["kinds"].values())
    return summary


def print_summary(summary):
    print("\nmutate_cli: %s (seed %s, %s jobs, %.0f s)" % (summary["date"], summary["seed"], summary["jobs"], summary["elapsed_s"]))
    for kind, k in summary["kinds"].items():
        print("\n%s: %d mutants (indices %d..%d)" % (kind, k["mutants"], k["first_index"], k["complete_through_index"]))
        print("  " + ", ".join("%s %d" % (c, k["classes"].get(c, 0)) for c in SEVERITY))
        for fam in sorted(k["by_family"]):
            print("  family %s: %s" % (fam, ", ".join("%s %d" % (c, n) for c, n in sorted(k["by_family"][fam].items()))))
        print("  per operator:")
        for op in sorted(k["by_operator"]):
            print("    %-32s %s" % (op, ", ".join("%s %d" % (c, n) for c, n in sorted(k["by_operator"][op].items()))))
    for path, why in summary["dropped_seeds"]:
        print("seed left out: %s: %s" % (path, why))
    print("\nfindings: %d" % summary["findings"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="See the module docstring (head of this file) and docs/reliability.md.")
    ap.add_argument("--count", type=int, default=20000, help="mutants per kind (default 20000)")
    ap.add_argument("--start", type=int, default=0, help="first mutant index (default 0)")
    ap.add_argument("--seed", default="1", help="campaign seed (default 1)")
    ap.add_argument("--jobs", type=int, default=2, help="mutants run in parallel (default 2)")
    ap.add_argument("--timeout", type=float, default=20.0, help="seconds per command (default 20)")
    ap.add_argument("--kinds", default="urdf,scene",
                    help="comma-separated: urdf, scene, mjcf, sdf (default urdf,scene; mjcf and sdf: family b only)")
    ap.add_argument("--out", default=os.path.join(REPO, "build", "mutate-cli"), help="output folder (default build/mutate-cli)")
    ap.add_argument("--coulomb", default=os.path.join(REPO, "build", "bin", "coulomb"), help="the coulomb binary")
    ap.add_argument("--shared", default=os.path.join(os.path.dirname(REPO), "shared"), help="the shared folder (models)")
    ap.add_argument("--only", help="run only these mutants, KIND:INDEX[,KIND:INDEX...] (e.g. urdf:45,scene:1064), "
                    "and print what each did (findings are saved as usual)")
    ap.add_argument("--progress", type=int, default=1000,
                    help="print progress and update OUT/summary.json every N mutants (0: never)")
    ap.add_argument("--max-minutes", type=float, default=0,
                    help="start no mutant after this many minutes (0: no limit); the summary counts what ran")
    args = ap.parse_args()
    args.shared = os.path.abspath(args.shared)
    if not (os.path.isfile(args.coulomb) and os.access(args.coulomb, os.X_OK)):
        print("mutate_cli: no coulomb binary at %s (build it: ninja -C build coulomb_cli, or give --coulomb)" % args.coulomb)
        return 2
    kinds = [k for k in args.kinds.split(",") if k]
    only = []
    if args.only:
        try:
            only = [(k, int(i)) for k, i in (item.split(":") for item in args.only.split(","))]
        except ValueError:
            print("mutate_cli: --only takes KIND:INDEX[,KIND:INDEX...], e.g. urdf:45,scene:1064")
            return 2
        kinds = sorted(set(k for k, _ in only))
    if any(k not in KINDS for k in kinds):
        print("mutate_cli: --kinds takes urdf, scene, mjcf and sdf")
        return 2
    c = Campaign(args)
    os.makedirs(c.out, exist_ok=True)
    if not only and args.start == 0:
        shutil.rmtree(c.findings_dir, ignore_errors=True)
    dropped = []
    for kind in kinds:
        kept, drop = c.prepare_seeds(kind)
        dropped += drop
        c.seeds[kind] = kept
        if not kept:
            print("mutate_cli: no usable %s seed (%s)" % (kind, "; ".join("%s: %s" % d for d in drop) or "none found"))
            return 2
        print("%s seeds: %d (%s)%s" % (kind, len(kept), ", ".join(s.name for s in kept),
                                       "; left out: " + ", ".join(os.path.basename(p) for p, _ in drop) if drop else ""), flush=True)
    if only:
        worst = 0
        for kind, index in only:
            s, family, op, what, data = make_mutant(c.seeds[kind], kind, args.seed, index)
            r = c.run_mutant(kind, s, family, op, what, data, "%s-%05d" % (kind, index), index)
            print("%s %d: seed %s, family %s, operator %s: %s\n  class %s%s" % (
                kind, index, os.path.relpath(s.path, REPO), family, op, what, r["class"],
                (": " + r["reason"]) if r["reason"] else ""))
            for run_ in r["runs"]:
                print("    %s -> exit %s (%s)" % (" ".join(os.path.basename(x) for x in run_["cmd"]), run_["rc"], run_["class"]))
            worst = max(worst, 1 if r["class"] in FINDINGS else 0)
        return worst
    c.kinds, c.dropped = kinds, dropped
    c.t0 = time.monotonic()
    if args.max_minutes:
        c.deadline = c.t0 + 60.0 * args.max_minutes
    # Kinds interleaved (urdf 0, scene 0, urdf 1, ...): a run cut short by --max-minutes has run
    # the same prefix of both.
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = [pool.submit(c.one, kind, i) for i in range(args.start, args.start + args.count) for kind in kinds]
        for f in futures:
            f.result()
    elapsed = time.monotonic() - c.t0
    summary = c.write_summary(elapsed)
    print_summary(summary)
    print("summary: %s; findings (mutant, commands, stderr): %s" % (os.path.join(c.out, "summary.json"), c.findings_dir))
    shutil.rmtree(c.work, ignore_errors=True)
    return 1 if summary["findings"] else 0


if __name__ == "__main__":
    sys.exit(main())
