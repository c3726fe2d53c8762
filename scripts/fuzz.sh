#!/usr/bin/env bash
# Runs the libFuzzer harnesses of fuzz/ (docs/reliability.md):
#   scripts/fuzz.sh [SECONDS] [HARNESS...]      HARNESS: urdf, scene, mjcf, sdf (default: all four)
# 1. configures and builds build-fuzz (clang, -DCOULOMB_FUZZ=ON: ASan + UBSan + libFuzzer);
# 2. copies the seed files into build-fuzz/corpus/NAME (at run time: nothing of ../shared is
#    committed): urdf ← ../shared/models/**/*.urdf, examples/models/*.urdf, tests/data/bad_urdf;
#    scene ← examples/scenes/*.yaml, tests/data/bad_scenes; mjcf ← examples/models/*.xml,
#    /usr/share/mujoco/model/**/*.xml, tests/data/bad_mjcf; sdf ← examples/models/sdf/**/*.sdf, tests/data/sdf/**/*.sdf,
#    tests/data/bad_sdf; and every file of
#    tests/data/fuzz_regressions/NAME (the crashes found earlier);
# 3. runs each harness for SECONDS (default 60) with its dictionary fuzz/NAME.dict,
#    -timeout=FUZZ_TIMEOUT (s per input, default 10) and -rss_limit_mb=2048, the corpus growing in build-fuzz/corpus/NAME
#    across runs; logs in build-fuzz/logs/NAME.log, crash/timeout/OOM inputs in
#    build-fuzz/artifacts/NAME/;
# 4. prints, per harness, the executions, the coverage (libFuzzer's cov: edges and ft: features of
#    the instrumented code) and the corpus size, and exits 1 when any harness found something.
# Environment: BUILD_FUZZ_DIR (build-fuzz), SHARED_DIR (../shared), CXX_FUZZ (clang++),
# FUZZ_STRICT (1: the harnesses also abort on an exception other than the loader's documented
# error, or on an error message without the file name; 0: any std::exception is a clean error).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

seconds=${1:-60}
shift || true
harnesses=("$@")
[[ ${#harnesses[@]} -gt 0 ]] || harnesses=(urdf scene mjcf sdf)
build=${BUILD_FUZZ_DIR:-build-fuzz}
shared=${SHARED_DIR:-../shared}

for h in "${harnesses[@]}"; do
  case $h in urdf | scene | mjcf | sdf) ;; *) echo "fuzz.sh: unknown harness '$h' (urdf, scene, mjcf, sdf)" >&2; exit 2 ;; esac
done
[[ $seconds =~ ^[0-9]+$ ]] || { echo "fuzz.sh: SECONDS must be a whole number, got '$seconds'" >&2; exit 2; }

if [[ ! -f $build/build.ninja ]]; then
  cmake -S . -B "$build" -G Ninja -DCOULOMB_FUZZ=ON -DCMAKE_CXX_COMPILER="${CXX_FUZZ:-clang++}"
fi
cmake --build "$build" --target "${harnesses[@]/#/fuzz_}"

# Copies the files matched by the find arguments into corpus dir $1, named after their path
# (so that files of the same name in different folders do not collide).
seed() {
  local dest=$1 root=$2
  shift 2
  [[ -d $root ]] || return 0
  find "$root" -type f "$@" -print0 | while IFS= read -r -d '' f; do
    local name=${f#./}
    name=seed_${name//\//_}
    cp -f "$f" "$dest/$name"
  done
}

if [[ ${FUZZ_STRICT:-1} == 1 ]]; then
  export COULOMB_FUZZ_STRICT=1
else
  unset COULOMB_FUZZ_STRICT
fi

status=0
summary=()
for h in "${harnesses[@]}"; do
  corpus=$build/corpus/$h
  artifacts=$build/artifacts/$h
  mkdir -p "$corpus" "$artifacts" "$build/logs"
  case $h in
    urdf)
      seed "$corpus" "$shared/models" -name '*.urdf'
      seed "$corpus" examples/models -maxdepth 1 -name '*.urdf'
      seed "$corpus" tests/data/bad_urdf -name '*.urdf' ;;
    scene)
      seed "$corpus" examples/scenes -maxdepth 1 -name '*.yaml'
      seed "$corpus" tests/data/bad_scenes -name '*.yaml' ;;
    mjcf)
      seed "$corpus" examples/models -maxdepth 1 -name '*.xml'
      seed "$corpus" /usr/share/mujoco/model -name '*.xml'
      seed "$corpus" tests/data/bad_mjcf -name '*.xml' ;;
    sdf)
      seed "$corpus" examples/models/sdf -name '*.sdf'
      seed "$corpus" tests/data/sdf -name '*.sdf'
      seed "$corpus" tests/data/bad_sdf -name '*.sdf' ;;
  esac
  seed "$corpus" "tests/data/fuzz_regressions/$h"
  log=$build/logs/$h.log
  echo "fuzz.sh: fuzz_$h for ${seconds} s ($(find "$corpus" -type f | wc -l) corpus files), log $log"
  rc=0
  "$build/bin/fuzz_$h" "$corpus" -dict="fuzz/$h.dict" -max_total_time="$seconds" -timeout="${FUZZ_TIMEOUT:-10}" \
    -rss_limit_mb=2048 -artifact_prefix="$artifacts/" -print_final_stats=1 >"$log" 2>&1 || rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  corp=$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<<"$last")
  if [[ $rc -ne 0 ]]; then
    status=1
    result="FINDING (exit $rc): $(grep -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error|.*deadly signal|ALARM)' "$log" | head -2 | tr '\n' ' ')"
    result+=" inputs: $(ls "$artifacts" | tr '\n' ' ')"
  else
    result="no finding"
  fi
  summary+=("fuzz_$h: ${execs:-?} executions in ${seconds} s, cov ${cov:-?} edges, ft ${ft:-?} features, corpus ${corp:-?} inputs: $result")
done
printf '%s\n' "${summary[@]}"
exit $status
