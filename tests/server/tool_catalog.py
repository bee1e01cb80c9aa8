"""bench/tool_search/catalog.py (60 tools of MCP-like servers, and requests for them),
loaded for the tests."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

_PATH = Path(__file__).resolve().parents[2] / "bench" / "tool_search" / "catalog.py"
_spec = importlib.util.spec_from_file_location("tool_catalog_bench", _PATH)
assert _spec is not None and _spec.loader is not None
catalog = importlib.util.module_from_spec(_spec)
sys.modules["tool_catalog_bench"] = catalog
_spec.loader.exec_module(catalog)

TOOLS = catalog.TOOLS
REQUESTS = catalog.REQUESTS
