"""Chat Completions reasoning <-> the neutral thinking blocks and reasoning settings.

Chat Completions has no standard reasoning block; the OpenAI-compatible servers that return
a model's reasoning put it in one string beside ``content``:

- ``reasoning_content`` (vLLM before 0.11, SGLang, DeepSeek, llama.cpp's server), or
  ``reasoning`` (Ollama, vLLM since 0.11), on an assistant message and in stream deltas.
  Both are read; when a message has both, they must agree (vLLM sent both for a while).
  The gateway writes ``reasoning_content``.
- the request's ``reasoning_effort`` (``none`` ... ``xhigh``) <-> ``Request.reasoning.effort``.

What the string cannot hold (``strict=True``: :class:`~tooluse.errors.ConversionError`;
otherwise left out with a log line, :func:`.._common.dropped`): a thinking block's
``signature`` (the text travels, the proof does not), a redacted block (nothing readable),
the position of thinking between other blocks (all of a turn's thinking becomes its one
string, in order, blocks and summary parts joined by a blank line), and of the request's
settings a ``budget_tokens``, a ``summary``, a ``display``, and ``disabled`` without an
effort (Chat names no budget and no switch; only an effort is forwarded).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...errors import WireFormatError
from ...messages import ContentBlock, Reasoning, RedactedThinkingBlock, ThinkingBlock
from .._common import Path, dropped
from ._wire import TARGET

__all__ = [
    "EFFORTS",
    "ReasoningText",
    "decode_effort",
    "encode_effort",
    "read_reasoning",
]

#: The ``reasoning_effort`` values OpenAI's API takes.
EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh")


def read_reasoning(first: Any, second: Any, path: Path, *, lenient: bool) -> str | None:
    """The reasoning text of a message or delta from its ``reasoning_content`` (``first``)
    and ``reasoning`` (``second``); None when neither has text.

    A client's request (``lenient=False``) holding both must hold the same text in both: two
    different texts are a :class:`WireFormatError`. A server's answer (``lenient=True``) is
    read as vLLM's transition sends it: ``reasoning_content`` when it has text, and a
    ``reasoning`` that is not text (an object some routers send) is not the reasoning.
    """
    for key, value in (("reasoning_content", first), ("reasoning", second)):
        if value is not None and not isinstance(value, str):
            if lenient and key == "reasoning":
                return first or None
            raise WireFormatError("Input should be a valid string", (*path, key))
    if not lenient and first and second and first != second:
        raise WireFormatError(
            "reasoning_content and reasoning disagree; send one of them", (*path, "reasoning")
        )
    return first or second or None


class ReasoningText:
    """Collects a turn's thinking blocks into its one reasoning string
    (:meth:`ThinkingBlock.join`), leaving out (by the module's policy) what the string cannot
    hold."""

    def __init__(self, strict: bool) -> None:
        self.strict = strict
        self.blocks: list[ThinkingBlock] = []

    def take(self, block: ContentBlock, path: Path) -> bool:
        """Whether ``block`` was a thinking block (and so is taken care of here)."""
        if isinstance(block, RedactedThinkingBlock):
            dropped("Chat Completions cannot carry a redacted thinking block", path, TARGET,
                    self.strict)
            return True
        if not isinstance(block, ThinkingBlock):
            return False
        if block.signature is not None:
            dropped("Chat Completions cannot carry a thinking block's signature",
                    (*path, "signature"), TARGET, self.strict)
        self.blocks.append(block)
        return True

    @property
    def text(self) -> str | None:
        return ThinkingBlock.join(self.blocks) or None


def decode_effort(value: Any) -> Reasoning | None:
    """``reasoning_effort`` -> the neutral reasoning settings (``none`` is ``disabled``)."""
    if value is None:
        return None
    if value not in EFFORTS:
        allowed = ", ".join(repr(e) for e in EFFORTS)
        raise WireFormatError(f"Input should be {allowed}", ("reasoning_effort",))
    return Reasoning(mode="disabled" if value == "none" else "enabled", effort=value)


def encode_effort(reasoning: Reasoning | None, strict: bool) -> dict[str, Any]:
    """The request fields for ``reasoning``: ``reasoning_effort`` when an effort is given;
    the rest is left out by the module's policy (strict: refused)."""
    if reasoning is None:
        return {}
    path: Path = ("reasoning",)
    lost: Sequence[tuple[str, Any]] = [
        ("budget_tokens", reasoning.budget_tokens), ("summary", reasoning.summary),
        ("display", reasoning.display)]
    for name, value in lost:
        if value is not None:
            dropped(f"Chat Completions has no reasoning {name} (only reasoning_effort)",
                    (*path, name), TARGET, strict)
    if reasoning.effort is None:
        if reasoning.mode == "disabled":
            dropped("Chat Completions cannot turn reasoning off without an effort "
                    "(reasoning_effort 'none' is not taken by every server)",
                    (*path, "mode"), TARGET, strict)
        return {}
    return {"reasoning_effort": reasoning.effort}
