"""The Python examples of docs/python.md and README.md run (from the repository root) and exit 0.
A block whose first line says "(not run by the tests" is skipped (it needs a Ray cluster)."""
import re
import subprocess
import sys

import pytest

from conftest import REPO


def python_blocks():
    for doc in ("docs/python.md", "README.md"):
        text = (REPO / doc).read_text(encoding="utf-8")
        for i, block in enumerate(re.findall(r"```python\n(.*?)```", text, flags=re.S)):
            yield pytest.param(block, id=f"{doc}[{i}]")


BLOCKS = list(python_blocks())


def test_there_are_examples():
    assert len(BLOCKS) >= 6


@pytest.mark.parametrize("block", BLOCKS)
def test_example_runs(block):
    if "(not run by the tests" in block.splitlines()[0]:
        pytest.skip("needs a Ray cluster")
    result = subprocess.run([sys.executable, "-c", block], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    assert result.stdout.strip(), "the example printed nothing"
