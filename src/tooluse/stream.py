"""Neutral streaming events, and the two conversions every streaming layer needs.

The event sequence mirrors the shape all three streaming APIs share (Messages SSE, Converse
event stream, Chat Completions chunks): a start, then per content block a start, deltas and
a stop, then the stop reason and usage. Each codec maps its wire events to these and back;
backends produce them; the gateway and the runner consume them.

- :func:`accumulate` folds events into a :class:`~tooluse.messages.Response`.
- :func:`events_from_response` replays a finished response as events (for backends that
  cannot stream, and for tests).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterable, Callable, Iterable, Iterator
from typing import Annotated, Any, Literal

import jiter
from pydantic import BaseModel, ConfigDict, Field

from .errors import BackendError, WireFormatError
from .messages import (
    AppliedEdit,
    MCPCallBlock,
    MCPListToolsBlock,
    RedactedThinkingBlock,
    Response,
    StopReason,
    TextBlock,
    ThinkingBlock,
    ToolSearchBlock,
    ToolUseBlock,
    Usage,
)

__all__ = [
    "WHOLE_BLOCKS",
    "Accumulator",
    "BlockStart",
    "BlockStop",
    "MessageDelta",
    "MessageStart",
    "MessageStop",
    "SignatureDelta",
    "StreamEvent",
    "TextDelta",
    "ThinkingDelta",
    "ThinkingJoiner",
    "ToolInputDelta",
    "aaccumulate",
    "accumulate",
    "checked",
    "events_from_response",
    "merge_usage",
    "terminated",
    "tool_input",
    "without_blocks",
]


class _Event(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MessageStart(_Event):
    type: Literal["message_start"] = "message_start"
    id: str = ""
    model: str | None = None
    usage: Usage = Field(default_factory=Usage)
    #: The request's context edits as the server applied them, before the model ran.
    applied_edits: list[AppliedEdit] | None = None


_Block = (TextBlock | ToolUseBlock | ThinkingBlock | RedactedThinkingBlock | ToolSearchBlock
          | MCPCallBlock | MCPListToolsBlock)
#: The blocks that arrive whole in their :class:`BlockStart` (no deltas).
WHOLE_BLOCKS = (RedactedThinkingBlock, ToolSearchBlock, MCPCallBlock, MCPListToolsBlock)


class BlockStart(_Event):
    """A content block begins. For a tool call, ``block.input`` is ``{}``: the input
    arrives as :class:`ToolInputDelta` JSON fragments. A thinking block starts empty and
    fills from :class:`ThinkingDelta` and :class:`SignatureDelta`; a redacted one, and the
    blocks of tools the server ran (:data:`WHOLE_BLOCKS`), arrive whole in their start."""

    type: Literal["block_start"] = "block_start"
    index: int
    block: Annotated[_Block, Field(discriminator="type")]


class TextDelta(_Event):
    type: Literal["text_delta"] = "text_delta"
    index: int
    text: str


class ToolInputDelta(_Event):
    """A fragment of a tool call's input as JSON text, cut anywhere."""

    type: Literal["tool_input_delta"] = "tool_input_delta"
    index: int
    partial_json: str


class ThinkingDelta(_Event):
    """A piece of a thinking block's text (or, with ``summary``, of its summary part
    ``summary`` — an index into :attr:`ThinkingBlock.summary`)."""

    type: Literal["thinking_delta"] = "thinking_delta"
    index: int
    text: str
    summary: int | None = None


class ThinkingJoiner:
    """Thinking text as it streams, joined as :attr:`ThinkingBlock.joined_text` joins a
    whole block: a piece of text that begins a new piece, after some text came, begins with
    :attr:`ThinkingBlock.SEPARATOR`. Empty text is nothing: it neither begins a piece nor
    counts as text.

    A piece is named by its :attr:`ThinkingDelta.summary` (None for the block's text) when
    the joiner serves one block, by ``(index, summary)`` when it serves a turn's blocks as one
    text (a format with one reasoning text per turn)."""

    def __init__(self) -> None:
        self._piece: object = None
        self._shown = False

    def add(self, piece: object, text: str) -> str:
        """What to show for ``text`` of ``piece``: the text, after the separator when it
        begins a piece and text came before."""
        if not text:
            return ""
        if self._shown and piece != self._piece:
            text = ThinkingBlock.SEPARATOR + text
        self._piece, self._shown = piece, True
        return text

    def block(self, block: ThinkingBlock, index: int | None = None) -> str:
        """What to show for a block that starts with content (its text and summary parts
        given whole): with ``index``, the pieces are named ``(index, summary)``."""
        def name(summary: int | None) -> object:
            return summary if index is None else (index, summary)

        return self.add(name(None), block.text) + "".join(
            self.add(name(k), part) for k, part in enumerate(block.summary))


class SignatureDelta(_Event):
    """A thinking block's signature (or encrypted payload), appended to what came so far:
    Messages sends it whole in one ``signature_delta``; a stream may cut it."""

    type: Literal["signature_delta"] = "signature_delta"
    index: int
    signature: str


class BlockStop(_Event):
    type: Literal["block_stop"] = "block_stop"
    index: int


class MessageDelta(_Event):
    type: Literal["message_delta"] = "message_delta"
    stop_reason: StopReason | None = None
    stop_sequence: str | None = None
    usage: Usage = Field(default_factory=Usage)
    #: Context edits an upstream reports at the end (Messages ``message_delta``).
    applied_edits: list[AppliedEdit] | None = None


class MessageStop(_Event):
    type: Literal["message_stop"] = "message_stop"


StreamEvent = Annotated[
    MessageStart | BlockStart | TextDelta | ToolInputDelta | ThinkingDelta | SignatureDelta
    | BlockStop | MessageDelta | MessageStop,
    Field(discriminator="type"),
]


def merge_usage(start: Usage, end: Usage) -> Usage:
    """A stream's usage: what its start told (the input side), each count the end gives
    (non-zero) over it. APIs tell the output at the end, some the input too."""
    counts = {key: value for key, value in end if value}
    return start.model_copy(update=counts, deep=True) if counts else start.model_copy(deep=True)


class Accumulator:
    """Folds events into a response, one event at a time (so a consumer can look at the
    response so far, e.g. to show a tool call as soon as its block stops)."""

    def __init__(self) -> None:
        self.response = Response()
        self._json: dict[int, list[str]] = {}
        self._index_map: dict[int, int] = {}
        self.closed_blocks: set[int] = set()

    def _block(self, index: int) -> _Block:
        try:
            block = self.response.content[self._index_map[index]]
        except KeyError:
            raise WireFormatError(f"delta for content block {index} that never started") from None
        assert isinstance(block, (TextBlock, ToolUseBlock, ThinkingBlock, *WHOLE_BLOCKS))
        return block

    def add(self, event: StreamEvent) -> None:
        r = self.response
        if isinstance(event, MessageStart):
            r.id, r.model = event.id, event.model
            r.usage = event.usage.model_copy(deep=True)
            if event.applied_edits is not None:
                r.applied_edits = [e.model_copy() for e in event.applied_edits]
        elif isinstance(event, BlockStart):
            if event.index in self._index_map:
                raise WireFormatError(f"content block {event.index} started twice")
            self._index_map[event.index] = len(r.content)
            r.content.append(event.block.model_copy(deep=True))
            if isinstance(event.block, ToolUseBlock):
                self._json[event.index] = []
        elif isinstance(event, TextDelta):
            block = self._block(event.index)
            if not isinstance(block, TextBlock):
                raise WireFormatError(f"text delta for {block.type} block {event.index}")
            block.text += event.text
        elif isinstance(event, ThinkingDelta):
            block = self._block(event.index)
            if not isinstance(block, ThinkingBlock):
                raise WireFormatError(f"thinking delta for {block.type} block {event.index}")
            if event.summary is None:
                block.text += event.text
            else:
                parts = list(block.summary)
                while len(parts) <= event.summary:
                    parts.append("")
                parts[event.summary] += event.text
                block.summary = parts
        elif isinstance(event, SignatureDelta):
            block = self._block(event.index)
            if not isinstance(block, ThinkingBlock):
                raise WireFormatError(f"signature delta for {block.type} block {event.index}")
            block.signature = (block.signature or "") + event.signature
        elif isinstance(event, ToolInputDelta):
            block = self._block(event.index)
            if not isinstance(block, ToolUseBlock):
                raise WireFormatError(f"input_json delta for {block.type} block {event.index}")
            self._json[event.index].append(event.partial_json)
        elif isinstance(event, BlockStop):
            self._finish_block(event.index, complete=True)
        elif isinstance(event, MessageDelta):
            r.stop_reason = event.stop_reason
            r.stop_sequence = event.stop_sequence
            r.usage = merge_usage(r.usage, event.usage)
            if event.applied_edits is not None:
                r.applied_edits = [e.model_copy() for e in event.applied_edits]

    def _finish_block(self, index: int, *, complete: bool) -> None:
        block = self._block(index)
        self.closed_blocks.add(index)
        if isinstance(block, ToolUseBlock):
            block.input = tool_input("".join(self._json.pop(index, [])), index, block.name,
                                     complete=complete)

    def finish(self) -> Response:
        """The response; blocks cut off before their stop keep what parsed so far."""
        for index in list(self._json):
            self._finish_block(index, complete=False)
        return self.response


def tool_input(text: str, index: int, name: str, *, complete: bool = True) -> dict[str, Any]:
    """The input of tool_use block ``index`` from its JSON text. ``complete``: the block
    stopped, so the text must parse (else :class:`WireFormatError`); otherwise it was cut
    off and keeps what parses so far."""
    if not text.strip():
        return {}
    try:
        value = json.loads(text) if complete else jiter.from_json(
            text.encode(), partial_mode="trailing-strings"
        )
    except ValueError as exc:
        if complete:
            raise WireFormatError(
                f"tool_use block {index} ({name}): input is not valid JSON: {exc}"
            ) from None
        value = {}
    if not isinstance(value, dict):
        raise WireFormatError(f"tool_use block {index} ({name}): input is not an object")
    return value


def checked(events: Iterable[StreamEvent], *, source: str = "upstream") -> Iterator[StreamEvent]:
    """Pass a decoded upstream stream on, raising :class:`BackendError` (kind ``api``) at
    the first sign that it is not a complete answer, before the event that would make it
    look like one:

    - a tool_use block whose input JSON does not parse when the block stops (unless the
      answer then stops for ``max_tokens``, which cuts tool calls honestly);
    - a :class:`MessageDelta` without a stop reason, or while a block is still open;
    - a stream that ends before its :class:`MessageStop` (the terminal event: Messages
      ``message_stop``, Chat ``finish_reason``, Converse ``messageStop``). The
      :class:`MessageDelta` carrying the stop reason is held back until then, so a stream
      cut between the two never shows a client its stop reason.

    Every backend that decodes a wire stream runs it through here, so the gateway answers
    an upstream that failed with a native in-stream error in every API, never a normal stop.
    """
    def cut(why: str) -> BackendError:
        return BackendError(f"{source}: the upstream stream is incomplete: {why}", kind="api")

    return terminated(_well_formed(events, cut), lambda produced: cut(
        "the stream ended before the message did (no terminal event)"))


def terminated(events: Iterable[StreamEvent],
               incomplete: Callable[[bool], Exception]) -> Iterator[StreamEvent]:
    """Pass ``events`` on, raising ``incomplete(produced)`` where they end unless the last
    was a :class:`MessageStop` (``produced``: whether any event came at all). The one
    place of the rule that a stream is an answer only once it says it is over: behind
    :func:`checked` for decoded wire streams, and in the gateway for every backend's."""
    produced = stopped = False
    for event in events:
        produced = True
        stopped = isinstance(event, MessageStop)
        yield event
    if not stopped:
        raise incomplete(produced)


def _well_formed(events: Iterable[StreamEvent],
                 cut: Callable[[str], BackendError]) -> Iterator[StreamEvent]:
    """:func:`checked`'s checks of the order and content of the events."""
    tools: dict[int, tuple[str, list[str]]] = {}
    open_blocks: set[int] = set()
    broken: tuple[BackendError, StreamEvent] | None = None  # a BlockStop held back one event
    delta: MessageDelta | None = None  # held back until the MessageStop
    for event in events:
        if broken is not None:
            error, held = broken
            if not (isinstance(event, MessageDelta) and event.stop_reason == "max_tokens"):
                raise error
            broken = None
            yield held
        if delta is not None and not isinstance(event, MessageStop):
            raise cut(f"a {event.type} after the stop reason")
        if isinstance(event, (TextDelta, ToolInputDelta, ThinkingDelta, SignatureDelta,
                              BlockStop)) and (
            event.index not in open_blocks
        ):
            raise cut(f"a {event.type} for content block {event.index}, which never started "
                      "or already stopped")
        if isinstance(event, BlockStart):
            open_blocks.add(event.index)
            if isinstance(event.block, ToolUseBlock):
                tools[event.index] = (event.block.name, [])
        elif isinstance(event, ToolInputDelta) and event.index in tools:
            tools[event.index][1].append(event.partial_json)
        elif isinstance(event, BlockStop):
            open_blocks.discard(event.index)
            entry = tools.pop(event.index, None)
            if entry is not None:
                try:
                    tool_input("".join(entry[1]), event.index, entry[0])
                except WireFormatError as exc:
                    broken = (cut(str(exc)), event)
                    continue
        elif isinstance(event, MessageDelta):
            if event.stop_reason is None:
                raise cut("the answer ended without a stop reason")
            if open_blocks:
                raise cut(f"content block {min(open_blocks)} was never closed")
            delta = event
            continue
        elif isinstance(event, MessageStop):
            if delta is None:
                raise cut("the message stopped without a stop reason")
            yield delta
        yield event
    if broken is not None:
        raise broken[0]


def without_blocks(events: Iterable[StreamEvent], kinds: tuple[type, ...]
                   ) -> Iterator[StreamEvent]:
    """The events without the content blocks of the types ``kinds`` (their start, deltas
    and stop), the blocks after them renumbered so indices stay contiguous: for a wire
    format that has no form for those blocks."""
    renumber: dict[int, int] = {}
    dropped: set[int] = set()
    for event in events:
        if isinstance(event, BlockStart):
            if isinstance(event.block, kinds):
                dropped.add(event.index)
                continue
            renumber[event.index] = len(renumber)
        index = getattr(event, "index", None)
        if index is None:
            yield event
        elif index not in dropped:
            new = renumber.get(index, index)
            yield event if new == index else event.model_copy(update={"index": new})


def accumulate(events: Iterable[StreamEvent]) -> Response:
    acc = Accumulator()
    for event in events:
        acc.add(event)
    return acc.finish()


async def aaccumulate(events: AsyncIterable[StreamEvent]) -> Response:
    acc = Accumulator()
    async for event in events:
        acc.add(event)
    return acc.finish()


def events_from_response(response: Response, *, chunk_size: int = 0) -> Iterator[StreamEvent]:
    """Replay a response as a stream. ``chunk_size`` > 0 cuts text and tool-input JSON into
    pieces of that many characters (to exercise partial-JSON consumers)."""

    def pieces(text: str) -> list[str]:
        if chunk_size <= 0 or not text:
            return [text] if text else []
        return [text[i : i + chunk_size] for i in range(0, len(text), chunk_size)]

    yield MessageStart(
        id=response.id,
        model=response.model,
        usage=response.usage.model_copy(update={"output_tokens": 0}, deep=True),
        applied_edits=response.applied_edits,
    )
    for index, block in enumerate(response.content):
        if isinstance(block, TextBlock):
            yield BlockStart(index=index, block=TextBlock(text=""))
            for piece in pieces(block.text):
                yield TextDelta(index=index, text=piece)
        elif isinstance(block, ToolUseBlock):
            yield BlockStart(index=index, block=ToolUseBlock(id=block.id, name=block.name,
                                                             origin=block.origin))
            for piece in pieces(json.dumps(block.input, ensure_ascii=False)):
                yield ToolInputDelta(index=index, partial_json=piece)
        elif isinstance(block, ThinkingBlock):
            yield BlockStart(index=index, block=ThinkingBlock(id=block.id))
            for piece in pieces(block.text):
                yield ThinkingDelta(index=index, text=piece)
            for number, part in enumerate(block.summary):
                for piece in pieces(part) or [""]:
                    yield ThinkingDelta(index=index, text=piece, summary=number)
            if block.signature is not None:
                yield SignatureDelta(index=index, signature=block.signature)
        elif isinstance(block, WHOLE_BLOCKS):
            yield BlockStart(index=index, block=block.model_copy(deep=True))
        else:
            raise WireFormatError(f"a response cannot hold a {block.type} block", ("content", index))
        yield BlockStop(index=index)
    yield MessageDelta(
        stop_reason=response.stop_reason,
        stop_sequence=response.stop_sequence,
        usage=Usage(output_tokens=response.usage.output_tokens),
    )
    yield MessageStop()

