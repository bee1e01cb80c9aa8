"""An upstream model API that fails on purpose, in the way its URL names.

``POST /<fault>/v1/messages`` (Anthropic) and ``POST /<fault>/v1/chat/completions`` (OpenAI),
JSON or streaming as the request asks, where ``<fault>`` is one of:

- ``ok``: the canned ``get_weather`` answer (``bench/gateway/canned.py``);
- ``500``, ``429``, ``503``: that status with the provider's error body (``retry-after: 1``
  on 429/503);
- ``reset``: the request is read, then the connection is reset (TCP RST, no answer);
- ``silence``: the request is read and never answered (until the caller hangs up);
- ``cut``: 200, half of the answer, then the connection closes (a stream without its
  terminal event; a JSON body shorter than its ``content-length``);
- ``broken-json``: 200 and an answer whose tool-call arguments are not JSON (in a stream:
  ``{"city": "Par`` then a normal stop); an Anthropic JSON answer that is not JSON at all;
- ``empty``: 200 with an empty body (a stream with no event at all);
- ``slow``: the normal answer, one stream event every 0.5 s (for clients that leave mid-stream).

Written on raw asyncio sockets, so a reset or a cut is exactly that on the wire.
``GET /stats`` answers ``{"requests": {fault: n}, "open": n}``: requests read so far and
those still open (being answered, or left silent with the caller still connected).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import struct
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "gateway"))
import canned

REQUESTS: Counter[str] = Counter()
OPEN = 0


def _sse(name: str | None, data: Any) -> bytes:
    payload = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    return (f"event: {name}\n" if name else "").encode() + f"data: {payload}\n\n".encode()


def _stream_events(kind: str) -> list[bytes]:
    if kind == "anthropic":
        return [_sse(n, d) for n, d in canned.anthropic_sse_events(canned.MODEL)]
    return [_sse(None, c) for c in canned.openai_sse_chunks(canned.MODEL, include_usage=False)] + [_sse(None, "[DONE]")]


def _broken_stream(kind: str) -> list[bytes]:
    """The canned stream with the tool-argument deltas replaced by JSON that never closes."""
    out = []
    replaced = False
    for frame in _stream_events(kind):
        text = frame.decode()
        if ("input_json_delta" in text or '"arguments":"{' in text or '"arguments":"\\"' in text
                or ('"arguments":"' in text and '"arguments":""' not in text)):
            if replaced:
                continue
            replaced = True
            if kind == "anthropic":
                data = json.loads(text.split("data: ", 1)[1])
                data["delta"]["partial_json"] = '{"city": "Par'
                frame = _sse("content_block_delta", data)
            else:
                data = json.loads(text.split("data: ", 1)[1])
                data["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"] = '{"city": "Par'
                frame = _sse(None, data)
        out.append(frame)
    return out


def _json_answer(kind: str) -> dict[str, Any]:
    return canned.anthropic_message(canned.MODEL) if kind == "anthropic" else canned.openai_completion(canned.MODEL)


def _error_body(kind: str, status: int) -> bytes:
    if kind == "anthropic":
        etype = {500: "api_error", 429: "rate_limit_error", 503: "overloaded_error"}[status]
        return json.dumps({"type": "error", "error": {"type": etype, "message": f"injected {status}"}}).encode()
    etype = {500: "server_error", 429: "rate_limit_exceeded", 503: "server_error"}[status]
    return json.dumps({"error": {"message": f"injected {status}", "type": etype, "param": None, "code": None}}).encode()


def _head(status: int, ctype: str, length: int | None, extra: str = "") -> bytes:
    reason = {200: "OK", 429: "Too Many Requests", 500: "Internal Server Error", 503: "Service Unavailable"}[status]
    lines = [f"HTTP/1.1 {status} {reason}", f"content-type: {ctype}", "connection: close"]
    if length is not None:
        lines.append(f"content-length: {length}")
    return ("\r\n".join(lines) + "\r\n" + extra + "\r\n").encode()


async def _read_request(reader: asyncio.StreamReader) -> tuple[str, str, bytes]:
    head = await reader.readuntil(b"\r\n\r\n")
    request_line, *header_lines = head.decode("latin-1").split("\r\n")
    method, path, _ = request_line.split(" ", 2)
    length = 0
    for line in header_lines:
        if line.lower().startswith("content-length:"):
            length = int(line.split(":", 1)[1])
    body = await reader.readexactly(length) if length else b""
    return method, path, body


async def _handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    global OPEN
    try:
        method, path, body = await _read_request(reader)
    except (asyncio.IncompleteReadError, ValueError, ConnectionError):
        writer.close()
        return
    if method == "GET" and path == "/stats":
        payload = json.dumps({"requests": dict(REQUESTS), "total": sum(REQUESTS.values()), "open": OPEN}).encode()
        writer.write(_head(200, "application/json", len(payload)) + payload)
        await writer.drain()
        writer.close()
        return
    fault = path.strip("/").split("/", 1)[0]
    kind = "anthropic" if path.endswith("/messages") else "openai"
    try:
        stream = bool(json.loads(body or b"{}").get("stream"))
    except ValueError:
        stream = False
    REQUESTS[fault] += 1
    OPEN += 1
    try:
        await _answer(writer, reader, fault, kind, stream)
    except (ConnectionError, OSError):
        pass
    finally:
        OPEN -= 1
        if not writer.is_closing():
            writer.close()


async def _answer(writer: asyncio.StreamWriter, reader: asyncio.StreamReader, fault: str, kind: str, stream: bool) -> None:
    sse = "text/event-stream"
    if fault in ("500", "429", "503"):
        status = int(fault)
        body = _error_body(kind, status)
        extra = "retry-after: 1\r\n" if status in (429, 503) else ""
        writer.write(_head(status, "application/json", len(body), extra) + body)
    elif fault == "reset":
        sock = writer.get_extra_info("socket")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        writer.transport.abort()
        return
    elif fault == "silence":
        await reader.read()  # returns when the caller hangs up
        return
    elif fault == "empty":
        writer.write(_head(200, sse if stream else "application/json", 0))
    elif fault == "cut":
        if stream:
            frames = _stream_events(kind)
            writer.write(_head(200, sse, None))
            for frame in frames[: len(frames) // 2]:
                writer.write(frame)
                await writer.drain()
                await asyncio.sleep(0.01)
        else:
            body = json.dumps(_json_answer(kind)).encode()
            writer.write(_head(200, "application/json", len(body)) + body[: len(body) // 2])
    elif fault == "broken-json":
        if stream:
            writer.write(_head(200, sse, None))
            for frame in _broken_stream(kind):
                writer.write(frame)
        elif kind == "anthropic":
            body = json.dumps(_json_answer(kind)).encode()[:-1]  # whole, but not JSON
            writer.write(_head(200, "application/json", len(body)) + body)
        else:
            answer = _json_answer(kind)
            answer["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = '{"city": "Par'
            body = json.dumps(answer).encode()
            writer.write(_head(200, "application/json", len(body)) + body)
    elif fault == "slow" and stream:
        writer.write(_head(200, sse, None))
        for frame in _stream_events(kind):
            writer.write(frame)
            await writer.drain()
            await asyncio.sleep(0.5)
    else:  # ok
        if stream:
            writer.write(_head(200, sse, None))
            for frame in _stream_events(kind):
                writer.write(frame)
        else:
            body = json.dumps(_json_answer(kind)).encode()
            writer.write(_head(200, "application/json", len(body)) + body)
    await writer.drain()
    writer.close()


async def _main(port: int) -> None:
    server = await asyncio.start_server(_handle, "127.0.0.1", port)
    async with server:
        await server.serve_forever()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args(argv)
    asyncio.run(_main(args.port))
    return 0


if __name__ == "__main__":
    sys.exit(main())
