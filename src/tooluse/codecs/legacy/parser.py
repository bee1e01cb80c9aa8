"""Incremental, linear-time parser for a model's prompt-based tool calls.

A completion mixes free text (``<scratchpad>``, ``<thinking>``, ``<answer>``, anything) with
``<function_calls>`` blocks. The parser turns it into items as the text streams in:

- :class:`TextItem` — text, emitted as soon as it cannot be the start of a call block;
- :class:`CallItem` — one :class:`~tooluse.messages.ToolUseBlock`, emitted when its
  ``</invoke>`` arrives;
- :class:`ParseProblem` — a malformed call (unclosed ``<invoke>``, unknown tool, missing
  ``<tool_name>``, a value of the wrong type...), with the raw text, so nothing is lost.

How it stays linear: a small lexer finds each ``<`` with ``str.find`` and looks for its ``>``
only before the next ``<`` and within :data:`MAX_TAG` characters, so every character is
examined at most twice; the only text held back between chunks is one incomplete tag (at most ``MAX_TAG``
characters). Everything else goes into lists that are joined once. There is no regular
expression over the buffer and no re-scan per chunk.

Tolerated, because models write them: whitespace and newlines around tags; a missing
``</function_calls>`` (the normal case: it is the stop sequence); a missing ``<parameters>``
wrapper; a missing ``</parameters>``; ``<invoke name="x">`` and ``<parameter name="p">`` (the
later attribute form); an ``<invoke>`` without ``<function_calls>``; a raw ``<`` or ``&`` inside
a value. A value's text is unescaped once (``&lt;`` ``&gt;`` ``&amp;``) and loses exactly one
newline at each end, if it has one there; nothing else is stripped from strings.

Resynchronisation: inside a value only its own closing tag ends it, except that ``</invoke>``,
``</parameters>`` and ``</function_calls>`` also end it (the call is then reported as a
problem) so that one forgotten closing tag cannot swallow the calls that follow.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...messages import ToolUseBlock
from ._text import new_tool_use_id, unescape
from .items import CallItem, Item, ItemSink, ToolLike
from .schema import ConversionProblem, ValueReader

__all__ = ["MAX_TAG", "LegacyParser"]

#: Longest text between ``<`` and ``>`` still read as a tag; a longer one is literal text.
MAX_TAG = 1024

_TAG_NAME = re.compile(r"[^\W\d][\w.:\-]*")
_NAME_ATTR = re.compile(r"""\bname\s*=\s*(?:"([^"]*)"|'([^']*)')""")
_WS = " \t\r\n"
_LT_RUN = re.compile("<+")
_UNTYPED = ValueReader({})


@dataclass(frozen=True)
class _Tag:
    raw: str
    name: str
    closing: bool
    self_closing: bool
    attr_name: str | None


def _read_tag(raw: str) -> _Tag | None:
    """``raw`` is ``<...>`` with no other ``<`` inside; None if it is not tag-shaped."""
    inner = raw[1:-1]
    closing = inner.startswith("/")
    if closing:
        inner = inner[1:]
    m = _TAG_NAME.match(inner)
    if m is None:
        return None
    rest = inner[m.end():]
    self_closing = rest.endswith("/")
    if self_closing:
        rest = rest[:-1]
    if rest and rest[0] not in _WS:
        return None
    attr = _NAME_ATTR.search(rest) if rest else None
    attr_name = None
    if attr is not None:
        attr_name = unescape(attr.group(1) if attr.group(1) is not None else attr.group(2))
    return _Tag(raw, m.group(0), closing, self_closing and not closing, attr_name)


# Parser states.
_OUTSIDE, _CALLS, _INVOKE, _NAME, _PARAMS, _VALUE = range(6)


class _Invoke:
    """What is known so far about the ``<invoke>`` being read."""

    __slots__ = (
        "back",
        "close",
        "name",
        "name_parts",
        "param",
        "params",
        "parts",
        "problems",
        "raw",
        "stray",
    )

    def __init__(self, raw: list[str], attr_name: str | None) -> None:
        self.raw = raw
        self.name: str | None = attr_name
        self.name_parts: list[str] = []
        self.params: dict[str, str] = {}
        self.problems: list[str] = []
        # The value being read: parameter name, closing tag name, text parts, state to return to.
        self.param = ""
        self.close = ""
        self.parts: list[str] = []
        self.back = _PARAMS
        # Text found between tags, by where it was found (quoted in the problem message).
        self.stray: dict[str, list[str]] = {}

    def problem(self, message: str) -> None:
        if message not in self.problems:
            self.problems.append(message)


def _strip_one_newline(text: str) -> str:
    """Remove the one line break a value may have at each end (the format's layout).

    A value that opens with CRLF was written by a model in CRLF style: a CRLF is removed at
    its end too. The renderer only ever adds ``\n``, so its values round-trip exactly.
    """
    if text.startswith("\r\n"):
        text = text[2:]
        if text.endswith("\r\n"):
            return text[:-2]
    elif text.startswith("\n"):
        text = text[1:]
    return text.removesuffix("\n")


class LegacyParser(ItemSink):
    """Feed a completion in chunks; get text, calls and problems as soon as they are certain.

    ``tools`` (anything with ``name`` and ``input_schema``: :class:`ToolSpec`, ``Tool``) turns
    on name checking and type conversion; without it any tool name is accepted and every
    value stays the string written (no schema says otherwise). ``id_factory`` makes the ids
    of parsed calls (default: ``toolu_`` + 24 random base62 characters).
    """

    def __init__(
        self,
        tools: Sequence[ToolLike] | None = None,
        *,
        id_factory: Callable[[], str] | None = None,
    ) -> None:
        self._tools: dict[str, Mapping[str, Any]] | None = (
            None if tools is None else {t.name: t.input_schema for t in tools}
        )
        self._new_id = id_factory or new_tool_use_id
        self._reader_cache: dict[str, dict[str, ValueReader]] = {}
        self._reset()

    def _reset(self) -> None:
        self._pending = ""
        self._state = _OUTSIDE
        self._inter: list[str] = []  # raw text of the block between invokes
        self._block_invokes = 0
        self._inv: _Invoke | None = None
        self._out: list[Item] = []
        self._text: list[str] = []

    # ------------------------------------------------------------------ public API

    @property
    def in_call(self) -> bool:
        """Is an ``<invoke>`` open (so text that ends now is a call cut off)?"""
        return self._state in (_INVOKE, _NAME, _PARAMS, _VALUE)

    @property
    def in_block(self) -> bool:
        """Is a ``<function_calls>`` block open (including inside an ``<invoke>``)?"""
        return self._state != _OUTSIDE

    @property
    def call_failing(self) -> str | None:
        """Why the ``<invoke>`` being read can no longer become a call (None while it can).

        Known as soon as the problem is written (a parameter given twice, a stray closing
        tag, a tool name that is not among the tools), long before ``</invoke>``; a caller
        streaming a model's output can stop generating there instead of paying for the rest.
        """
        inv = self._inv
        if inv is None or self._state not in (_INVOKE, _NAME, _PARAMS, _VALUE):
            return None
        if inv.problems:
            return inv.problems[0]
        if self._tools is not None and inv.name and inv.name not in self._tools:
            return f"unknown tool {_clip(inv.name)!r}"
        return None

    def feed(self, chunk: str) -> list[Item]:
        """Parse the next piece of the completion; returns the items it completed."""
        data = self._pending + chunk if self._pending else chunk
        self._pending = ""
        self._lex(data, final=False)
        return self._take()

    def close(self) -> list[Item]:
        """End of the completion: flush held-back text and report anything left open.

        An open ``<function_calls>`` with complete invokes is the normal end (the stop
        sequence removed ``</function_calls>``); an open ``<invoke>`` is a problem.
        """
        if self._pending:
            data, self._pending = self._pending, ""
            self._lex(data, final=True)
        inv = self._inv
        if self._state in (_INVOKE, _NAME, _PARAMS, _VALUE) and inv is not None:
            where = {
                _NAME: "inside <tool_name>",
                _VALUE: f"inside parameter <{inv.close}>",
                _PARAMS: "inside <parameters>",
                _INVOKE: "",
            }[self._state]
            if self._state == _VALUE:
                inv.raw.extend(inv.parts)
            inv.problem(f"<invoke> not closed at end of input{(' (' + where + ')') if where else ''}")
            self._finish_invoke()
        if self._state == _CALLS and self._block_invokes == 0:
            self._emit_problem("<function_calls> block without any <invoke>", "".join(self._inter))
        items = self._take()
        self._reset()
        return items

    # ------------------------------------------------------------------ lexer

    def _lex(self, data: str, *, final: bool) -> None:
        # Literal text is collected in ``lit`` and handed to the state machine in one piece
        # before each tag: the state only changes at tags, and one call per run of text
        # (instead of one per stray '<') keeps floods of '<' cheap.
        n = len(data)
        i = 0
        lit: list[str] = []
        while i < n:
            lt = data.find("<", i)
            if lt < 0:
                lit.append(data[i:])
                break
            if lt > i:
                lit.append(data[i:lt])
            if data.startswith("<<", lt):  # '<<<<': all but the last '<' are text
                run = _LT_RUN.match(data, lt)
                assert run is not None
                lit.append(data[lt:run.end() - 1])
                lt = run.end() - 1
            window = min(n, lt + MAX_TAG)
            # Look for the next '<' first and for '>' only before it, so that no character
            # is scanned more than twice whatever the input.
            nxt = data.find("<", lt + 1, window)
            gt = data.find(">", lt + 1, nxt if nxt >= 0 else window)
            if gt < 0:
                if nxt >= 0:  # another '<' before any '>': this '<' is literal text
                    lit.append(data[lt:nxt])
                    i = nxt
                    continue
                if window == n and n - lt < MAX_TAG and not final:
                    self._flush_chars(lit)
                    self._hold(data[lt:])
                    return
                lit.append(data[lt:window])
                i = window
                continue
            if not self._may_matter(data, lt):
                lit.append(data[lt:gt + 1])
                i = gt + 1
                continue
            raw = data[lt:gt + 1]
            tag = _read_tag(raw)
            if tag is None:
                lit.append(raw)
            else:
                self._flush_chars(lit)
                self._tag(tag)
            i = gt + 1
        self._flush_chars(lit)

    def _may_matter(self, data: str, lt: int) -> bool:
        """Cheap pre-check: can the tag at ``lt`` change the state? Outside a block only
        ``<function_calls>`` and ``<invoke>`` can; inside a value only a closing tag can.
        Everything else is literal text without being analysed (floods of tags stay cheap)."""
        if self._state == _OUTSIDE:
            return data.startswith(_OPENERS, lt)
        if self._state == _VALUE:
            return data.startswith("</", lt)
        return True

    def _flush_chars(self, lit: list[str]) -> None:
        if lit:
            text = "".join(lit) if len(lit) > 1 else lit[0]
            lit.clear()
            self._chars(text)

    def _hold(self, tail: str) -> None:
        """Keep an incomplete tag for the next chunk, unless outside a call block it cannot
        become ``<function_calls>`` or ``<invoke>``: then it is text right away."""
        if self._state == _OUTSIDE and not _may_open_block(tail):
            self._chars(tail)
        else:
            self._pending = tail

    # ------------------------------------------------------------------ state machine

    def _chars(self, text: str) -> None:
        state = self._state
        inv = self._inv
        if state == _OUTSIDE:
            self._emit_text(text)
        elif state == _CALLS:
            if text.strip(_WS):
                self._end_block()
                self._emit_text(text)
            else:
                self._inter.append(text)
        elif inv is None:  # pragma: no cover - every other state has an invoke
            self._emit_text(text)
        elif state == _VALUE:
            inv.parts.append(text)
        elif state == _NAME:
            inv.name_parts.append(text)
            inv.raw.append(text)
        else:  # _INVOKE, _PARAMS
            inv.raw.append(text)
            where = "<invoke>" if state == _INVOKE else "<parameters>"
            inv.stray.setdefault(where, []).append(text)
            if text.strip(_WS):
                inv.problem(f"unexpected text inside {where}")

    def _tag(self, tag: _Tag) -> None:
        """A tag, read by the state the parser is in."""
        state = self._state
        if state == _OUTSIDE:
            self._tag_outside(tag)
        elif state == _CALLS:
            self._tag_in_block(tag)
        elif state == _VALUE:
            self._tag_in_value(tag)
        elif state == _NAME:
            self._tag_in_name(tag)
        else:
            self._tag_in_invoke(tag, state)

    def _tag_outside(self, tag: _Tag) -> None:
        if not tag.closing and tag.name == "function_calls" and not tag.self_closing:
            self._state = _CALLS
            self._inter = [tag.raw]
            self._block_invokes = 0
        elif not tag.closing and tag.name == "invoke" and not tag.self_closing:
            self._state = _CALLS  # an <invoke> without <function_calls>: read it anyway
            self._inter = []
            self._block_invokes = 0
            self._open_invoke(tag)
        else:
            self._emit_text(tag.raw)

    def _tag_in_block(self, tag: _Tag) -> None:
        """A tag inside ``<function_calls>``, between invokes."""
        if tag.closing and tag.name == "function_calls":
            if self._block_invokes == 0:
                self._emit_problem(
                    "<function_calls> block without any <invoke>",
                    "".join(self._inter) + tag.raw,
                )
            self._inter = []
            self._state = _OUTSIDE
        elif not tag.closing and tag.name == "invoke" and not tag.self_closing:
            self._open_invoke(tag)
        else:  # the model moved on without closing the block
            self._end_block()
            self._tag(tag)

    def _tag_in_value(self, tag: _Tag) -> None:
        """A tag inside a parameter's value: its closing tag, or text of the value."""
        inv = self._inv
        assert inv is not None
        if tag.closing and tag.name == inv.close:
            inv.raw.extend(inv.parts)
            inv.raw.append(tag.raw)
            if inv.param in inv.params:
                inv.problem(f"parameter {inv.param!r} given more than once")
            inv.params[inv.param] = _strip_one_newline(unescape("".join(inv.parts)))
            self._state = inv.back
        elif tag.closing and tag.name in ("invoke", "parameters", "function_calls"):
            inv.raw.extend(inv.parts)
            inv.problem(f"parameter <{inv.close}> not closed before </{tag.name}>")
            self._state = _INVOKE if tag.name == "parameters" else inv.back
            if tag.name == "parameters":
                inv.raw.append(tag.raw)
            else:
                self._tag(tag)
        else:
            inv.parts.append(tag.raw)

    def _tag_in_name(self, tag: _Tag) -> None:
        """A tag inside ``<tool_name>``."""
        inv = self._inv
        assert inv is not None
        if tag.closing and tag.name == "tool_name":
            inv.raw.append(tag.raw)
            inv.name = unescape("".join(inv.name_parts)).strip(_WS)
            self._state = _INVOKE
        elif tag.closing and tag.name in ("invoke", "function_calls"):
            inv.problem(f"<tool_name> not closed before </{tag.name}>")
            self._state = _INVOKE
            self._tag(tag)
        else:
            inv.name_parts.append(tag.raw)
            inv.raw.append(tag.raw)

    def _tag_in_invoke(self, tag: _Tag, state: int) -> None:
        """A tag inside ``<invoke>`` or its ``<parameters>`` (``state``)."""
        inv = self._inv
        assert inv is not None
        if tag.closing:
            if tag.name == "invoke":
                inv.raw.append(tag.raw)
                self._finish_invoke()
            elif tag.name == "parameters" and state == _PARAMS:
                inv.raw.append(tag.raw)
                self._state = _INVOKE
            elif tag.name == "function_calls":
                inv.raw.append(tag.raw)
                inv.problem("<invoke> not closed before </function_calls>")
                self._finish_invoke()
                self._state = _OUTSIDE
            else:
                inv.raw.append(tag.raw)
                inv.problem(f"unexpected closing tag {tag.raw}")
            return
        if state == _INVOKE and tag.name == "invoke" and not tag.self_closing:
            inv.problem("<invoke> not closed before the next <invoke>")
            self._finish_invoke()
            self._open_invoke(tag)
            return
        inv.raw.append(tag.raw)
        if state == _INVOKE and tag.name == "tool_name" and not tag.self_closing:
            if inv.name_parts or (inv.name is not None and inv.name != ""):
                inv.problem("more than one <tool_name>")
            inv.name_parts = []
            self._state = _NAME
        elif state == _INVOKE and tag.name == "parameters":
            if not tag.self_closing:  # <parameters/>: a call without parameters
                self._state = _PARAMS
        elif state == _INVOKE and tag.name == "tool_name":  # <tool_name/>: no name
            inv.problem("empty <tool_name/>")
        else:  # a parameter (inside <parameters>, or directly inside <invoke>)
            param = tag.attr_name if tag.name == "parameter" and tag.attr_name is not None \
                else tag.name
            if tag.self_closing:
                if param in inv.params:
                    inv.problem(f"parameter {param!r} given more than once")
                inv.params[param] = ""
                return
            if param in inv.params:  # known now, not only when its value ends
                inv.problem(f"parameter {param!r} given more than once")
            inv.param = param
            inv.close = tag.name
            inv.parts = []
            inv.back = state
            self._state = _VALUE

    # ------------------------------------------------------------------ helpers

    def _open_invoke(self, tag: _Tag) -> None:
        raw = self._inter + [tag.raw]
        self._inter = []
        self._inv = _Invoke(raw, tag.attr_name)
        self._state = _INVOKE

    def _end_block(self) -> None:
        """The block ended without ``</function_calls>`` (text or another tag followed).

        What was read since the last ``</invoke>`` becomes text: with no invoke at all that
        is ``<function_calls>`` mentioned in prose; otherwise it is whitespace, kept so that
        the result does not depend on how the text was cut into chunks.
        """
        self._emit_text("".join(self._inter))
        self._inter = []
        self._state = _OUTSIDE

    def _finish_invoke(self) -> None:
        inv = self._inv
        assert inv is not None
        self._inv = None
        self._state = _CALLS
        self._block_invokes += 1
        raw = "".join(inv.raw)
        name = inv.name
        if name is None and inv.name_parts:
            name = unescape("".join(inv.name_parts)).strip(_WS)
        problems = []
        for message in inv.problems:
            for where, pieces in inv.stray.items():
                if message == f"unexpected text inside {where}":
                    shown = " ".join("".join(pieces).split())
                    message = f"{message}: {_clip(shown)!r}"
            problems.append(message)
        if not name:
            problems.append("missing <tool_name>")
        schema: Mapping[str, Any] | None = None
        if name and self._tools is not None:
            if name in self._tools:
                schema = self._tools[name]
            else:
                known = ", ".join(sorted(self._tools)) or "none"
                problems.append(f"unknown tool {_clip(name)!r} (known tools: {known})")
        values: dict[str, Any] = dict(inv.params)
        if schema is not None and name and not problems:
            readers = self._readers(name)
            for key, text in inv.params.items():
                # A parameter the schema does not name is read like an untyped one (JSON if
                # it is JSON, else text); validation reports it if the schema forbids it.
                reader = readers.get(key) or _UNTYPED
                try:
                    values[key] = reader.read(text)
                except ConversionProblem as exc:
                    problems.append(f"parameter {key!r}: {exc}")
        if problems:
            label = f"tool {_clip(name)!r}" if name else "tool call"
            self._emit_problem(f"malformed {label}: " + "; ".join(problems), raw)
            return
        assert name is not None
        self._flush_text()
        block = ToolUseBlock(id=self._new_id(), name=name, input=values)
        self._out.append(CallItem(block, raw))

    def _readers(self, tool: str) -> dict[str, ValueReader]:
        readers = self._reader_cache.get(tool)
        if readers is None:
            assert self._tools is not None
            schema = self._tools[tool]
            properties = schema.get("properties")
            props = properties if isinstance(properties, Mapping) else {}
            readers = {key: ValueReader(sub, schema) for key, sub in props.items()}
            self._reader_cache[tool] = readers
        return readers


_OPENERS = ("<function_calls", "<invoke")


def _may_open_block(tail: str) -> bool:
    """Could the incomplete tag ``tail`` still become ``<function_calls>`` or ``<invoke>``?"""
    for opener in _OPENERS:
        if opener.startswith(tail):
            return True
        if tail.startswith(opener):
            rest = tail[len(opener):]
            if not rest or rest[0] in _WS or rest[0] == "/":
                return True
    return False


def _clip(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
