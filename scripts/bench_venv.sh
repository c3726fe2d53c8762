#!/usr/bin/env bash
# The peers' venv BUILD_DIR/bench-venv (never used by `make test`): mujoco 4.x, drake (newest),
# pin 4.x, numpy and matplotlib from the package index, installed once. Sourced by
# scripts/bench_peers.sh and scripts/bench_instructions.sh; sets PY to its python.
VENV=$BUILD_DIR/bench-venv
if [[ ! -f "$VENV/.peers-installed" ]]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet "mujoco>=4,<5" drake "pin>=4,<5" numpy matplotlib
  touch "$VENV/.peers-installed"
fi
PY=$VENV/bin/python
