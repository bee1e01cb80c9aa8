"""What a run returns: :class:`RunResult` (the conversation, the final turn, the usage)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..codecs import get_codec
from ..messages import (
    CallOrigin,
    Message,
    Request,
    Response,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)
from ..tools import ToolSet

__all__ = ["RunResult"]


@dataclass
class RunResult:
    """The outcome of a run.

    ``messages`` is the whole conversation (the prompt, every assistant turn, every results
    turn); save it (``[m.model_dump() for m in result.messages]``, or in a wire format with
    :meth:`to_wire`) and continue it later with ``runner.run("...", messages=saved)``.
    ``response`` is the final assistant turn; ``output`` is the parsed value of
    :func:`~tooluse.runner.extract`. Each call in :attr:`tool_calls` keeps its ``origin``
    (where it came from: :attr:`call_origins`).
    """

    messages: list[Message]
    response: Response
    iterations: int
    usage: Usage = field(default_factory=Usage)
    output: Any = None
    tools: ToolSet | None = None
    system: str | None = None
    model: str | None = None
    max_tokens: int = 1024

    @property
    def text(self) -> str:
        """The final answer's text."""
        return self.response.text()

    @property
    def stop_reason(self) -> str | None:
        return self.response.stop_reason

    @property
    def tool_calls(self) -> list[tuple[ToolUseBlock, ToolResultBlock | None]]:
        """Every call of the run with its result, in order."""
        results = {r.tool_use_id: r for m in self.messages for r in m.tool_results}
        return [(c, results.get(c.id)) for m in self.messages for c in m.tool_uses]

    @property
    def call_origins(self) -> list[CallOrigin]:
        """Where each call of :attr:`tool_calls` came from, in the same order: the call's
        :class:`~tooluse.messages.CallOrigin`, or ``CallOrigin()`` (``source="model"``)
        for a call as the model wrote it. ``origin.describe()`` is one line of it."""
        return [c.origin if c.origin is not None else CallOrigin()
                for m in self.messages for c in m.tool_uses]

    def to_request(self, *, max_tokens: int | None = None) -> Request:
        """The conversation as a request (system, tools, messages, the run's max_tokens) —
        what the next model call would see."""
        return Request(
            model=self.model or self.response.model,
            system=[TextBlock(text=self.system)] if self.system else [],
            messages=list(self.messages),
            tools=self.tools.specs if self.tools is not None else [],
            max_tokens=max_tokens if max_tokens is not None else self.max_tokens,
        )

    def to_wire(self, format: str = "anthropic", **options: Any) -> Any:
        """The conversation as a request body of ``format`` (``anthropic``, ``bedrock``,
        ``openai``, ``legacy``), through that format's codec. ``options`` go to its
        ``encode_request`` (e.g. ``strict=False`` for OpenAI's ``is_error`` fallback)."""
        return get_codec(format).encode_request(self.to_request(), **options)
