"""Grammars that make a text model's tool calls well-formed by construction.

:func:`tool_call_grammar` turns a tool set and a tool choice into a grammar of the
assistant's output in the legacy XML format (``<function_calls><invoke>...``), so that with
constrained decoding every call the model writes parses and its input validates against the
tool's schema:

- tool names are alternatives, so no unknown tool can be called;
- each tool's parameters are fixed tags: required ones first (in schema order, all present),
  optional ones after them (each may be left out);
- values follow their schema: integer, number, boolean, enum alternatives, strings without a
  raw ``<`` (the only character that could end a value early) and with no line break (the
  parser trims one at each end), arrays and objects as JSON following their own schemas;
- ``auto`` allows plain text (which can never contain ``<``) or a call block, ``any``/``tool``
  start right after the prefill, parallel calls are bounded (one when disabled).

Lengths are bounded (strings, items, calls) so that a small model cannot loop forever inside
a value; ``max_tokens`` still applies on top.

What a grammar cannot express is left to validation after parsing: ``pattern``, ``format``,
``minimum``/``maximum``, ``multipleOf``, ``uniqueItems``, ``allOf``. A value whose schema uses
one of them is wrapped in a :class:`~.ir.Native` rule carrying llguidance's rendering
of it (:mod:`.lark`): the llguidance engine enforces those while decoding. So is a
string parameter whose schema has ``x-lark`` (a Lark grammar its text must follow, as a
Responses ``custom`` tool's ``lark`` format travels): llguidance holds it to that grammar.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any

from ..codecs.legacy import escape, parameter_tag, resolve, schema_types
from ..messages import ToolChoice, ToolSpec
from .ir import Chars, Native, Node, Rep, Rule, alt, opt, seq, to_gbnf
from .lark import LARK_KEY, has_native, lark_subgrammar, native_lark, to_lark, to_llguidance
from .matcher import Matcher

__all__ = ["GrammarLimits", "ToolGrammar", "grammar_key", "tool_call_grammar", "value_grammar"]

FUNCTION_CALLS_OPEN = "<function_calls>\n"
FUNCTION_CALLS_CLOSE = "</function_calls>"


@dataclass(frozen=True)
class GrammarLimits:
    """Bounds that keep a small model from looping inside a value."""

    max_string: int = 200
    max_items: int = 16
    max_calls: int = 8
    max_depth: int = 4
    max_text: int = 4000


@dataclass(frozen=True)
class ToolGrammar:
    """A grammar of the assistant's continuation after ``prefill``.

    ``root`` is the grammar node; :attr:`gbnf` its llama.cpp rendering. ``prefill`` is the text
    the assistant turn starts with (the caller puts it in the prompt and in the parser, the
    grammar covers only what follows). ``end`` is the text that completes the output; the
    caller may stop as soon as it is certain to come.
    """

    root: Node
    prefill: str = ""
    key: tuple[Any, ...] = field(default=(), compare=False)

    @cached_property
    def gbnf(self) -> str:
        return to_gbnf(self.root)

    @cached_property
    def matcher(self) -> Matcher:
        """The compiled matcher of :attr:`root`, built once per grammar (grammars are cached
        per tool set, so a tool loop reuses it and its memoised states)."""
        return Matcher(self.root)

    @cached_property
    def lark(self) -> str:
        """The llguidance (Lark) rendering, with native constraints where ours have none."""
        return to_lark(self.root)

    @cached_property
    def llguidance(self) -> str:
        """llguidance's top-level grammar: :attr:`lark` and the Lark subgrammars of values
        whose schema has ``x-lark`` (:func:`~.lark.to_llguidance`)."""
        return to_llguidance(self.root)

    @cached_property
    def native(self) -> bool:
        """Whether some value's schema uses what only the llguidance rendering enforces."""
        return has_native(self.root)


# -- shared terminal rules -----------------------------------------------------------------------


class _Rules:
    """Named rules shared by every value of one grammar (each written once in GBNF)."""

    def __init__(self, limits: GrammarLimits) -> None:
        self.limits = limits
        ctrl = "".join(chr(c) for c in range(1, 32))
        digit = Chars("0123456789")
        # JSON's integer syntax (no leading zero); at most 15 digits and a two-digit
        # exponent, so every number the grammar allows is a finite float.
        self.digits = Rule("digits", alt("0", seq(Chars("123456789"), Rep(digit, 0, 14))))
        self.integer = Rule("integer", seq(opt("-"), self.digits))
        self.fraction = Rule("fraction", seq(opt(seq(".", Rep(digit, 1, 15))),
                                             opt(seq(Chars("eE"), opt(Chars("+-")),
                                                     Rep(digit, 1, 2)))))
        self.number = Rule("number", seq(opt("-"), self.digits, self.fraction))
        self.boolean = Rule("boolean", alt("true", "false"))
        # A string parameter's text: no '<' (it would end the value), no line break (the
        # parser trims one at each end), no leading space (the parser keeps spaces, and a
        # model's habit of "<city> Paris" would change the value).
        self.xml_string = Rule(
            "xstring",
            seq(Chars("<\n\r \t", negated=True), Rep(Chars("<\n\r", negated=True), 0,
                                                     limits.max_string - 1)),
        )
        json_char = alt(
            Chars('"\\<' + ctrl, negated=True),
            seq("\\", Chars('"\\/bfnrt')),
        )
        self.json_string = Rule(
            "jstring", seq('"', Rep(json_char, 0, limits.max_string), '"')
        )
        # Plain text: never a '<' (so never a call), and no leading blank (a small model
        # otherwise opens its answer with empty lines).
        self.text = Rule("text", seq(Chars("< \t\r\n", negated=True),
                                     Rep(Chars("<", negated=True), 0, limits.max_text - 1)))
        self._any_json: Rule | None = None
        self._free_object: Rule | None = None
        self.counter = 0

    def any_json(self) -> Rule:
        """An unconstrained JSON value, nesting bounded by ``max_depth``."""
        if self._any_json is None:
            value: Node = alt(self.json_string, self.number, self.boolean, "null")
            for depth in range(self.limits.max_depth):
                inner = value
                array = seq("[", opt(seq(inner, Rep(seq(",", opt(" "), inner), 0,
                                                     self.limits.max_items - 1))), "]")
                member = seq(self.json_string, ":", opt(" "), inner)
                obj = seq("{", opt(seq(member, Rep(seq(",", opt(" "), member), 0,
                                                    self.limits.max_items - 1))), "}")
                value = Rule(f"json{depth}", alt(self.json_string, self.number, self.boolean,
                                                 "null", array, obj))
            assert isinstance(value, Rule)
            self._any_json = value
        return self._any_json

    def free_object(self) -> Rule:
        """A JSON object with any members (an ``object`` schema without ``properties``)."""
        if self._free_object is None:
            member = seq(self.json_string, ":", opt(" "), self.any_json())
            self._free_object = Rule("object", seq("{", opt(seq(member, Rep(
                seq(",", opt(" "), member), 0, self.limits.max_items - 1))), "}"))
        return self._free_object

    def fresh(self, stem: str) -> str:
        self.counter += 1
        safe = re.sub(r"[^a-zA-Z0-9]+", "-", stem).strip("-").lower() or "r"
        return f"{safe[:40]}-{self.counter}"


# -- values ----------------------------------------------------------------------------------------


def _bounded(schema: Mapping[str, Any], lo_key: str, hi_key: str, default_hi: int,
             default_lo: int = 0) -> tuple[int, int]:
    lo = schema.get(lo_key, default_lo)
    hi = schema.get(hi_key, default_hi)
    lo = lo if isinstance(lo, int) and not isinstance(lo, bool) and lo >= 0 else default_lo
    hi = hi if isinstance(hi, int) and not isinstance(hi, bool) else default_hi
    hi = max(min(hi, default_hi), lo)
    return lo, hi


def _json_literal(value: Any) -> str:
    return escape(json.dumps(value, ensure_ascii=False))


def value_grammar(schema: Any, rules: _Rules, root: Mapping[str, Any] | None, *,
                  xml: bool, depth: int = 0, _active: tuple[int, ...] = ()) -> Node:
    """The grammar of one value (see :func:`_value`), wrapped in a :class:`Native` rule when
    its schema uses a keyword only llguidance enforces."""
    node = _value(schema, rules, root, xml=xml, depth=depth, _active=_active)
    if xml and isinstance(resolved := resolve(schema, root), Mapping) and LARK_KEY in resolved:
        sub = lark_subgrammar(resolved, root, node, rules.fresh("lark"), xml=xml)
        if sub is not None:
            return sub
    lark = native_lark(resolve(schema, root), root, xml=xml,
                       max_string=rules.limits.max_string)
    return node if lark is None else Native(rules.fresh("native"), node, lark)


def _value(schema: Any, rules: _Rules, root: Mapping[str, Any] | None, *,
           xml: bool, depth: int = 0, _active: tuple[int, ...] = ()) -> Node:
    """The grammar of one value. ``xml=True``: a parameter's text (strings bare, everything
    else JSON); ``xml=False``: a JSON value inside an array or object.

    Terminates on any schema: nesting (arrays, objects, union branches) is bounded by
    ``max_depth``, and ``_active`` (the unions being expanded) cuts ``$ref`` cycles."""
    schema = resolve(schema, root)
    if not isinstance(schema, Mapping):
        return rules.xml_string if xml else rules.any_json()
    if depth > rules.limits.max_depth + _UNION_SLACK:
        # Checked before anything recurses (union branches included): a last bound, should
        # a schema chain unions beyond what the cycle cut below catches.
        return rules.xml_string if xml else rules.any_json()
    choices: list[Any] | None = None
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        choices = list(schema["enum"])
    elif "const" in schema:
        choices = [schema["const"]]
    if choices is not None:
        options: list[Node] = []
        for choice in choices:
            if xml and isinstance(choice, str):
                if "\n" in choice or "\r" in choice:
                    # The parser trims one newline at each end of a value: one more at each
                    # end gives a value with newlines back unchanged ("\n" as "\n\n\n").
                    options.append(seq("\n" + escape(choice) + "\n"))
                else:
                    options.append(seq(escape(choice)) if choice else seq())
            else:
                try:
                    options.append(seq(_json_literal(choice)))
                except (TypeError, ValueError):
                    continue
        if options:
            return alt(*dict.fromkeys(options))
    for key in ("anyOf", "oneOf"):
        branches = schema.get(key)
        if isinstance(branches, list) and branches and "type" not in schema:
            # A branch that leads back to a union being expanded adds no sentence of its
            # own (``a = x | a`` is ``x``): left out, so a self-referencing union ends.
            active = (*_active, id(schema))
            kept = [b for b in branches if id(resolve(b, root)) not in active]
            if kept:
                nodes = [value_grammar(b, rules, root, xml=xml, depth=depth + 1,
                                       _active=active) for b in kept]
                return alt(*dict.fromkeys(nodes))
    types = schema_types(schema, root)
    if not types:
        return rules.xml_string if xml else rules.any_json()
    options = []
    for t in ("null", "boolean", "integer", "number", "array", "object", "string"):
        if t not in types:
            continue
        if t == "null":
            options.append(seq("null"))
        elif t == "boolean":
            options.append(rules.boolean)
        elif t == "integer":
            options.append(_integer(schema, rules))
        elif t == "number":
            options.append(_number(schema, rules))
        elif t == "string":
            options.append(_string(schema, rules, xml=xml))
        elif t == "array":
            options.append(_array(schema, rules, root, depth))
        elif t == "object":
            options.append(_object(schema, rules, root, depth))
    return alt(*options)


#: Union branches may nest this much beyond ``max_depth`` (where arrays and objects are
#: already cut to ``[]``/``{}``), so a union's scalar branches stay exact there.
_UNION_SLACK = 8


def _nonnegative(schema: Mapping[str, Any]) -> bool:
    low = schema.get("minimum")
    excl = schema.get("exclusiveMinimum")
    return (isinstance(low, (int, float)) and not isinstance(low, bool) and low >= 0) or (
        isinstance(excl, (int, float)) and not isinstance(excl, bool) and excl >= 0
    )


def _integer(schema: Mapping[str, Any], rules: _Rules) -> Node:
    return rules.digits if _nonnegative(schema) else rules.integer


def _number(schema: Mapping[str, Any], rules: _Rules) -> Node:
    if _nonnegative(schema):
        return seq(rules.digits, rules.fraction)
    return rules.number


def _string(schema: Mapping[str, Any], rules: _Rules, *, xml: bool) -> Node:
    max_len = rules.limits.max_string
    lo, hi = _bounded(schema, "minLength", "maxLength", max_len, default_lo=1 if xml else 0)
    if xml:
        if (lo, hi) == (1, max_len):
            return rules.xml_string
        first = Chars("<\n\r \t", negated=True)
        rest = Chars("<\n\r", negated=True)
        if hi == 0:
            return seq("")
        return seq(first, Rep(rest, max(lo - 1, 0), hi - 1))
    if (lo, hi) == (0, max_len):
        return rules.json_string
    ctrl = "".join(chr(c) for c in range(1, 32))
    json_char = alt(Chars('"\\<' + ctrl, negated=True), seq("\\", Chars('"\\/bfnrt')))
    return seq('"', Rep(json_char, lo, hi), '"')


def _array(schema: Mapping[str, Any], rules: _Rules, root: Mapping[str, Any] | None,
           depth: int) -> Node:
    items = schema.get("items")
    prefix = schema.get("prefixItems")
    if isinstance(prefix, list) and prefix:
        parts = [value_grammar(p, rules, root, xml=False, depth=depth + 1) for p in prefix]
        body: list[Node | str] = []
        for i, part in enumerate(parts):
            body.extend([", " if i else "", part])
        return seq("[", *body, "]")
    lo, hi = _bounded(schema, "minItems", "maxItems", rules.limits.max_items)
    if depth > rules.limits.max_depth and lo == 0:
        return seq("[]")  # nesting bound reached (a recursive schema): the empty array
    item = value_grammar(items if isinstance(items, Mapping) else {}, rules, root, xml=False,
                         depth=depth + 1)
    sep = seq(",", opt(" "))
    if hi == 0:
        return seq("[]")
    more = Rep(seq(sep, item), max(lo - 1, 0), hi - 1)
    inner = seq(item, more)
    return seq("[", inner if lo >= 1 else opt(inner), "]")


def _object(schema: Mapping[str, Any], rules: _Rules, root: Mapping[str, Any] | None,
            depth: int) -> Node:
    props = schema.get("properties")
    props = dict(props) if isinstance(props, Mapping) else {}
    # Required names without a property schema still have to be there (any value).
    for name in schema.get("required") or []:
        if isinstance(name, str) and name not in props:
            props[name] = {}
    if not props:
        return rules.free_object() if depth < rules.limits.max_depth else seq("{}")
    required = [k for k in schema.get("required") or [] if k in props]
    if depth > rules.limits.max_depth and not required:
        return seq("{}")  # nesting bound reached (a recursive schema): the empty object
    optional = [k for k in props if k not in required]
    members = {
        k: seq(_json_literal(str(k)), ":", opt(" "),
               value_grammar(props[k], rules, root, xml=False, depth=depth + 1))
        for k in [*required, *optional]
    }
    sep = seq(",", opt(" "))
    if required:
        body: list[Node | str] = []
        for i, k in enumerate(required):
            body.extend([sep if i else "", members[k]])
        for k in optional:
            body.append(opt(seq(sep, members[k])))
        return seq("{", *body, "}")
    # No required member: the first present one has no comma before it.
    starts = []
    for i, k in enumerate(optional):
        rest = [opt(seq(sep, members[j])) for j in optional[i + 1:]]
        starts.append(seq(members[k], *rest))
    return seq("{", opt(alt(*starts)), "}")


# -- calls -----------------------------------------------------------------------------------------


def _parameters(spec: ToolSpec, rules: _Rules) -> Node:
    schema = spec.input_schema if isinstance(spec.input_schema, Mapping) else {}
    props = schema.get("properties")
    props = dict(props) if isinstance(props, Mapping) else {}
    for name in schema.get("required") or []:
        if isinstance(name, str) and name not in props:
            props[name] = {}
    required = [k for k in schema.get("required") or [] if k in props]
    optional = [k for k in props if k not in required]
    lines: list[Node | str] = []
    for k in [*required, *optional]:
        open_tag, close_tag = parameter_tag(str(k))
        value = value_grammar(props[k], rules, schema, xml=True)
        line = seq(open_tag, value, close_tag + "\n")
        lines.append(line if k in required else opt(line))
    return seq(*lines)


def _invoke_body(spec: ToolSpec, rules: _Rules) -> Node:
    """Everything after ``<tool_name>NAME</tool_name>\\n<parameters>\\n`` of one tool."""
    return Rule(rules.fresh(f"args-{spec.name}"),
                seq(_parameters(spec, rules), "</parameters>\n</invoke>"))


def _header(name: str) -> str:
    return f"<tool_name>{escape(name)}</tool_name>\n<parameters>\n"


def tool_call_grammar(
    tools: Sequence[ToolSpec],
    choice: ToolChoice | None = None,
    limits: GrammarLimits | None = None,
    response_schema: Mapping[str, Any] | None = None,
    *,
    first: str | Sequence[str] | None = None,
    only_first: bool = False,
) -> ToolGrammar:
    """The grammar (and the prefill it starts after) for ``tools`` under ``choice``.

    ``none`` gets plain text only. With ``response_schema`` (structured output) the text
    answer is one JSON value matching it instead of free text. ``first`` (with ``any``):
    the first call is to that tool (chosen beforehand, e.g. by scoring each tool's whole
    name), later ones to any tool; a sequence of names: the first calls are to those tools,
    in that order (as many as the parallel-call limit allows), later ones to any tool;
    with ``only_first``, none later: the call block closes after them.
    Results are cached per tool set, choice, schema and limits, so a tool loop compiles its
    grammar once.
    """
    return _build(grammar_key(tools, choice, limits, response_schema, first, only_first))


def grammar_key(tools: Sequence[ToolSpec], choice: ToolChoice | None,
                limits: GrammarLimits | None, response_schema: Mapping[str, Any] | None,
                first: str | Sequence[str] | None, only_first: bool) -> tuple[Any, ...]:
    """What a grammar of calls depends on, hashable (the key its builder is cached by):
    the tools, the choice, the limits, the response schema and the plan's first tools."""
    choice = choice or ToolChoice()
    return (
        tuple(json.dumps(t.model_dump(), sort_keys=True, default=str) for t in tools),
        choice.type, choice.name, choice.disable_parallel_tool_use, limits or GrammarLimits(),
        None if response_schema is None else json.dumps(response_schema, sort_keys=True),
        ((first,) if isinstance(first, str) else tuple(first))
        if choice.type == "any" and first else None,
        bool(only_first and first and choice.type == "any"),
    )


@lru_cache(maxsize=64)
def _build(key: tuple[Any, ...]) -> ToolGrammar:
    tool_dumps, choice_type, choice_name, no_parallel, limits, schema_dump, first, only = key
    tools = [ToolSpec.model_validate(json.loads(d)) for d in tool_dumps]
    rules = _Rules(limits)
    if schema_dump is None:
        answer: Node = rules.text
        text_then_calls = True
    else:
        schema = json.loads(schema_dump)
        answer = Rule("answer", value_grammar(schema, rules, schema, xml=False))
        text_then_calls = False  # a JSON answer is the whole answer
    if choice_type == "none" or not tools:
        return ToolGrammar(root=answer, prefill="", key=key)
    bodies = {t.name: _invoke_body(t, rules) for t in tools}
    if choice_type == "tool":
        if choice_name not in bodies:
            raise ValueError(f"tool_choice names {choice_name!r}, which is not among the tools")
        candidates = {choice_name: bodies[choice_name]}
    else:
        candidates = bodies
    # After "<tool_name>": the name (an alternative per tool) and its arguments.
    named = Rule("call", alt(*(
        seq(f"{escape(name)}</tool_name>\n<parameters>\n", body)
        for name, body in candidates.items()
    )))
    invoke_rest = seq("<tool_name>", named)
    more_calls = 1 if no_parallel else limits.max_calls
    planned: tuple[str, ...] = first[:more_calls] if first else ()
    later_calls = 0 if only else more_calls - max(1, len(planned))
    tail = seq(Rep(seq("\n<invoke>\n", invoke_rest), 0, later_calls),
               "\n" + FUNCTION_CALLS_CLOSE)
    if choice_type == "tool":
        assert choice_name is not None
        prefill = FUNCTION_CALLS_OPEN + "<invoke>\n" + _header(choice_name)
        return ToolGrammar(root=seq(candidates[choice_name], tail), prefill=prefill, key=key)
    if choice_type == "any" and planned:
        for name in planned:
            if name not in bodies:
                raise ValueError(f"a call planned to {name!r}, which is not among the tools")
        prefill = FUNCTION_CALLS_OPEN + "<invoke>\n" + _header(planned[0])
        later = [seq("\n<invoke>\n" + _header(name), bodies[name]) for name in planned[1:]]
        return ToolGrammar(root=seq(bodies[planned[0]], *later, tail), prefill=prefill,
                           key=key)
    if choice_type == "any":
        prefill = FUNCTION_CALLS_OPEN + "<invoke>\n<tool_name>"
        return ToolGrammar(root=seq(named, tail), prefill=prefill, key=key)
    calls = seq(FUNCTION_CALLS_OPEN + "<invoke>\n", invoke_rest, tail)
    after = seq(answer, opt(calls)) if text_then_calls else answer
    return ToolGrammar(root=alt(calls, after), prefill="", key=key)
