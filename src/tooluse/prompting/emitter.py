"""Turns the model's text, parsed as it streams, into neutral stream events: a leading
think section as a thinking block (:mod:`.thinking`), text blocks, then each call (rewritten by the call edits, a repeat of an earlier call dropped), and the
stop reason of the whole (:class:`Emitter`)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Literal, Protocol

from ..codecs.legacy import (
    FUNCTION_CALLS_STOP,
    CallItem,
    Item,
    ParseProblem,
    TextItem,
)
from ..messages import Request, TextBlock, ThinkingBlock, ToolUseBlock
from ..stream import BlockStart, BlockStop, StreamEvent, TextDelta, ThinkingDelta, ToolInputDelta
from .assist import added, steered
from .text_model import TextEnd
from .thinking import ThinkSplitter

__all__ = ["CALLS_OPEN", "CallParser", "Emitter", "earlier_calls"]

_WS = " \t\r\n"
#: The opening of a call block (a stop string where calls are not allowed).
CALLS_OPEN = "<function_calls>"


class CallParser(Protocol):
    """What the emitter reads an answer with: :class:`~tooluse.codecs.legacy.LegacyParser`
    (the XML format) or :class:`~.formats.parser.JsonCallParser` (a family's own)."""

    @property
    def call_failing(self) -> str | None: ...

    def feed(self, chunk: str) -> list[Item]: ...

    def close(self) -> list[Item]: ...


def _call_key(block: ToolUseBlock) -> str:
    return json.dumps([block.name, block.input], sort_keys=True, default=str)


def earlier_calls(request: Request) -> set[str]:
    """The calls the conversation already made (and, in a valid conversation, answered)."""
    return {_call_key(b) for m in request.messages if m.role == "assistant" for b in m.tool_uses}


class Emitter:
    """Turns parser items into neutral stream events, block by block.

    Whitespace that only separates text from a call block is held back and dropped, as the
    codec's :func:`items_to_completion` does for whole completions, so streaming and
    non-streaming give the same content.

    ``think``: read a leading ``<think>`` section of the answer as a thinking block, streamed
    before the rest (None: the answer is all text and calls).
    """

    def __init__(self, parser: CallParser | None, history: set[str] | None = None,
                 think: ThinkSplitter | None = None) -> None:
        self.parser = parser
        #: Stop strings of the format's own: reaching one is no user's stop sequence.
        self.format_stops: tuple[str, ...] = (FUNCTION_CALLS_STOP, CALLS_OPEN)
        self.think = think
        #: A thinking block is open (its index is ``index``); how many were emitted.
        self.thinking_open = False
        self.thoughts = 0
        self.history = history or set()
        self.index = -1
        self.text_open = False
        self.held = ""
        self.calls = 0
        self.cut_in_call = False
        self.seen_calls: set[str] = set()
        #: The calls emitted, in order.
        self.blocks: list[ToolUseBlock] = []
        #: Rewrites each call before it is emitted (e.g. drops invented optional values).
        self.adjust: Callable[[ToolUseBlock], tuple[ToolUseBlock, int]] | None = None
        self.dropped = 0
        #: "turn": a call repeated one of this turn; "history": one already made earlier.
        self.repeated: Literal["turn", "history"] | None = None
        #: Hold the calls back until :meth:`release`, so that the block's calls can be
        #: edited together (a preset's :meth:`~.assist.Assist.edit_together`); text after
        #: them releases them as they are.
        self.hold = False
        self.pending: list[ToolUseBlock] = []
        #: The rules that steered the values of every call the model writes (recorded on
        #: each call's origin), and, per call the model writes in order, the rules that
        #: steered it and the rule that made it be written (a planned further call).
        self.steering: tuple[str, ...] = ()
        #: What the text backend noted steering in the call being written (the
        #: ``steered`` generation option): recorded on the next call the model writes.
        self.steered_now: list[str] = []
        self.planned: list[tuple[tuple[str, ...], str | None]] = []
        #: While set: the calls the model writes are there because this rule asked.
        self.forced_by: str | None = None
        self._written = 0
        #: The last call dropped as a repeat (see :meth:`keep_repeat`).
        self.last_repeat: ToolUseBlock | None = None

    def feed(self, chunk: str, *, emit_text: bool = True) -> Iterator[StreamEvent]:
        """Parse ``chunk``; ``emit_text=False`` for the prefill, which is the start of the
        answer the caller already has (it only moves the parser into the call block, or
        into a think section)."""
        if self.think is not None:
            thought, chunk = self.think.push(chunk)
            if emit_text:
                yield from self._thought(thought)
            if not chunk:
                return
        if self.parser is None:
            if emit_text:
                yield from self._text(chunk)
            return
        items = self.parser.feed(chunk)
        if emit_text:
            yield from self._items(items)

    def close(self) -> Iterator[StreamEvent]:
        if self.think is not None:
            # An unclosed think section (the turn cut at the token limit) is thinking.
            thought, rest = self.think.flush()
            yield from self._thought(thought, ending=True)
            if rest:
                yield from self.feed(rest)
        if self.parser is not None:
            items = self.parser.close()
            self.cut_in_call = any(
                isinstance(i, ParseProblem) and "end of input" in i.message for i in items
            )
            yield from self._items(items)
        if self.held and self.text_open:
            yield TextDelta(index=self.index, text=self.held)
        self.held = ""
        if self.text_open:
            yield BlockStop(index=self.index)
            self.text_open = False

    def _thought(self, text: str, *, ending: bool = False) -> Iterator[StreamEvent]:
        """Thinking text into the open thinking block (opened first); the block is closed
        once the section is over."""
        if text:
            if not self.thinking_open:
                self.index += 1
                self.thoughts += 1
                self.thinking_open = True
                yield BlockStart(index=self.index, block=ThinkingBlock())
            yield ThinkingDelta(index=self.index, text=text)
        if self.thinking_open and (ending or self.think is None or not self.think.thinking):
            self.thinking_open = False
            yield BlockStop(index=self.index)

    def _items(self, items: list[Item]) -> Iterator[StreamEvent]:
        for item in items:
            if isinstance(item, TextItem):
                yield from self._text(item.text)
            elif isinstance(item, ParseProblem):
                # Never lose what the model wrote: a malformed call stays as text.
                yield from self._text(item.raw)
            elif isinstance(item, CallItem):
                yield from self.call(item.block)

    def _text(self, text: str) -> Iterator[StreamEvent]:
        if not text:
            return
        text = self.held + text
        body = text.rstrip(_WS)
        self.held = text[len(body):]
        if not body:
            return
        yield from self.release()
        if not self.text_open:
            self.index += 1
            self.text_open = True
            yield BlockStart(index=self.index, block=TextBlock(text=""))
        yield TextDelta(index=self.index, text=body)

    def call(self, block: ToolUseBlock, *, written: bool = True) -> Iterator[StreamEvent]:
        """The events of one call (after ``adjust``); none for a repeat of a call of this
        turn or of the conversation, which is noted in ``repeated``. ``written``: the model
        wrote it (its origin then records the steering and plan it was written under); a
        call a rule made comes with its origin."""
        if written:
            steered_by, added_by = self.planned[self._written] \
                if self._written < len(self.planned) else ((), None)
            self._written += 1
            now = tuple(dict.fromkeys(self.steered_now))
            self.steered_now.clear()
            block = steered(block, (*steered_by, *self.steering, *now))
            if self.forced_by or added_by:
                block = added(block, self.forced_by or added_by or "")
        if self.adjust is not None:
            block, dropped = self.adjust(block)
            self.dropped += dropped
        key = _call_key(block)
        if key in self.seen_calls or key in self.history:
            self.repeated = "turn" if key in self.seen_calls else "history"
            self.last_repeat = block
            return
        self.seen_calls.add(key)
        self.blocks.append(block)
        self.held = ""
        if self.text_open:
            yield BlockStop(index=self.index)
            self.text_open = False
        if self.hold:
            self.pending.append(block)
            return
        yield from self._emit(block)

    def keep_repeat(self) -> Iterator[StreamEvent]:
        """The events of the call last dropped as a repeat of one the conversation made,
        kept after all: where ``tool_choice`` asks for a call and the model wrote only that
        one, an empty turn would break the request's contract."""
        block, self.last_repeat = self.last_repeat, None
        if block is None:
            return
        self.repeated = None
        self.seen_calls.add(_call_key(block))
        self.blocks.append(block)
        self.held = ""
        if self.text_open:
            yield BlockStop(index=self.index)
            self.text_open = False
        yield from self._emit(block)

    def release(self, edit: Callable[[list[ToolUseBlock]], list[ToolUseBlock]] | None = None
                ) -> Iterator[StreamEvent]:
        """The events of the calls held back (``hold``), after ``edit`` (the calls in,
        as many calls out, which stand for them in ``blocks``; not made where it would
        repeat a call of the turn or of the conversation)."""
        pending, self.pending = self.pending, []
        if edit is not None and pending:
            edited = edit(pending)
            if len(edited) != len(pending):
                raise ValueError("an edit of the held calls must return as many calls")
            keys = [_call_key(block) for block in edited]
            before = self.seen_calls - {_call_key(block) for block in pending}
            # An edit that would repeat a call (of this turn or an earlier one) is not made.
            if len(set(keys)) == len(keys) and not set(keys) & (before | self.history):
                self.seen_calls = before | set(keys)
                self.blocks[len(self.blocks) - len(pending):] = edited
                pending = edited
        for block in pending:
            yield from self._emit(block)

    def _emit(self, block: ToolUseBlock) -> Iterator[StreamEvent]:
        self.index += 1
        self.calls += 1
        yield BlockStart(index=self.index, block=ToolUseBlock(id=block.id, name=block.name,
                                                              origin=block.origin))
        yield ToolInputDelta(index=self.index, partial_json=json.dumps(block.input,
                                                                        ensure_ascii=False))
        yield BlockStop(index=self.index)

    def user_stop(self, end: TextEnd) -> bool:
        return end.reason == "stop" and end.stop_sequence is not None \
            and end.stop_sequence not in self.format_stops

    def stop_reason(self, end: TextEnd) -> Literal["end_turn", "tool_use", "max_tokens",
                                                    "stop_sequence"]:
        if end.reason == "length" and (self.cut_in_call or not self.calls):
            return "max_tokens"
        if self.calls:
            return "tool_use"
        if end.reason == "length":
            return "max_tokens"
        if self.user_stop(end):
            return "stop_sequence"
        return "end_turn"
