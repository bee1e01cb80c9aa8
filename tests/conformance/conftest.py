"""Conformance to the vendors' own schemas: every answer the tests below get from the gateway
is validated, and counted, by kind and by the schema (and its version) that validated it.
The counts are printed at the end of the run (``conformance:`` lines of the summary)."""

from __future__ import annotations

from typing import Any

import pytest
from conformance_openai import Document, load
from conformance_tally import TALLY, Tally


@pytest.fixture(scope="session")
def tally() -> Tally:
    return TALLY


@pytest.fixture(scope="session")
def openai_doc() -> Document:
    document = load()
    if isinstance(document, str):
        pytest.skip(document)
    return document


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not TALLY.counts:
        return
    terminalreporter.section("conformance: answers validated against the vendors' schemas")
    for (api, kind, schema, version), n in sorted(TALLY.counts.items()):
        terminalreporter.write_line(f"conformance: {n:4d} x {api} {kind} -> {schema} [{version}]")
