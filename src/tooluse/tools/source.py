"""Tool sources: objects that hand over a list of tools when a tool set is built.

An MCP server (:class:`tooluse.mcp.MCPServer`) is the example: its tools are known only
after connecting, and two servers may both offer a tool called ``search``. A source is
anything with a ``source_name`` and a ``get_tools()`` method, so this layer never imports
what lies behind it (the ``mcp`` package is an optional dependency).

:func:`expand_sources` turns a mixed list (functions, tools, sources) into plain tool-likes.
A source's tool keeps its own name unless another tool in the list has the same one; then
it is *qualified* with the source's name (``time_get_current_time``, original name
``time.get_current_time``) so both stay callable and apart. Functions and schema tools are
never renamed: the user wrote those names.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any, Protocol, runtime_checkable

from .names import map_name
from .tool import Tool

__all__ = ["ToolSource", "expand_sources"]


@runtime_checkable
class ToolSource(Protocol):
    """Provides tools at the moment a :class:`~tooluse.tools.ToolSet` is built."""

    @property
    def source_name(self) -> str:
        """A short name for the source, used to qualify tool names that collide."""
        ...

    def get_tools(self) -> list[Tool]:
        """The source's tools (connecting first if needed)."""
        ...


def expand_sources(items: Iterable[Any]) -> list[Any]:
    """``items`` with every :class:`ToolSource` replaced by its tools, in order; a source's
    tool whose name is also another tool's is qualified with the source's name."""
    entries: list[tuple[ToolSource | None, Any]] = []
    for item in items:
        if isinstance(item, ToolSource):
            entries.extend((item, t) for t in item.get_tools())
        else:
            entries.append((None, item))
    counts = Counter(_name_of(item) for _, item in entries)
    result: list[Any] = []
    for source, item in entries:
        if source is not None and counts[item.name] > 1:
            qualified = f"{source.source_name}.{item.original_name}"
            item = item.with_name(map_name(f"{source.source_name}_{item.name}"),
                                  original_name=qualified)
        result.append(item)
    return result


def _name_of(item: Any) -> str | None:
    """The wire name a plain item will have, as far as it can be told without building it."""
    if isinstance(item, Tool):
        return item.name
    if isinstance(item, dict):
        name = item.get("name")
        return name if isinstance(name, str) else None
    name = getattr(item, "name", None)  # a ToolSpec
    if isinstance(name, str):
        return name
    return getattr(item, "__name__", None)  # a function or a pydantic model class
