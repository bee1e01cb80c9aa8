"""A tiny grammar representation with two renderings: GBNF text and random sampling.

Why our own representation rather than writing GBNF strings directly: the same grammar
must (1) compile in llama.cpp (GBNF, for any backend that accepts a grammar), (2) drive the
byte-level matcher of :mod:`.matcher` that lets the local backend skip sampling for text the
grammar fully determines, and (3) produce random sentences so tests can check, on thousands
of schemas, that *everything the grammar allows* parses and validates. Three consumers of
one structure stay consistent; three hand-written copies would not.

Nodes are immutable; :class:`Rule` names a node so GBNF output stays readable and shared
sub-grammars (the string rule, the JSON value rules) are written once.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field

__all__ = [
    "Alt",
    "Chars",
    "LarkSub",
    "Lit",
    "Native",
    "Node",
    "Rep",
    "Rule",
    "Seq",
    "alt",
    "nodes",
    "opt",
    "sample",
    "seq",
    "to_gbnf",
]


class Node:
    """Base class of grammar nodes."""

    __slots__ = ()


@dataclass(frozen=True, slots=True)
class Lit(Node):
    """Exact text."""

    text: str


@dataclass(frozen=True, slots=True)
class Chars(Node):
    """One character from a class. ``negated`` classes exclude the listed ASCII characters
    (and allow every other character, any byte of a multi-byte UTF-8 character included);
    positive classes list ASCII characters only, so byte-level and code-point-level matching
    agree."""

    chars: str
    negated: bool = False

    def __post_init__(self) -> None:
        if any(ord(c) > 127 for c in self.chars):
            raise ValueError("character classes list ASCII characters only")

    def allowed_bytes(self) -> frozenset[int]:
        listed = {ord(c) for c in self.chars}
        if self.negated:
            return frozenset(b for b in range(256) if b not in listed)
        return frozenset(listed)


@dataclass(frozen=True, slots=True)
class Seq(Node):
    items: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Alt(Node):
    options: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Rep(Node):
    """``item`` repeated ``min`` to ``max`` times (``max=None``: unbounded)."""

    item: Node
    min: int = 0
    max: int | None = None


@dataclass(frozen=True, slots=True, eq=False)
class Rule(Node):
    """A named node. Compared by identity: two rules with one name are one rule."""

    name: str
    body: Node = field(repr=False)


@dataclass(frozen=True, slots=True, eq=False)
class Native(Rule):
    """A rule with a stricter rendering for llguidance: ``lark`` (``%json {...}`` or a
    regex terminal) enforces what ``body`` (our approximation, used by GBNF, the matcher and
    sampling) leaves to validation after parsing (``pattern``, ``format``, bounds, ...)."""

    lark: str = ""


@dataclass(frozen=True, slots=True, eq=False)
class LarkSub(Native):
    """A :class:`Native` value whose llguidance rendering (``lark``) refers to a whole Lark
    grammar of its own, ``grammar``, as the subgrammar ``@<sub>``: a string parameter
    whose schema carries ``x-lark``. Rendered by :func:`~.lark.to_llguidance` as one
    more grammar of llguidance's top-level grammar, so the grammar's rule names never
    clash with ours."""

    sub: str = ""
    grammar: str = ""


def nodes(root: Node) -> Iterator[Node]:
    """Every node of the grammar under ``root`` (``root`` too), each rule's body once however
    many places refer to the rule (a recursive grammar ends)."""
    seen: set[int] = set()
    todo = [root]
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, Rule):
            if id(node) in seen:
                continue
            seen.add(id(node))
            todo.append(node.body)
        elif isinstance(node, Seq):
            todo.extend(node.items)
        elif isinstance(node, Alt):
            todo.extend(node.options)
        elif isinstance(node, Rep):
            todo.append(node.item)


def seq(*items: Node | str) -> Node:
    """A sequence; strings become literals, adjacent literals merge, one item stays itself."""
    out: list[Node] = []
    for item in items:
        node = Lit(item) if isinstance(item, str) else item
        if isinstance(node, Lit) and not node.text:
            continue
        if isinstance(node, Seq):
            for sub in node.items:
                _append(out, sub)
        else:
            _append(out, node)
    if len(out) == 1:
        return out[0]
    return Seq(tuple(out))


def _append(out: list[Node], node: Node) -> None:
    if isinstance(node, Lit) and out and isinstance(out[-1], Lit):
        out[-1] = Lit(out[-1].text + node.text)
    else:
        out.append(node)


def alt(*options: Node | str) -> Node:
    nodes = tuple(Lit(o) if isinstance(o, str) else o for o in options)
    if len(nodes) == 1:
        return nodes[0]
    return Alt(nodes)


def opt(node: Node | str) -> Node:
    return Rep(Lit(node) if isinstance(node, str) else node, 0, 1)


# -- GBNF ------------------------------------------------------------------------------------

_GBNF_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_CLASS_ESCAPES = {"]": "\\]", "\\": "\\\\", "^": "\\^", "-": "\\-", "\n": "\\n", "\r": "\\r",
                  "\t": "\\t", "[": "\\["}


def _gbnf_literal(text: str) -> str:
    return '"' + "".join(_GBNF_ESCAPES.get(c, c) for c in text) + '"'


def _gbnf_class(node: Chars) -> str:
    body = "".join(_CLASS_ESCAPES.get(c, c) if (c.isprintable() or c in _CLASS_ESCAPES)
                   else f"\\x{ord(c):02X}" for c in node.chars)
    return f"[{'^' if node.negated else ''}{body}]"


def to_gbnf(root: Node, *, root_name: str = "root") -> str:
    """GBNF text (llama.cpp's grammar format) with ``root`` as the start rule."""
    rules: dict[str, str] = {}
    seen: dict[str, Rule] = {}

    def name_of(rule: Rule) -> str:
        known = seen.get(rule.name)
        if known is None:
            seen[rule.name] = rule
            rules[rule.name] = ""  # reserve the slot (recursion-safe), fill below
            rules[rule.name] = render(rule.body, top=True)
        elif known is not rule:
            raise ValueError(f"two different grammar rules are named {rule.name!r}")
        return rule.name

    def render(node: Node, top: bool = False) -> str:
        if isinstance(node, Lit):
            return _gbnf_literal(node.text)
        if isinstance(node, Chars):
            return _gbnf_class(node)
        if isinstance(node, Rule):
            return name_of(node)
        if isinstance(node, Seq):
            text = " ".join(render(i) for i in node.items) or '""'
            return text if top else f"({text})"
        if isinstance(node, Alt):
            text = " | ".join(render(o, top=True) for o in node.options)
            return text if top else f"({text})"
        if isinstance(node, Rep):
            inner = render(node.item)
            if node.min == 0 and node.max == 1:
                return f"{inner}?"
            if node.min == 0 and node.max is None:
                return f"{inner}*"
            if node.min == 1 and node.max is None:
                return f"{inner}+"
            if node.max is None:
                return f"{inner}{{{node.min},}}"
            if node.min == node.max:
                return f"{inner}{{{node.min}}}"
            return f"{inner}{{{node.min},{node.max}}}"
        raise TypeError(f"not a grammar node: {node!r}")

    main = render(root, top=True)
    lines = [f"{root_name} ::= {main}"]
    lines.extend(f"{name} ::= {body}" for name, body in rules.items() if name != root_name)
    return "\n".join(lines) + "\n"


# -- sampling (tests) --------------------------------------------------------------------------

_SAMPLE_ALPHABET = "abcXYZ019 _-.,:;!?&>'\"/\\{}[]é€😀"


def sample(node: Node, rng: random.Random, *, max_repeat: int = 4) -> str:
    """A random sentence of the grammar (repetitions capped at ``max_repeat`` extra items).

    Negated classes draw from a mixed alphabet (quotes, backslashes, ``&``, ``>``, non-ASCII)
    so the escaping of every consumer is exercised, not just the easy letters.
    """
    if isinstance(node, Lit):
        return node.text
    if isinstance(node, Chars):
        if node.negated:
            pool = [c for c in _SAMPLE_ALPHABET if c not in node.chars]
        else:
            pool = list(node.chars)
        return rng.choice(pool)
    if isinstance(node, Rule):
        return sample(node.body, rng, max_repeat=max_repeat)
    if isinstance(node, Seq):
        return "".join(sample(i, rng, max_repeat=max_repeat) for i in node.items)
    if isinstance(node, Alt):
        return sample(rng.choice(node.options), rng, max_repeat=max_repeat)
    if isinstance(node, Rep):
        hi = node.min + max_repeat if node.max is None else min(node.max, node.min + max_repeat)
        count = rng.randint(node.min, hi)
        return "".join(sample(node.item, rng, max_repeat=max_repeat) for _ in range(count))
    raise TypeError(f"not a grammar node: {node!r}")
