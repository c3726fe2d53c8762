"""Shared fixtures of the Python suite (run by `make test` through scripts/python_test.sh)."""
import os
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
SCENES = REPO / "examples" / "scenes"
SHARED = pathlib.Path(os.environ.get("COULOMB_SHARED_DIR", REPO.parent / "shared"))


@pytest.fixture(scope="session")
def cli() -> pathlib.Path:
    """The C++ command-line tool of the same tree (COULOMB_CLI, default build/bin/coulomb)."""
    path = pathlib.Path(os.environ.get("COULOMB_CLI", REPO / "build" / "bin" / "coulomb"))
    if not path.exists():
        pytest.fail(f"{path} not found: build it (cmake --build build --target coulomb_cli) or set COULOMB_CLI")
    return path


def rss_bytes() -> int:
    """Resident set size of this process [bytes] (Linux /proc)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
