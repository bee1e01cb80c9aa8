"""An upstream "model" that answers instantly, for benchmarking proxies in front of it.

It speaks just enough of two wire formats to be the backend of both proxies under test:

* ``POST .../v1/messages`` — the Anthropic Messages API (JSON, or SSE when ``"stream": true``);
* ``POST .../chat/completions`` — the OpenAI Chat Completions API (JSON, or SSE chunks ending
  in ``data: [DONE]``);
* ``POST .../responses`` — the OpenAI Responses API (JSON, or its numbered SSE events);
* ``POST /model/{id}/converse`` and ``/converse-stream`` — the Bedrock Converse API (JSON, or
  AWS event-stream frames), what boto3 calls with ``AWS_ENDPOINT_URL_BEDROCK_RUNTIME`` set.

Every answer is the canned ``get_weather`` tool call of :mod:`canned`, so any time a request
spends beyond "direct to this server" is the proxy's. It is a bare ``asyncio`` server with
``h11`` (the HTTP/1.1 parser uvicorn itself uses) rather than an ASGI app: the upstream shares
two CPU cores with the proxies and the load generator, so the less work it does the cleaner the
proxies' figures. Streams are written event by event, as a real API flushes them.

``--stream-gap-ms N`` sends every stream's events N ms apart, for streams that stay open a
while (the cost of many concurrent streams); 0, at once, by default.

``GET /stats`` returns how many model requests it served, so the harness can check that a
proxy really forwarded every request it was timed on.

``--status 529`` makes it a failing upstream instead: every model request is answered at
once with that HTTP status and the wire format's error body (Anthropic's
``overloaded_error`` for 529), counted in ``/stats`` as ``failed`` (the routing benchmark's
failover, bench/gateway/routing.py).

Run: ``python bench/gateway/upstream.py --port 18100``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import h11

sys.path.insert(0, str(Path(__file__).resolve().parent))
import canned  # noqa: E402
import canned_converse  # noqa: E402
import canned_responses  # noqa: E402

__all__ = ["Upstream", "main", "serve_connection"]

_MAX_BODY = 8 * 1024 * 1024


def _sse_anthropic(model: str) -> list[bytes]:
    return [
        f"event: {name}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()
        for name, data in canned.anthropic_sse_events(model)
    ]


def _sse_responses(model: str) -> list[bytes]:
    return [
        f"event: {name}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()
        for name, data in canned_responses.responses_sse_events(model)
    ]


def _sse_openai(model: str, include_usage: bool) -> list[bytes]:
    frames = [
        f"data: {json.dumps(c, separators=(',', ':'))}\n\n".encode()
        for c in canned.openai_sse_chunks(model, include_usage=include_usage)
    ]
    frames.append(b"data: [DONE]\n\n")
    return frames


class Upstream:
    """The server: encodes each distinct answer once and replays the bytes."""

    def __init__(self, gap: float = 0.0, *, status: int | None = None) -> None:
        self.gap = gap
        self.served = {"anthropic": 0, "openai": 0, "responses": 0, "converse": 0}
        if status is not None:
            self.served["failed"] = 0
        self._cache: dict[tuple[Any, ...], Any] = {}
        self.status = status

    def _cached(self, key: tuple[Any, ...], make: Any) -> Any:
        value = self._cache.get(key)
        if value is None:
            value = self._cache[key] = make()
        return value

    def answer(self, method: str, path: str, body: bytes) -> tuple[int, str, list[bytes] | bytes]:
        """Return ``(status, content type, body bytes or list of stream frames)``."""
        path = path.split("?", 1)[0].rstrip("/")
        if method == "GET":
            if path == "/stats":
                return 200, "application/json", json.dumps(self.served).encode()
            return 200, "application/json", b'{"status":"ok"}'
        if method != "POST":
            return 405, "application/json", _error("method not allowed")
        try:
            data = json.loads(body)
            if not isinstance(data, dict):
                raise ValueError("the body is not a JSON object")
        except ValueError as exc:
            return 400, "application/json", _error(f"invalid JSON body: {exc}")
        model = str(data.get("model") or canned.MODEL)
        stream = bool(data.get("stream"))
        if self.status is not None:
            self.served["failed"] += 1
            return self.status, "application/json", _failure(self.status, path)
        if path.startswith("/model/") and path.endswith(("/converse", "/converse-stream")):
            if not (data.get("toolConfig") or {}).get("tools"):
                return 400, "application/json", _error("the benchmark sends tools; none came")
            self.served["converse"] += 1
            model = path.split("/")[2]
            if path.endswith("-stream"):
                return 200, "application/vnd.amazon.eventstream", self._cached(
                    ("c", model, True), lambda: canned_converse.converse_stream_frames(model))
            return 200, "application/json", self._cached(
                ("c", model, False),
                lambda: json.dumps(canned_converse.converse_response(model)).encode())
        if path.endswith("/messages"):
            if not data.get("tools"):
                return 400, "application/json", _error("the benchmark sends tools; none came")
            self.served["anthropic"] += 1
            if stream:
                return 200, "text/event-stream", self._cached(("a", model, True), lambda: _sse_anthropic(model))
            return 200, "application/json", self._cached(
                ("a", model, False), lambda: json.dumps(canned.anthropic_message(model)).encode()
            )
        if path.endswith("/chat/completions"):
            if not data.get("tools"):
                return 400, "application/json", _error("the benchmark sends tools; none came")
            self.served["openai"] += 1
            if stream:
                usage = bool((data.get("stream_options") or {}).get("include_usage"))
                return 200, "text/event-stream", self._cached(
                    ("o", model, True, usage), lambda: _sse_openai(model, usage)
                )
            return 200, "application/json", self._cached(
                ("o", model, False), lambda: json.dumps(canned.openai_completion(model)).encode()
            )
        if path.endswith("/responses"):
            if not data.get("tools"):
                return 400, "application/json", _error("the benchmark sends tools; none came")
            self.served["responses"] += 1
            if stream:
                return 200, "text/event-stream", self._cached(
                    ("r", model, True), lambda: _sse_responses(model))
            return 200, "application/json", self._cached(
                ("r", model, False),
                lambda: json.dumps(canned_responses.response_object(model)).encode())
        return 404, "application/json", _error(f"no route for {path}")

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Serve one keep-alive connection until the client closes it."""
        async def answer(method: str, target: str, body: bytes) -> Answer:
            status, ctype, payload = self.answer(method, target, body)
            headers = [(b"content-type", ctype.encode()), (b"server", b"bench-upstream")]
            if not isinstance(payload, bytes):
                headers.append((b"cache-control", b"no-cache"))
            return status, headers, payload

        await serve_connection(reader, writer, answer, self.gap)


#: An answer: status, headers, and the body in one piece or as stream frames.
Answer = tuple[int, list[tuple[bytes, bytes]], "bytes | list[bytes]"]


async def serve_connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                           answer: Callable[[str, str, bytes], Awaitable[Answer]],
                           gap: float = 0.0) -> None:
    """Serve one keep-alive HTTP/1.1 connection with ``answer(method, target, body)`` until
    the client closes it. A body in one piece is written with its head in one write (one
    syscall: the baseline stays minimal); stream frames are written one by one, as a real
    API flushes them, ``gap`` seconds apart when given (a model that takes its time). (The
    routing tests' fake upstream serves its connections with it.)"""
    conn = h11.Connection(h11.SERVER, max_incomplete_event_size=_MAX_BODY)
    try:
        while True:
            request: h11.Request | None = None
            chunks: list[bytes] = []
            while True:
                event = conn.next_event()
                if event is h11.NEED_DATA:
                    conn.receive_data(await reader.read(65536))
                    continue
                if isinstance(event, h11.Request):
                    request = event
                elif isinstance(event, h11.Data):
                    chunks.append(bytes(event.data))
                elif isinstance(event, (h11.EndOfMessage, h11.ConnectionClosed)):
                    break
            if request is None:
                return
            status, headers, payload = await answer(
                request.method.decode(), request.target.decode(), b"".join(chunks))
            if isinstance(payload, bytes):
                headers = [*headers, (b"content-length", str(len(payload)).encode())]
                writer.write(
                    conn.send(h11.Response(status_code=status, headers=headers))
                    + conn.send(h11.Data(data=payload))
                    + conn.send(h11.EndOfMessage())
                )
            else:
                writer.write(conn.send(h11.Response(status_code=status, headers=headers)))
                for frame in payload:
                    writer.write(conn.send(h11.Data(data=frame)))
                    if gap:  # a model that takes its time: each event flushed, then a pause
                        await writer.drain()
                        await asyncio.sleep(gap)
                writer.write(conn.send(h11.EndOfMessage()))
            await writer.drain()
            if conn.our_state is h11.MUST_CLOSE:
                return
            conn.start_next_cycle()
    except (h11.RemoteProtocolError, ConnectionError):
        return
    finally:
        writer.close()


def _error(message: str) -> bytes:
    return json.dumps({"type": "error", "error": {"type": "invalid_request_error", "message": message}}).encode()


def _failure(status: int, path: str) -> bytes:
    if path.endswith("/messages"):
        kind = {429: "rate_limit_error", 529: "overloaded_error"}.get(status, "api_error")
        return json.dumps({"type": "error", "error": {"type": kind,
                                                      "message": f"bench upstream: {status}"}}).encode()
    return json.dumps({"error": {"message": f"bench upstream: {status}", "type": "server_error",
                                 "code": None}}).encode()


async def serve(host: str, port: int, gap: float = 0.0, status: int | None = None) -> None:
    upstream = Upstream(gap, status=status)
    server = await asyncio.start_server(upstream.handle, host, port, backlog=1024)
    print(f"bench upstream listening on http://{host}:{port}", flush=True)
    async with server:
        await server.serve_forever()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=18100)
    parser.add_argument("--stream-gap-ms", type=float, default=0.0,
                        help="milliseconds between a stream's events (default 0: at once)")
    parser.add_argument("--status", type=int, default=None,
                        help="answer every model request with this HTTP status (a failing upstream)")
    args = parser.parse_args(argv)
    try:
        asyncio.run(serve(args.host, args.port, args.stream_gap_ms / 1000, args.status))
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
