"""A model family's own tool format: the conversation as its chat template reads it, the
grammar of its calls, and the parser of its answer (:class:`NativeFormat`).

The prompt is the model's chat template rendered with ``tools=`` (each tool as
``{"type": "function", "function": {name, description, parameters}}``, as Hugging Face's
``apply_chat_template`` passes them) and the conversation in the shape those templates read:

- the system prompt (and a structured-output instruction) as the ``system`` message;
- an assistant turn's text as ``content``, its calls as ``tool_calls``
  (``{"id", "type": "function", "function": {"name", "arguments": {...}}}``; the arguments
  an object, as the templates expect), its thinking put back as a ``<think>`` section on a
  thinking model;
- each tool result as a ``tool`` message (``tool_call_id``, ``name``, ``content``), before
  the user turn's own text; a failed call's result starts with ``Error: `` (the templates
  have no error flag);
- a family may rewrite that list (:meth:`NativeFormat.conversation`: Mistral's nine-character
  call ids, Llama's one call per assistant message, harmony's one call per message each
  followed by its result, its thinking in a ``thinking`` field).

What the model writes is constrained by :func:`~tooluse.grammar.json_calls.json_call_grammar`
in the family's :class:`~tooluse.grammar.json_calls.JsonCallStyle` and read back by
:class:`~.parser.JsonCallParser` (harmony's by its subclass reading message headers); a
family may have its own reasoning section (:meth:`NativeFormat.splitter`,
:meth:`NativeFormat.think_grammar`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...codecs.legacy.render import result_text
from ...errors import ConversionError
from ...grammar.json_calls import JsonCallStyle, json_call_grammar
from ...grammar.tool_calls import GrammarLimits, ToolGrammar
from ...messages import (
    ImageBlock,
    Message,
    Request,
    TextBlock,
    ThinkingBlock,
    ToolChoice,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
)
from ..text_model import TextMessage
from ..thinking import THINK_OPEN, ThinkSplitter, think_budget, thinking_grammar, with_thought
from .parser import JsonCallParser

__all__ = ["NativeFormat", "NativePrompt", "template_tools", "thought_of"]

_SCHEMA_INSTRUCTION = "Answer with only one JSON value (no other text) matching this JSON Schema: "
_TARGET = "the model's chat template"


@dataclass
class NativePrompt:
    """What the text model is given for a request in a native format: the chat messages,
    the tools for the template, the prefill, the stop strings and the grammar (None when not
    constraining)."""

    messages: list[TextMessage]
    tools: list[dict[str, Any]]
    prefill: str = ""
    stops: list[str] = field(default_factory=list)
    grammar: ToolGrammar | None = None


def template_tools(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """The tools as chat templates read them (OpenAI's function-tool shape, which Hugging
    Face's ``apply_chat_template`` passes as ``tools``)."""
    return [{"type": "function", "function": {
        "name": t.name, "description": t.description,
        "parameters": dict(t.input_schema) if isinstance(t.input_schema, Mapping)
        else {"type": "object"}}} for t in tools]


def thought_of(message: Message) -> str:
    """An assistant turn's thinking, its blocks joined (redacted ones have no text)."""
    return ThinkingBlock.SEPARATOR.join(
        b.joined_text for b in message.content
        if isinstance(b, ThinkingBlock) and b.joined_text.strip())


class NativeFormat:
    """One family's format (see the module docstring). Subclasses set :attr:`style`,
    :attr:`family`, the chat-template marks that identify it (:attr:`marks`), and may
    rewrite the conversation (:meth:`conversation`)."""

    #: The family's name, as ``tool_format`` and the docs name it.
    family: str = ""
    #: How its calls are written.
    style: JsonCallStyle = JsonCallStyle(name="json")
    #: Texts one of which a chat template of this family holds.
    marks: tuple[str, ...] = ()
    #: Special tokens the answer may write as text (the call marker a real model of the
    #: family writes as one token); a text backend that knows its model's special tokens
    #: lets the model choose them.
    specials: tuple[str, ...] = ()
    #: Stop strings that end every answer (the family's end-of-turn mark written as text).
    answer_stops: tuple[str, ...] = ()
    #: The family's models reason on every turn, whatever the backend's ``think_tags``:
    #: a request asking for reasoning gets the family's reasoning section.
    always_reasons: bool = False
    #: The prefill that opens the reasoning section where there is no grammar.
    think_open: str = THINK_OPEN + "\n"

    name = "native"

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def matches(self, template: str) -> bool:
        return any(mark in template for mark in self.marks)

    # -- the prompt ------------------------------------------------------------------------
    def build(self, request: Request, *, grammar: bool = True,
              limits: GrammarLimits | None = None, tools_under_none: bool = True,
              thinking_model: bool = False) -> NativePrompt:
        """The prompt of ``request`` (see the module docstring). Under ``tool_choice:
        none`` the tools stay in the template's prompt unless ``tools_under_none`` is False,
        and the grammar allows only text. Raises :class:`ConversionError` for what a chat
        template cannot carry (images)."""
        messages = self.conversation(self._messages(request, thinking_model))
        continuing = ""
        if messages and messages[-1]["role"] == "assistant" and not messages[-1].get(
                "tool_calls"):
            text = str(messages.pop()["content"])
            continuing = self.style.answer_open() + text if text else ""
        choice = request.tool_choice or ToolChoice()
        offered = request.tools and (choice.type != "none" or tools_under_none)
        tools = template_tools(request.tools) if offered else []
        stops = list(request.stop_sequences)
        stops += [s for s in self.answer_stops if s not in stops]
        marker = self.style.opener().split('{"', 1)[0].strip() or None
        if (not request.tools or choice.type == "none") and marker and marker not in stops:
            stops.append(marker)
        constraint = None
        if grammar and not continuing and (request.tools or request.response_schema is not None):
            constraint = json_call_grammar(request.tools, choice, limits,
                                           request.response_schema, self.style)
        prefill = constraint.prefill if constraint is not None else continuing
        if constraint is None and not continuing and request.tools \
                and choice.type in ("any", "tool"):
            prefill = self.style.opener() if choice.type == "any" \
                else self.style.block_open + self.style.header(str(choice.name))
        return NativePrompt(messages, tools, prefill, stops, constraint)

    def build_thinking(self, request: Request, *, grammar: bool = True,
                       limits: GrammarLimits | None = None, tools_under_none: bool = True,
                       thinking_model: bool = False
                       ) -> tuple[list[TextMessage], str, list[str], ToolGrammar | None]:
        """:meth:`build` as the tool-use layer takes a prompt (messages, prefill, stops,
        grammar), with a think section opened where the request asks for reasoning and the
        model thinks in tags, as in the XML prompt."""
        prompt = self.build(request, grammar=grammar, limits=limits,
                            tools_under_none=tools_under_none, thinking_model=thinking_model)
        reasoning = request.reasoning
        constraint, prefill = prompt.grammar, prompt.prefill
        continuing = bool(request.messages) and request.messages[-1].role == "assistant"
        if (thinking_model or self.always_reasons) and reasoning is not None \
                and reasoning.on and not continuing:
            if constraint is not None:
                constraint, prefill = self.think_grammar(constraint, think_budget(reasoning)), ""
            elif not prefill:
                prefill = self.think_open
        return prompt.messages, prefill, prompt.stops, constraint

    def think_grammar(self, grammar: ToolGrammar, budget: int) -> ToolGrammar:
        """``grammar`` after a bounded reasoning section (a ``<think>`` section)."""
        return thinking_grammar(grammar, budget)

    def splitter(self) -> ThinkSplitter:
        """What reads a leading reasoning section of the answer as thinking."""
        return ThinkSplitter()

    def template_options(self, request: Request, *, tools_under_none: bool = True
                         ) -> dict[str, Any]:
        """The text backend's options for the family's chat template: the tools (none
        without tools, or under ``none`` unless ``tools_under_none``), the family's
        specials (always: a text answer may be framed in them, as harmony's is) and its
        template's variables (:meth:`template_kwargs`)."""
        options: dict[str, Any] = {}
        choice = request.tool_choice or ToolChoice()
        if request.tools and (choice.type != "none" or tools_under_none):
            options["tools"] = template_tools(request.tools)
        if self.specials:
            options["specials"] = list(self.specials)
        if kwargs := self.template_kwargs(request):
            options["template_kwargs"] = kwargs
        return options

    def template_kwargs(self, request: Request) -> dict[str, Any]:
        """Further variables of the family's chat template for ``request`` (none here)."""
        return {}

    def _messages(self, request: Request, thinking_model: bool) -> list[TextMessage]:
        names = {b.id: b.name for m in request.messages for b in m.tool_uses}
        out: list[TextMessage] = []
        system = request.system_text()
        if request.response_schema is not None:
            system = (system + "\n\n" if system else "") + _SCHEMA_INSTRUCTION + json.dumps(
                request.response_schema, ensure_ascii=False)
        if system:
            out.append({"role": "system", "content": system})
        for i, message in enumerate(request.messages):
            if message.role == "assistant":
                out.append(self._assistant(message, thinking_model))
            else:
                out.extend(self._user(message, i, names))
        return out

    def _assistant(self, message: Message, thinking_model: bool) -> TextMessage:
        text = "".join(b.text for b in message.content if isinstance(b, TextBlock))
        thought = thought_of(message)
        if thinking_model and thought:
            text = with_thought(thought, text)
        turn: TextMessage = {"role": "assistant", "content": text}
        calls = [b for b in message.content if isinstance(b, ToolUseBlock)]
        if calls:
            turn["tool_calls"] = [{"id": b.id, "type": "function",
                                   "function": {"name": b.name, "arguments": dict(b.input)}}
                                  for b in calls]
        return turn

    @staticmethod
    def _user(message: Message, index: int, names: Mapping[str, str]) -> list[TextMessage]:
        out: list[TextMessage] = []
        texts: list[str] = []
        for j, block in enumerate(message.content):
            path = ("messages", index, "content", j)
            if isinstance(block, ToolResultBlock):
                name = names.get(block.tool_use_id, "")
                body = result_text(block, path, name or None)
                out.append({"role": "tool", "tool_call_id": block.tool_use_id, "name": name,
                            "content": ("Error: " + body) if block.is_error else body})
            elif isinstance(block, TextBlock):
                texts.append(block.text)
            elif isinstance(block, ImageBlock):
                raise ConversionError("an image cannot travel inside a text prompt", path,
                                      target=_TARGET)
        if texts or not out:
            out.append({"role": "user", "content": "\n\n".join(texts)})
        return out

    def conversation(self, messages: list[TextMessage]) -> list[TextMessage]:
        """The messages as this family's template needs them (the default: unchanged)."""
        return messages

    # -- the answer ------------------------------------------------------------------------
    def grammar(self, tools: Sequence[ToolSpec], choice: ToolChoice,
                limits: GrammarLimits | None, response_schema: Mapping[str, Any] | None = None,
                *, first: str | Sequence[str] | None = None,
                only_first: bool = False) -> ToolGrammar:
        """The grammar of an answer under ``choice`` (for a plan's forced calls)."""
        return json_call_grammar(tools, choice, limits, response_schema, self.style,
                                 first=first, only_first=only_first)

    def parser(self, tools: Sequence[ToolSpec] | None) -> JsonCallParser:
        return JsonCallParser(tools, self.style)

    def opener(self) -> str:
        """The text that opens a call, up to the tool's name (a plan scores names after it)."""
        return self.style.opener()

    def call_header(self, name: str) -> str:
        """One more call to ``name`` after the last one, up to its arguments."""
        return self.style.between + self.style.header(name)

    def format_stops(self) -> tuple[str, ...]:
        """Stop strings of the format's own (not a user's stop sequence when hit)."""
        marker = self.style.opener().split('{"', 1)[0].strip()
        return ((marker,) if marker else ()) + self.answer_stops
