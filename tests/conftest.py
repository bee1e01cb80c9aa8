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


@pytest.fixture(autouse=True, scope="session")
def _private_prompt_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The local backend's disk prompt cache goes to a directory of this session (also for
    subprocesses, through the environment), never to the user's ~/.cache."""
    if "TOOLUSE_PROMPT_CACHE" not in os.environ:
        os.environ["TOOLUSE_PROMPT_CACHE"] = str(tmp_path_factory.mktemp("prompt-cache"))
