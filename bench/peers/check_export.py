#!/usr/bin/env python3
"""ctest peer_bench_export: the peer harness's scene export gives MuJoCo coulomb's model.

Standard library only (no peer installed). For every scene of the comparison:
`coulomb_peer_bench export` → models.mjcf() → the MJCF is parsed back and its kinematics at q0 is
computed here from the XML alone (body pos/quat, hinge/slide/free joints applied in order,
<inertial> and <geom> poses). Every body's mass, centre of mass and inertia in the world, every
joint axis and every geometry pose must equal coulomb's (the export's values at q0, computed by
coulomb's own forward kinematics) to 1e-9; with --coulomb, the body masses and world poses must
also equal what `coulomb inspect --json` prints.

Then the settled starting states of the pile_* scenes (`export --settle T`, `simulate --q-file`):
the export is deterministic, the settled pile lies below its starting columns with unit
quaternions, the seeds differ from each other only by the perturbation, a pile started from its
settled state stays at rest (every body moves less than 5 mm in 0.2 s, no failed step, no body
fallen), three runs in one process (--repeats 3) end at the single run's state to the bit and report
the least of their times, a bad --q-file or --repeats 0 is refused with its name in the message, and
simulate refuses --settle
(an option of export) instead of starting unsettled.

  check_export.py --peer-bench build/bin/coulomb_peer_bench [--coulomb build/bin/coulomb] [SCENE...]
"""
import argparse
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # noqa: E402
from models import axis_angle, close, matmul, matvec, quat_to_matrix, transpose  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCENES = ["a1_drop", "humanoid_drop", "box_stack", "spring_cylinder", "clutter", "clutter_80", "clutter_160", "clutter_320"]


def floats(s):
    return [float(x) for x in s.split()]


def compose(X, Y):
    R, p = X
    return matmul(R, Y[0]), [a + b for a, b in zip(p, matvec(R, Y[1]))]


def mjcf_kinematics(xml, q_of_joint):
    """{body name: (X_WB, mass, com_W, I_W)}, {geom name: X_WG}, {joint name: axis_W} at q0."""
    root = ET.fromstring(xml)
    bodies, geoms, axes = {}, {}, {}
    identity = ([[1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0]], [0.0, 0.0, 0.0])

    def local(e):
        return quat_to_matrix(floats(e.get("quat", "1 0 0 0"))), floats(e.get("pos", "0 0 0"))

    def visit(e, X_WP):
        for g in e.findall("geom"):
            geoms[g.get("name")] = compose(X_WP, local(g))
        for b in e.findall("body"):
            X = compose(X_WP, local(b))
            for j in b:
                if j.tag == "freejoint":
                    q = q_of_joint[j.get("name")]
                    X = (quat_to_matrix(q[3:7]), list(q[0:3]))
                elif j.tag == "joint":
                    a = floats(j.get("axis"))
                    axes[j.get("name")] = matvec(X[0], a)
                    q = q_of_joint[j.get("name")][0]
                    if j.get("type") == "hinge":
                        X = (matmul(X[0], axis_angle(a, q)), X[1])
                    else:
                        X = (X[0], [p + q * s for p, s in zip(X[1], matvec(X[0], a))])
            i = b.find("inertial")
            c = floats(i.get("fullinertia"))
            I = [[c[0], c[3], c[4]], [c[3], c[1], c[5]], [c[4], c[5], c[2]]]
            R = X[0]
            bodies[b.get("name")] = (X, float(i.get("mass")), compose(X, (R, floats(i.get("pos"))))[1],
                                     matmul(matmul(R, I), transpose(R)))
            visit(b, X)

    visit(root.find("worldbody"), identity)
    return bodies, geoms, axes


def check(scene, peer_bench, coulomb):
    path = os.path.join(ROOT, "examples", "scenes", scene + ".yaml")
    export = json.loads(subprocess.run([peer_bench, "export", path, "--seeds", "1"], check=True, capture_output=True,
                                       text=True).stdout)
    q0 = export["q0"]
    q_of_joint = {}
    for b in export["bodies"]:
        j = b["joint"]
        n = {"floating": 7, "fixed": 0}.get(j["type"], 1)
        q_of_joint[j["name"]] = q0[j["q_index"]:j["q_index"] + n]
    bodies, geoms, axes = mjcf_kinematics(models.mjcf(export), q_of_joint)
    n, total = 0, 0.0
    for b in export["bodies"]:
        if b["name"] not in bodies:
            if b["mass"] != 0.0:
                raise AssertionError(f"{scene}: the MJCF has no body {b['name']}")
            continue  # a massless body merged into its child
        X, mass, com_W, I_W = bodies[b["name"]]
        close(scene, f"body {b['name']} mass", mass, b["mass"], 1e-12)
        close(scene, f"body {b['name']} position", X[1], b["X_WB"]["position"], 1e-9)
        close(scene, f"body {b['name']} rotation", X[0], quat_to_matrix(b["X_WB"]["quaternion"]), 1e-9)
        close(scene, f"body {b['name']} com_W", com_W, b["com_W"], 1e-9)
        close(scene, f"body {b['name']} inertia_W", I_W, b["inertia_com_W"], 1e-9)
        total += mass
        if b["joint"]["type"] in ("revolute", "prismatic"):
            close(scene, f"joint {b['joint']['name']} axis_W", axes[b["joint"]["name"]], b["joint"]["axis_W"], 1e-9)
        n += 1
    close(scene, "total mass", total, export["total_mass"], 1e-12)
    for g in export["geometries"]:
        X = geoms.get(g["name"])
        if X is None:
            raise AssertionError(f"{scene}: the MJCF has no geometry {g['name']}")
        close(scene, f"geometry {g['name']} position", X[1], g["X_WG"]["position"], 1e-9)
        close(scene, f"geometry {g['name']} rotation", X[0], quat_to_matrix(g["X_WG"]["quaternion"]), 1e-9)
        n += 1
    if coulomb:
        inspect = json.loads(subprocess.run([coulomb, "inspect", path, "--json"], check=True, capture_output=True,
                                            text=True).stdout)
        for b in inspect["bodies"]:
            e = next(x for x in export["bodies"] if x["name"] == b["name"])
            close(scene, f"inspect: body {b['name']} mass", e["mass"], b["mass"], 1e-12)
            close(scene, f"inspect: body {b['name']} position", e["X_WB"]["position"], b["pose_W"]["position"], 1e-9)
            n += 1
    return n


def run_json(command):
    return json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)


def check_settled(peer_bench, scene="clutter", settle=4.0, perturbation=1e-9):
    path = os.path.join(ROOT, "examples", "scenes", scene + ".yaml")
    command = [peer_bench, "export", path, "--seeds", "2", "--perturbation", repr(perturbation), "--settle", repr(settle)]
    export = run_json(command)
    again = run_json(command)
    if export["starting_states"] != again["starting_states"]:
        raise AssertionError(f"{scene}: two exports settled for {settle} s differ (not deterministic)")
    q0 = export["q0"]
    q1, q2 = export["starting_states"][0]["q"], export["starting_states"][1]["q"]
    free = [b["joint"]["q_index"] for b in export["bodies"] if b["joint"]["type"] == "floating"]
    dropped = 0
    for i in free:
        if q1[i + 2] > q0[i + 2] + 1e-6:
            raise AssertionError(f"{scene}: settled body at q[{i}] rose: z {q0[i + 2]} -> {q1[i + 2]}")
        dropped += q0[i + 2] - q1[i + 2] > 0.05
        norm = sum(x * x for x in q1[i + 3:i + 7]) ** 0.5
        close(scene, f"settled quaternion at q[{i + 3}] norm", norm, 1.0, 1e-12)
        for k in range(3):
            if abs(q1[i + k] - q2[i + k]) > 2 * perturbation * (1 + 1e-9) + 1e-15:
                raise AssertionError(f"{scene}: seeds 1 and 2 differ by more than the perturbation at q[{i + k}]")
        if q1[i + 3:i + 7] != q2[i + 3:i + 7]:
            raise AssertionError(f"{scene}: seeds 1 and 2 differ in an orientation at q[{i + 3}]")
    if dropped < len(free) // 2:
        raise AssertionError(f"{scene}: only {dropped} of {len(free)} bodies fell by 5 cm in {settle} s of settling")
    work = os.path.join(os.path.dirname(os.path.abspath(peer_bench)), "check_export_q.json")
    with open(work, "w") as f:
        json.dump(q1, f)
    r = run_json([peer_bench, "simulate", path, "--q-file", work, "--steps", "20", "--window", "5"])
    if r["failures"] or r["fallen"]:
        raise AssertionError(f"{scene}: from the settled pile: {r['failures']} failed steps, {r['fallen']} fallen")
    moved = max(sum((r["final_q"][i + k] - q1[i + k]) ** 2 for k in range(3)) ** 0.5 for i in free)
    # Repeated runs in one process (each from a new Simulator) must repeat the single run to the bit;
    # only their times differ, and the least is reported.
    rr = run_json([peer_bench, "simulate", path, "--q-file", work, "--steps", "20", "--window", "5",
                   "--repeats", "3"])
    if rr["final_q"] != r["final_q"] or len(rr["cpu_s_runs"]) != 3 or rr["cpu_s"] != min(rr["cpu_s_runs"]):
        raise AssertionError(f"{scene}: --repeats 3 did not repeat the single run or keep its least time: "
                             f"{rr['cpu_s_runs']} -> {rr['cpu_s']}")
    bad = subprocess.run([peer_bench, "simulate", path, "--q-file", work, "--steps", "2", "--repeats", "0"],
                         capture_output=True, text=True)
    if bad.returncode == 0 or "--repeats ≥ 1" not in bad.stderr:
        raise AssertionError(f"{scene}: --repeats 0 was not refused: {bad.stderr!r}")
    if moved > 5e-3:
        raise AssertionError(f"{scene}: the settled pile is not at rest: a body moved {moved:.3g} m in 20 steps")
    with open(work, "w") as f:
        json.dump(q1[:-1], f)
    bad = subprocess.run([peer_bench, "simulate", path, "--q-file", work, "--steps", "2"], capture_output=True, text=True)
    if bad.returncode == 0 or work not in bad.stderr or "expected an array of" not in bad.stderr:
        raise AssertionError(f"{scene}: a --q-file one number short was not refused by name: {bad.stderr!r}")
    with open(work, "w") as f:
        f.write("[" + ", ".join(["null" if j == 3 else repr(x) for j, x in enumerate(q1)]) + "]")
    bad = subprocess.run([peer_bench, "simulate", path, "--q-file", work, "--steps", "2"], capture_output=True, text=True)
    if bad.returncode == 0 or "q[3] is not a finite number" not in bad.stderr:
        raise AssertionError(f"{scene}: a --q-file with a null entry was not refused: {bad.stderr!r}")
    os.remove(work)
    bad = subprocess.run([peer_bench, "simulate", path, "--settle", repr(settle), "--steps", "2"], capture_output=True,
                         text=True)
    if bad.returncode == 0 or "option --settle does not apply to simulate" not in bad.stderr:
        raise AssertionError(f"{scene}: simulate did not refuse export's --settle: {bad.stderr!r}")
    print(f"check_export: {scene} settled for {settle} s: {dropped} of {len(free)} bodies fell 5 cm or more; "
          f"at rest from there (largest move {moved:.2e} m in 20 steps)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--peer-bench", required=True)
    ap.add_argument("--coulomb")
    ap.add_argument("scenes", nargs="*", default=SCENES)
    args = ap.parse_args()
    for s in args.scenes:
        n = check(s, args.peer_bench, args.coulomb)
        print(f"check_export: {s}: {n} checks passed")
    check_settled(args.peer_bench)


if __name__ == "__main__":
    main()
