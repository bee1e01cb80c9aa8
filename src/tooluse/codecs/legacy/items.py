"""What :class:`~tooluse.codecs.legacy.LegacyParser` reads a completion into: text, calls and
problems (:data:`Item`), what it needs to know of a tool (:class:`ToolLike`), and how a
parser gathers its items (:class:`ItemSink`, shared with the native formats' parser)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from ...messages import ToolUseBlock

__all__ = ["CallItem", "Item", "ItemSink", "ParseProblem", "TextItem", "ToolLike"]


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


class ItemSink:
    """A parser's items as it reads: text gathered and given out as one item before the
    next call or problem, so no text is lost or split needlessly. A parser sets ``_out``
    and ``_text`` to empty lists when it starts (and restarts)."""

    _out: list[Item]
    _text: list[str]

    def _emit_text(self, text: str) -> None:
        if text:
            self._text.append(text)  # joined once, in _flush_text: no quadratic concatenation

    def _flush_text(self) -> None:
        if self._text:
            self._out.append(TextItem("".join(self._text)))
            self._text = []

    def _emit_problem(self, message: str, raw: str) -> None:
        self._flush_text()
        self._out.append(ParseProblem(message, raw))

    def _take(self) -> list[Item]:
        self._flush_text()
        out, self._out = self._out, []
        return out
