#!/usr/bin/env bash
# Installs every Debian package coulomb needs to build, test and benchmark.
# Idempotent: does nothing (and prints nothing) when everything is already installed;
# runs `apt-get update` only when something is missing. Uses sudo only when not root.
set -euo pipefail

PACKAGES=(
  # toolchain
  make cmake ninja-build g++ ccache pkg-config python3
  # libraries
  libeigen3-dev liburdfdom-dev libtinyxml-dev libconsole-bridge-dev libcli11-dev nlohmann-json3-dev libyaml-cpp-dev
  libfcl-dev libccd-dev libsuitesparse-dev
  # tests, oracles and benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev libmujoco-dev libqhull-dev coinor-libipopt-dev
)

missing=()
for pkg in "${PACKAGES[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
  if [[ "$status" != "installed" ]]; then
    missing+=("$pkg")
  fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
  exit 0
fi

SUDO=()
if [[ $(id -u) -ne 0 ]]; then
  SUDO=(sudo)
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
