"""A whole completion as content blocks: the parser's items folded into what a
:class:`~tooluse.messages.Response` holds."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ...messages import TextBlock, ToolUseBlock
from .items import Item, ParseProblem, TextItem, ToolLike
from .parser import LegacyParser

__all__ = ["ParsedCompletion", "items_to_completion", "parse_completion"]

_WS = " \t\r\n"


@dataclass
class ParsedCompletion:
    """A whole completion: content blocks in order, and the problems found.

    A problem's raw text is also kept in ``content`` as text, so the conversation never
    loses what the model wrote.
    """

    content: list[TextBlock | ToolUseBlock] = field(default_factory=list)
    problems: list[ParseProblem] = field(default_factory=list)

    @property
    def tool_uses(self) -> list[ToolUseBlock]:
        return [b for b in self.content if isinstance(b, ToolUseBlock)]


def items_to_completion(items: Sequence[Item]) -> ParsedCompletion:
    """Fold parser items into content blocks.

    Adjacent text is merged; whitespace-only text is dropped; the whitespace that separates
    text from a following call block is format, not content, and is removed.
    """
    result = ParsedCompletion()
    text: list[str] = []

    def flush(before_call: bool) -> None:
        joined = "".join(text)
        text.clear()
        if before_call:
            joined = joined.rstrip(_WS)
        if joined.strip(_WS):
            result.content.append(TextBlock(text=joined))

    for item in items:
        if isinstance(item, TextItem):
            text.append(item.text)
        elif isinstance(item, ParseProblem):
            result.problems.append(item)
            text.append(item.raw)
        else:
            flush(before_call=True)
            result.content.append(item.block)
    flush(before_call=False)
    return result


def parse_completion(
    text: str,
    tools: Sequence[ToolLike] | None = None,
    *,
    id_factory: Callable[[], str] | None = None,
) -> ParsedCompletion:
    """Parse a whole completion at once (same result as feeding it in any chunks)."""
    parser = LegacyParser(tools, id_factory=id_factory)
    items = parser.feed(text) + parser.close()
    return items_to_completion(items)
