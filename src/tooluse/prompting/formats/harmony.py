"""OpenAI's harmony format, gpt-oss's (gpt-oss-20b, gpt-oss-120b): the answer is a series of
messages, each ``<|start|>assistant`` + a header + ``<|message|>`` + its content + its end.

- Reasoning is a message on the ``analysis`` channel (``<|channel|>analysis<|message|>``
  ... ``<|end|>``): a leading one is read as thinking (a
  :class:`~tooluse.messages.ThinkingBlock`), by the emitter's think splitter with harmony's
  marks (:meth:`HarmonyFormat.splitter`).
- A call is a message on the ``commentary`` channel whose header names its recipient:
  ``<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{...}<|call|>``, the
  arguments object alone after the header (:class:`~tooluse.grammar.json_calls.HeaderCallStyle`).
  ``<|call|>`` ends the model's turn (gpt-oss stops sampling there): it is a stop string,
  the grammar allows one call per answer, and the tool loop brings the next. The parser
  itself reads several call messages, each opened by ``<|start|>assistant``, and the
  recipient in the role part of the header too, as the chat template writes earlier calls
  (``<|start|>assistant to=functions.NAME<|channel|>commentary json<|message|>``).
- The answer's text is the ``final`` channel's message (``<|channel|>final<|message|>``),
  ended by ``<|return|>`` (a stop string, as ``<|call|>`` is) or ``<|end|>``.

The chat template (``chat_template.jinja`` of openai/gpt-oss-*, as llama.cpp keeps it) puts
the system prompt in the developer message ("# Instructions") and the tools in it as a
TypeScript ``namespace functions``; it reads an assistant turn's reasoning from its
``thinking`` field, renders only the first call of an assistant message and names each tool
result after the last call rendered before it. So the conversation is rewritten here
(:meth:`HarmonyFormat.conversation`): each call its own assistant message, followed by its
own result; an assistant turn's thinking in ``thinking`` (its text too, where it has calls:
the template renders that text as the call's analysis and refuses both fields at once).

The request's reasoning effort goes to the template's ``reasoning_effort``
(:meth:`HarmonyFormat.template_kwargs`).

The special tokens (``<|start|>``, ``<|channel|>``, ``<|message|>``, ``<|constrain|>``,
``<|call|>``, ``<|end|>``, ``<|return|>``) are :attr:`HarmonyFormat.specials`: a text backend
that knows its model's special tokens lets the model write them as those tokens.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ...codecs.legacy import ToolLike
from ...errors import ConversionError
from ...grammar.ir import Rep, Rule, seq
from ...grammar.json_calls import HeaderCallStyle
from ...grammar.tool_calls import ToolGrammar
from ...messages import Message, Request
from ..text_model import TextMessage, partial_suffix
from ..thinking import ThinkSplitter
from .native import NativeFormat, thought_of
from .parser import JsonCallParser, _object_end

__all__ = ["ANALYSIS_OPEN", "HarmonyFormat", "HarmonyParser"]

START, CHANNEL, MESSAGE = "<|start|>", "<|channel|>", "<|message|>"
CONSTRAIN, CALL, END, RETURN = "<|constrain|>", "<|call|>", "<|end|>", "<|return|>"
#: The opening of a reasoning message (after the generation prompt's ``<|start|>assistant``).
ANALYSIS_OPEN = f"{CHANNEL}analysis{MESSAGE}"
#: What ends a reasoning message and opens the next message.
ANALYSIS_CLOSE = f"{END}{START}assistant"
_WS = " \t\r\n"
#: A header longer than this without ``<|message|>`` is no header.
_HEADER_MAX = 512
_RECIPIENT = re.compile(r"to=([^\s<]+)")
_CHANNEL_NAME = re.compile(re.escape(CHANNEL) + r"\s*([A-Za-z]+)")
_CHANNELS = ("final", "commentary", "analysis")
#: The request's reasoning effort as gpt-oss's template names its levels.
_EFFORTS = {"none": "low", "minimal": "low", "low": "low", "medium": "medium",
            "high": "high", "xhigh": "high"}
#: What gpt-oss's template refuses in an assistant turn's text or thinking.
_REFUSED = (ANALYSIS_OPEN, f"{CHANNEL}final{MESSAGE}")


def _header_only(text: str) -> bool:
    """Whether ``text`` is only the opening of a message with no header yet
    (``<|start|>assistant``, blanks)."""
    rest = text.strip(_WS)
    if rest.startswith(START):
        rest = rest[len(START):].strip(_WS)
    return rest in ("", "assistant")


class HarmonyParser(JsonCallParser):
    """:class:`~.parser.JsonCallParser` reading harmony's messages (see the module
    docstring): text of the ``final`` and ``commentary`` channels (and of an ``analysis``
    message after the first, which the splitter leaves) as text, each ``to=functions.NAME``
    message as a call, read and checked as the other families' calls are. A message to any
    other recipient, or a header that cannot be read, is a problem holding its text."""

    def _reset(self) -> None:
        super()._reset()
        self._state = "out"  # out | header | args | message
        self._name = ""

    @property
    def in_block(self) -> bool:
        return self._state in ("header", "args")

    @property
    def in_call(self) -> bool:
        return self._state == "args"

    @property
    def call_failing(self) -> str | None:
        if self._tools is None:
            return None
        name = self._name if self._state == "args" else None
        if self._state == "header":
            found = _RECIPIENT.search(self._buf)
            if found and found.end() < len(self._buf):
                name = _tool_name(found.group(1))
        if name is None or name in self._tools:
            return None
        return f"unknown tool {name!r}"

    def _end_of_input(self) -> None:
        if self._state == "args":
            rest = self._buf.strip(_WS)
            if self._pending:
                # The object is whole, its closing mark cut (the token limit): a call.
                self._call(self._pending)
                if rest and not any(mark.startswith(rest) for mark in (CALL, END)):
                    self._emit_text(self._buf)
            elif rest.startswith("{"):
                self._emit_problem("the call's JSON object is not closed at end of input",
                                   self._raw + self._buf)
            else:
                self._emit_problem("a call without its arguments at end of input",
                                   self._raw + self._buf)
        elif self._state == "header":
            if not _header_only(self._buf):
                self._emit_problem("a message header cut at end of input", self._buf)
        elif self._buf:
            self._emit_text(self._buf)

    def _step(self, final: bool) -> None:
        if self._state == "out":
            self._between(final)
        elif self._state == "header":
            self._header()
        elif self._state == "args":
            self._args(final)
        else:
            self._message(final)

    def _between(self, final: bool) -> None:
        """Outside any message: text (a model that writes no harmony) up to the next
        message's opening."""
        head = self._buf.lstrip(_WS)
        if head.startswith("to="):
            # The recipient in the role part, right after ``<|start|>assistant``.
            self._buf, self._state = head, "header"
            return
        if not final and "to=".startswith(head[:3]) and len(head) < 3:
            return  # still possibly that recipient
        marks = [m for m in (START, CHANNEL) if m in self._buf]
        if not marks:
            keep = 0 if final else max(partial_suffix(self._buf, START),
                                       partial_suffix(self._buf, CHANNEL))
            self._emit_text(self._buf[:len(self._buf) - keep])
            self._buf = self._buf[len(self._buf) - keep:]
            return
        at = min(self._buf.find(m) for m in marks)
        self._emit_text(self._buf[:at].rstrip(_WS))
        self._buf, self._state = self._buf[at:], "header"

    def _header(self) -> None:
        """A message's header, up to ``<|message|>``: a call's (its recipient), or a
        channel's message."""
        at = self._buf.find(MESSAGE)
        if at < 0:
            if len(self._buf) > _HEADER_MAX or any(m in self._buf for m in (END, RETURN, CALL)):
                self._emit_problem(f"malformed message header: {self._buf[:60]!r}", self._buf)
                self._buf, self._state = "", "out"
            return
        header, rest = self._buf[:at], self._buf[at + len(MESSAGE):]
        recipient = _RECIPIENT.search(header)
        channel = _CHANNEL_NAME.search(header)
        if recipient is not None:
            self._raw, self._buf = header + MESSAGE, rest
            self._name, self._state = _tool_name(recipient.group(1)), "args"
        elif channel is not None and channel.group(1) in _CHANNELS:
            self._buf, self._state = rest, "message"
        else:
            self._emit_problem(f"malformed message header: {header[:60]!r}", header + MESSAGE)
            self._buf, self._state = rest, "message"

    def _message(self, final: bool) -> None:
        """A channel's message: text up to its end (``<|end|>``, ``<|return|>``) or the
        next message's start."""
        ends = [(self._buf.find(m), m) for m in (END, RETURN, CALL, START) if m in self._buf]
        if not ends:
            keep = 0 if final else max(partial_suffix(self._buf, m)
                                       for m in (END, RETURN, CALL, START))
            self._emit_text(self._buf[:len(self._buf) - keep])
            self._buf = self._buf[len(self._buf) - keep:]
            return
        at, mark = min(ends)
        self._emit_text(self._buf[:at])
        self._buf = self._buf[at:] if mark == START else self._buf[at + len(mark):]
        self._state = "out"

    def _args(self, final: bool) -> None:
        """A call's arguments: one JSON object, then ``<|call|>``."""
        skip = len(self._buf) - len(self._buf.lstrip(_WS))
        self._raw += self._buf[:skip]
        self._buf = self._buf[skip:]
        if not self._buf:
            return
        if self._pending:
            mark = next((m for m in (CALL, END, START) if self._buf.startswith(m)), None)
            if mark is not None:
                self._call(self._pending)
                self._pending, self._raw, self._state = "", "", "out"
                if mark != START:  # a next message's opening stays, to be read
                    self._buf = self._buf[len(mark):]
            elif not any(m.startswith(self._buf) for m in (CALL, END, START)):
                self._fail(f"unexpected text after the call's arguments: "
                           f"{self._buf[:40]!r}", final=True)
            return
        if self._buf[0] == "{":
            end = _object_end(self._buf, 0)
            if end is not None:
                self._pending, self._buf = self._buf[:end], self._buf[end:]
                self._raw += self._pending
            return
        self._fail(f"the arguments of the call to {self._name!r} are not a JSON object: "
                   f"{self._buf[:40]!r}", final=final)

    def _fail(self, problem: str, *, final: bool) -> None:
        """The call being read cannot be one: a problem holding its text up to the end of
        its message (once known)."""
        ends = [(self._buf.find(m), m) for m in (CALL, END, RETURN, START) if m in self._buf]
        if not ends and not final:
            return
        at, mark = min(ends) if ends else (len(self._buf), "")
        upto = at + (len(mark) if mark != START else 0)
        self._emit_problem(problem, self._raw + self._buf[:upto])
        self._raw, self._pending, self._buf = "", "", self._buf[upto:]
        self._state = "out"

    def _name_and_args(self, value: Any) -> tuple[Any, Any]:
        """The JSON is the arguments alone: the name was in the header."""
        return self._name, value


def _tool_name(recipient: str) -> str:
    """The tool a recipient names: ``functions.NAME`` is NAME; any other recipient (a
    built-in tool, ``browser.search``, ``python``) stays whole, and is no tool offered."""
    return recipient.removeprefix("functions.")


class HarmonyFormat(NativeFormat):
    family = "harmony"
    style = HeaderCallStyle(name="harmony", call_open=f"{CHANNEL}commentary to=functions.",
                            name_close=f" {CONSTRAIN}json{MESSAGE}", call_close=CALL,
                            between=f"{START}assistant", text_open=f"{CHANNEL}final{MESSAGE}",
                            parallel=False)
    marks = (f"{CHANNEL}analysis{MESSAGE}", f"{CHANNEL}commentary")
    specials = (START, CHANNEL, MESSAGE, CONSTRAIN, CALL, END, RETURN)
    answer_stops = (RETURN, CALL)
    #: gpt-oss reasons on every turn (its template asks for a reasoning effort).
    always_reasons = True
    think_open = ANALYSIS_OPEN

    def template_kwargs(self, request: Request) -> dict[str, Any]:
        """The template's ``reasoning_effort`` (``low``, ``medium``, ``high``; its default
        is ``medium``) from the request's effort: ``minimal`` and ``none`` are ``low``,
        ``xhigh`` is ``high``; without an effort asked, the template's default."""
        reasoning = request.reasoning
        effort = reasoning.effort if reasoning is not None else None
        if effort is None:
            return {}
        level = _EFFORTS.get(effort.lower())
        return {"reasoning_effort": level} if level else {}

    def splitter(self) -> ThinkSplitter:
        return ThinkSplitter(open_tag=ANALYSIS_OPEN, close_tag=END)

    def think_grammar(self, grammar: ToolGrammar, budget: int) -> ToolGrammar:
        """``grammar`` after a bounded reasoning message: ``<|channel|>analysis<|message|>``,
        at most ``budget`` units (never ``<|``), ``<|end|><|start|>assistant``."""
        section = Rule("analysis", seq(Rep(HeaderCallStyle.text_unit(), 0, max(budget, 0)),
                                       ANALYSIS_CLOSE))
        root = seq(ANALYSIS_OPEN, section, grammar.prefill, grammar.root)
        return ToolGrammar(root=root, prefill="", key=(*grammar.key, "analysis", budget))

    def parser(self, tools: Sequence[ToolLike] | None) -> HarmonyParser:
        assert isinstance(self.style, HeaderCallStyle)
        return HarmonyParser(tools, self.style)

    def _assistant(self, message: Message, thinking_model: bool) -> TextMessage:
        turn = super()._assistant(message, False)
        thought = thought_of(message)
        if turn.get("tool_calls"):
            # The template renders this text as the call's analysis, and refuses a turn
            # with both fields.
            thought = "\n\n".join(t for t in (thought, str(turn["content"])) if t)
            turn["content"] = ""
        if thought:
            turn["thinking"] = thought
        return turn

    def conversation(self, messages: list[TextMessage]) -> list[TextMessage]:
        out: list[TextMessage] = []
        i = 0
        while i < len(messages):
            message = messages[i]
            i += 1
            for field in ("content", "thinking"):
                text = str(message.get(field) or "") if message["role"] == "assistant" else ""
                if mark := next((m for m in _REFUSED if m in text), None):
                    raise ConversionError(
                        f"an assistant turn's {field} holds {mark}, which gpt-oss's chat "
                        "template refuses", ("messages",), target="the model's chat template")
            calls = message.get("tool_calls") or []
            if message["role"] != "assistant" or len(calls) <= 1:
                out.append(message)
                continue
            results: list[TextMessage] = []
            while i < len(messages) and messages[i]["role"] == "tool":
                results.append(messages[i])
                i += 1
            by_id = {str(r.get("tool_call_id")): r for r in results}
            for n, call in enumerate(calls):
                turn: TextMessage = {"role": "assistant", "content": "", "tool_calls": [call]}
                if n == 0 and message.get("thinking"):
                    turn["thinking"] = message["thinking"]
                out.append(turn)
                result = by_id.pop(str(call.get("id")), None)
                if result is not None:
                    out.append(result)
            out.extend(r for r in results if str(r.get("tool_call_id")) in by_id)
        return out
