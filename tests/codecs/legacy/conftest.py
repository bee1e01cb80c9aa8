"""Fixtures of the legacy-format tests."""

from __future__ import annotations

import pytest
from legacy_seed_example import PRICE, TICKER

from tooluse.messages import ToolSpec


@pytest.fixture
def seed_tools() -> list[ToolSpec]:
    return [PRICE, TICKER]
