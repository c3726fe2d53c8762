#!/usr/bin/env bash
# Installs every Debian package coulomb needs to build, test and benchmark, then the npm packages
# of the replay/report viewer (tools/viewer: three, uplot, esbuild, playwright-core) with `npm ci`.
# Idempotent: does nothing (and prints nothing) when everything is already installed;
# runs `apt-get update` only when something is missing. Uses sudo only when not root.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

PACKAGES=(
  # toolchain
  make cmake ninja-build g++ ccache pkg-config python3
  # the libFuzzer harnesses (fuzz/, scripts/fuzz.sh): clang and its runtime (libFuzzer, ASan, UBSan)
  clang libclang-rt-14-dev
  # the Python package (make test builds it into a venv: python3 -m venv, headers for the extension)
  python3-venv python3-dev
  # libraries
  libeigen3-dev liburdfdom-dev libtinyxml-dev libtinyxml2-dev libconsole-bridge-dev libcli11-dev nlohmann-json3-dev libyaml-cpp-dev
  libfcl-dev libccd-dev libsuitesparse-dev
  # collision meshes: assimp reads the files, Qhull builds their convex hulls
  libassimp-dev libqhull-dev
  # SDFormat models and worlds (libsdformat 12)
  libsdformat-dev
  # tests, oracles and benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev libmujoco-dev libmujoco-samples libqhull-dev coinor-libipopt-dev
  # FCLIB problems (`coulomb fclib`: libfclib, HDF5) and the Siconos numerics peer on them
  libfclib-dev libhdf5-dev libsiconos-numerics-dev
  # CVODE (BDF reference of the lstable elastic-foundation test and bench)
  libsundials-dev
  # replay.html (zlib-compressed frame data) and the browser tests (headless Chromium)
  zlib1g-dev chromium chromium-driver
)
# Node.js bundles the viewer at build time and runs the browser tests. A machine that already has
# node and npm (Debian's or NodeSource's nodejs) keeps them.
command -v node >/dev/null 2>&1 || PACKAGES+=(nodejs)
command -v npm >/dev/null 2>&1 || PACKAGES+=(npm)

missing=()
for pkg in "${PACKAGES[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
  if [[ "$status" != "installed" ]]; then
    missing+=("$pkg")
  fi
done

if [[ ${#missing[@]} -gt 0 ]]; then
  SUDO=()
  if [[ $(id -u) -ne 0 ]]; then
    SUDO=(sudo)
  fi
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# npm packages of the viewer, exactly as package-lock.json pins them; again when the lock file or
# package.json is newer than the installed tree (npm writes node_modules/.package-lock.json).
viewer=tools/viewer
installed=$viewer/node_modules/.package-lock.json
if [[ ! -f $installed || $viewer/package-lock.json -nt $installed || $viewer/package.json -nt $installed ]]; then
  echo "install-deps: npm ci in $viewer (three, uplot, esbuild, playwright-core)"
  (cd "$viewer" && npm ci --no-audit --no-fund --loglevel=error)
fi
