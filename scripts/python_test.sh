#!/usr/bin/env bash
# The Python package's tests, run by `make test` after ctest (and alone by `make python-test`):
#  1. a virtual environment in BUILD_DIR/python-venv (python3 -m venv) with the build requirements
#     (scikit-build-core, nanobind), numpy, pytest and ray — installed once, then kept;
#  2. `pip install .` of this tree into it, built in BUILD_DIR-python (kept between runs, so a
#     rebuild is incremental; Ninja, ccache when installed; only libcoulomb and the extension). A
#     sibling of BUILD_DIR, at the same depth, so that ccache (whose base_dir makes paths relative
#     to the build directory) finds libcoulomb's objects from BUILD_DIR's build: they compile alike;
#  3. pytest python/tests, with the C++ command-line tool of BUILD_DIR for the bitwise comparison
#     and Ray required (tests that need it fail rather than skip).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
BUILD_DIR=${BUILD_DIR:-build}
[[ $BUILD_DIR = /* ]] || BUILD_DIR=$PWD/$BUILD_DIR
PYTHON=${PYTHON:-python3}
venv=$BUILD_DIR/python-venv
pip_build=$BUILD_DIR-python

if [[ ! -x $venv/bin/python ]]; then
  echo "python-test: creating $venv"
  "$PYTHON" -m venv "$venv"
  rm -f "$pip_build/CMakeCache.txt"  # it may name another environment's Python and nanobind
fi
if ! "$venv/bin/python" -c "import scikit_build_core, nanobind, numpy, pytest, ray" 2>/dev/null; then
  echo "python-test: installing scikit-build-core, nanobind, numpy, pytest, ray into $venv"
  "$venv/bin/python" -m pip install -q --upgrade pip
  "$venv/bin/python" -m pip install -q "scikit-build-core>=0.10" "nanobind>=2.2" numpy pytest ray
fi
# The C++ compiler of BUILD_DIR's build, by the same path: ccache hashes the compiler's name, so
# libcoulomb compiled by /usr/bin/c++ there and by /usr/bin/g++ here (scikit-build-core's choice)
# would never share an object, and CI's cold run would compile the library twice.
compiler_args=()
if [[ -f $BUILD_DIR/CMakeCache.txt ]]; then
  cxx=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$BUILD_DIR/CMakeCache.txt")
  if [[ -n $cxx ]]; then
    compiler_args=(--config-settings=cmake.define.CMAKE_CXX_COMPILER="$cxx")
    if [[ -f $pip_build/CMakeCache.txt ]] && ! grep -qx "CMAKE_CXX_COMPILER:[A-Z]*=$cxx" "$pip_build/CMakeCache.txt"; then
      rm -f "$pip_build/CMakeCache.txt"  # configured with another compiler
    fi
  fi
fi
echo "python-test: pip install . (build directory $pip_build)"
"$venv/bin/python" -m pip install -q --no-build-isolation --no-deps --config-settings=build-dir="$pip_build" \
  "${compiler_args[@]}" .
echo "python-test: pytest python/tests"
COULOMB_CLI="$BUILD_DIR/bin/coulomb" COULOMB_REQUIRE_RAY=1 "$venv/bin/python" -m pytest -q python/tests
