"""Reads a model's answer written in a family's own call format back into neutral items.

:class:`JsonCallParser` is the native formats' counterpart of the XML format's
:class:`~tooluse.codecs.legacy.LegacyParser`, with the same interface (``feed``, ``close``,
``in_call``, ``in_block``, ``call_failing``) and the same items (text, calls, problems), so
the prompting layer's emitter streams either. Text is given out as it comes, but for a
possible start of the call marker, held until it is known; each call is given out as soon as
its JSON object is complete (and, in the Hermes style, its ``</tool_call>`` written). What
cannot be read as a call comes back as a :class:`ParseProblem` holding the text, never lost.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..._jsonvalue import json_type
from ...codecs.legacy import CallItem, Item, ToolLike, new_tool_use_id
from ...codecs.legacy.items import ItemSink
from ...codecs.legacy.schema import schema_types
from ...grammar.json_calls import JsonCallStyle
from ...messages import ToolUseBlock
from ..text_model import partial_suffix

__all__ = ["JsonCallParser"]

_WS = " \t\r\n"
#: Llama 3.x may start its call with this tag (its template writes it for built-in tools).
PYTHON_TAG = "<|python_tag|>"


def _object_end(text: str, start: int) -> int | None:
    """The index after the JSON object opening at ``text[start]`` (a ``{``), or None if
    ``text`` ends inside it. Strings (with their escapes) are skipped, braces counted."""
    depth = 0
    in_string = escaped = False
    for i in range(start, len(text)):
        c = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
            if depth == 0:
                return i + 1
    return None


class JsonCallParser(ItemSink):
    """Feed an answer in ``style`` in chunks; get text, calls and problems as soon as they
    are certain (see the module docstring). ``tools`` turns on name checking."""

    def __init__(self, tools: Sequence[ToolLike] | None, style: JsonCallStyle, *,
                 id_factory: Callable[[], str] | None = None) -> None:
        self._schemas: dict[str, Mapping[str, Any]] | None = None if tools is None \
            else {t.name: t.input_schema for t in tools}
        self._tools = None if self._schemas is None else set(self._schemas)
        self.style = style
        self._new_id = id_factory or new_tool_use_id
        #: The marker that opens calls (Hermes: ``<tool_call>``, Mistral ``[TOOL_CALLS]``);
        #: "" where the calls are a JSON object opening the answer (Llama 3.x).
        self._marker = (style.block_open or style.call_open).strip(_WS)
        if self._marker.endswith(("{", "[")):
            self._marker = self._marker[:-1].rstrip(_WS)
        self._reset()

    def _reset(self) -> None:
        self._buf = ""
        self._state = "start"  # start | out | block | text (no more calls: Llama's prose)
        self._raw = ""  # the block's text read so far (for a problem)
        #: A call's object read, waiting for its closing text (Hermes ``</tool_call>``).
        self._pending = ""
        self._out: list[Item] = []
        self._text: list[str] = []

    # -- public interface ------------------------------------------------------------------
    @property
    def in_block(self) -> bool:
        return self._state == "block"

    @property
    def in_call(self) -> bool:
        """Inside a call's JSON object (text that ends now is a call cut off)."""
        return self._state == "block" and "{" in self._buf

    @property
    def call_failing(self) -> str | None:
        """Why the call being read can no longer become one: a tool name not among the
        tools, known as soon as the name's string is closed."""
        if self._state != "block" or self._tools is None:
            return None
        found = re.search(r'"' + re.escape(self.style.name_key) + r'"\s*:\s*"((?:[^"\\]|\\.)*)"',
                          self._buf)
        if found is None:
            return None
        try:
            name = json.loads(f'"{found.group(1)}"')
        except ValueError:
            return None
        return None if name in self._tools else f"unknown tool {name!r}"

    def feed(self, chunk: str) -> list[Item]:
        self._buf += chunk
        self._scan(final=False)
        return self._take()

    def close(self) -> list[Item]:
        self._scan(final=True)
        self._end_of_input()
        items = self._take()
        self._reset()
        return items

    def _end_of_input(self) -> None:
        """What is left once the answer is over: a call whose closing was cut, a call cut
        (a problem), text."""
        if self._pending:
            # The object is whole, its closing text cut (the token limit): it is a call.
            self._call(self._pending)
            self._pending = ""
            if not self._buf.strip(_WS) or (self.style.call_close.strip(_WS)).startswith(
                    self._buf.strip(_WS)):
                self._buf = ""
        if self._state == "block":
            rest = self._buf.strip(_WS)
            if rest.startswith("{"):
                self._emit_problem("the call's JSON object is not closed at end of input",
                              self._raw + self._buf)
            elif rest and rest != self.style.block_close.strip(_WS):
                self._emit_problem(f"unexpected text in the call block: {rest[:40]!r}",
                              self._raw + self._buf)
        elif self._buf:
            self._emit_text(self._buf)

    # -- scanning --------------------------------------------------------------------------
    def _scan(self, *, final: bool) -> None:
        """Read as far as is certain: one step after another while they make progress."""
        while True:
            before = (self._state, len(self._buf))
            self._step(final)
            if (self._state, len(self._buf)) == before:
                return

    def _step(self, final: bool) -> None:
        """One step of reading in the current state."""
        if self._state == "start":
            self._start(final)
        elif self._state == "out":
            self._outside(final)
        elif self._state == "block":
            self._block()
        else:  # text
            self._emit_text(self._buf)
            self._buf = ""

    def _start(self, final: bool) -> None:
        """The answer's opening: without a marker (Llama), a JSON object there is a call;
        anything else makes the whole answer text."""
        if self._marker:
            self._state = "out"
            return
        head = self._buf.lstrip(_WS)
        if head.startswith(PYTHON_TAG):
            head = head[len(PYTHON_TAG):].lstrip(_WS)
        elif head and PYTHON_TAG.startswith(head) and not final:
            return
        if not head:
            if final:
                self._state = "text"
            return
        if head.startswith("{"):
            self._raw, self._buf, self._state = self._buf[:len(self._buf) - len(head)], head, \
                "block"
        else:
            self._state = "text"

    def _outside(self, final: bool) -> None:
        at = self._buf.find(self._marker)
        if at < 0:
            keep = 0 if final else partial_suffix(self._buf, self._marker)
            self._emit_text(self._buf[:len(self._buf) - keep])
            self._buf = self._buf[len(self._buf) - keep:]
            return
        self._emit_text(self._buf[:at].rstrip(_WS) if at else "")
        self._raw = self._buf[at:at + len(self._marker)]
        self._buf = self._buf[at + len(self._marker):]
        self._state = "block"

    def _block(self) -> None:
        """Inside the call block: separators skipped, each complete object read as a call;
        the block's end (Hermes ``</tool_call>``, Mistral ``]``) returns to text."""
        style = self.style
        skip = len(self._buf) - len(self._buf.lstrip(_WS + ",;"))
        if self._marker and self._buf[skip:skip + 1] == "[" and self._marker != "[" \
                and style.block_open.rstrip(_WS).endswith("["):
            skip += 1  # Mistral's array opens after its marker
        self._raw += self._buf[:skip]
        self._buf = self._buf[skip:]
        if not self._buf:
            return
        if self._buf[0] == "{" and not self._pending:
            end = _object_end(self._buf, 0)
            if end is None:
                return
            text = self._buf[:end]
            self._raw += text
            self._buf = self._buf[end:]
            if style.call_close:
                self._pending = text  # a call once its closing text is read
            else:
                self._call(text)
            return
        close = (style.call_close or style.block_close).strip(_WS)
        if close and self._buf.startswith(close):
            if self._pending:
                self._raw += close
                self._call(self._pending)
                self._pending = ""
            self._raw = ""
            self._buf = self._buf[len(close):].lstrip(_WS) if style.block_close else \
                self._buf[len(close):]
            self._state = "out" if self._marker else "text"
            return
        if close and close.startswith(self._buf):
            return  # the closing text may be completing
        self._emit_problem(f"unexpected text in the call block: {self._buf[:40]!r}",
                      self._raw + self._buf)
        self._raw, self._buf = "", ""
        self._state = "out" if self._marker else "text"

    def _call(self, text: str) -> None:
        """One call's JSON object: a call, or a problem naming what is wrong."""
        try:
            value: Any = json.loads(text)
        except (ValueError, RecursionError) as exc:
            self._emit_problem(f"malformed tool call: not JSON ({exc})", self._raw)
            self._raw = ""
            return
        self._checked_call(*self._name_and_args(value))

    def _name_and_args(self, value: Any) -> tuple[Any, Any]:
        """The tool's name and the arguments in a call's parsed JSON (None where absent)."""
        name = value.get(self.style.name_key) if isinstance(value, dict) else None
        args = value.get(self.style.args_key, {}) if isinstance(value, dict) else None
        return name, args

    def _checked_call(self, name: Any, args: Any) -> None:
        """A call read (its name and arguments as parsed): a call item, or a problem naming
        what is wrong."""
        if not isinstance(name, str) or not name:
            problem = f"malformed tool call: no {self.style.name_key!r}"
        elif self._tools is not None and name not in self._tools:
            known = ", ".join(sorted(self._tools)) or "none"
            problem = f"malformed tool call: unknown tool {name!r} (known tools: {known})"
        elif not isinstance(args, dict):
            problem = f"malformed tool {name!r}: its {self.style.args_key!r} is not an object"
        elif wrong := self._wrong_types(name, args):
            problem = f"malformed tool {name!r}: " + "; ".join(wrong)
        else:
            self._flush_text()
            self._out.append(CallItem(ToolUseBlock(id=self._new_id(), name=name, input=args),
                                      self._raw))
            self._raw = ""
            return
        self._emit_problem(problem, self._raw)
        self._raw = ""

    def _wrong_types(self, name: str, args: dict[str, Any]) -> list[str]:
        """Each argument whose JSON type its property's schema does not allow (the XML
        parser's check: a value it cannot read as its schema's type is no call). What else
        the schema asks (required, bounds...) is left to validation, as there."""
        schema = self._schemas.get(name) if self._schemas is not None else None
        properties = schema.get("properties") if isinstance(schema, Mapping) else None
        if not isinstance(properties, Mapping):
            return []
        wrong = []
        for key, value in args.items():
            if key not in properties:
                continue
            allowed = schema_types(properties[key], schema)
            got = json_type(value)
            if allowed and got not in allowed and not (got == "integer" and "number" in allowed):
                expected = " or ".join(sorted(allowed))
                wrong.append(f"parameter {key!r}: expected {expected}, got {got}")
        return wrong
