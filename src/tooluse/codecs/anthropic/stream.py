"""Messages API server-sent events <-> the neutral stream events of :mod:`tooluse.stream`.

:func:`encode_events` gives the SSE payloads the gateway sends; :func:`decode_events` reads
the ones the API sends (dicts or JSON text), reusing the response block and stop-reason rules
of :mod:`.responses` and the error mapping of :mod:`.errors`.

Thinking streams as the API streams it: ``content_block_start`` with ``{"type": "thinking",
"thinking": "", "signature": ""}``, ``thinking_delta`` pieces, then one ``signature_delta``
before ``content_block_stop`` (the SDKs set the signature from that delta, not append to it,
so a signature that reached the gateway in pieces is sent whole); a summary part (another
API's) streams as more ``thinking_delta`` text after a blank line, as
:func:`.thinking.answer_text` shows it whole. ``redacted_thinking`` arrives whole in its
``content_block_start``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from ...errors import WireFormatError
from ...messages import RedactedThinkingBlock, TextBlock, ThinkingBlock, ToolUseBlock
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
)
from .._common import Path
from .cache import decode_usage, encode_usage
from .errors import backend_error
from .responses import _STOP_OUT, _response_block, _stop_reason, server_side_block


def encode_events(events: Iterable[StreamEvent]) -> Iterator[dict[str, Any]]:
    """Neutral events -> Messages SSE event payloads (each has its ``type``; the SSE
    ``event:`` name is that type). No ``ping``: the server adds those."""
    started: dict[str, Any] = {}
    thoughts: dict[int, _Thought] = {}
    for event in events:
        if isinstance(event, MessageStart):
            started = encode_usage(event.usage)
            yield {
                "type": "message_start",
                "message": {
                    "id": event.id,
                    "type": "message",
                    "role": "assistant",
                    "model": event.model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": started,
                },
            }
        elif isinstance(event, BlockStart):
            yield from _start(event, thoughts)
        elif isinstance(event, TextDelta):
            yield _delta(event.index, {"type": "text_delta", "text": event.text})
        elif isinstance(event, ThinkingDelta):
            thought = thoughts.get(event.index)
            text = thought.piece(event) if thought is not None else event.text
            if text:
                yield _delta(event.index, {"type": "thinking_delta", "thinking": text})
        elif isinstance(event, SignatureDelta):
            thoughts.setdefault(event.index, _Thought()).signature += event.signature
        elif isinstance(event, ToolInputDelta):
            yield _delta(event.index, {"type": "input_json_delta", "partial_json": event.partial_json})
        elif isinstance(event, BlockStop):
            thought = thoughts.pop(event.index, None)
            if thought is not None and thought.signature:
                yield _delta(event.index, {"type": "signature_delta", "signature": thought.signature})
            yield {"type": "content_block_stop", "index": event.index}
        elif isinstance(event, MessageDelta):
            # The input side again only where the end corrects the start (the API's own
            # message_delta repeats it; clients read it from either).
            usage = {key: value for key, value in encode_usage(event.usage).items()
                     if value and value != started.get(key) and key != "output_tokens"}
            usage["output_tokens"] = event.usage.output_tokens
            yield {
                "type": "message_delta",
                "delta": {
                    "stop_reason": _STOP_OUT[event.stop_reason] if event.stop_reason else None,
                    "stop_sequence": event.stop_sequence,
                },
                "usage": usage,
            }
        elif isinstance(event, MessageStop):
            yield {"type": "message_stop"}


class _Thought:
    """An open thinking block being encoded: its pieces joined as they come (a summary part
    after a blank line, as the whole answer shows it) and its signature so far."""

    def __init__(self) -> None:
        self.joined = ThinkingJoiner()
        self.signature = ""

    def piece(self, delta: ThinkingDelta) -> str:
        """The ``thinking_delta`` text of ``delta``."""
        return self.joined.add(delta.summary, delta.text)


def _start(event: BlockStart, thoughts: dict[int, _Thought]) -> Iterator[dict[str, Any]]:
    block = event.block
    start: dict[str, Any]
    if isinstance(block, ThinkingBlock):
        start = {"type": "thinking", "thinking": "", "signature": ""}
        thoughts[event.index] = _Thought()
    elif isinstance(block, RedactedThinkingBlock):
        start = {"type": "redacted_thinking", "data": block.data}
    elif isinstance(block, TextBlock):
        start = {"type": "text", "text": ""}
    else:
        start = {"type": "tool_use", "id": block.id, "name": block.name, "input": {}}
    yield {"type": "content_block_start", "index": event.index, "content_block": start}
    if isinstance(block, TextBlock) and block.text:
        yield _delta(event.index, {"type": "text_delta", "text": block.text})
    elif isinstance(block, ThinkingBlock):
        # a block that starts with content shows it as answer_text does, and the deltas
        # after it go on from there (a next summary part after a blank line)
        thought = thoughts[event.index]
        if text := thought.joined.block(block):
            yield _delta(event.index, {"type": "thinking_delta", "thinking": text})
        thought.signature = block.signature or ""


def _delta(index: int, delta: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": delta}


def _get(data: dict[str, Any], key: str, kind: type | tuple[type, ...], path: Path) -> Any:
    if key not in data:
        raise WireFormatError("Field required", (*path, key))
    value = data[key]
    if not isinstance(value, kind) or isinstance(value, bool) and kind is int:
        raise WireFormatError(f"unexpected value {value!r}", (*path, key))
    return value


def decode_events(events: Iterable[Any]) -> Iterator[StreamEvent]:
    """Messages SSE event payloads (dicts, or JSON text) -> neutral events. ``ping`` is
    skipped; an ``error`` event raises :class:`BackendError`."""
    skipped: set[int] = set()  # indices of server-side blocks, left out
    renumber: dict[int, int] = {}  # index on the wire -> neutral index (contiguous)
    for n, raw in enumerate(events):
        data = json.loads(raw) if isinstance(raw, (str, bytes)) else raw
        path: Path = (n,)
        if not isinstance(data, dict):
            raise WireFormatError("stream event must be an object", path)
        kind = data.get("type")
        if kind == "ping":
            continue
        if kind in ("content_block_start", "content_block_delta", "content_block_stop"):
            wire_index = _get(data, "index", int, path)
            if kind == "content_block_start" and server_side_block(data.get("content_block")):
                skipped.add(wire_index)
            if wire_index in skipped:
                continue
            delta = data.get("delta")
            if kind == "content_block_delta" and isinstance(delta, dict) \
                    and delta.get("type") == "citations_delta":
                continue
            renumber.setdefault(wire_index, len(renumber))
            data = {**data, "index": renumber[wire_index]}
        if kind == "error":
            raise backend_error(data)
        if kind == "message_start":
            message = _get(data, "message", dict, path)
            yield MessageStart(
                id=message.get("id") or "",
                model=message.get("model"),
                usage=decode_usage(message.get("usage")),
            )
        elif kind == "content_block_start":
            index = _get(data, "index", int, path)
            block = _response_block(_get(data, "content_block", dict, path), (*path, "content_block"))
            if isinstance(block, ToolUseBlock):
                yield BlockStart(index=index, block=ToolUseBlock(id=block.id, name=block.name))
                if block.input:
                    yield ToolInputDelta(index=index, partial_json=json.dumps(block.input))
            elif isinstance(block, ThinkingBlock):
                yield BlockStart(index=index, block=ThinkingBlock())
                if block.text:
                    yield ThinkingDelta(index=index, text=block.text)
                if block.signature:
                    yield SignatureDelta(index=index, signature=block.signature)
            elif isinstance(block, RedactedThinkingBlock):
                yield BlockStart(index=index, block=block)
            else:
                yield BlockStart(index=index, block=TextBlock(text=""))
                if block.text:
                    yield TextDelta(index=index, text=block.text)
        elif kind == "content_block_delta":
            index = _get(data, "index", int, path)
            delta = _get(data, "delta", dict, path)
            dtype = delta.get("type")
            if dtype == "text_delta":
                yield TextDelta(index=index, text=_get(delta, "text", str, (*path, "delta")))
            elif dtype == "thinking_delta":
                yield ThinkingDelta(index=index, text=_get(delta, "thinking", str, (*path, "delta")))
            elif dtype == "signature_delta":
                yield SignatureDelta(
                    index=index, signature=_get(delta, "signature", str, (*path, "delta"))
                )
            elif dtype == "input_json_delta":
                yield ToolInputDelta(
                    index=index, partial_json=_get(delta, "partial_json", str, (*path, "delta"))
                )
            else:
                raise WireFormatError(f"unsupported delta type {dtype!r}", (*path, "delta", "type"))
        elif kind == "content_block_stop":
            yield BlockStop(index=_get(data, "index", int, path))
        elif kind == "message_delta":
            delta = data.get("delta") or {}
            yield MessageDelta(
                stop_reason=_stop_reason(delta.get("stop_reason"), (*path, "delta", "stop_reason")),
                stop_sequence=delta.get("stop_sequence"),
                usage=decode_usage(data.get("usage")),
            )
        elif kind == "message_stop":
            yield MessageStop()
        else:
            raise WireFormatError(f"unsupported stream event type {kind!r}", (*path, "type"))
