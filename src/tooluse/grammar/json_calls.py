"""Grammars of tool calls written as JSON objects, in a model family's own wrapping.

The families whose chat templates describe tools (Qwen's Hermes-style ``<tool_call>``,
Llama 3.x, Mistral's ``[TOOL_CALLS]``) all write a call as one JSON object naming the tool
and holding its arguments; they differ in the text around the objects. A
:class:`JsonCallStyle` says what that text is, and :func:`json_call_grammar` builds, from the
tools and the tool choice, the grammar of the assistant's answer in that style, with the
same guarantees as the XML grammar (:mod:`.tool_calls`): tool names are alternatives, each
tool's arguments follow its input schema (the same value grammar, so the same bounds and the
same keywords left to validation or to llguidance), parallel calls are bounded, ``any`` and
``tool`` start from a prefill.

gpt-oss's harmony format names the tool in the message's header, not in the object
(``<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{...}<|call|>``),
and its text answer is a message of the ``final`` channel: :class:`HeaderCallStyle` says so,
and the same grammar is built from it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ..messages import ToolChoice, ToolSpec
from .ir import Chars, Node, Rep, Rule, alt, opt, seq
from .tool_calls import GrammarLimits, ToolGrammar, _Rules, grammar_key, value_grammar

__all__ = ["HeaderCallStyle", "JsonCallStyle", "json_call_grammar"]


@dataclass(frozen=True)
class JsonCallStyle:
    """How a family writes its calls: ``block_open``, then each call as ``call_open`` +
    ``{"<name_key>": "<tool>", "<args_key>": {...}}`` + ``call_close``, calls separated by
    ``between``, then ``block_close``.

    ``text_first``: the answer may be text before the calls (the opening of the block
    cannot start a text: ``text_excludes`` are the characters text never holds, so that text
    can never open a block); otherwise an answer is either text or calls, and text may not
    start with ``block_open``'s first character. ``parallel``: more than one call per answer.
    """

    name: str
    block_open: str = ""
    call_open: str = ""
    call_close: str = ""
    between: str = "\n"
    block_close: str = ""
    name_key: str = "name"
    args_key: str = "arguments"
    text_first: bool = False
    text_excludes: str = ""
    parallel: bool = True

    def name_lead(self) -> str:
        """The text of one call up to its tool name."""
        return f'{self.call_open}{{"{self.name_key}": "'

    def after_name(self, name: str) -> str:
        """The tool's name as the call writes it and the text after it, up to the
        arguments."""
        return f'{_name_literal(name)}", "{self.args_key}": '

    def args_tail(self) -> str:
        """What closes the call after its arguments (before ``call_close``)."""
        return "}"

    def answer_open(self) -> str:
        """The text that opens an answer that is no call (text, or a structured output)."""
        return ""

    def opener(self) -> str:
        """The text that opens the first call, up to its tool name."""
        return self.block_open + self.name_lead()

    def header(self, name: str) -> str:
        """The text of one call up to its arguments."""
        return self.name_lead() + self.after_name(name)

    def text_rule(self, limits: GrammarLimits) -> Node:
        """Plain text of this style: never a character that could open a call block."""
        first = self.block_open[:1] or self.call_open[:1] or "{"
        banned_first = "".join(dict.fromkeys(first + self.text_excludes + " \t\r\n"))
        body = Chars(self.text_excludes, negated=True) if self.text_excludes \
            else Chars("", negated=True)
        return Rule(f"text-{_slug(self.name)}", seq(Chars(banned_first, negated=True),
                                                    Rep(body, 0, limits.max_text - 1)))


@dataclass(frozen=True)
class HeaderCallStyle(JsonCallStyle):
    """A style whose call names its tool in a header: ``call_open`` + the name +
    ``name_close``, then the arguments object alone, then ``call_close`` (harmony:
    ``<|channel|>commentary to=functions.`` NAME `` <|constrain|>json<|message|>`` {...}
    ``<|call|>``). ``name_key`` and ``args_key`` are unused. A text answer is ``text_open``
    then text that never holds ``<|`` (the start of a special token: a message's end);
    a structured answer is ``text_open`` then the JSON value."""

    name_close: str = ""
    text_open: str = ""

    def name_lead(self) -> str:
        return self.call_open

    def after_name(self, name: str) -> str:
        return name + self.name_close

    def args_tail(self) -> str:
        return ""

    def answer_open(self) -> str:
        return self.text_open

    @staticmethod
    def text_unit() -> Node:
        """One unit of a message's text: a character, or ``<`` with the character after it
        (the text never holds ``<|``, which would open a special token)."""
        return alt(Chars("<", negated=True), seq("<", Chars("|<", negated=True)))

    def text_rule(self, limits: GrammarLimits) -> Node:
        return Rule(f"text-{_slug(self.name)}", seq(self.text_open,
                                                    Rep(self.text_unit(), 1, limits.max_text)))


def _slug(name: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in name.lower()).strip("-") or "style"


def json_call_grammar(
    tools: Sequence[ToolSpec],
    choice: ToolChoice | None,
    limits: GrammarLimits | None,
    response_schema: Mapping[str, Any] | None,
    style: JsonCallStyle,
    *,
    first: str | Sequence[str] | None = None,
    only_first: bool = False,
) -> ToolGrammar:
    """The grammar (and prefill) of an answer in ``style`` for ``tools`` under ``choice``,
    as :func:`~.tool_calls.tool_call_grammar` gives it in the XML format: ``none`` (or no
    tools) allows only text (or, with ``response_schema``, one JSON value of it); ``tool``
    starts after the named tool's header, ``any`` after the opening of a call (``first``:
    the first calls are to those tools, in order; ``only_first``: no others); ``auto`` lets
    the model choose between text and calls. Cached per tool set, choice, schema, limits
    and style."""
    key = ("json-calls", style,
           *grammar_key(tools, choice, limits, response_schema, first, only_first))
    return _build(key)


@lru_cache(maxsize=64)
def _build(key: tuple[Any, ...]) -> ToolGrammar:
    _, style, tool_dumps, choice_type, choice_name, no_parallel, limits, schema_dump, first, \
        only = key
    assert isinstance(style, JsonCallStyle)
    tools = [ToolSpec.model_validate(json.loads(d)) for d in tool_dumps]
    rules = _Rules(limits)
    if schema_dump is None:
        answer: Node = style.text_rule(limits)
        text_answer = True
    else:
        schema = json.loads(schema_dump)
        answer = seq(style.answer_open(),
                     Rule("answer", value_grammar(schema, rules, schema, xml=False)))
        text_answer = False
    if choice_type == "none" or not tools:
        return ToolGrammar(root=answer, prefill="", key=key)
    args = {t.name: _arguments(t, rules) for t in tools}
    if choice_type == "tool" and choice_name not in args:
        raise ValueError(f"tool_choice names {choice_name!r}, which is not among the tools")
    tail_of_call = seq(style.args_tail(), style.call_close)
    # After the text that leads to the name: the name, its arguments, the call's end.
    named = Rule("json-call", alt(*(
        seq(style.after_name(name), body, tail_of_call)
        for name, body in args.items()
        if choice_type != "tool" or name == choice_name
    )))
    call = seq(style.name_lead(), named)
    most = 1 if no_parallel or not style.parallel else limits.max_calls
    planned: tuple[str, ...] = first[:most] if first else ()
    for name in planned:
        if name not in args:
            raise ValueError(f"a call planned to {name!r}, which is not among the tools")
    later = 0 if only else most - max(1, len(planned))
    rest = seq(Rep(seq(style.between, call), 0, later), style.block_close)
    if choice_type == "tool":
        assert choice_name is not None
        prefill = style.block_open + style.header(choice_name)
        return ToolGrammar(root=seq(args[choice_name], tail_of_call, rest), prefill=prefill,
                           key=key)
    if choice_type == "any" and planned:
        prefill = style.block_open + style.header(planned[0])
        after = [seq(style.between, style.header(name), args[name], tail_of_call)
                 for name in planned[1:]]
        return ToolGrammar(root=seq(args[planned[0]], tail_of_call, *after, rest),
                           prefill=prefill, key=key)
    if choice_type == "any":
        return ToolGrammar(root=seq(named, rest), prefill=style.opener(), key=key)
    block = seq(style.block_open, call, rest)
    if text_answer and style.text_first:
        return ToolGrammar(root=alt(block, seq(answer, opt(block))), prefill="", key=key)
    return ToolGrammar(root=alt(block, answer), prefill="", key=key)


def _name_literal(name: str) -> str:
    """A tool name as it stands between the quotes of a JSON string."""
    return json.dumps(name, ensure_ascii=False)[1:-1]


def _arguments(spec: ToolSpec, rules: _Rules) -> Node:
    """The JSON object of one tool's arguments, as its input schema allows."""
    schema: Mapping[str, Any] = spec.input_schema if isinstance(spec.input_schema, Mapping) \
        else {}
    if "type" not in schema and "properties" not in schema:
        schema = {**schema, "type": "object"}
    return Rule(rules.fresh(f"json-args-{spec.name}"),
                value_grammar(schema, rules, schema, xml=False))
