"""What :class:`~tooluse.codecs.legacy.LegacyParser` reads a completion into: text, calls and
problems (:data:`Item`), and what it needs to know of a tool (:class:`ToolLike`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from ...messages import ToolUseBlock

__all__ = ["CallItem", "Item", "ParseProblem", "TextItem", "ToolLike"]


@dataclass(frozen=True)
class TextItem:
    """Free text of the completion, in order."""

    text: str


@dataclass(frozen=True)
class CallItem:
    """One parsed tool call; ``raw`` is the text it was read from (``<invoke>...</invoke>``,
    with the ``<function_calls>`` opening for the first call of a block)."""

    block: ToolUseBlock
    raw: str = ""


@dataclass(frozen=True)
class ParseProblem:
    """A malformed call: what is wrong, and the text it was found in (nothing is dropped)."""

    message: str
    raw: str


Item = TextItem | CallItem | ParseProblem


class ToolLike(Protocol):
    """Anything that names a tool and gives its input schema (``ToolSpec``, ``Tool``)."""

    @property
    def name(self) -> str: ...

    @property
    def input_schema(self) -> Mapping[str, Any]: ...
