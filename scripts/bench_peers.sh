#!/usr/bin/env bash
# coulomb against today's peers (MuJoCo 4, Drake, Pinocchio), same scenes, same run, and
# docs/benchmarks-peers.md with its plots (bench/peers/, `make bench-peers`).
#   1. the venv build/bench-venv (never used by `make test`): mujoco 4.x, drake (newest), pin 4.x,
#      numpy, matplotlib from the package index, installed once;
#   2. coulomb_peer_bench (CMake, build/) and coulomb_rigid_peer_bench (compiled here against the
#      C++ Pinocchio inside the pin wheel; rebuilt when its source or libcoulomb is newer);
#   3. the rigid-body run, the interleaved simulation run, the report.
#
#   usage: scripts/bench_peers.sh [OUTPUT.md]      (default docs/benchmarks-peers.md)
# Environment: BUILD_DIR (build), PEERS_SEEDS (5), PEERS_STEPS_SCALE (1.0), PEERS_SCENES (all), PEERS_REPEATS (3),
#   RIGID_SAMPLES (21), BENCH_PEERS_REUSE=1 (reuse results already in BUILD_DIR/bench-peers).
# About 15–25 minutes on 2 shared cores (the first run also downloads ~400 MB and compiles the
# Pinocchio bench for ~3 minutes).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
OUT=${1:-docs/benchmarks-peers.md}
BUILD_DIR=${BUILD_DIR:-build}
WORK=$BUILD_DIR/bench-peers
mkdir -p "$WORK"

# 1. the venv (scripts/bench_venv.sh: VENV, PY)
source scripts/bench_venv.sh

# 2. the programs
[[ -f "$BUILD_DIR/build.ninja" ]] || cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$BUILD_DIR" --target coulomb coulomb_peer_bench
PIN=$("$PY" -c 'import cmeel, os; print(os.path.join(os.path.dirname(cmeel.__file__), "..", "cmeel.prefix"))' 2>/dev/null ||
      echo "$VENV/lib/python3*/site-packages/cmeel.prefix")
PIN=$(cd $PIN && pwd)
RIGID=$WORK/coulomb_rigid_peer_bench
LIBCOULOMB=$(ls "$BUILD_DIR"/src/libcoulomb.so* | head -1)
if [[ ! -x "$RIGID" || bench/peers/rigid_bench.cc -nt "$RIGID" || "$LIBCOULOMB" -nt "$RIGID" ]]; then
  echo "bench_peers: compiling $RIGID against Pinocchio in $PIN (a few minutes)" >&2
  # coulomb's release flags (-O2); Pinocchio's algorithms come from its own compiled library.
  c++ -std=c++20 -O2 -DNDEBUG -w -DPINOCCHIO_ENABLE_TEMPLATE_INSTANTIATION -DBOOST_MPL_LIMIT_LIST_SIZE=30 \
    -DBOOST_MPL_LIMIT_VECTOR_SIZE=30 -DBOOST_MPL_CFG_NO_PREPROCESSED_HEADERS -DBOOST_FUSION_INVOKE_MAX_ARITY=12 \
    -Iinclude -I/usr/include/eigen3 -I"$PIN/include" bench/peers/rigid_bench.cc -o "$RIGID" \
    -L"$BUILD_DIR/src" -lcoulomb -L"$PIN/lib" -lpinocchio_default \
    -Wl,-rpath,"$(cd "$BUILD_DIR/src" && pwd)" -Wl,-rpath,"$PIN/lib"
fi

# 3. the runs and the report
reuse() { [[ "${BENCH_PEERS_REUSE:-0}" == 1 && -s "$1" ]]; }
COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo "+local changes")
if ! reuse "$WORK/rigid.json"; then
  "$RIGID" ../shared/models examples/models "${RIGID_SAMPLES:-21}" 2000 >"$WORK/rigid.json"
fi
if ! reuse "$WORK/simulate.json"; then
  scenes=()
  [[ -n "${PEERS_SCENES:-}" ]] && scenes=(--scenes $PEERS_SCENES)
  "$PY" bench/peers/peers.py run --peer-bench "$BUILD_DIR/bin/coulomb_peer_bench" -o "$WORK/simulate.json" \
    --seeds "${PEERS_SEEDS:-5}" --steps-scale "${PEERS_STEPS_SCALE:-1.0}" --repeats "${PEERS_REPEATS:-3}" "${scenes[@]}"
fi
"$PY" bench/peers/report.py --simulate "$WORK/simulate.json" --rigid "$WORK/rigid.json" -o "$OUT" \
  --images "$(dirname "$OUT")/images" --commit "$COMMIT"
echo "bench_peers: wrote $OUT" >&2
