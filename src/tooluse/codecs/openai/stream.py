"""Chat Completions streams (``chat.completion.chunk``) <-> neutral stream events.

:func:`encode_events` writes the gateway's chunks; :func:`decode_events` reads a backend's,
opening and closing neutral blocks itself since the chunks have no block boundaries.
Reasoning travels in the deltas' ``reasoning_content`` (read: also ``reasoning``), joined as
:mod:`._reasoning` joins a whole message's; a signature or a redacted block is left out
with a log line.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator
from typing import Any

from ...errors import WireFormatError
from ...messages import (
    SERVER_TOOL_BLOCKS,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    Usage,
)
from ...stream import (
    BlockStart,
    BlockStop,
    MessageDelta,
    MessageStart,
    MessageStop,
    SignatureDelta,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ThinkingJoiner,
    ToolInputDelta,
    merge_usage,
    without_blocks,
)
from .._common import Path, dropped
from ._reasoning import read_reasoning
from ._wire import TARGET
from .errors import backend_error
from .responses import _FINISH_OUT, _finish, _usage, usage_of


def encode_events(
    events: Iterable[StreamEvent], *, created: int | None = None, include_usage: bool = True
) -> Iterator[dict[str, Any]]:
    """Neutral events -> ``chat.completion.chunk`` dicts (the SSE ``data:`` payloads; the
    closing ``[DONE]`` is the server's). With ``include_usage`` a final chunk with empty
    ``choices`` carries the usage, as with ``stream_options.include_usage``."""
    ident, model = "", None
    stamp = int(time.time()) if created is None else created
    calls: dict[int, int] = {}
    started = Usage()
    # Reasoning pieces (a block's text, each summary part, of every block) are joined as in
    # a whole message.
    joined = ThinkingJoiner()
    unsigned: set[int] = set()

    def reasoning(text: str) -> Iterator[dict[str, Any]]:
        if text:
            yield chunk({"reasoning_content": text})

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {"id": ident, "object": "chat.completion.chunk", "created": stamp, "model": model,
                "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}

    for event in without_blocks(events, SERVER_TOOL_BLOCKS):
        if isinstance(event, MessageStart):
            ident, model, started = event.id, event.model, event.usage
            yield chunk({"role": "assistant", "content": ""})
        elif isinstance(event, BlockStart):
            block = event.block
            if isinstance(block, ToolUseBlock):
                calls[event.index] = len(calls)
                yield chunk({"tool_calls": [{"index": calls[event.index], "id": block.id, "type": "function",
                                             "function": {"name": block.name, "arguments": ""}}]})
            elif isinstance(block, ThinkingBlock):
                yield from reasoning(joined.block(block, event.index))
                if block.signature is not None:
                    unsigned.add(event.index)
            elif isinstance(block, RedactedThinkingBlock):
                dropped("Chat Completions cannot carry a redacted thinking block",
                        ("content", event.index), TARGET, False)
            elif isinstance(block, TextBlock) and block.text:
                yield chunk({"content": block.text})
        elif isinstance(event, TextDelta):
            yield chunk({"content": event.text})
        elif isinstance(event, ThinkingDelta):
            yield from reasoning(joined.add((event.index, event.summary), event.text))
        elif isinstance(event, SignatureDelta):
            unsigned.add(event.index)
        elif isinstance(event, BlockStop) and event.index in unsigned:
            unsigned.discard(event.index)
            dropped("Chat Completions cannot carry a thinking block's signature",
                    ("content", event.index, "signature"), TARGET, False)
        elif isinstance(event, ToolInputDelta):
            yield chunk({"tool_calls": [{"index": calls[event.index],
                                         "function": {"arguments": event.partial_json}}]})
        elif isinstance(event, MessageDelta):
            finish = _FINISH_OUT[event.stop_reason] if event.stop_reason else None
            yield chunk({}, finish)
            if include_usage:
                usage = merge_usage(started, event.usage)
                yield {"id": ident, "object": "chat.completion.chunk", "created": stamp, "model": model,
                       "choices": [], "usage": _usage(usage)}


class _StreamDecoder:
    """Turns chunks into neutral events: a block is closed when another one begins, since
    Chat Completions streams have no block boundaries."""

    def __init__(self) -> None:
        self.started = False
        self.open: int | None = None
        self.open_kind = ""
        self.next_index = 0
        self.calls: dict[int, int] = {}
        self.finish: str | None = None
        self.usage = Usage()

    def _close(self) -> Iterator[StreamEvent]:
        if self.open is not None:
            yield BlockStop(index=self.open)
            self.open = None

    def _open(self, block: TextBlock | ToolUseBlock | ThinkingBlock) -> Iterator[StreamEvent]:
        yield from self._close()
        self.open, self.open_kind = self.next_index, block.type
        self.next_index += 1
        yield BlockStart(index=self.open, block=block)

    def _into(self, block: TextBlock | ThinkingBlock) -> Iterator[StreamEvent]:
        """Open ``block`` unless a block of its kind is the open one."""
        if self.open is None or self.open_kind != block.type:
            yield from self._open(block)

    def feed(self, data: Any, path: Path) -> Iterator[StreamEvent]:
        if not isinstance(data, dict):
            raise WireFormatError("chunk must be an object", path)
        if "error" in data and "choices" not in data:
            raise backend_error(data)
        if not self.started:
            self.started = True
            yield MessageStart(id=str(data.get("id") or ""), model=data.get("model"))
        usage = data.get("usage")
        if isinstance(usage, dict):
            self.usage = usage_of(usage)
        choices = data.get("choices") or []
        if not isinstance(choices, list):
            raise WireFormatError("Input should be a valid list", (*path, "choices"))
        for c, choice in enumerate(choices):
            cpath = (*path, "choices", c)
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                raise WireFormatError("only one choice (index 0) is supported", cpath)
            delta = choice.get("delta") or {}
            if not isinstance(delta, dict):
                raise WireFormatError("delta must be an object", (*cpath, "delta"))
            thought = read_reasoning(delta.get("reasoning_content"), delta.get("reasoning"),
                                     (*cpath, "delta"), lenient=True)
            if thought:
                yield from self._into(ThinkingBlock())
                assert self.open is not None
                yield ThinkingDelta(index=self.open, text=thought)
            text = (delta.get("content") or "") + (delta.get("refusal") or "")
            if text:
                yield from self._into(TextBlock(text=""))
                assert self.open is not None
                yield TextDelta(index=self.open, text=text)
            for k, call in enumerate(delta.get("tool_calls") or []):
                yield from self._call(call, (*cpath, "delta", "tool_calls", k))
            if choice.get("finish_reason") is not None:
                self.finish = _finish(choice["finish_reason"], (*cpath, "finish_reason"))

    def _call(self, call: Any, path: Path) -> Iterator[StreamEvent]:
        if not isinstance(call, dict):
            raise WireFormatError("tool call delta must be an object", path)
        position = call.get("index", len(self.calls))
        function = call.get("function") or {}
        if position not in self.calls:
            if not isinstance(call.get("id"), str) or not isinstance(function.get("name"), str):
                raise WireFormatError("a new tool call needs an id and function.name", path)
            yield from self._open(ToolUseBlock(id=call["id"], name=function["name"]))
            assert self.open is not None
            self.calls[position] = self.open
        index = self.calls[position]
        args = function.get("arguments")
        if args:
            if index != self.open:
                raise WireFormatError(
                    f"arguments for tool call {position} arrived after another block began", path
                )
            yield ToolInputDelta(index=index, partial_json=args)

    def finish_events(self) -> Iterator[StreamEvent]:
        if not self.started:
            return
        yield from self._close()
        yield MessageDelta(stop_reason=self.finish, usage=self.usage)  # type: ignore[arg-type]
        yield MessageStop()


def decode_events(chunks: Iterable[Any]) -> Iterator[StreamEvent]:
    """``chat.completion.chunk`` dicts (or their JSON text; ``"[DONE]"`` ends the stream)
    -> neutral events. The stop reason and usage are emitted when the stream ends."""
    decoder = _StreamDecoder()
    for n, raw in enumerate(chunks):
        if isinstance(raw, (str, bytes)):
            text = raw.decode() if isinstance(raw, bytes) else raw
            if text.strip() == "[DONE]":
                break
            raw = json.loads(text)
        yield from decoder.feed(raw, (n,))
    yield from decoder.finish_events()
