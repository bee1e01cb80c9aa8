"""Every ```python block of README.md runs as written.

Each block runs on its own (blocks are meant to be copied one at a time). A line ending in
``# -> TEXT`` is a promise about the output: TEXT must appear in what the block printed.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)


def python_blocks() -> list[str]:
    return BLOCK.findall(README.read_text(encoding="utf-8"))


def test_readme_has_python_examples() -> None:
    assert python_blocks(), "README.md should show at least one ```python example"


@pytest.mark.parametrize("index", range(len(python_blocks())))
def test_readme_block_runs(index: int) -> None:
    source = python_blocks()[index]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(source, f"README.md[python block {index}]", "exec"), {"__name__": "__readme__"})
    printed = out.getvalue()
    for line in source.splitlines():
        if "# -> " in line:
            expected = line.split("# -> ", 1)[1].strip()
            assert expected in printed, f"README promises {expected!r}; printed:\n{printed}"
