#!/usr/bin/env bash
# The "Side by side" table of docs/solvers.md: the same example scenes under SAP (its contact
# approximations) and lstable (both friction models), from one `coulomb simulate` run each.
# Usage: scripts/solvers_side_by_side.sh [path/to/coulomb] > table.md
# Wall time per step is this machine's (noisy on a shared 2-core machine: compare ratios).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
CLI=${1:-build/bin/coulomb}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "| scene | solver | steps | µs/step | max penetration [m] | iterations (mean) | friction passes (mean) | failures |"
echo "|---|---|---|---|---|---|---|---|"
run() {  # scene duration label args...
  local scene=$1 duration=$2 label=$3
  shift 3
  "$CLI" simulate "examples/scenes/$scene.yaml" -o "$out" --no-html -q --duration "$duration" "$@" >/dev/null
  python3 - "$out/stats.json" "$scene" "$label" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
ls = s.get("lstable", {})
passes = ls.get("friction_passes", {}).get("mean")
print("| %s | %s | %d | %.3g | %.3g | %.3g | %s | %d |" % (
    sys.argv[2], sys.argv[3], s["steps"], 1e6 * s["wall_time_s"] / max(1, s["steps"]), s["max_penetration_m"],
    s["solver_iterations"]["mean"], "—" if passes is None else "%.2g" % passes, s["failures"]))
PY
}
for spec in "incline 0.4" "sphere_stack 0.2" "a1_stand 2" "four_bar 2" "default 0.6"; do
  set -- $spec
  scene=$1 duration=$2
  run "$scene" "$duration" sap --solver sap --contact-approximation sap
  run "$scene" "$duration" sap/lagged --solver sap --contact-approximation lagged
  run "$scene" "$duration" lstable --solver lstable
  run "$scene" "$duration" lstable/cone --solver lstable --lstable-friction cone
done
