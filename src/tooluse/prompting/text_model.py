"""The small interface a text-only model implements to get tool use from this package.

:class:`~tooluse.prompting.tool_use.PromptToolsBackend` turns a neutral request into chat
messages (system prompt describing the tools, conversation as text turns), asks a
:class:`TextBackend` to continue them, and parses the text back into tool calls. A text
backend therefore needs to know nothing about tools: it renders messages with its own chat
template, continues after an optional ``prefill``, honours stop strings and the token
limit, and, if it can, a grammar. The in-process llama.cpp backend implements it; an
OpenAI-compatible completions server could too.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypedDict, Unpack, runtime_checkable

from ..errors import BackendError
from ..grammar.tool_calls import ToolGrammar
from ..messages import Usage
from .hints import ToolNaming, ValueFocus

__all__ = ["CountingTextBackend", "Generation", "GenerationOptions", "StopScanner",
           "TextBackend", "TextEnd", "TextMessage", "check_room", "context_error", "count_prompt",
           "partial_suffix"]

#: ``{"role": "system" | "user" | "assistant", "content": "..."}``; in a model family's own
#: tool format (:mod:`.formats`) also ``{"role": "tool", "tool_call_id", "name", "content"}``
#: and an assistant turn's ``tool_calls``, as Hugging Face chat templates read them.
TextMessage = dict[str, Any]


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

    def usage(self) -> Usage:
        """The generation's usage: the prompt tokens the text backend reused from its cache
        (the prefix it had already decoded) are the cache reads, the rest the input."""
        cached = min(self.cached_tokens, self.input_tokens)
        return Usage(input_tokens=self.input_tokens - cached, output_tokens=self.output_tokens,
                     cache_read_input_tokens=cached)


class GenerationOptions(TypedDict, total=False):
    """The keywords of one text generation (:meth:`TextBackend.generate_text`); each may be
    left out, :class:`Generation` holds the defaults."""

    #: Text the continuation starts after (not repeated in what is yielded).
    prefill: str
    #: Stop strings; the text ends before the first one found, which is left out.
    stop: Sequence[str]
    max_tokens: int
    temperature: float
    top_p: float | None
    top_k: int | None
    #: The sampling seed of this generation when ``temperature`` > 0 (None: the backend's
    #: own); a backend without seeded sampling ignores it.
    seed: int | None
    #: Constrains the continuation (a backend that cannot apply it raises
    #: ``NotImplementedError`` rather than ignore it).
    grammar: ToolGrammar | None
    #: For each tool, the part of the question its calls' values come from
    #: (:class:`.hints.ValueFocus`, set by a preset); a backend that copies values from the
    #: conversation may prefer that part, any other ignores it.
    focus: ValueFocus | None
    #: For each tool, the words (stemmed) of its name and its parameters' names, and its
    #: required parameters (:class:`.hints.ToolNaming`): a value made of these words alone
    #: is no value. A backend that copies values from the conversation offers another span
    #: for a required parameter instead; any other ignores it.
    naming: Mapping[str, ToolNaming] | None
    #: Given only to a thinking model's backend (:mod:`.thinking`): the turn may think
    #: (True) or is not to (False). A backend whose chat template has a switch for it
    #: (Qwen3's ``enable_thinking``) passes it on; any other ignores it.
    think: bool | None
    #: The tools for the chat template (``tools=``, each ``{"type": "function", "function":
    #: {...}}``), in a model family's own tool format (:mod:`.formats`); None: the template
    #: is rendered without tools (the XML format describes them in the system prompt).
    tools: Sequence[Mapping[str, Any]] | None
    #: Special tokens the answer may write (a family's call marker, e.g. ``[TOOL_CALLS]``):
    #: a backend that knows its model's special tokens lets the model choose them, their
    #: text standing for them; any other ignores it.
    specials: Sequence[str] | None
    #: Further variables for the chat template, in a model family's own tool format (gpt-oss's
    #: ``reasoning_effort``); a backend without a chat template ignores them.
    template_kwargs: Mapping[str, Any] | None
    #: Under greedy decoding, where the grammar lets a call either close its parameters or
    #: write another optional one: write another only when the model's log-likelihood of
    #: doing so, less that of closing, is at least this (nats; None: the model's own
    #: choice). A backend that cannot read the choice's likelihood ignores it.
    optional_margin: float | None
    #: A list the backend appends a technique's name to when it changes the model's own
    #: choice in the call being written (``"optional_margin"``); the prompting layer
    #: records it on that call's origin (``steered_by``).
    steered: list[str] | None


@dataclass(frozen=True)
class Generation:
    """:class:`GenerationOptions` with every default filled in: ``Generation(**options)``."""

    prefill: str = ""
    stop: Sequence[str] = ()
    max_tokens: int = 1024
    temperature: float = 0.0
    top_p: float | None = None
    top_k: int | None = None
    seed: int | None = None
    grammar: ToolGrammar | None = None
    focus: ValueFocus | None = None
    naming: Mapping[str, ToolNaming] | None = None
    think: bool | None = None
    tools: Sequence[Mapping[str, Any]] | None = None
    specials: Sequence[str] | None = None
    template_kwargs: Mapping[str, Any] | None = None
    optional_margin: float | None = None
    steered: list[str] | None = None


@runtime_checkable
class TextBackend(Protocol):
    """A model that continues chat messages as text."""

    #: Model name to report in responses.
    model: str | None

    def generate_text(self, messages: Sequence[TextMessage],
                      **options: Unpack[GenerationOptions]) -> Iterator[str | TextEnd]:
        """Yield the continuation of ``messages`` (after ``prefill``, which is not repeated)
        as text chunks, then one :class:`TextEnd`.

        ``grammar`` constrains the continuation (a backend that cannot apply it must raise
        ``NotImplementedError`` rather than ignore it). Stop strings are not part of the
        text. The keywords are :class:`GenerationOptions`.
        """
        ...


@runtime_checkable
class CountingTextBackend(Protocol):
    """A text backend that can count a prompt's tokens before generating (the local model):
    a prompt over its context is then refused before the answer starts (an HTTP 400 even
    for a stream), and ``count_tokens`` is exact."""

    def prompt_tokens(self, messages: Sequence[TextMessage], prefill: str = "",
                      tools: Sequence[Mapping[str, Any]] | None = None,
                      template_kwargs: Mapping[str, Any] | None = None) -> int:
        """The tokens of the rendered prompt (``tools``, ``template_kwargs``: as
        :class:`GenerationOptions`; the latter given only where there are some)."""
        ...

    def context_length(self) -> int:
        """The most tokens the model's context holds (prompt and answer together)."""
        ...


def partial_suffix(text: str, tag: str) -> int:
    """The length of the longest end of ``text`` that begins ``tag`` (held back while
    streaming: the tag may be completing)."""
    for n in range(min(len(tag) - 1, len(text)), 0, -1):
        if text.endswith(tag[:n]):
            return n
    return 0


def context_error(prompt_tokens: int, limit: int) -> BackendError:
    """The error for a prompt over the context, in the Messages API's wording (each API's
    front end gives it its own error type: 400 invalid_request_error, ValidationException,
    context_length_exceeded)."""
    return BackendError(f"prompt is too long: {prompt_tokens} tokens > {limit} maximum",
                        kind="context_length")


def count_prompt(text_backend: CountingTextBackend, messages: list[TextMessage], prefill: str,
                 template: Mapping[str, Any] | None = None) -> int:
    """The rendered prompt's tokens, with what the chat template is given (``template``:
    the ``tools`` and ``template_kwargs`` of :class:`GenerationOptions`, where there are)."""
    # Only the keywords there are: a backend's ``prompt_tokens`` may take neither.
    given = {key: value for key, value in (template or {}).items()
             if key in ("tools", "template_kwargs") and value}
    return text_backend.prompt_tokens(messages, prefill, **given)


def check_room(text_backend: object, messages: list[TextMessage], prefill: str,
               template: Mapping[str, Any] | None = None) -> None:
    """A prompt the text model's context cannot hold fails before the first event, when
    the text backend can count (the gateway answers an HTTP error, not a stream);
    ``template`` as :func:`count_prompt` takes it."""
    if isinstance(text_backend, CountingTextBackend):
        used = count_prompt(text_backend, messages, prefill, template)
        limit = text_backend.context_length()
        if used >= limit:
            raise context_error(used, limit)


class StopScanner:
    """Finds stop strings in streamed text, holding back only a possible stop prefix.

    Every text backend needs it (stop strings are not part of the text it yields), so it
    lives beside the protocol rather than in one backend."""

    def __init__(self, stops: Sequence[str]) -> None:
        self.stops = [s for s in stops if s]
        self.buffer = ""

    def push(self, text: str) -> tuple[str, str | None]:
        """Text safe to emit now, and the stop string found (then generation ends)."""
        self.buffer += text
        best: tuple[int, str] | None = None
        for stop in self.stops:
            at = self.buffer.find(stop)
            if at >= 0 and (best is None or at < best[0]):
                best = (at, stop)
        if best is not None:
            out = self.buffer[: best[0]]
            self.buffer = ""
            return out, best[1]
        hold = max((partial_suffix(self.buffer, stop) for stop in self.stops), default=0)
        out = self.buffer[: len(self.buffer) - hold]
        self.buffer = self.buffer[len(out):]
        return out, None

    def flush(self) -> str:
        out, self.buffer = self.buffer, ""
        return out
