"""A set of tools with unique wire names, and the map back to the names they were defined with.

The runner and the gateway look tools up by the name the *model* used (the wire name); the
user's code and logs speak of the original name. The set owns the translation so that neither
side has to know a mapping happened.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from pydantic import BaseModel

from ..errors import ToolDefinitionError
from ..messages import ToolSpec
from .names import map_names as _map_names
from .source import ToolSource, expand_sources
from .tool import Tool

__all__ = ["ToolSet", "as_tool"]

ToolLike = (
    Tool | Callable[..., Any] | type[BaseModel] | Mapping[str, Any] | ToolSpec | ToolSource
)


def as_tool(item: ToolLike, *, map_name: bool = False) -> Tool:
    """Turn what a user would naturally pass as a tool into a :class:`Tool`: a Tool, a
    function, a pydantic model class, a :class:`ToolSpec`, or a dict with ``name``,
    ``description`` and ``input_schema`` (or ``parameters``, the OpenAI/BFCL spelling, whose
    BFCL-style types are then normalised), and optionally ``function`` and
    ``requires_approval``."""
    if isinstance(item, Tool):
        return item
    if isinstance(item, ToolSpec):
        return Tool(item.name, item.description, item.input_schema, map_name=map_name)
    if isinstance(item, type) and issubclass(item, BaseModel):
        return Tool.from_model(item, map_name=map_name)
    if isinstance(item, Mapping):
        if "name" not in item:
            raise ToolDefinitionError(f"a tool definition needs a 'name': {dict(item)!r:.80}")
        if "input_schema" in item:
            schema, normalize = item["input_schema"], False
        elif "parameters" in item:
            schema, normalize = item["parameters"], True
        else:
            schema, normalize = None, False
        return Tool(
            item["name"],
            item.get("description") or "",
            schema,
            item.get("function"),
            normalize=normalize,
            map_name=map_name,
            requires_approval=item.get("requires_approval", False),
        )
    if callable(item):
        return Tool.from_function(item, map_name=map_name)
    raise ToolDefinitionError(f"cannot make a tool from {type(item).__name__}")


class ToolSet:
    """Tools with unique, valid wire names.

    Items may also be tool sources (:class:`~tooluse.tools.ToolSource`, e.g. an MCP
    server): their tools join the set, qualified with the source's name where two would
    share a name (see :func:`~tooluse.tools.expand_sources`).

    Without ``map_names`` every name must already obey ``^[a-zA-Z0-9_-]{1,64}$`` and be
    unique; otherwise :class:`ToolDefinitionError` names the offenders. With
    ``map_names=True`` invalid names are mapped deterministically (``math.factorial`` ->
    ``math_factorial``, long names cut with a short stable hash, collisions suffixed ``_2``...)
    and :meth:`original_name` maps them back.
    """

    def __init__(self, tools: Iterable[ToolLike] = (), *, map_names: bool = False) -> None:
        built = [as_tool(t, map_name=map_names) for t in expand_sources(tools)]
        originals = [t.original_name for t in built]
        if map_names:
            wire = _map_names(originals)
            built = [t if t.name == w else t.with_name(w) for t, w in zip(built, wire)]
        else:
            seen: dict[str, int] = {}
            for t in built:
                seen[t.name] = seen.get(t.name, 0) + 1
            dups = [n for n, count in seen.items() if count > 1]
            if dups:
                raise ToolDefinitionError(
                    "duplicate tool names: " + ", ".join(repr(n) for n in dups)
                    + " (each tool in a set needs its own name)"
                )
        self._tools: dict[str, Tool] = {t.name: t for t in built}
        self._originals: dict[str, str] = {t.name: t.original_name for t in built}
        self.map_names = map_names

    def __len__(self) -> int:
        return len(self._tools)

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __contains__(self, wire_name: object) -> bool:
        return wire_name in self._tools

    def __getitem__(self, wire_name: str) -> Tool:
        tool = self.get(wire_name)
        if tool is None:
            raise KeyError(wire_name)
        return tool

    def __repr__(self) -> str:
        return f"ToolSet({list(self._tools)!r})"

    @property
    def names(self) -> list[str]:
        """The wire names, in definition order."""
        return list(self._tools)

    @property
    def specs(self) -> list[ToolSpec]:
        """What to send to the model."""
        return [t.spec for t in self._tools.values()]

    def get(self, wire_name: str) -> Tool | None:
        """The tool the model means by ``wire_name``, or ``None``."""
        return self._tools.get(wire_name)

    def original_name(self, wire_name: str) -> str:
        """The name the tool was defined with; raises ``KeyError`` for an unknown name."""
        return self._originals[wire_name]

    def wire_name(self, original_name: str) -> str:
        """The name sent on the wire for the tool defined as ``original_name``."""
        for wire, original in self._originals.items():
            if original == original_name:
                return wire
        raise KeyError(original_name)
