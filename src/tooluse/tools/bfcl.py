"""Berkeley Function Calling Leaderboard (BFCL) functions as tools.

BFCL is the largest public body of real-looking tool definitions, and it breaks both rules a
tool set must obey: names like ``math.factorial`` and a schema dialect with ``"type":
"dict"``, ``"float"``, ``"tuple"`` and ``"any"``. :func:`bfcl_toolset` accepts it through the
explicit, documented translation in :func:`~tooluse.tools.normalize_schema` and the name
mapping of :class:`~tooluse.tools.ToolSet`; validation stays fully on.

Reading BFCL's answers as tool input is :mod:`tooluse.eval.ground_truth`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .tool import Tool
from .toolset import ToolSet

__all__ = ["bfcl_tool", "bfcl_toolset"]


def bfcl_tool(function: Mapping[str, Any], *, map_name: bool = True) -> Tool:
    """One BFCL function (``{"name", "description", "parameters"}``) as a :class:`Tool`."""
    return Tool.from_schema(
        function["name"],
        function.get("description") or "",
        function.get("parameters") or {"type": "dict", "properties": {}},
        normalize=True,
        map_name=map_name,
    )


def bfcl_toolset(functions: Iterable[Mapping[str, Any]]) -> ToolSet:
    """A BFCL question's functions as a :class:`ToolSet` with mapped (valid, unique) names."""
    return ToolSet([bfcl_tool(f) for f in functions], map_names=True)
