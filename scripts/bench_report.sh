#!/usr/bin/env bash
# Runs the benchmarks (coulomb vs MuJoCo 2.2.2, same run, same state) and a profile of coulomb,
# and writes docs/benchmarks.md. Sections:
#   rigid     RNEA and CRBA (bench/multibody_bench.cc), REPETITIONS repetitions
#   contact   contact detection at clutter.yaml's resting state (bench/contact_bench.cc)
#   simulate  SAP forward simulation vs MuJoCo on the clutter scenes and the A1 drop
#             (bench/simulation_bench.cc), SIM_REPETITIONS repetitions (each runs both engines)
#   id        inverse dynamics: time per solve against the number of contacts, every formulation
#             (bench/id_bench.cc, binary coulomb_id_bench), ID_REPETITIONS repetitions; the
#             tables come from scripts/id_bench_report.py (plus docs/images/id_bench.png when
#             matplotlib is importable)
#   profile   callgrind (inclusive, instructions) and perf (self, CPU samples) on
#             `coulomb simulate examples/scenes/clutter.yaml --duration 2 --no-html`
# The sections "Scaling to 10,000 bodies" (scripts/pile_scaling.py --write-doc) and "FCLIB: SAP
# vs Siconos numerics" (`coulomb fclib` runs) are copied unchanged from the previous report.
#
#   usage: scripts/bench_report.sh [BENCH_BINARY] [OUTPUT.md]
#   default: build/bin/coulomb_bench  docs/benchmarks.md
# Environment:
#   REPETITIONS=5 SIM_REPETITIONS=3 ID_REPETITIONS=5   repetitions (medians are reported)
#   ID_MIN_TIME=0.05                  --benchmark_min_time of the id section [s]
#   SECTIONS="rigid contact simulate id profile"   the sections to run and write (the file is
#                                     rewritten with these sections only, unless KEEP_SECTIONS=1)
#   KEEP_SECTIONS=1                   the sections not in SECTIONS are copied unchanged from the
#                                     previous OUTPUT.md (e.g. SECTIONS=id KEEP_SECTIONS=1 reruns
#                                     only the inverse-dynamics section)
#   SCENE_BENCH=<dir of BENCH>/coulomb_scene_bench   binary for the contact and simulate
#                                     sections (the scene benchmarks alone; else BENCH)
#   COULOMB=<dir of BENCH>/coulomb    the coulomb CLI, for the profile
#   ID_BENCH=<dir of BENCH>/coulomb_id_bench   binary for the id section
#   BENCH_WORK_DIR=<tmp>              where the raw outputs go (kept if given); with
#   BENCH_REUSE=1                     outputs already in BENCH_WORK_DIR are reused, not rerun
#   BENCH_COMMIT=<HEAD[+local changes]>   the commit written into the report
# The whole run takes ~15 min on 2 cores (MuJoCo's dense Newton on 160 objects is ~2 min a run;
# the id section ~3 min).
# Needs bash and python3 (standard library); the profile needs valgrind and/or perf (skipped
# if missing).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

BENCH=${1:-build/bin/coulomb_bench}
OUT=${2:-docs/benchmarks.md}
if [[ -z "${SCENE_BENCH:-}" ]]; then
  SCENE_BENCH=$(dirname "$BENCH")/coulomb_scene_bench
  [[ -x "$SCENE_BENCH" ]] || SCENE_BENCH=$BENCH
fi
COULOMB=${COULOMB:-$(dirname "$BENCH")/coulomb}
ID_BENCH=${ID_BENCH:-$(dirname "$BENCH")/coulomb_id_bench}
REPETITIONS=${REPETITIONS:-5}
SIM_REPETITIONS=${SIM_REPETITIONS:-3}
ID_REPETITIONS=${ID_REPETITIONS:-5}
ID_MIN_TIME=${ID_MIN_TIME:-0.05}
SECTIONS=${SECTIONS:-rigid contact simulate id profile}
KEEP_SECTIONS=${KEEP_SECTIONS:-0}
PROFILE_SCENE=examples/scenes/clutter.yaml
PROFILE_DURATION=2

has_section() { [[ " $SECTIONS " == *" $1 "* ]]; }
needed=()
has_section rigid && needed+=("$BENCH")
{ has_section contact || has_section simulate; } && needed+=("$SCENE_BENCH")
has_section id && needed+=("$ID_BENCH")
for b in "${needed[@]}"; do
  if [[ ! -x "$b" ]]; then
    echo "bench_report: $b not found; run 'make build' first" >&2
    exit 1
  fi
done

if [[ -n "${BENCH_WORK_DIR:-}" ]]; then
  WORK=$BENCH_WORK_DIR
  mkdir -p "$WORK"
else
  WORK=$(mktemp -d)
  trap 'rm -rf "$WORK"' EXIT
fi
mkdir -p "$(dirname "$OUT")"

# The commit when the runs start (the binaries are assumed to be built from it).
export BENCH_COMMIT=${BENCH_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo "+local changes")}

reuse() { [[ "${BENCH_REUSE:-0}" == 1 && -s "$1" ]]; }
# meta FILE KEY=VALUE...: records when and how a section ran (read back by the Python below).
meta() {
  local file=$1
  shift
  {
    echo "date=$(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "load=$(cut -d' ' -f1-3 /proc/loadavg)"
    for kv in "$@"; do echo "$kv"; done
  } >"$file"
}

run_bench() {  # NAME BINARY FILTER REPS [MORE ARGUMENTS...]
  local name=$1 bin=$2 filter=$3 reps=$4
  shift 4
  local json="$WORK/$name.json"
  if reuse "$json"; then
    echo "bench_report: reusing $json" >&2
    return
  fi
  local cmd=("$bin" "--benchmark_filter=$filter" "--benchmark_repetitions=$reps" "$@" --benchmark_out_format=json)
  echo "bench_report: running ${cmd[*]}" >&2
  meta "$WORK/$name.meta" "cmd=${cmd[*]} --benchmark_out=FILE.json"
  if ! "${cmd[@]}" --benchmark_out="$json" >/dev/null 2>"$WORK/$name.err"; then
    echo "bench_report: $name FAILED: $(tail -3 "$WORK/$name.err" | tr '\n' ' ')" >&2
    echo "error=$(tail -3 "$WORK/$name.err" | tr '\n' ' ')" >>"$WORK/$name.meta"
    rm -f "$json"
    return
  fi
  echo "end=$(date -u '+%H:%M UTC'); load at the end: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$WORK/$name.meta"
}

has_section rigid && run_bench rigid "$BENCH" '^(RNEA|CRBA)/' "$REPETITIONS"
has_section contact && run_bench contact "$SCENE_BENCH" '^Contact/' "$REPETITIONS"
has_section simulate && run_bench simulate "$SCENE_BENCH" '^Simulate/' "$SIM_REPETITIONS"
if has_section id; then
  run_bench id "$ID_BENCH" '^(ID|IDcold)/' "$ID_REPETITIONS" "--benchmark_min_time=$ID_MIN_TIME"
  # The same warm QP benchmarks on the identical problem every solve (how much the warm starts
  # depend on the 1e-9 perturbation of v).
  run_bench id_identical "$ID_BENCH" '^ID/.*/qp_.*/(4|8|16)$' "$ID_REPETITIONS" "--benchmark_min_time=$ID_MIN_TIME" \
    --id_perturbation=0
fi

if has_section profile; then
  if [[ ! -x "$COULOMB" ]]; then
    echo "bench_report: $COULOMB not found; skipping the profile" >&2
  else
    prof_cmd=("$COULOMB" simulate "$PROFILE_SCENE" --duration "$PROFILE_DURATION" -o "$WORK/profile-out" --no-html --quiet)
    if command -v valgrind >/dev/null && command -v callgrind_annotate >/dev/null; then
      if ! reuse "$WORK/callgrind_inclusive.txt"; then
        echo "bench_report: callgrind on ${prof_cmd[*]}" >&2
        meta "$WORK/callgrind.meta" "cmd=valgrind --tool=callgrind ${prof_cmd[*]}"
        valgrind --tool=callgrind --callgrind-out-file="$WORK/callgrind.out" "${prof_cmd[@]}" 2>"$WORK/callgrind.log"
        callgrind_annotate --inclusive=yes --threshold=100 "$WORK/callgrind.out" >"$WORK/callgrind_inclusive.txt"
        callgrind_annotate --threshold=100 "$WORK/callgrind.out" >"$WORK/callgrind_self.txt"
      fi
    fi
    if command -v perf >/dev/null; then
      if ! reuse "$WORK/perf_self.txt"; then
        echo "bench_report: perf record on ${prof_cmd[*]}" >&2
        meta "$WORK/perf.meta" "cmd=perf record -F 20000 ${prof_cmd[*]}"
        if perf record -F 20000 -o "$WORK/perf.data" -- "${prof_cmd[@]}" 2>"$WORK/perf.log"; then
          perf report -i "$WORK/perf.data" --no-children --sort symbol --stdio 2>/dev/null >"$WORK/perf_self.txt" || true
        else
          echo "bench_report: perf record failed (see $WORK/perf.log); skipping perf" >&2
        fi
      fi
    fi
  fi
fi

export BENCH_WORK="$WORK" BENCH_OUT="$OUT" BENCH_SECTIONS="$SECTIONS" BENCH_KEEP_SECTIONS="$KEEP_SECTIONS"
export BENCH_SCRIPTS="$PWD/scripts"
export BENCH_NPROC=$(nproc)
export BENCH_CPU=$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //' || echo unknown)
export BENCH_CXX=$( (c++ --version 2>/dev/null || true) | head -1)
export BENCH_MUJOCO=$(dpkg-query -W -f='${Version}' libmujoco-dev 2>/dev/null || echo unknown)
export BENCH_OS=$( (. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME") || uname -sr)
export BENCH_PROFILE_SCENE="$PROFILE_SCENE" BENCH_PROFILE_DURATION="$PROFILE_DURATION"

python3 - <<'EOF'
import collections, json, os, re, statistics

work = os.environ["BENCH_WORK"]
sections = os.environ["BENCH_SECTIONS"].split()
lines = []
w = lines.append


def read_meta(name):
    path = os.path.join(work, name + ".meta")
    out = {}
    if os.path.exists(path):
        for line in open(path):
            k, _, v = line.rstrip("\n").partition("=")
            out[k] = v
    return out


def load_json(name):
    path = os.path.join(work, name + ".json")
    return json.load(open(path)) if os.path.exists(path) and os.path.getsize(path) else None


def run_lines(m):
    if not m:
        return
    w(f"- run: {m.get('date', '?')}, load average before: {m.get('load', '?')}"
      + (f" (run ended {m['end']})" if "end" in m else ""))
    if "cmd" in m:
        w(f"- command: `{m['cmd']}`")
    if "error" in m:
        w(f"- **the run failed**: `{m['error'].strip()}`")


def fmt(x, digits=0):
    return "—" if x is None else f"{x:,.{digits}f}"


def ratio(a, b):
    return "—" if a is None or b is None or b == 0 else f"{a / b:.2f}"


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


scale = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}


def timing_stats(data):
    """name -> {median, cv, runs}: CPU time in ns."""
    stats = collections.defaultdict(dict)
    for b in data["benchmarks"]:
        name = b.get("run_name", b["name"])
        t = b["cpu_time"] * scale[b.get("time_unit", "ns")]
        if b.get("run_type") == "aggregate":
            stats[name][b["aggregate_name"]] = t if b["aggregate_name"] != "cv" else b["cpu_time"]
        else:
            stats[name].setdefault("runs", []).append(t)
            for k, v in b.items():
                if k == "contacts":
                    stats[name]["contacts"] = v
    for s in stats.values():
        if "median" not in s and "runs" in s:
            s["median"] = median(s["runs"])
    return stats


previous = open(os.environ["BENCH_OUT"]).read() if os.path.exists(os.environ["BENCH_OUT"]) else ""


def previous_section(header, old_title):
    """The body of `header`'s section in the previous report (or of a report whose title was
    old_title, before the report had sections), without its header line."""
    if header + "\n" in previous or header + ":" in previous:
        start = previous.index(header)
        body = previous[start:].split("\n", 1)[1]
        end = body.find("\n## ")
        body = body if end < 0 else body[:end]
        marker = "the previous report's section follows unchanged.**"
        if marker in body:  # already a kept section: keep only what it kept
            body = body[body.rindex(marker) + len(marker):]
        return body.strip()
    if previous.startswith(old_title):
        body = previous.split("\n", 1)[1]
        body = re.sub(r"^\s*Generated by .*?\n", "", body)
        return body.strip()
    return None


# KEEP_SECTIONS=1: the sections not rerun are copied unchanged from the previous report.
SECTION_HEADERS = [("rigid", "## Rigid-body algorithms"), ("contact", "## Contact detection"),
                   ("simulate", "## Forward simulation"), ("id", "## Inverse dynamics"), ("profile", "## Profile")]
keep_sections = os.environ.get("BENCH_KEEP_SECTIONS") == "1"


def previous_whole_section(prefix):
    """The previous report's section whose header line starts with `prefix`, header included."""
    m = re.search(r"^" + re.escape(prefix) + r".*$", previous, re.M)
    if not m:
        return None
    body = previous[m.start():]
    end = body.find("\n## ", 1)
    return (body if end < 0 else body[:end]).strip()


kept = [name for name, prefix in SECTION_HEADERS
        if keep_sections and name not in sections and previous_whole_section(prefix)]


def keep(name):
    if name in kept:
        w(previous_whole_section(dict(SECTION_HEADERS)[name]))
        w("")


w("# Benchmarks: coulomb vs MuJoCo")
w("")
w("Generated by `scripts/bench_report.sh` (`make bench-report`); do not edit by hand.")
w("")
w(f"- machine: {os.environ['BENCH_NPROC']} cores, {os.environ['BENCH_CPU']}; {os.environ['BENCH_OS']}")
if kept:
    m = re.search(r"^- coulomb commit (.*)$", previous, re.M)
    prev_commit = re.sub(r" \(sections .*", "", m.group(1)) if m else "unknown"
    w(f"- coulomb commit {os.environ['BENCH_COMMIT']} (sections rerun: {', '.join(sections)}; sections kept "
      f"unchanged from the previous report: {', '.join(kept)}, at commit {prev_commit} or earlier: see their run lines)")
else:
    w(f"- coulomb commit {os.environ['BENCH_COMMIT']}")
w(f"- compiler: {os.environ['BENCH_CXX']} (Release, -O2); MuJoCo {os.environ['BENCH_MUJOCO']} (Debian libmujoco-dev)")
w("- single thread. The machine is shared and noisy (±30 % run to run, ../shared/design/TARGETS.md):")
w("  compare the ratios of the same run, not absolute numbers across runs.")
w("")
w("Sections: [rigid-body algorithms](#rigid-body-algorithms-rnea-and-crba), "
  "[contact detection](#contact-detection-at-clutters-resting-state), "
  "[forward simulation](#forward-simulation-sap-vs-mujoco), "
  "[inverse dynamics](#inverse-dynamics), "
  "[profile](#profile-where-coulombs-time-goes-on-clutter)"
  + (", [scaling to 10,000 bodies](#scaling-to-10000-bodies) (scripts/pile_scaling.py)."
     if previous_whole_section("## Scaling to 10,000 bodies") else "."))
w("")

# ---------------------------------------------------------------------------------------------
keep("rigid")
if "rigid" in sections:
    data = load_json("rigid")
    w("## Rigid-body algorithms: RNEA and CRBA")
    w("")
    run_lines(read_meta("rigid"))
    if data is not None:
        w("- ns per call = median CPU time of the repetitions (± coefficient of variation)")
    w("")
    if data is None:
        kept = previous_section("## Rigid-body algorithms", "# Benchmarks: rigid-body algorithms")
        if kept:
            w("**This run produced no RNEA/CRBA results; the previous report's section follows unchanged.**")
            w("")
            w(kept)
        else:
            w("(not run: the benchmark produced no output)")
    else:
        stats = timing_stats(data)

        def get(algo, model, impl, key="median"):
            return stats.get(f"{algo}/{model}/{impl}", {}).get(key)

        def cv(algo, model, impl):
            c = get(algo, model, impl, "cv")
            return "" if c is None else f" (±{100 * c:.0f} %)"

        models = [("kuka_iiwa", "KUKA iiwa, fixed base, 7 dof"), ("a1", "Unitree A1, floating base, 18 dof")]
        algos = [("RNEA", "mujoco_rne_only"), ("CRBA", "mujoco_crb_only")]
        w("Both libraries run on the same model and the same random state in the same process")
        w("(`bench/multibody_bench.cc`). coulomb's `rnea()` and `crba()` compute their own kinematics")
        w("from q (and v), so the fair comparison is with MuJoCo's whole pipeline from q, v: the")
        w("**MuJoCo pipeline** column. The stage-only column times `mj_rne` / `mj_crb` alone, with the")
        w("kinematics (`xpos`, `cinert`, `cdof`, `cvel`, `cdof_dot`) computed beforehand. Ratio")
        w("< 1 means coulomb is faster. Target (../shared/design/TARGETS.md): coulomb ≥ MuJoCo's")
        w("mj_rne / mj_crb on the same model in the same run, i.e. ratio ≤ 1 (≤ 1.5 acceptable for now).")
        w("")
        w("| model | algorithm | coulomb [ns] | MuJoCo pipeline [ns] | coulomb / MuJoCo | MuJoCo stage only [ns] | coulomb / stage only |")
        w("|---|---|---:|---:|---:|---:|---:|")
        for model, label in models:
            for algo, only in algos:
                c, p, o = get(algo, model, "coulomb"), get(algo, model, "mujoco"), get(algo, model, only)
                w(f"| {label} | {algo} | {fmt(c)}{cv(algo, model, 'coulomb')} | {fmt(p)}{cv(algo, model, 'mujoco')} | "
                  f"**{ratio(c, p)}** | {fmt(o)}{cv(algo, model, only)} | {ratio(c, o)} |")
        pipe = [get(a, m, "coulomb") / get(a, m, "mujoco") for m, _ in models for a, _ in algos
                if get(a, m, "coulomb") and get(a, m, "mujoco")]
        only = [get(a, m, "coulomb") / get(a, m, o) for m, _ in models for a, o in algos
                if get(a, m, "coulomb") and get(a, m, o)]
        w("")
        if pipe:
            w(f"Summary: coulomb / MuJoCo pipeline = {min(pipe):.2f}–{max(pipe):.2f} "
              f"({'target met' if max(pipe) <= 1.0 else 'target NOT met'} like for like); "
              f"coulomb / MuJoCo stage alone = {min(only):.2f}–{max(only):.2f} (that column leaves out "
              "MuJoCo's kinematics, which coulomb's timing includes).")
        w("")
        w("MuJoCo pipelines timed: RNEA = `mj_kinematics + mj_comPos + mj_comVel + mj_rne(flg_acc=1)`;")
        w("CRBA = `mj_kinematics + mj_comPos + mj_crb` (MuJoCo's M is its sparse `qM`; coulomb fills a")
        w("dense symmetric n_v × n_v matrix). `mj_kinematics` also places every geom and site, work that")
        w("coulomb's `rnea()` / `crba()` do not do; the stage-only column is the lower bound of what MuJoCo")
        w("needs. Armature is zeroed in MuJoCo; the benchmark checks before timing that both libraries")
        w("give the same joint torques on the timed state.")
    w("")

# ---------------------------------------------------------------------------------------------
keep("contact")
if "contact" in sections:
    data = load_json("contact")
    w("## Contact detection at clutter's resting state")
    w("")
    run_lines(read_meta("contact"))
    if data is not None:
        w("- ns per call = median CPU time of the repetitions (± coefficient of variation)")
    w("")
    w("`bench/contact_bench.cc`: the setup simulates `examples/scenes/clutter.yaml` (40 objects in the")
    w("walled container) with coulomb's Simulator for 3 s (SimulatorParameters from the scene), then")
    w("times the contact stage at that resting configuration. Forward kinematics is computed once")
    w("beforehand except in the *stage 0* row, which is everything `Simulator::step` does before the")
    w("free motion. Contacts: points with φ ≤ margin (2 mm), box–box and box–floor faces as manifolds.")
    w("")
    if data is None:
        w("(not run)")
    else:
        stats = timing_stats(data)
        rows = [
            ("update_poses+compute_contacts", "`CollisionWorld::update_poses` + `compute_contacts`"),
            ("update_poses", "`update_poses` alone (FCL broadphase refresh)"),
            ("compute_contacts", "`compute_contacts` alone (broadphase pairs + narrowphase + manifolds)"),
            ("gather_contacts+contact_jacobian", "`contact::gather_contacts` (calls `compute_contacts`) + `contact_jacobian`"),
            ("contact_jacobian", "`contact_jacobian` alone"),
            ("stage0", "stage 0: `forward_kinematics` + `update_poses` + `gather_contacts` + `contact_jacobian`"),
            ("mujoco_collision", "peer: MuJoCo `mj_kinematics` + `mj_collision`, same bodies and q"),
        ]
        w("| what is timed | ns per call | contacts | ns per contact |")
        w("|---|---:|---:|---:|")
        for key, label in rows:
            s = stats.get(f"Contact/clutter_rest/{key}", {})
            t, c = s.get("median"), s.get("contacts")
            cvs = "" if s.get("cv") is None else f" (±{100 * s['cv']:.0f} %)"
            w(f"| {label} | {fmt(t)}{cvs} | {fmt(c)} | {fmt(t / c if t and c else None)} |")
        w("")
        w("MuJoCo's contact count differs by its rules (margin 0, its own box–box and box–sphere")
        w("routines): the peer row gives the scale, not a like-for-like target.")
    w("")

# ---------------------------------------------------------------------------------------------
keep("simulate")
if "simulate" in sections:
    data = load_json("simulate")
    w("## Forward simulation: SAP vs MuJoCo")
    w("")
    run_lines(read_meta("simulate"))
    w("")
    w("`bench/simulation_bench.cc` (models: `bench/bench_scenes.h`). Every repetition simulates each")
    w("scene for N steps from its initial state (N = 1000: \"1000 steps from the drop\", TARGETS.md) with")
    w("coulomb's `Simulator` (SAP, implicit Euler, the scene's δt and contact parameters), then with")
    w("MuJoCo 2.2.2 on the same scene built from the loaded coulomb Scene: the same bodies, masses and")
    w("inertias, shapes and initial poses (q0), `cone=\"elliptic\"`, `tolerance=\"1e-8\"`, friction μ of")
    w("the scene (condim 3), MuJoCo's default contact softness (solref 0.02 1) and 100 iterations;")
    w("MuJoCo runs with its Newton solver and, on the clutter scenes, also CG and PGS. The A1 is loaded")
    w("by MuJoCo from a copy of a1.urdf with a floating base (URDF → MJCF → plus a ground plane).")
    w("steps/s = N / CPU time of the step calls (thread CPU clock; the measurements between steps")
    w("are not timed). Numbers are medians over the repetitions; the ratios are medians of the")
    w("per-repetition ratios (both engines in the same repetition).")
    w("")
    if data is None:
        w("(not run)")
    else:
        per = collections.defaultdict(lambda: collections.defaultdict(list))
        for b in data["benchmarks"]:
            if b.get("run_type") == "aggregate":
                continue
            scene = b.get("run_name", b["name"]).split("/")[1]
            for k, v in b.items():
                if isinstance(v, (int, float)):
                    per[scene][k].append(v)
        reps = max((len(v["coulomb_steps_per_s"]) for v in per.values()), default=0)
        med = {s: {k: median(v) for k, v in d.items()} for s, d in per.items()}
        scenes = [
            ("clutter", "clutter.yaml: 40 objects, walls", "≥ MuJoCo Newton (1,350 steps/s in TARGETS.md), penetration ≤ 1e-5 m, ≤ 3 it/step steady", "newton"),
            ("clutter_no_walls", "clutter_no_walls.yaml: 40 objects, floor only", "≥ MuJoCo Newton (3,613 steps/s in TARGETS.md)", "newton"),
            ("clutter_80", "clutter_80.yaml: 80 objects, walls", "≥ 1.0× MuJoCo's best solver", "best"),
            ("clutter_160", "clutter_160.yaml: 160 objects, walls", "≥ MuJoCo's best solver (CG, 154 steps/s in TARGETS.md)", "best"),
            ("a1_drop", "a1_drop.yaml: A1 dropped from 0.5 m, δt = 1 ms", "(MuJoCo ≈ 22,000 steps/s at δt 2 ms in TARGETS.md)", None),
        ]
        steps = median([m.get("steps") for m in med.values()])
        w(f"Repetitions: {reps}; steps per run N = {fmt(steps)}.")
        w("")
        w("### Speed")
        w("")
        w("| scene | n_v | coulomb [steps/s] | MuJoCo Newton [steps/s] | **coulomb / MuJoCo Newton** | MuJoCo CG | MuJoCo PGS | coulomb / best MuJoCo | target (TARGETS.md) |")
        w("|---|---:|---:|---:|---:|---:|---:|---:|---|")
        for key, label, target, kind in scenes:
            m = med.get(key)
            if not m:
                continue
            rn, rb = m.get("ratio_newton"), m.get("ratio_best")
            checks = []
            r = rn if kind == "newton" else rb if kind == "best" else None
            if r is not None:
                checks.append(("speed", r >= 1.0))
            if key == "clutter":
                if m.get("coulomb_pen_end") is not None:
                    checks.append(("penetration", m["coulomb_pen_end"] <= 1e-5))
                if m.get("coulomb_it_last100") is not None:
                    checks.append(("steady iterations", m["coulomb_it_last100"] <= 3.0))
            status = ("; " + ", ".join(f"{c}: {'met' if ok else '**not met**'}" for c, ok in checks)) if checks else ""
            w(f"| {label} | {fmt(m.get('nv'))} | {fmt(m.get('coulomb_steps_per_s'))} | {fmt(m.get('mujoco_steps_per_s'))} | "
              f"**{fmt(rn, 2)}** | {fmt(m.get('mujoco_cg_steps_per_s'))} | {fmt(m.get('mujoco_pgs_steps_per_s'))} | "
              f"{fmt(rb, 2)} | {target}{status} |")
        w("")
        rns = [(k, med[k].get("ratio_newton")) for k, *_ in scenes if k in med and med[k].get("ratio_newton")]
        rbs = [(k, med[k].get("ratio_best")) for k, *_ in scenes if k in med and med[k].get("ratio_best")]
        met = [k for k, _, _, kind in scenes if k in med and kind and
               (med[k].get("ratio_newton" if kind == "newton" else "ratio_best") or 0) >= 1.0]
        judged = [k for k, _, _, kind in scenes if k in med and kind]
        if rns:
            w(f"Summary: coulomb / MuJoCo Newton = {min(r for _, r in rns):.2f}–{max(r for _, r in rns):.2f}; "
              f"coulomb / MuJoCo's fastest solver = {min(r for _, r in rbs):.2f}–{max(r for _, r in rbs):.2f}; "
              f"speed targets met on {len(met)} of {len(judged)} scenes"
              + (f" ({', '.join(met)})" if met else "") + ".")
            w("")
        w("Ratio > 1: coulomb is faster. Wall-clock steps/s (more sensitive to the other jobs on the")
        w("machine) are in the JSON output as `*_wall_steps_per_s`.")
        w("")
        w("### Iterations, contacts, penetration, slip")
        w("")
        w("| scene | engine | iterations / step | last 100 steps | contacts / step | max penetration at the end [mm] | slip, last 100 steps [mm/s] | fell off | failures |")
        w("|---|---|---:|---:|---:|---:|---:|---:|---:|")
        engines = [("coulomb", "coulomb SAP"), ("mujoco", "MuJoCo Newton"), ("mujoco_cg", "MuJoCo CG"), ("mujoco_pgs", "MuJoCo PGS")]
        for key, label, _, _ in scenes:
            m = med.get(key)
            if not m:
                continue
            for e, elabel in engines:
                if m.get(f"{e}_steps_per_s") is None:
                    continue
                pen = m.get(f"{e}_pen_end")
                slip = m.get(f"{e}_slip")
                w(f"| {label.split(':')[0]} | {elabel} | {fmt(m.get(f'{e}_it'), 2)} | {fmt(m.get(f'{e}_it_last100'), 2)} | "
                  f"{fmt(m.get(f'{e}_contacts'), 0)} | {fmt(None if pen is None else 1e3 * pen, 3)} | "
                  f"{fmt(None if slip is None else 1e3 * slip, 3)} | {fmt(m.get(f'{e}_fallen'))} | {fmt(m.get(f'{e}_failures'))} |")
        w("")
        w("Definitions (identical for both engines where the engines allow):")
        w("- iterations: coulomb's SAP Newton iterations per step; MuJoCo's `d->solver_iter` (Newton")
        w("  iterations for Newton; CG and PGS iterations are not comparable with Newton's).")
        w("- contacts / step: coulomb reports pairs within its 2 mm margin, MuJoCo only touching ones")
        w("  (margin 0), and their box manifolds differ: the counts are indicative.")
        w("- max penetration at the end: max(0, −φ) over the contacts of the final state (coulomb: a")
        w("  collision query at the final q; MuJoCo: `mj_forward` at the final qpos, −`contact.dist`).")
        w("- slip: mean over the last 100 steps and over the contacts of each step that carry a positive")
        w("  normal force (coulomb: impulse γ_n > 0; MuJoCo: `mj_contactForce` normal > 0) of the tangential")
        w("  speed of B relative to A at the contact point, from the step's contact geometry and the")
        w("  end-of-step velocities (coulomb: J(q₀) v; MuJoCo: `mj_jac` point Jacobians × new qvel).")
        w("- fell off: free bodies below z = −0.5 m at the end. failures: coulomb steps whose SAP solve")
        w("  did not converge; MuJoCo contact/constraint-buffer overflows and bad-qacc warnings.")
    w("")

# ---------------------------------------------------------------------------------------------
keep("id")
if "id" in sections:
    import sys
    sys.path.insert(0, os.environ["BENCH_SCRIPTS"])
    import id_bench_report

    data = load_json("id")
    w("## Inverse dynamics")
    w("")
    run_lines(read_meta("id"))
    m0 = read_meta("id_identical")
    if m0.get("cmd"):
        w(f"- and (δv = 0 table): `{m0['cmd']}`")
    w("- this section alone: `SECTIONS=id KEEP_SECTIONS=1 bash scripts/bench_report.sh` (the other sections "
      "are kept); every section: `make bench-report`")
    w("- the tables: `scripts/id_bench_report.py` (also standalone: "
      "`python3 scripts/id_bench_report.py FILE.json [--identical FILE0.json] [--stderr FILE.err] [--png FILE.png]`)")
    w("- µs per solve = median of the repetitions; the machine is shared (2 cores, other jobs running):")
    w("  the load averages above say how busy it was")
    w("")
    if data is None:
        w("(not run: the benchmark produced no output)")
        w("")
    else:
        out_dir = os.path.dirname(os.path.abspath(os.environ["BENCH_OUT"]))
        png = os.path.join(out_dir, "images", "id_bench.png")
        messages = id_bench_report.read_messages(os.path.join(work, "id.err"))
        for line in id_bench_report.section(data, png=png, png_link="images/id_bench.png",
                                            identical=load_json("id_identical"), messages=messages):
            w(line)

# ---------------------------------------------------------------------------------------------
def short_name(name):
    name = name.strip()
    lib = re.search(r"\[([^\]]*)\]\s*$", name)
    lib = os.path.basename(lib.group(1)) if lib else ""
    name = re.sub(r"\s*\[[^\]]*\]\s*$", "", name)  # [library]
    name = re.sub(r"^(?:\?\?\?|[^ ]*/[^ ]*?):(?=[A-Za-z_0-9])", "", name)  # callgrind's "file:"
    if re.match(r"^0x[0-9a-f]+$", name):  # no symbol: name the library
        return f"{lib or '?'} (no symbols)"
    name = name.replace("(anonymous namespace)", "{anon}")
    name = re.sub(r"\s*\[clone [^\]]*\]", "", name)
    out, depth_angle, depth_paren = [], 0, 0
    for ch in name:
        if ch == "<":
            depth_angle += 1
            continue
        if ch == ">" and depth_angle:
            depth_angle -= 1
            continue
        if ch == "(":
            depth_paren += 1
            continue
        if ch == ")" and depth_paren:
            depth_paren -= 1
            continue
        if depth_angle == 0 and depth_paren == 0:
            out.append(ch)
    s = "".join(out).strip()
    s = re.sub(r"\s+const$", "", s)
    s = re.sub(r"^(?:void|long|double|int|bool)\s+", "", s)
    return s.replace("{anon}", "(anon)")


HINTS = [
    ("SapFrictionConeConstraint::calc", "SAP: per-contact cone projection γ(v) and its Hessian block G"),
    ("BlockSparseHessian::factorize", "SAP: assemble H = A + Jᵀ G J and factorize it"),
    ("SapLineSearchFunction::derivative", "SAP: dℓ/dα and d²ℓ/dα² of the exact line search"),
    ("BlockSparseCholesky", "coulomb's supernodal Cholesky over the tree/contact graph"),
    ("multiply_J", "SAP: J v / Jᵀ γ over the Jacobian blocks"),
    ("libz", "zlib (compressed output)"),
    ("general_matrix_vector_product", "Eigen dense matrix × vector"),
    ("general_matrix_matrix_product", "Eigen dense matrix × matrix"),
    ("dense_assignment_loop", "Eigen expression evaluation (small products, copies, fills)"),
    ("triangular_solve", "Eigen triangular solve"),
    ("llt_inplace", "Eigen dense Cholesky"),
    ("gemm_pack", "Eigen GEMM packing"),
    ("gebp_kernel", "Eigen GEMM kernel"),
    ("malloc", "heap allocation"), ("_int_free", "heap allocation"), ("cfree", "heap allocation"),
    ("calloc", "heap allocation"), ("unlink_chunk", "heap allocation"),
    ("memset", "memory fill"), ("memmove", "memory copy"), ("memcpy", "memory copy"),
    ("printf", "CSV output (number formatting)"), ("hack_digit", "CSV output (number formatting)"),
    ("num_put", "CSV output (number formatting)"),
]


def hint(s):
    for key, h in HINTS:
        if key in s:
            return h
    return ""


def parse_callgrind(path):
    rows = []
    if not os.path.exists(path):
        return rows, None
    total = None
    for line in open(path, errors="replace"):
        m = re.match(r"^\s*([\d,]+)\s+\(\s*([\d.]+)%\)\s+(.*)$", line)
        if not m:
            continue
        ir = int(m.group(1).replace(",", ""))
        rest = m.group(3)
        if "PROGRAM TOTALS" in rest:
            total = ir
            continue
        rows.append((ir, rest))
    return rows, total


keep("profile")
if "profile" in sections:
    w("## Profile: where coulomb's time goes on clutter")
    w("")
    scene = os.environ["BENCH_PROFILE_SCENE"]
    dur = os.environ["BENCH_PROFILE_DURATION"]
    w(f"`coulomb simulate {scene} --duration {dur} --no-html` (200 steps from the drop: the fall, the")
    w("impacts and the first settling), Release build (-O2, no frame pointers, so inlined code is charged")
    w("to its caller). The CLI also writes trajectory.csv and steps.csv (shown separately); --no-html")
    w("leaves out the replay/report pages, whose compression is not simulation work.")
    w("")
    inc, total = parse_callgrind(os.path.join(work, "callgrind_inclusive.txt"))
    if inc and total:
        m = read_meta("callgrind")
        w("### Inclusive cost by stage (callgrind, instructions)")
        w("")
        run_lines(m)
        w("")
        named = [(ir, short_name(rest)) for ir, rest in inc]

        def find(pattern):
            best = None
            for ir, s in named:
                if re.search(pattern, s):
                    best = ir if best is None else max(best, ir)
            return best

        step = find(r"coulomb::simulation::Simulator::step$")
        stages = [
            ("`Simulator::step` (all of the simulation)", r"coulomb::simulation::Simulator::step$", 0),
            ("stage 0: `CollisionWorld::update_poses`", r"CollisionWorld::update_poses$", 1),
            ("stage 0: `contact::gather_contacts`", r"coulomb::contact::gather_contacts$", 1),
            ("of which `CollisionWorld::compute_contacts`", r"CollisionWorld::compute_contacts$", 2),
            ("stage 0: `contact::contact_jacobian`", r"coulomb::contact::contact_jacobian$", 1),
            ("stage 1: `Simulator::free_motion`", r"Simulator::free_motion$", 1),
            ("of which `multibody::crba_trees`", r"coulomb::multibody::crba_trees(_from_joint_poses)?$", 2),
            ("of which `multibody::bias_forces`", r"coulomb::multibody::bias_forces$", 2),
            ("stage 2: `SapSolver::solve`", r"SapSolver::solve$", 1),
            ("Newton system: `assemble_constraint_hessians` (Jᵀ G J)", r"assemble_constraint_hessians(_avx2|_baseline)?$", 2),
            ("Newton system: `BlockSparseCholesky::factorize`", r"BlockSparseCholesky::factorize$", 2),
            ("Newton system: `BlockSparseCholesky::solve_in_place`", r"BlockSparseCholesky::solve_in_place$", 2),
            ("Newton system: dense path `llt_inplace`", r"llt_inplace::blocked$", 2),
            ("line search: `exact_line_search`", r"exact_line_search$", 2),
            ("cost, gradient, Hessian blocks: `evaluate`", r"sap::\(anon\)::evaluate$", 2),
            ("`SapFrictionConeConstraint::calc` (from all callers)", r"SapFrictionConeConstraint::calc$", 2),
            ("`SapProblem::multiply_J` (from all callers)", r"SapProblem::multiply_J$", 2),
            ("`Simulator::energy` (statistics)", r"Simulator::energy$", 1),
            ("CLI output: `TrajectoryWriter::write`", r"TrajectoryWriter::write$", 0),
            ("CLI output: `StepsWriter::write`", r"StepsWriter::write$", 0),
        ]
        parts = {k: find(p) for k, p in [
            ("solve", r"SapSolver::solve$"), ("assemble", r"assemble_constraint_hessians(_avx2|_baseline)?$"),
            ("factor", r"BlockSparseCholesky::factorize$"), ("newton_solve", r"BlockSparseCholesky::solve_in_place$"),
            ("line", r"exact_line_search$"), ("eval", r"sap::\(anon\)::evaluate$"),
            ("free", r"Simulator::free_motion$"), ("crba", r"coulomb::multibody::crba_trees(_from_joint_poses)?$"),
            ("gather", r"coulomb::contact::gather_contacts$"), ("jac", r"coulomb::contact::contact_jacobian$"),
            ("poses", r"CollisionWorld::update_poses$")]}
        if step:
            pc = lambda k: "—" if parts.get(k) is None else f"{100 * parts[k] / step:.0f} %"
            detect = sum(parts[k] for k in ("gather", "jac", "poses") if parts.get(k))
            newton = [parts[k] for k in ("assemble", "factor", "newton_solve") if parts.get(k)]
            parts["hessian"] = sum(newton) if newton else None
            w(f"Summary (share of `Simulator::step`): SAP's contact solve {pc('solve')} — assembling and "
              f"factorizing the Newton system {pc('hessian')}, the exact line search {pc('line')}, cost and "
              f"gradient evaluations {pc('eval')}; the free motion {pc('free')} (of which CRBA {pc('crba')}); "
              f"contact detection and the contact Jacobian {100 * detect / step:.0f} %.")
            w("")
        w("| stage / function | instructions | % of the program | % of `Simulator::step` |")
        w("|---|---:|---:|---:|")
        for label, pat, depth in stages:
            ir = find(pat)
            if ir is None:
                continue
            indent = "&nbsp;&nbsp;&nbsp;&nbsp;" * depth
            w(f"| {indent}{label} | {ir:,} | {100 * ir / total:.1f} % | "
              f"{'—' if not step else f'{100 * ir / step:.1f} %'} |")
        w("")
        w("Inclusive: a function's own instructions plus its callees'. Overloads are not summed (the")
        w("largest is shown).")
        w("")
        selfrows, stotal = parse_callgrind(os.path.join(work, "callgrind_self.txt"))
        if selfrows and stotal:
            agg = collections.Counter()
            for ir, rest in selfrows:
                agg[short_name(rest)] += ir
            w("### Top functions by own instructions (callgrind, self)")
            w("")
            w("| function | % of the program's instructions | what |")
            w("|---|---:|---|")
            for s, ir in agg.most_common(15):
                w(f"| `{s}` | {100 * ir / stotal:.1f} % | {hint(s)} |")
            w("")
    perf_path = os.path.join(work, "perf_self.txt")
    if os.path.exists(perf_path) and os.path.getsize(perf_path):
        agg = collections.Counter()
        samples = None
        for line in open(perf_path, errors="replace"):
            ms = re.match(r"^# Samples: (\S+)", line)
            if ms:
                samples = ms.group(1)
            m = re.match(r"^\s*([\d.]+)%\s+\[[.k]\]\s+(.*?)(?:\s+-\s+-)?\s*$", line)
            if m:
                agg[short_name(m.group(2))] += float(m.group(1))
        if agg:
            w("### Top functions by own CPU time (perf, self)")
            w("")
            run_lines(read_meta("perf"))
            if samples:
                w(f"- samples: {samples}")
            w("")
            w("| function | % of CPU samples | what |")
            w("|---|---:|---|")
            for s, p in agg.most_common(15):
                w(f"| `{s}` | {p:.1f} % | {hint(s)} |")
            w("")
    if not inc and not os.path.exists(perf_path):
        w("(not run: neither valgrind nor perf is installed)")
        w("")

# Sections measured elsewhere, kept from the previous report as they are: "Scaling to 10,000
# bodies" (scripts/pile_scaling.py --write-doc: minutes of runs at up to 10,000 bodies) and
# "FCLIB: SAP vs Siconos numerics" (`coulomb fclib` runs, docs/user-guide.md).
for heading in ("## Scaling to 10,000 bodies", "## FCLIB: SAP vs Siconos numerics"):
    kept_section = previous_whole_section(heading)
    if kept_section:
        while lines and lines[-1] == "":
            lines.pop()
        w("")
        w(kept_section)

text = "\n".join(lines).rstrip() + "\n"
with open(os.environ["BENCH_OUT"], "w") as f:
    f.write(text)
print(text)
EOF
