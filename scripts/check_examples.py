#!/usr/bin/env python3
"""The README's examples are real and run (ctest: examples).

1. Every ```cpp block of README.md, docs/simulation-api.md and docs/inverse-dynamics.md is,
   character for character, one of examples/cpp/*.cc (so the docs cannot drift from code that
   compiles).
2. The example programs run from a temporary directory (not the repository root), given
   absolute paths, and print what the docs say: the iiwa's dynamics, a gravity-compensated arm
   that drifts <= 1e-6 rad in 5 s, a standing A1 whose foot forces sum to m g within 0.1 %, and
   the A1's inverse dynamics whose predicted foot forces sum to m g within 1e-6 for all four
   formulations, the QP ones loading all four feet.
3. Every `build/bin/coulomb ...` command of README.md's ```sh blocks runs from the repository
   root (the README says so) and exits 0, with its -o folder moved to a temporary directory.
Usage: check_examples.py SOURCE_DIR BUILD_DIR SHARED_DIR
"""
import os
import re
import shlex
import subprocess
import sys
import tempfile


def fail(message):
    print("check_examples: FAIL: " + message)
    sys.exit(1)


def blocks(path, language):
    text = open(path, encoding="utf-8").read()
    return re.findall(r"```" + language + r"\n(.*?)```", text, flags=re.S)


def run(args, cwd):
    result = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=600)
    if result.returncode != 0:
        fail(f"{' '.join(args)} (in {cwd}) exited {result.returncode}:\n{result.stdout}\n{result.stderr}")
    return result.stdout


def main():
    source, build, shared = (os.path.abspath(a) for a in sys.argv[1:4])
    examples = {}
    for name in sorted(os.listdir(os.path.join(source, "examples", "cpp"))):
        examples[name] = open(os.path.join(source, "examples", "cpp", name), encoding="utf-8").read()
    # 1. Documentation blocks are example files.
    for doc in ("README.md", os.path.join("docs", "simulation-api.md"), os.path.join("docs", "inverse-dynamics.md")):
        for block in blocks(os.path.join(source, doc), "cpp"):
            if block not in examples.values():
                first = block.strip().splitlines()[0] if block.strip() else ""
                fail(f"{doc}: a ```cpp block (starting {first!r}) is not one of examples/cpp/*.cc")
    bin_dir = os.path.join(build, "bin")
    with tempfile.TemporaryDirectory() as tmp:
        # 2. The programs, from a directory that is not the repository root.
        out = run([os.path.join(bin_dir, "example_dynamics"), os.path.join(shared, "models", "kuka_iiwa_robot.urdf")], tmp)
        if len(re.findall(r"iiwa_joint_\d: M_ii = ", out)) != 7:
            fail("example_dynamics: expected 7 joints, got:\n" + out)
        out = run([os.path.join(bin_dir, "example_hold_arm"), os.path.join(source, "examples", "scenes", "iiwa_hold.yaml")], tmp)
        drift = float(re.search(r"max drift over 5 s: (\S+) rad", out).group(1))
        if not drift <= 1e-6:
            fail(f"example_hold_arm: drift {drift} rad > 1e-6 rad")
        out = run([os.path.join(bin_dir, "example_stand_quadruped"), os.path.join(source, "examples", "scenes", "a1_stand.yaml")], tmp)
        m = re.search(r"sum f_z = (\S+) N, m g = (\S+) N", out)
        fz, mg = float(m.group(1)), float(m.group(2))
        if not abs(fz - mg) <= 1e-3 * mg:
            fail(f"example_stand_quadruped: sum f_z {fz} N vs m g {mg} N")
        out = run([os.path.join(bin_dir, "example_id_stance"), os.path.join(source, "examples", "scenes", "a1_id.yaml")], tmp)
        lines = re.findall(r"^(\S+): foot forces \[N\] (.*), sum f_z = (\S+) N, m g = (\S+) N", out, flags=re.M)
        if [l[0] for l in lines] != ["lcp-noslip", "lcp-coulomb", "qp-coulomb", "qp-noslip"]:
            fail("example_id_stance: expected one line per formulation, got:\n" + out)
        for name, forces, fz_id, mg_id in lines:
            if not abs(float(fz_id) - float(mg_id)) <= 1e-6 * float(mg_id):
                fail(f"example_id_stance: {name}: sum f_z {fz_id} N vs m g {mg_id} N")
            if name.startswith("qp") and not all(float(f) > 1.0 for f in forces.split()):
                fail(f"example_id_stance: {name}: Stage II should load all four feet, got {forces}")
        print(f"check_examples: dynamics ok; hold_arm drift {drift:.2e} rad; A1 sum f_z {fz:.4f} N vs m g {mg:.4f} N; "
              f"A1 inverse dynamics: 4 formulations carry m g")
        # 3. README shell commands, from the repository root.
        commands = 0
        for block in blocks(os.path.join(source, "README.md"), "sh"):
            for line in block.replace("\\\n", " ").splitlines():
                line = line.split("#")[0].strip()
                if not line.startswith("build/bin/coulomb"):
                    continue
                args = shlex.split(line)
                args[0] = os.path.join(bin_dir, "coulomb")
                if "-o" in args:
                    args[args.index("-o") + 1] = os.path.join(tmp, "out%d" % commands)
                if args[1] == "simulate":
                    args += ["--no-html", "-q"]
                run(args, source)
                commands += 1
        if commands == 0:
            fail("README.md: no build/bin/coulomb commands found")
        print(f"check_examples: {commands} README commands ran")


if __name__ == "__main__":
    main()
