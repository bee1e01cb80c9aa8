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
from collections.abc import AsyncIterable, Iterable, Iterator
from typing import Annotated, Literal, Union

import jiter
from pydantic import BaseModel, ConfigDict, Field

from .errors import WireFormatError
from .messages import (
    Response,
    StopReason,
    TextBlock,
    ToolUseBlock,
    Usage,
)

__all__ = [
    "BlockStart",
    "BlockStop",
    "MessageDelta",
    "MessageStart",
    "MessageStop",
    "StreamEvent",
    "TextDelta",
    "ToolInputDelta",
    "Accumulator",
    "accumulate",
    "aaccumulate",
    "events_from_response",
]


class _Event(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MessageStart(_Event):
    type: Literal["message_start"] = "message_start"
    id: str = ""
    model: str | None = None
    usage: Usage = Field(default_factory=Usage)


class BlockStart(_Event):
    """A content block begins. For a tool call, ``block.input`` is ``{}``: the input
    arrives as :class:`ToolInputDelta` JSON fragments."""

    type: Literal["block_start"] = "block_start"
    index: int
    block: Annotated[Union[TextBlock, ToolUseBlock], Field(discriminator="type")]


class TextDelta(_Event):
    type: Literal["text_delta"] = "text_delta"
    index: int
    text: str


class ToolInputDelta(_Event):
    """A fragment of a tool call's input as JSON text, cut anywhere."""

    type: Literal["tool_input_delta"] = "tool_input_delta"
    index: int
    partial_json: str


class BlockStop(_Event):
    type: Literal["block_stop"] = "block_stop"
    index: int


class MessageDelta(_Event):
    type: Literal["message_delta"] = "message_delta"
    stop_reason: StopReason | None = None
    stop_sequence: str | None = None
    usage: Usage = Field(default_factory=Usage)


class MessageStop(_Event):
    type: Literal["message_stop"] = "message_stop"


StreamEvent = Annotated[
    Union[MessageStart, BlockStart, TextDelta, ToolInputDelta, BlockStop, MessageDelta, MessageStop],
    Field(discriminator="type"),
]


class Accumulator:
    """Folds events into a response, one event at a time (so a consumer can look at the
    response so far, e.g. to show a tool call as soon as its block stops)."""

    def __init__(self) -> None:
        self.response = Response()
        self._json: dict[int, list[str]] = {}
        self._index_map: dict[int, int] = {}
        self.closed_blocks: set[int] = set()

    def _block(self, index: int) -> TextBlock | ToolUseBlock:
        try:
            block = self.response.content[self._index_map[index]]
        except KeyError:
            raise WireFormatError(f"delta for content block {index} that never started") from None
        assert isinstance(block, (TextBlock, ToolUseBlock))
        return block

    def add(self, event: StreamEvent) -> None:
        r = self.response
        if isinstance(event, MessageStart):
            r.id, r.model = event.id, event.model
            r.usage = Usage(
                input_tokens=event.usage.input_tokens, output_tokens=event.usage.output_tokens
            )
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
                raise WireFormatError(f"text delta for tool_use block {event.index}")
            block.text += event.text
        elif isinstance(event, ToolInputDelta):
            block = self._block(event.index)
            if not isinstance(block, ToolUseBlock):
                raise WireFormatError(f"input_json delta for text block {event.index}")
            self._json[event.index].append(event.partial_json)
        elif isinstance(event, BlockStop):
            self._finish_block(event.index, complete=True)
        elif isinstance(event, MessageDelta):
            r.stop_reason = event.stop_reason
            r.stop_sequence = event.stop_sequence
            if event.usage.output_tokens:
                r.usage.output_tokens = event.usage.output_tokens
            if event.usage.input_tokens:
                r.usage.input_tokens = event.usage.input_tokens

    def _finish_block(self, index: int, *, complete: bool) -> None:
        block = self._block(index)
        self.closed_blocks.add(index)
        if isinstance(block, ToolUseBlock):
            text = "".join(self._json.pop(index, []))
            if not text.strip():
                block.input = {}
                return
            try:
                value = json.loads(text) if complete else jiter.from_json(
                    text.encode(), partial_mode="trailing-strings"
                )
            except ValueError as exc:
                if complete:
                    raise WireFormatError(
                        f"tool_use block {index} ({block.name}): input is not valid JSON: {exc}"
                    ) from None
                value = {}
            if not isinstance(value, dict):
                raise WireFormatError(f"tool_use block {index} ({block.name}): input is not an object")
            block.input = value

    def finish(self) -> Response:
        """The response; blocks cut off before their stop keep what parsed so far."""
        for index in list(self._json):
            self._finish_block(index, complete=False)
        return self.response


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
        usage=Usage(input_tokens=response.usage.input_tokens),
    )
    for index, block in enumerate(response.content):
        if isinstance(block, TextBlock):
            yield BlockStart(index=index, block=TextBlock(text=""))
            for piece in pieces(block.text):
                yield TextDelta(index=index, text=piece)
        elif isinstance(block, ToolUseBlock):
            yield BlockStart(index=index, block=ToolUseBlock(id=block.id, name=block.name))
            for piece in pieces(json.dumps(block.input, ensure_ascii=False)):
                yield ToolInputDelta(index=index, partial_json=piece)
        else:
            raise WireFormatError(f"a response cannot hold a {block.type} block", ("content", index))
        yield BlockStop(index=index)
    yield MessageDelta(
        stop_reason=response.stop_reason,
        stop_sequence=response.stop_sequence,
        usage=Usage(output_tokens=response.usage.output_tokens),
    )
    yield MessageStop()

