"""A text model's ``<think>`` section: read from its output, allowed by the grammar, kept in
its history.

Reasoning models (Qwen3, the DeepSeek-R1 distills, QwQ) write their reasoning first, between
``<think>`` and ``</think>``, then the answer. The prompting layer
(:class:`~tooluse.prompting.PromptToolsBackend`) handles that section here:

- **Reading the output** (:class:`ThinkSplitter`): on any model, an answer that *starts* with
  ``<think>`` (blank lines before it allowed) has that section read as thinking: it becomes
  a :class:`~tooluse.messages.ThinkingBlock`, streamed as
  :class:`~tooluse.stream.ThinkingDelta` events before the answer's text and calls, never
  shown as answer text. A ``<think>`` later in the answer is text like any other.
- **A thinking model** is one the backend knows writes the section: the local backend reads
  it from the chat template (a template that mentions ``<think>`` or ``</think>``, or the
  ``think_tags`` option), the openai-prompt backend from its ``think_tags`` option. On such a model, when
  the request asks for reasoning (``request.reasoning`` with ``.on``) the call grammar
  allows a *bounded* think section before the answer (:func:`thinking_grammar`): the
  opening tag is forced, at most :func:`think_budget` characters of reasoning, the closing
  tag and a blank line, then what the grammar allowed before (the call block, text).
  Without a grammar the turn is prefilled with the opening tag. Without reasoning asked,
  the prompt (but for the template's own switch, ``enable_thinking=False``), the grammar and
  the output are those of any model. The bundled SmolLM2 model is no thinking model.
- **History**: a thinking block of an earlier assistant turn carries no signature a text
  model can check, and reasoning chat templates drop earlier turns' thinking themselves
  (Qwen3 keeps only the current tool loop's, the R1 distills none). So on a thinking model
  the block's text goes back into its turn as a ``<think>`` section
  (:func:`with_thought`), for the chat template to keep or drop as it was trained; on any
  other model it is left out. Redacted (encrypted) thinking is always left out.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..grammar.ir import Chars, Rep, Rule, alt, seq
from ..grammar.tool_calls import ToolGrammar
from ..messages import Reasoning
from .text_model import partial_suffix

__all__ = [
    "DEFAULT_THINK_CHARS",
    "EMPTY_THINK",
    "THINK_CLOSE",
    "THINK_OPEN",
    "ThinkSplitter",
    "assistant_start",
    "mentions_think",
    "think_budget",
    "thinking_grammar",
    "with_thought",
]

THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"
#: The section a turn that is not to think starts with on a template that opens one
#: itself (what Qwen3's template writes for ``enable_thinking=False``).
EMPTY_THINK = f"{THINK_OPEN}\n\n{THINK_CLOSE}\n\n"
#: The think section's bound, in characters, when the request gives no token budget.
DEFAULT_THINK_CHARS = 4000
#: Characters per token for a budget given in tokens (a rough English average).
CHARS_PER_TOKEN = 4
_WS = " \t\r\n"


def mentions_think(template: str | None) -> bool:
    """Whether a chat template is a thinking model's: it mentions ``<think>`` or
    ``</think>`` (the R1 distills' templates cut the history's thinking at the latter)."""
    return bool(template) and any(tag in str(template) for tag in (THINK_OPEN, THINK_CLOSE))


def think_budget(reasoning: Reasoning | None) -> int:
    """The think section's bound in characters: ``budget_tokens`` ×
    :data:`CHARS_PER_TOKEN`, or :data:`DEFAULT_THINK_CHARS` without one. The request's
    ``max_tokens`` still bounds the whole turn."""
    tokens = reasoning.budget_tokens if reasoning is not None else None
    if tokens is None or tokens <= 0:
        return DEFAULT_THINK_CHARS
    return tokens * CHARS_PER_TOKEN


def thinking_grammar(grammar: ToolGrammar, budget: int) -> ToolGrammar:
    """``grammar`` with a bounded think section before it: ``<think>\\n``, at most
    ``budget`` units of reasoning (a character, or ``<`` with the character after it: the
    reasoning cannot hold ``</``, which would close the section early or open a call),
    ``</think>\\n\\n``, then ``grammar``'s prefill and its continuation. The result has no
    prefill: the whole turn is the model's, under the grammar."""
    unit = alt(Chars("<", negated=True), seq("<", Chars("/<", negated=True)))
    # The closing tag inside the rule: llguidance makes it one lexeme with the reasoning,
    # since its lexer would not give a ``<`` back to a following ``</think>`` lexeme.
    section = Rule("think", seq(Rep(unit, 0, max(budget, 0)), f"{THINK_CLOSE}\n\n"))
    root = seq(THINK_OPEN + "\n", section, grammar.prefill, grammar.root)
    return ToolGrammar(root=root, prefill="", key=(*grammar.key, "think", budget))


def assistant_start(prompt: str, think: bool | None) -> str:
    """A rendered prompt with its assistant turn starting where the think section is the
    prompting layer's: a chat template that opens ``<think>`` in its generation prompt (the
    R1 distills) has that tag taken off on a turn that may think (the grammar or the prefill
    writes it), and the section closed empty (:data:`EMPTY_THINK`) on a turn that is not to.
    ``think=None`` (no thinking model) leaves the prompt as it is."""
    if think is None:
        return prompt
    body = prompt.rstrip(_WS)
    if not body.endswith(THINK_OPEN):
        return prompt
    base = body[: -len(THINK_OPEN)]
    return base if think else base + EMPTY_THINK


def with_thought(thought: str, text: str) -> str:
    """An earlier assistant turn's text with its thinking put back before it, as the model
    wrote it (its chat template keeps or drops the section)."""
    return f"{THINK_OPEN}\n{thought.strip(_WS)}\n{THINK_CLOSE}\n\n{text}"


@dataclass
class ThinkSplitter:
    """Splits a streamed answer into its leading think section and the rest.

    :meth:`push` returns ``(thinking, text)`` pieces as far as they are certain: the start
    is held until it is known whether it opens ``<think>``, and the end of a section until
    it is known whether it is ``</think>``. The blanks after ``</think>`` are dropped.

    ``open_tag`` and ``close_tag``: the section's marks in a format that writes its
    reasoning otherwise (harmony: the ``analysis`` channel's message)."""

    state: str = "start"  # start | in | after | out
    buffer: str = ""
    #: Thinking text given out so far (the blanks after ``<think>`` are not).
    said: bool = False
    open_tag: str = THINK_OPEN
    close_tag: str = THINK_CLOSE

    def push(self, chunk: str) -> tuple[str, str]:
        self.buffer += chunk
        thinking = text = ""
        if self.state == "start":
            head = self.buffer.lstrip(_WS)
            if head.startswith(self.open_tag):
                self.state, self.buffer = "in", head[len(self.open_tag):]
            elif not head or self.open_tag.startswith(head):
                return "", ""  # still possibly the opening tag
            else:
                self.state = "out"
        if self.state == "in":
            if not self.said:
                self.buffer = self.buffer.lstrip(_WS)
            at = self.buffer.find(self.close_tag)
            if at < 0:
                # Held: a possible start of the closing tag, and blanks that may end the
                # section (they are not part of the thinking then).
                cut = len(self.buffer) - partial_suffix(self.buffer, self.close_tag)
                thinking = self.buffer[:cut].rstrip(_WS)
                self.buffer = self.buffer[len(thinking):]
                self.said = self.said or bool(thinking)
                return thinking, ""
            thinking = self.buffer[:at].rstrip(_WS)
            self.state, self.buffer = "after", self.buffer[at + len(self.close_tag):]
        if self.state == "after":
            self.buffer = self.buffer.lstrip(_WS)
            if not self.buffer:
                return thinking, ""
            self.state = "out"
        if self.state == "out":
            text, self.buffer = self.buffer, ""
        return thinking, text

    def flush(self) -> tuple[str, str]:
        """What is held at the end: an unclosed section's text is thinking (cut at the token
        limit), a held start is text."""
        held, state = self.buffer, self.state
        self.buffer, self.state = "", "out"
        if state == "in":
            return held.rstrip(_WS), ""
        return "", "" if state == "after" else held

    @property
    def thinking(self) -> bool:
        """Inside the think section."""
        return self.state == "in"
