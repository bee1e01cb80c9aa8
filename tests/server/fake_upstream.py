"""A fake model upstream for the routing tests, run as its own process on a socket.

It speaks the Anthropic Messages API (``POST /v1/messages``, JSON or SSE) and OpenAI Chat
Completions (``POST /v1/chat/completions``, JSON or SSE), and answers ``from NAME`` (its
``--name``), so a client and a test can tell which upstream answered. It keeps a log of
every model request it got (``GET /_log``: name, path, model, stream, time, the tools'
types or names, the MCP servers' names), and can be
told to misbehave (``POST /_control`` with a JSON object, or the same flags at start):

- ``fail``: an HTTP status to answer the next ``count`` requests with (-1: all), in the
  wire format's error shape, with ``retry_after`` seconds in ``Retry-After`` when given;
  ``fail: "stream-overloaded"`` opens an Anthropic stream and then sends
  ``overloaded_error`` in it, as the real API does under load;
- ``delay``: seconds to wait before answering (other requests are served meanwhile);
- ``tool`` (``{"name", "input"}``): the next ``tool_count`` Messages answers call this tool
  instead of answering text (a client's tool loop, such as Claude Code's agents).

Every answer is written in one write (a stream's events too), so a process killed while
answering either sent a whole answer or none. Its connections are served by the gateway
benchmark's upstream loop (bench/gateway/upstream.py, h11 over asyncio).

Run: ``python tests/server/fake_upstream.py --port 18100 --name dep0``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

# the gateway benchmark's upstream serves the connections (one HTTP/1.1 loop, on h11)
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench" / "gateway"))
from upstream import serve_connection  # noqa: E402

OVERLOADED_STREAM = "stream-overloaded"
_ANTHROPIC_ERRORS = {400: "invalid_request_error", 401: "authentication_error",
                     403: "permission_error", 404: "not_found_error", 429: "rate_limit_error",
                     500: "api_error", 503: "api_error", 529: "overloaded_error"}


def _sse(name: str | None, data: dict[str, Any]) -> bytes:
    head = f"event: {name}\n" if name else ""
    return f"{head}data: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


class Upstream:
    def __init__(self, name: str) -> None:
        self.name = name
        self.log: list[dict[str, Any]] = []
        self.fail: int | str | None = None
        self.count = 0
        self.retry_after: float | None = None
        self.delay = 0.0
        self.tool: dict[str, Any] | None = None
        self.tool_count = 0
        self.seq = 0

    def control(self, data: dict[str, Any]) -> None:
        for key in ("fail", "count", "retry_after", "delay", "tool", "tool_count"):
            if key in data:
                setattr(self, key, data[key])

    async def answer(self, method: str, path: str, body: bytes
                     ) -> tuple[int, list[tuple[str, str]], bytes]:
        path = path.split("?", 1)[0].rstrip("/")
        if method == "GET" and path == "/_log":
            return 200, [("content-type", "application/json")], json.dumps(self.log).encode()
        if method == "POST" and path == "/_control":
            self.control(json.loads(body or b"{}"))
            return 200, [("content-type", "application/json")], b"{}"
        if method == "GET":
            return 200, [("content-type", "application/json")], b'{"status":"ok"}'
        data = json.loads(body)
        anthropic = path.endswith("/messages")
        stream = bool(data.get("stream"))
        self.log.append({"name": self.name, "path": path, "model": data.get("model"),
                         "stream": stream, "time": time.time(),
                         "user": _last_user_text(data),
                         # what the gateway forwarded of the client's tools and MCP servers
                         "tools": [t.get("type") or t.get("name") for t in data.get("tools") or []
                                   if isinstance(t, dict)],
                         "mcp_servers": [m.get("name") for m in data.get("mcp_servers") or []
                                         if isinstance(m, dict)]})
        if self.delay:
            await asyncio.sleep(self.delay)
        failing = self.fail is not None and self.count != 0
        if failing:
            if self.count > 0:
                self.count -= 1
            if self.fail == OVERLOADED_STREAM and anthropic and stream:
                return self._overloaded_stream(str(data.get("model")))
            status = int(self.fail) if self.fail != OVERLOADED_STREAM else 529
            return self._error(status, anthropic)
        self.seq += 1
        text = f"from {self.name}"
        tokens_in = max(1, len(body) // 4)
        if anthropic:
            return self._anthropic(str(data.get("model")), text, tokens_in, stream)
        return self._openai(str(data.get("model")), text, tokens_in, stream)

    def _error(self, status: int, anthropic: bool) -> tuple[int, list[tuple[str, str]], bytes]:
        message = f"{self.name} says {status}"
        headers = [("content-type", "application/json")]
        if self.retry_after is not None:
            headers.append(("retry-after", f"{self.retry_after:g}"))
        if anthropic:
            body = {"type": "error", "error": {"type": _ANTHROPIC_ERRORS.get(status, "api_error"),
                                               "message": message}}
        else:
            body = {"error": {"message": message, "type": "server_error", "code": None}}
        return status, headers, json.dumps(body).encode()

    def _overloaded_stream(self, model: str) -> tuple[int, list[tuple[str, str]], bytes]:
        start = {"type": "message_start", "message": {
            "id": "msg_x", "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 0}}}
        error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
        return 200, [("content-type", "text/event-stream")], (
            _sse("message_start", start) + _sse("error", error))

    def _anthropic(self, model: str, text: str, tokens_in: int, stream: bool
                   ) -> tuple[int, list[tuple[str, str]], bytes]:
        """A text answer, or a call of ``tool`` while ``tool_count`` lasts."""
        usage = {"input_tokens": tokens_in, "output_tokens": 3, "cache_read_input_tokens": 2,
                 "cache_creation_input_tokens": 0}
        if self.tool is not None and self.tool_count != 0:
            self.tool_count -= 1
            block: dict[str, Any] = {"type": "tool_use", "name": self.tool["name"],
                                     "id": f"toolu_{self.name}_{self.seq:06d}",
                                     "input": self.tool["input"]}
            deltas = [{"type": "input_json_delta", "partial_json": json.dumps(block["input"])}]
            opened, reason = {**block, "input": {}}, "tool_use"
        else:
            block = {"type": "text", "text": text}
            deltas = [{"type": "text_delta", "text": part} for part in (text[:4], text[4:])]
            opened, reason = {"type": "text", "text": ""}, "end_turn"
        message = {"id": f"msg_{self.name}_{self.seq:06d}", "type": "message",
                   "role": "assistant", "model": model, "stop_sequence": None}
        if not stream:
            return 200, [("content-type", "application/json")], json.dumps({
                **message, "content": [block], "stop_reason": reason, "usage": usage}).encode()
        events = [
            ("message_start", {"type": "message_start", "message": {
                **message, "content": [], "stop_reason": None,
                "usage": {**usage, "output_tokens": 0}}}),
            ("content_block_start", {"type": "content_block_start", "index": 0,
                                     "content_block": opened}),
            *(("content_block_delta", {"type": "content_block_delta", "index": 0,
                                       "delta": delta}) for delta in deltas),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta", "delta": {
                "stop_reason": reason, "stop_sequence": None}, "usage": {"output_tokens": 3}}),
            ("message_stop", {"type": "message_stop"}),
        ]
        return 200, [("content-type", "text/event-stream")], b"".join(
            _sse(name, data) for name, data in events)

    def _openai(self, model: str, text: str, tokens_in: int, stream: bool
                ) -> tuple[int, list[tuple[str, str]], bytes]:
        chat_id = f"chatcmpl-{self.name}-{self.seq:06d}"
        usage = {"prompt_tokens": tokens_in, "completion_tokens": 3,
                 "total_tokens": tokens_in + 3}
        if not stream:
            return 200, [("content-type", "application/json")], json.dumps({
                "id": chat_id, "object": "chat.completion", "created": 1, "model": model,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                             "finish_reason": "stop"}], "usage": usage}).encode()

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {"id": chat_id, "object": "chat.completion.chunk", "created": 1,
                    "model": model, "choices": [{"index": 0, "delta": delta,
                                                 "finish_reason": finish}]}

        chunks = [chunk({"role": "assistant", "content": ""}), chunk({"content": text[:4]}),
                  chunk({"content": text[4:]}), chunk({}, "stop"),
                  {"id": chat_id, "object": "chat.completion.chunk", "created": 1,
                   "model": model, "choices": [], "usage": usage}]
        return 200, [("content-type", "text/event-stream")], b"".join(
            _sse(None, c) for c in chunks) + b"data: [DONE]\n\n"

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        async def answer(method: str, target: str, body: bytes
                         ) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
            status, headers, payload = await self.answer(method, target, body)
            return status, [(k.encode(), v.encode()) for k, v in headers], payload

        await serve_connection(reader, writer, answer)


def _last_user_text(data: dict[str, Any]) -> str:
    for message in reversed(data.get("messages") or []):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return content[:200]
            if isinstance(content, list):
                return " ".join(str(b.get("text", "")) for b in content
                                if isinstance(b, dict))[:200]
    return ""


async def serve(port: int, upstream: Upstream) -> None:
    server = await asyncio.start_server(upstream.handle, "127.0.0.1", port, backlog=1024)
    print(f"fake upstream {upstream.name} on http://127.0.0.1:{port}", flush=True)
    async with server:
        await server.serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--name", required=True)
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--fail", default=None)
    parser.add_argument("--count", type=int, default=-1)
    parser.add_argument("--retry-after", type=float, default=None)
    args = parser.parse_args()
    upstream = Upstream(args.name)
    fail: int | str | None = args.fail
    if fail is not None and fail != OVERLOADED_STREAM:
        fail = int(fail)
    upstream.control({"fail": fail, "count": args.count, "retry_after": args.retry_after,
                      "delay": args.delay})
    try:
        asyncio.run(serve(args.port, upstream))
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
