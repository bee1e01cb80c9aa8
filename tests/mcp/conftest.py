"""Fixtures for the MCP tests: the real ``mcp-server-time`` from PyPI and the test servers
in this folder, all over stdio with this interpreter."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from mcp_commands import MISC_COMMAND, TIME_COMMAND

pytest.importorskip("mcp", reason="the MCP tests need the mcp extra: pip install 'tooluse[mcp]'")
pytest.importorskip("mcp_server_time", reason="the MCP tests need mcp-server-time (the [test] extra)")

from tooluse.mcp import MCPServer


@pytest.fixture(scope="module")
def time_server() -> Iterator[MCPServer]:
    with MCPServer(TIME_COMMAND) as server:
        yield server


@pytest.fixture(scope="module")
def misc_server() -> Iterator[MCPServer]:
    with MCPServer(MISC_COMMAND, timeout=3) as server:
        yield server
