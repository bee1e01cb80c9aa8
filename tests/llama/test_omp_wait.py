"""OpenMP's waiting as tooluse sets it before llama.cpp loads (docs/local.md, Known limits)."""

from __future__ import annotations

import pytest

pytest.importorskip("llama_cpp")

from tooluse.llama.model import _import_llama


def test_passive_waiting_is_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    monkeypatch.delenv("GOMP_SPINCOUNT", raising=False)
    _import_llama()
    import os

    assert os.environ["OMP_WAIT_POLICY"] == "PASSIVE"


def test_a_users_spin_count_is_not_overridden_by_passive_waiting(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # OMP_WAIT_POLICY=PASSIVE would make libgomp ignore GOMP_SPINCOUNT.
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    monkeypatch.setenv("GOMP_SPINCOUNT", "3000000")
    _import_llama()
    import os

    assert "OMP_WAIT_POLICY" not in os.environ
    assert os.environ["GOMP_SPINCOUNT"] == "3000000"


def test_a_users_own_policy_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    monkeypatch.delenv("GOMP_SPINCOUNT", raising=False)
    _import_llama()
    import os

    assert os.environ["OMP_WAIT_POLICY"] == "ACTIVE"
