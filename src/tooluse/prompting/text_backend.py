"""The small interface a text-only model implements to get tool use from this package.

:class:`~tooluse.prompting.backend.PromptToolsBackend` turns a neutral request into chat
messages (system prompt describing the tools, conversation as text turns), asks a
:class:`TextBackend` to continue them, and parses the text back into tool calls. A text
backend therefore needs to know nothing about tools: it renders messages with its own chat
template, continues after an optional ``prefill``, honours stop strings and the token
limit, and, if it can, a grammar. The in-process llama.cpp backend implements it; an
OpenAI-compatible completions server could too.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

from .grammar import ToolGrammar

__all__ = ["TextBackend", "TextEnd", "TextMessage"]

#: ``{"role": "system" | "user" | "assistant", "content": "..."}``
TextMessage = dict[str, str]


@dataclass
class TextEnd:
    """The last item a text generation yields: why it ended and what it cost.

    ``reason``: ``"end"`` (the model or the grammar finished), ``"stop"`` (a stop string,
    named in ``stop_sequence``, was reached and left out of the text), ``"length"`` (the
    token limit). ``cached_tokens`` counts prompt tokens reused from the previous call.
    """

    reason: Literal["end", "stop", "length"]
    stop_sequence: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    timings: dict[str, float] = field(default_factory=dict)


@runtime_checkable
class TextBackend(Protocol):
    """A model that continues chat messages as text."""

    #: Model name to report in responses.
    model: str | None

    def generate_text(
        self,
        messages: Sequence[TextMessage],
        *,
        prefill: str = "",
        stop: Sequence[str] = (),
        max_tokens: int = 1024,
        temperature: float = 0.0,
        top_p: float | None = None,
        top_k: int | None = None,
        grammar: ToolGrammar | None = None,
    ) -> Iterator[str | TextEnd]:
        """Yield the continuation of ``messages`` (after ``prefill``, which is not repeated)
        as text chunks, then one :class:`TextEnd`.

        ``grammar`` constrains the continuation (a backend that cannot apply it must raise
        ``NotImplementedError`` rather than ignore it). Stop strings are not part of the
        text.
        """
        ...
