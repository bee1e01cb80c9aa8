"""An incremental JSON parser for streamed tool inputs.

Streaming APIs send a tool call's input as JSON text cut anywhere
(``input_json_delta.partial_json`` in the Messages API, ``toolUse.input`` deltas in Converse,
``function.arguments`` in Chat Completions). A UI wants to show the input *while* it arrives,
and the obvious way — re-parse the whole buffer in a lenient mode after every chunk, as
``jiter.from_json(..., partial_mode=...)`` does — costs O(total size) per chunk, so
O(n²/chunk) over a long input. This parser keeps its state between chunks instead: each
character is looked at once, containers are built in place as they open, and
:meth:`IncrementalJSONParser.value` hands back the value parsed so far at any point for the
cost of materialising at most the one string being read. ``bench/speed_partial_json.py``
measures the difference (see ``docs/benchmarks/runner.md``).

Rules, chosen to match ``json.loads`` on complete input:

- strict JSON (RFC 8259): no ``NaN``/``Infinity``, no control characters inside strings,
  no trailing commas; duplicate keys keep the last value;
- surrogate pairs written as two ``\\uXXXX`` escapes are combined, lone ones are kept;
- no recursion, so deeply nested input cannot exhaust the Python stack.

In the partial view, an unfinished string value shows what arrived so far (escape sequences
still being read are left out), an unfinished key or number is left out until it ends, and
containers show their finished members.
"""

from __future__ import annotations

import re
from typing import Any, Final

from .errors import ToolUseError

__all__ = ["IncrementalJSONParser", "PartialJSONError", "parse_partial"]


class PartialJSONError(ToolUseError, ValueError):
    """The text is not (a prefix of) valid JSON. ``position`` counts characters fed so far."""

    def __init__(self, message: str, position: int) -> None:
        self.position = position
        self.message = message
        super().__init__(f"{message} at character {position}")


_WS: Final = re.compile(r"[ \t\n\r]*")
_STR_RUN: Final = re.compile(r'[^"\\\x00-\x1f]*')
_NUM_RUN: Final = re.compile(r"[0-9eE+\-.]*")
_LIT_RUN: Final = re.compile(r"[a-zA-Z]*")
_NUMBER: Final = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")
_HEX: Final = frozenset("0123456789abcdefABCDEF")
_ESCAPES: Final = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_LITERALS: Final = {"true": True, "false": False, "null": None}
_MISSING: Final = object()

# Frame states.
_KEY_OR_END, _KEY, _COLON, _VALUE, _COMMA_OR_END, _VALUE_OR_END = range(6)


class _Frame:
    """One open container. ``key`` is the object key whose value comes next."""

    __slots__ = ("container", "is_object", "key", "slot", "state")

    def __init__(self, container: dict[str, Any] | list[Any]) -> None:
        self.container: Any = container
        self.is_object = isinstance(container, dict)
        self.state = _KEY_OR_END if self.is_object else _VALUE_OR_END
        self.key: str | None = None
        self.slot: int = -1  # list index of a string value still being read


def _fix_surrogates(text: str) -> str:
    """Combine ``\\ud83d\\ude00``-style pairs into one character, as ``json.loads`` does."""
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


class IncrementalJSONParser:
    """Feed JSON text in pieces; ask for the value so far at any time.

    >>> p = IncrementalJSONParser()
    >>> p.feed('{"city": "Par')
    >>> p.value()
    {'city': 'Par'}
    >>> p.feed('is", "days": 3}')
    >>> p.close()
    {'city': 'Paris', 'days': 3}

    :meth:`value` returns the parser's own containers, which later :meth:`feed` calls keep
    filling in; copy the value if you need it frozen at this moment.
    """

    def __init__(self) -> None:
        self._stack: list[_Frame] = []
        self._root: Any = _MISSING
        self._done = False
        self._offset = 0
        # The token being read, if it spans chunks: "string", "number", "literal" or None.
        self._token: str | None = None
        self._parts: list[str] = []
        self._is_key = False
        self._escape: str | None = None
        self._surrogates = False
        self._scalar = ""

    # -- public -----------------------------------------------------------------------------
    @property
    def complete(self) -> bool:
        """True once a whole JSON value has been read (only whitespace may follow)."""
        return self._done

    def feed(self, text: str) -> None:
        """Consume the next piece of JSON text; raises :class:`PartialJSONError` as soon as
        the text can no longer be the start of a valid JSON document."""
        i, n = 0, len(text)
        try:
            while i < n:
                token = self._token
                if token == "string":
                    i = self._string(text, i, n)
                    continue
                if token is not None:
                    run = (_NUM_RUN if token == "number" else _LIT_RUN).match(text, i)
                    assert run is not None
                    self._scalar += run.group()
                    i = run.end()
                    if i < n:
                        self._end_scalar(i)
                    continue
                c = text[i]
                if c in " \t\n\r":
                    ws = _WS.match(text, i)
                    assert ws is not None
                    i = ws.end()
                    continue
                self._structural(c, i)
                i += 1
        finally:
            self._offset += i

    def value(self) -> Any:
        """The value read so far (``None`` before any value has started)."""
        if self._token == "string" and not self._is_key:
            self._show_partial_string()
        if self._root is _MISSING:
            return None
        return self._root

    def close(self) -> Any:
        """Finish: the complete value, or :class:`PartialJSONError` if the text stopped short."""
        if self._token in ("number", "literal"):
            self._end_scalar(0)
        if not self._done:
            what = "string" if self._token == "string" else "value"
            raise PartialJSONError(f"unexpected end of JSON input (unfinished {what})", self._offset)
        return self._root

    # -- internals --------------------------------------------------------------------------
    def _error(self, message: str, i: int) -> PartialJSONError:
        return PartialJSONError(message, self._offset + i)

    def _expecting_value(self) -> bool:
        if not self._stack:
            return self._root is _MISSING
        return self._stack[-1].state in (_VALUE, _VALUE_OR_END)

    def _structural(self, c: str, i: int) -> None:
        frame = self._stack[-1] if self._stack else None
        if frame is not None and c in ",:}]":
            state = frame.state
            if c == "," and state == _COMMA_OR_END:
                frame.state = _KEY if frame.is_object else _VALUE
                return
            if c == ":" and state == _COLON:
                frame.state = _VALUE
                return
            if (c == "}" and frame.is_object and state in (_KEY_OR_END, _COMMA_OR_END)) or (
                c == "]" and not frame.is_object and state in (_VALUE_OR_END, _COMMA_OR_END)
            ):
                self._stack.pop()
                if not self._stack:
                    self._done = True
                return
            raise self._error(f"unexpected {c!r}", i)
        if frame is not None and frame.is_object and frame.state in (_KEY_OR_END, _KEY):
            if c != '"':
                raise self._error(f"expected a string key, found {c!r}", i)
            self._start_string(is_key=True)
            return
        if not self._expecting_value():
            where = "after the end of the JSON value" if self._done else "here"
            raise self._error(f"unexpected {c!r} {where}", i)
        if c == "{" or c == "[":
            container: dict[str, Any] | list[Any] = {} if c == "{" else []
            self._put(container)
            self._stack.append(_Frame(container))
        elif c == '"':
            self._start_string(is_key=False)
        elif c == "-" or "0" <= c <= "9":
            self._token, self._scalar = "number", ""
        elif "a" <= c <= "z" or "A" <= c <= "Z":
            self._token, self._scalar = "literal", ""
        else:
            raise self._error(f"unexpected {c!r}", i)
        if self._token in ("number", "literal"):
            # Re-read this character as the first of the scalar.
            self._scalar = c

    def _put(self, value: Any) -> None:
        """Attach a finished value (or a freshly opened container) to its parent."""
        frame = self._place(value)
        if frame is None:
            if not isinstance(value, (dict, list)):
                self._done = True
            return
        frame.slot = -1
        frame.state = _COMMA_OR_END

    def _place(self, value: Any) -> _Frame | None:
        """Set ``value`` where the value being read goes: the root, the open object's key,
        or the open list's reserved slot (appended when none is reserved). The frame it
        went into; ``None`` for the root."""
        if not self._stack:
            self._root = value
            return None
        frame = self._stack[-1]
        if frame.is_object:
            assert frame.key is not None
            frame.container[frame.key] = value
        elif frame.slot >= 0:
            frame.container[frame.slot] = value
        else:
            frame.container.append(value)
        return frame

    def _start_string(self, *, is_key: bool) -> None:
        self._token, self._parts, self._is_key = "string", [], is_key
        self._escape, self._surrogates = None, False
        if not is_key and self._stack:
            # Reserve the string's place now so the partial view can show it in order.
            frame = self._stack[-1]
            if frame.is_object:
                assert frame.key is not None
                frame.container[frame.key] = ""
            else:
                frame.slot = len(frame.container)
                frame.container.append("")

    def _string(self, text: str, i: int, n: int) -> int:
        parts = self._parts
        while i < n:
            escape = self._escape
            if escape is None:
                run = _STR_RUN.match(text, i)
                assert run is not None
                if run.end() > i:
                    parts.append(run.group())
                    i = run.end()
                    if i >= n:
                        break
                c = text[i]
                i += 1
                if c == '"':
                    self._end_string()
                    return i
                if c == "\\":
                    self._escape = ""
                    continue
                raise self._error(f"control character {c!r} inside a string", i - 1)
            elif escape == "":
                c = text[i]
                i += 1
                if c == "u":
                    self._escape = "u"
                    continue
                mapped = _ESCAPES.get(c)
                if mapped is None:
                    raise self._error(f"invalid escape '\\{c}'", i - 1)
                parts.append(mapped)
                self._escape = None
            else:
                take = text[i : i + 5 - len(escape)]
                for k, h in enumerate(take):
                    if h not in _HEX:
                        raise self._error(f"invalid \\u escape digit {h!r}", i + k)
                i += len(take)
                escape += take
                if len(escape) < 5:
                    self._escape = escape
                    continue
                code = int(escape[1:], 16)
                if 0xD800 <= code <= 0xDFFF:
                    self._surrogates = True
                parts.append(chr(code))
                self._escape = None
        return i

    def _joined(self) -> str:
        text = "".join(self._parts)
        self._parts[:] = [text] if text else []
        return _fix_surrogates(text) if self._surrogates else text

    def _show_partial_string(self) -> None:
        self._place(self._joined())

    def _end_string(self) -> None:
        text = self._joined()
        self._token = None
        if self._is_key:
            frame = self._stack[-1]
            frame.key = text
            frame.state = _COLON
        else:
            self._put(text)

    def _end_scalar(self, i: int) -> None:
        token, raw = self._token, self._scalar
        self._token, self._scalar = None, ""
        value: Any
        if token == "number":
            match = _NUMBER.fullmatch(raw)
            if match is None:
                raise self._error(f"invalid number {raw!r}", i - len(raw))
            value = float(raw) if match.group(1) or match.group(2) else int(raw)
        else:
            if raw not in _LITERALS:
                raise self._error(f"invalid literal {raw!r}", i - len(raw))
            value = _LITERALS[raw]
        self._put(value)


def parse_partial(text: str) -> Any:
    """One-shot helper: the value a (possibly cut-off) JSON text holds so far."""
    parser = IncrementalJSONParser()
    parser.feed(text)
    return parser.value()
