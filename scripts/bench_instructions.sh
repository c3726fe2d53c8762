#!/usr/bin/env bash
# Instructions per step, coulomb SAP against MuJoCo 4 (Newton and CG), counted by callgrind inside the step
# call on the peer scenes (bench/peers/instructions.py, `make bench-instructions`): the
# comparison that does not move with the load of a shared machine. Writes
# docs/benchmarks-instructions.md.
#   usage: scripts/bench_instructions.sh [OUTPUT.md]   (default docs/benchmarks-instructions.md)
# Environment: BUILD_DIR (build), INSTR_SCENES (all), INSTR_STEPS_SCALE (1.0), INSTR_SEED (1),
#   BENCH_PEERS_REUSE=1 (reuse BUILD_DIR/bench-peers/instructions.json).
# About 15 minutes on 2 cores (callgrind runs programs some 50× slower); valgrind is
# installed from Debian's packages when missing (as root).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
OUT=${1:-docs/benchmarks-instructions.md}
BUILD_DIR=${BUILD_DIR:-build}
WORK=$BUILD_DIR/bench-peers
mkdir -p "$WORK"
source scripts/bench_venv.sh
if ! command -v valgrind >/dev/null; then
  if [[ $(id -u) == 0 ]]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind >/dev/null
  else
    echo "bench_instructions: valgrind is missing (install the Debian package valgrind)" >&2
    exit 1
  fi
fi
[[ -f "$BUILD_DIR/build.ninja" ]] || cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$BUILD_DIR" --target coulomb_peer_bench
COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo "+local changes")
JSON=$WORK/instructions.json
if [[ "${BENCH_PEERS_REUSE:-0}" != 1 || ! -s "$JSON" ]]; then
  scenes=()
  [[ -n "${INSTR_SCENES:-}" ]] && scenes=(--scenes $INSTR_SCENES)
  "$PY" bench/peers/instructions.py run --peer-bench "$BUILD_DIR/bin/coulomb_peer_bench" -o "$JSON" \
    --seed "${INSTR_SEED:-1}" --steps-scale "${INSTR_STEPS_SCALE:-1.0}" --commit "$COMMIT" "${scenes[@]}"
fi
"$PY" bench/peers/instructions.py report "$JSON" -o "$OUT"
echo "bench_instructions: wrote $OUT" >&2
