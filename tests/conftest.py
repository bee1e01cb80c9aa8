"""Shared fixtures. Data from ../shared/ is read in place, never copied; tests that need it
skip with a clear message where it is absent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

SHARED = Path(os.environ.get("TOOLUSE_SHARED_DIR", Path(__file__).resolve().parents[2] / "shared"))


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"../shared not found at {SHARED} (set TOOLUSE_SHARED_DIR)")
    return SHARED


@pytest.fixture(scope="session")
def bfcl_dir(shared_dir: Path) -> Path:
    path = shared_dir / "bench" / "bfcl"
    if not path.is_dir():
        pytest.skip(f"BFCL data not found at {path}")
    return path
