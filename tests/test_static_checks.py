"""``ruff check`` and ``mypy --strict`` stay clean on ``src/`` (the developers' guide asks for
both; with several people landing at once, only a test keeps it so). The settings are the
project's own (``[tool.ruff]``, ``[tool.mypy]`` in ``pyproject.toml``); the versions are the
lock's, since a newer ruff or mypy may add checks."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=600, check=False)


def test_ruff_check_src_is_clean() -> None:
    pytest.importorskip("ruff", reason="ruff is in the [test] extra")
    out = _run("ruff", "check", "--no-cache", "src")
    assert out.returncode == 0, out.stdout + out.stderr


def test_mypy_strict_src_is_clean(tmp_path: Path) -> None:
    pytest.importorskip("mypy", reason="mypy is in the [test] extra")
    out = _run("mypy", "--strict", "--cache-dir", str(tmp_path / "cache"), "src")
    assert out.returncode == 0, out.stdout + out.stderr


def test_no_module_over_600_lines() -> None:
    """The guide asks at ~600 lines whether a file holds two things; past 600 it does."""
    long = {
        str(path.relative_to(ROOT)): n
        for path in sorted((ROOT / "src").rglob("*.py"))
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > 600
    }
    assert not long, f"modules over 600 lines: {long}"
