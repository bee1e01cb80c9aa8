"""Our grammars rendered for llguidance (Lark), with native constraints where ours have none.

:mod:`.tool_calls` cannot express ``pattern``, ``format``, numeric bounds, ``allOf`` and a few
more keywords: with the fast engine they are left to validation after parsing. llguidance
can enforce them while decoding, so :func:`native_lark` gives, for a value whose own schema
uses one of them, the llguidance rendering of that value:

- a value written as JSON (any value inside an array or object, a parameter whose type is
  not ``string``): ``%json {subschema}`` — llguidance's JSON-Schema compiler, with the tool
  schema's ``$defs`` carried along;
- a bare XML string parameter with ``pattern`` or a known ``format``: a regex terminal,
  intersected with what an XML value may hold (no ``<``, no line break, no leading blank).

A bare XML string parameter whose schema carries ``x-lark`` (:data:`LARK_KEY`: the Lark text
of a whole grammar, as a Responses ``custom`` tool's ``lark`` format travels) is held to
exactly that grammar: :func:`lark_subgrammar` makes it a :class:`~.ir.LarkSub`, one
more grammar of llguidance's top-level grammar (:func:`to_llguidance`), written between a
newline after the opening tag and one before the closing tag (the parser trims exactly
those, so the value is the subgrammar's text unchanged). ``x-lark`` elsewhere (inside an
array or object, on a type other than ``string``) is not enforced.

Not enforced even here: a bare XML string mixed with other types (``["string", "null"]``)
with a pattern, ``format``\\ s outside :data:`FORMAT_REGEXES`, and patterns llguidance's regex
dialect (Rust ``regex``: no look-around, no back-references) rejects — the whole grammar then
fails to compile and the request falls back to the fast engine.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

from ..codecs.legacy import schema_types
from ..tools.schema import LARK_KEY  # a string's Lark grammar (llguidance's dialect)
from .ir import Alt, Chars, LarkSub, Lit, Native, Node, Rep, Rule, Seq, nodes

__all__ = ["FORMAT_REGEXES", "LARK_KEY", "has_native", "lark_subgrammar", "local_unenforced",
           "native_lark", "subgrammars", "to_lark", "to_llguidance", "unenforced"]


#: Regexes of the ``format``\\ s a bare XML string can be held to (llguidance's JSON compiler
#: knows these and more for JSON values).
FORMAT_REGEXES = {
    "date": r"\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])",
    "time": r"([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d+)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)",
    "date-time": r"\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])[Tt]([01]\d|2[0-3]):[0-5]\d:"
                 r"([0-5]\d|60)(\.\d+)?([Zz]|[+-]([01]\d|2[0-3]):[0-5]\d)",
    "uuid": r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",
    "email": r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+",
    "ipv4": r"((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)",
}
#: Formats llguidance's JSON compiler accepts (an unknown one fails the whole grammar).
_JSON_FORMATS = frozenset({*FORMAT_REGEXES, "duration", "hostname", "ipv6", "unknown"})

_XML_VALUE = r"[^<\n\r \t][^<\n\r]{0,%d}"


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


#: Each keyword with the check of a value that makes it a constraint (a value of another
#: type is a malformed schema: ignored here as by the rest of the grammar).
_KEYWORDS: dict[str, Any] = {
    "pattern": lambda v: isinstance(v, str),
    "format": lambda v: isinstance(v, str) and v in _JSON_FORMATS,
    "minimum": lambda v: _number(v) and v != 0,  # minimum 0: ours writes no minus sign
    "maximum": _number, "exclusiveMinimum": _number, "exclusiveMaximum": _number,
    "multipleOf": _number,
    "allOf": lambda v: isinstance(v, list) and bool(v),
    "uniqueItems": lambda v: v is True,
    "not": lambda v: isinstance(v, Mapping),
    "minProperties": _number, "maxProperties": _number,
    "if": lambda v: isinstance(v, Mapping),
    "contains": lambda v: isinstance(v, Mapping),
    "dependentRequired": lambda v: isinstance(v, Mapping) and bool(v),
}
#: Keywords whose value maps names to schemas (the map itself is no schema).
_SCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties", "dependentSchemas")


def local_unenforced(schema: Any) -> set[str]:
    """The keywords of this schema node (not its children) our grammar leaves to
    validation. ``minimum: 0`` is enforced (no minus sign); unknown formats count only as
    far as llguidance knows them."""
    if not isinstance(schema, Mapping):
        return set()
    return {k for k, check in _KEYWORDS.items() if k in schema and check(schema[k])}


def unenforced(schema: Any) -> set[str]:
    """Every keyword in ``schema`` (children and ``$defs`` included) our grammar leaves to
    validation after parsing — what makes ``grammar_engine="auto"`` pick llguidance."""
    found: set[str] = set()
    seen: set[int] = set()

    def walk(node: Any) -> None:
        if isinstance(node, Mapping):
            if id(node) in seen:
                return
            seen.add(id(node))
            found.update(local_unenforced(node))
            for key, value in node.items():
                if key in _SCHEMA_MAPS and isinstance(value, Mapping):
                    for sub in value.values():
                        walk(sub)
                elif key not in ("enum", "const", "default", "examples"):
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(schema)
    return found


def _for_llguidance(schema: Any) -> Any:
    """A copy without the ``format``\\ s llguidance does not know (it rejects them)."""
    if isinstance(schema, Mapping):
        out = {}
        for key, value in schema.items():
            if key == "format" and not (isinstance(value, str) and value in _JSON_FORMATS):
                continue
            if key in ("enum", "const", "default", "examples"):
                out[key] = value  # values, not schemas
            elif key in _SCHEMA_MAPS and isinstance(value, Mapping):
                out[key] = {name: _for_llguidance(sub) for name, sub in value.items()}
            else:
                out[key] = _for_llguidance(value)
        return out
    if isinstance(schema, list):
        return [_for_llguidance(v) for v in schema]
    return schema


def _regex(schema: Mapping[str, Any], max_string: int) -> str | None:
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        body = pattern
        head = body.startswith("^")
        tail = body.endswith("$") and not body.endswith("\\$")
        body = body[1 if head else 0: len(body) - 1 if tail else len(body)]
        body = ("" if head else ".*") + f"(?:{body})" + ("" if tail else ".*")
    elif schema.get("format") in FORMAT_REGEXES:
        body = FORMAT_REGEXES[str(schema["format"])]
    else:
        return None
    body = body.replace("/", "\\/")
    return f"/{body}/ & /{_XML_VALUE % (max_string - 1)}/"


def native_lark(schema: Any, root: Mapping[str, Any] | None, *, xml: bool,
                max_string: int = 200) -> str | None:
    """llguidance's rendering of a value of ``schema`` (None: nothing better than ours)."""
    if not isinstance(schema, Mapping) or not local_unenforced(schema):
        return None
    types = schema_types(schema, root)
    if xml and "string" in types:
        return _regex(schema, max_string) if types == {"string"} else None
    sub = dict(_for_llguidance(schema))
    if isinstance(root, Mapping):
        for key in ("$defs", "definitions"):
            if isinstance(root.get(key), Mapping) and key not in sub:
                sub[key] = _for_llguidance(root[key])
    return "%json " + json.dumps(sub, ensure_ascii=False)


def lark_subgrammar(schema: Any, root: Mapping[str, Any] | None, body: Node, name: str, *,
                    xml: bool) -> LarkSub | None:
    """The value of a bare XML string parameter whose schema has a Lark grammar under
    :data:`LARK_KEY`: ``body`` (our approximation) for the fast engine, the grammar for
    llguidance; None for any other value."""
    if not xml or not isinstance(schema, Mapping):
        return None
    grammar = schema.get(LARK_KEY)
    if not isinstance(grammar, str) or not grammar.strip():
        return None
    if schema_types(schema, root) != {"string"}:
        return None
    sub = "lark_" + hashlib.sha256(grammar.encode()).hexdigest()[:12]
    # one newline after the opening tag and one before the closing tag: the parser trims
    # exactly one at each end, so the value is what the subgrammar produced
    return LarkSub(name, body, f'"\\n" @{sub} "\\n"', sub=sub, grammar=grammar)


def subgrammars(root: Node) -> dict[str, str]:
    """The Lark grammars of the :class:`~.ir.LarkSub` values in ``root``, by name."""
    found = {node.sub: node.grammar for node in nodes(root) if isinstance(node, LarkSub)}
    return dict(sorted(found.items()))


def to_llguidance(root: Node) -> str:
    """llguidance's top-level grammar (JSON text, what ``LLMatcher`` takes): :func:`to_lark`
    of ``root`` first, then each Lark subgrammar it refers to under its name."""
    grammars: list[dict[str, str]] = [{"lark_grammar": to_lark(root)}]
    grammars.extend({"name": name, "lark_grammar": text}
                    for name, text in subgrammars(root).items())
    return json.dumps({"grammars": grammars}, ensure_ascii=False)


def has_native(root: Node) -> bool:
    """Whether the grammar holds a :class:`Native` rule (something only llguidance enforces)."""
    return any(isinstance(node, Native) for node in nodes(root))


# -- Lark --------------------------------------------------------------------------------------


def _class(node: Chars) -> str:
    body = "".join(f"\\x{ord(c):02X}" if not c.isalnum() else c for c in node.chars)
    return f"/[{'^' if node.negated else ''}{body}]/"


def to_lark(root: Node) -> str:
    """Lark text for llguidance with ``root`` as ``start``. Rules made of text only become
    terminals (one lexeme each: llguidance's lexer is much faster than its parser);
    :class:`Native` rules use their ``lark`` rendering."""
    names: dict[int, str] = {}
    bodies: dict[str, str] = {}
    terminal: dict[int, bool] = {}
    used: set[str] = set()

    def is_terminal(node: Node) -> bool:
        if isinstance(node, (Lit, Chars)):
            return True
        if isinstance(node, Native):
            return False
        if isinstance(node, Rule):
            if id(node) not in terminal:
                terminal[id(node)] = False  # a recursive rule is no terminal
                terminal[id(node)] = is_terminal(node.body)
            return terminal[id(node)]
        if isinstance(node, Seq):
            return all(is_terminal(i) for i in node.items)
        if isinstance(node, Alt):
            return all(is_terminal(o) for o in node.options)
        if isinstance(node, Rep):
            return is_terminal(node.item)
        raise TypeError(f"not a grammar node: {node!r}")

    def name_of(rule: Rule) -> str:
        known = names.get(id(rule))
        if known is not None:
            return known
        upper = is_terminal(rule) or (isinstance(rule, Native) and not isinstance(rule, LarkSub)
                                      and not rule.lark.startswith("%"))
        stem = re.sub(r"[^a-z0-9]+", "_", rule.name.lower()).strip("_") or "r"
        name = stem.upper() if upper else stem
        n = 1
        while name in used:
            n += 1
            name = f"{stem}_{n}".upper() if upper else f"{stem}_{n}"
        used.add(name)
        names[id(rule)] = name
        bodies[name] = ""
        bodies[name] = rule.lark if isinstance(rule, Native) and rule.lark else render(rule.body)
        return name

    def render(node: Node) -> str:
        if isinstance(node, Lit):
            return json.dumps(node.text, ensure_ascii=False)
        if isinstance(node, Chars):
            return _class(node)
        if isinstance(node, Rule):
            return name_of(node)
        if isinstance(node, Seq):
            return "(" + (" ".join(render(i) for i in node.items) or '""') + ")"
        if isinstance(node, Alt):
            return "(" + " | ".join(render(o) for o in node.options) + ")"
        if isinstance(node, Rep):
            if node.max == 0:  # llguidance refuses a range ending at 0
                return '""'
            inner = render(node.item)
            if (node.min, node.max) == (0, 1):
                return f"{inner}?"
            if (node.min, node.max) == (0, None):
                return f"{inner}*"
            if (node.min, node.max) == (1, None):
                return f"{inner}+"
            return f"{inner}{{{node.min},{'' if node.max is None else node.max}}}"
        raise TypeError(f"not a grammar node: {node!r}")

    start = render(root)
    lines = [f"start: {start}"]
    lines.extend(f"{name}: {body}" for name, body in bodies.items())
    return "\n".join(lines) + "\n"
