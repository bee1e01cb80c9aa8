"""The command lines of the MCP servers the tests start (this interpreter, stdio)."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).parent
TIME_COMMAND = [sys.executable, "-m", "mcp_server_time", "--local-timezone", "Etc/UTC"]
MISC_COMMAND = [sys.executable, str(HERE / "misc_server.py")]
GARBAGE_COMMAND = [sys.executable, str(HERE / "garbage_server.py")]
