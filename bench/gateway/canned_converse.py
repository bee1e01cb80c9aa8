"""The benchmark's one answer in the Bedrock Converse API: the same text and ``get_weather``
call as :mod:`canned`, as a ``Converse`` response and as ``ConverseStream``'s event-stream
frames, and the check the load generator runs on every answer timed on that wire.

Written out by hand from the API's documented shapes, and the frames with a few lines of
``struct`` and ``zlib`` (the AWS event-stream framing botocore reads), not with tooluse's own
codec or encoder: the upstream must not share code with the gateway it measures. The check
reads frames with botocore's own parser, as boto3 does.
"""

from __future__ import annotations

import json
import struct
import zlib
from typing import Any

from canned import (
    _QUESTION,
    _TOOL_DESCRIPTION,
    _TOOL_SCHEMA,
    _USAGE_IN,
    _USAGE_OUT,
    CHUNK,
    TEXT,
    TOOL_INPUT,
    TOOL_NAME,
    TOOL_USE_ID,
    _pieces,
)

__all__ = ["check", "converse_request", "converse_response", "converse_stream_frames"]


def converse_request(model: str, *, stream: bool = False) -> dict[str, Any]:
    """The benchmark request as boto3's ``converse`` sends it (the path says whether to
    stream: ``/model/{id}/converse`` or ``/converse-stream``)."""
    return {
        "messages": [{"role": "user", "content": [{"text": _QUESTION}]}],
        "inferenceConfig": {"maxTokens": 1024},
        "toolConfig": {"tools": [{"toolSpec": {"name": TOOL_NAME,
                                               "description": _TOOL_DESCRIPTION,
                                               "inputSchema": {"json": _TOOL_SCHEMA}}}]},
    }


def converse_response(model: str) -> dict[str, Any]:
    return {
        "output": {"message": {"role": "assistant", "content": [
            {"text": TEXT},
            {"toolUse": {"toolUseId": TOOL_USE_ID, "name": TOOL_NAME, "input": TOOL_INPUT}},
        ]}},
        "stopReason": "tool_use",
        "usage": {"inputTokens": _USAGE_IN, "outputTokens": _USAGE_OUT,
                  "totalTokens": _USAGE_IN + _USAGE_OUT},
        "metrics": {"latencyMs": 1},
    }


def _frame(event_type: str, payload: dict[str, Any]) -> bytes:
    headers = b""
    for name, value in ((":event-type", event_type), (":content-type", "application/json"),
                        (":message-type", "event")):
        raw = value.encode()
        headers += bytes([len(name)]) + name.encode() + b"\x07" + struct.pack(">H", len(raw)) + raw
    body = json.dumps(payload, separators=(",", ":")).encode()
    prelude = struct.pack(">II", 12 + len(headers) + len(body) + 4, len(headers))
    head = prelude + struct.pack(">I", zlib.crc32(prelude)) + headers + body
    return head + struct.pack(">I", zlib.crc32(head))


def converse_stream_frames(model: str) -> list[bytes]:
    """The streamed answer, one frame per event, in the API's order."""
    frames = [_frame("messageStart", {"role": "assistant"})]
    for piece in _pieces(TEXT, CHUNK):
        frames.append(_frame("contentBlockDelta", {"contentBlockIndex": 0,
                                                   "delta": {"text": piece}}))
    frames.append(_frame("contentBlockStop", {"contentBlockIndex": 0}))
    frames.append(_frame("contentBlockStart", {"contentBlockIndex": 1, "start": {
        "toolUse": {"toolUseId": TOOL_USE_ID, "name": TOOL_NAME}}}))
    for piece in _pieces(json.dumps(TOOL_INPUT), CHUNK):
        frames.append(_frame("contentBlockDelta", {"contentBlockIndex": 1,
                                                   "delta": {"toolUse": {"input": piece}}}))
    frames.append(_frame("contentBlockStop", {"contentBlockIndex": 1}))
    frames.append(_frame("messageStop", {"stopReason": "tool_use"}))
    frames.append(_frame("metadata", {"usage": {"inputTokens": _USAGE_IN,
                                                "outputTokens": _USAGE_OUT,
                                                "totalTokens": _USAGE_IN + _USAGE_OUT},
                                      "metrics": {"latencyMs": 1}}))
    return frames


def check(stream: bool, body: bytes) -> str | None:
    """None if the answer carries the canned call (and, streamed, ends with its metadata)."""
    if not stream:
        data = json.loads(body)
        if data.get("stopReason") != "tool_use":
            return f"stopReason {data.get('stopReason')!r}"
        calls = [b["toolUse"] for b in data["output"]["message"]["content"] if "toolUse" in b]
        if len(calls) != 1 or calls[0].get("name") != TOOL_NAME:
            return f"toolUse blocks {calls!r}"
        if calls[0].get("input") != TOOL_INPUT:
            return f"tool input {calls[0].get('input')!r}"
        return None
    from botocore.eventstream import EventStreamBuffer

    buffer = EventStreamBuffer()
    buffer.add_data(body)
    events: list[tuple[str, dict[str, Any]]] = []
    for message in buffer:
        headers = message.headers
        if headers.get(":message-type") != "event":
            return f"stream {headers.get(':message-type')} {message.payload[:200]!r}"
        events.append((headers[":event-type"], json.loads(message.payload)))
    kinds = [kind for kind, _ in events]
    if not kinds or kinds[-1] != "metadata" or "messageStop" not in kinds:
        return f"stream ended with {kinds[-2:]!r}"
    stop = next(e for k, e in events if k == "messageStop")
    if stop.get("stopReason") != "tool_use":
        return f"stopReason {stop.get('stopReason')!r}"
    starts = [e["start"]["toolUse"] for k, e in events
              if k == "contentBlockStart" and "toolUse" in e.get("start", {})]
    if len(starts) != 1 or starts[0].get("name") != TOOL_NAME:
        return f"toolUse starts {starts!r}"
    index = next(e["contentBlockIndex"] for k, e in events
                 if k == "contentBlockStart" and "toolUse" in e.get("start", {}))
    args = "".join(e["delta"]["toolUse"]["input"] for k, e in events
                   if k == "contentBlockDelta" and e.get("contentBlockIndex") == index)
    if json.loads(args) != TOOL_INPUT:
        return f"streamed tool input {args!r}"
    return None
