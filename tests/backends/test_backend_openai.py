"""The OpenAI-compatible backend against a local Chat Completions server on 127.0.0.1 (real
socket, SSE with ``data: [DONE]``) and MockTransport for the error shapes."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import anyio
import httpx2
import pytest

from tooluse.backends import load_backend
from tooluse.backends.openai import OpenAIBackend
from tooluse.backends.options import RetryPolicy
from tooluse.codecs import openai as codec
from tooluse.errors import BackendError
from tooluse.messages import Message, Request, Response, TextBlock, ToolSpec, ToolUseBlock, Usage
from tooluse.runner import Runner
from tooluse.stream import accumulate, events_from_response

FAST = RetryPolicy(max_retries=2, initial_delay=0.001, max_delay=0.002)
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}

CALL = Response(
    id="chatcmpl-1",
    model="qwen2.5",
    content=[ToolUseBlock(id="call_1", name="get_weather", input={"city": "Oslo"})],
    stop_reason="tool_use",
    usage=Usage(input_tokens=30, output_tokens=8),
)
FINAL = Response(
    id="chatcmpl-2",
    model="qwen2.5",
    content=[TextBlock(text="Snowing in Oslo.")],
    stop_reason="end_turn",
    usage=Usage(input_tokens=40, output_tokens=5),
)


def request() -> Request:
    return Request(
        max_tokens=100,
        messages=[Message(role="user", content="Weather in Oslo?")],
        tools=[ToolSpec(name="get_weather", description="Weather.", input_schema=SCHEMA)],
    )


def sse(response: Response) -> bytes:
    chunks = codec.encode_events(events_from_response(response, chunk_size=3))
    return "".join(f"data: {json.dumps(c)}\n\n" for c in chunks).encode() + b"data: [DONE]\n\n"


@contextmanager
def chat_server(script: list[Response]) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """A Chat Completions server on 127.0.0.1: answers from ``script``, records bodies."""
    seen: list[dict[str, Any]] = []
    queue = list(script)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            assert self.path == "/v1/chat/completions", self.path
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            body["_auth"] = self.headers.get("authorization")
            seen.append(body)
            answer = queue.pop(0)
            if body.get("stream"):
                data = sse(answer)
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                for i in range(0, len(data), 23):
                    piece = data[i : i + 23]
                    self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
                return
            payload = json.dumps(codec.encode_response(answer)).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        host, port = server.server_address[:2]
        yield f"http://{host}:{port}/v1", seen
    finally:
        server.shutdown()
        server.server_close()


def test_complete_and_stream_over_a_real_socket() -> None:
    with chat_server([CALL, CALL]) as (url, seen):
        backend = load_backend(f"openai:{url}#qwen2.5")
        assert isinstance(backend, OpenAIBackend)
        assert backend.complete(request()).content == CALL.content
        response = accumulate(backend.stream(request()))
        backend.close()
    assert response.content == CALL.content and response.stop_reason == "tool_use"
    assert response.usage.output_tokens == 8
    assert seen[0]["model"] == "qwen2.5" and seen[0]["tools"][0]["function"]["name"] == "get_weather"
    assert "stream" not in seen[0]
    assert seen[1]["stream"] is True and seen[1]["stream_options"] == {"include_usage": True}
    assert seen[0]["_auth"] is None  # no key, no header


def test_async_stream_over_a_real_socket() -> None:
    with chat_server([CALL]) as (url, _):

        async def main() -> list[Any]:
            backend = OpenAIBackend("qwen2.5", base_url=url, api_key="k")
            try:
                return [e async for e in backend.astream(request())]
            finally:
                await backend.aclose()

        events = anyio.run(main)
    assert accumulate(events).content == CALL.content


def test_runner_with_failing_tool_uses_the_is_error_fallback() -> None:
    def get_weather(city: str) -> str:
        """Weather.

        Args:
            city: The city.
        """
        raise LookupError(f"no station in {city}")

    with chat_server([CALL, FINAL]) as (url, seen):
        result = Runner(OpenAIBackend("qwen2.5", base_url=url, api_key="sk-x"), [get_weather]).run("Weather in Oslo?")
    assert result.text == "Snowing in Oslo."
    tool_message = seen[1]["messages"][-1]
    assert tool_message["role"] == "tool" and tool_message["tool_call_id"] == "call_1"
    assert "LookupError: no station in Oslo" in tool_message["content"]
    assert tool_message["content"].startswith("Error")
    assert seen[0]["_auth"] == "Bearer sk-x"


def mock(*answers: httpx2.Response) -> tuple[OpenAIBackend, list[httpx2.Request]]:
    queue = list(answers)
    seen: list[httpx2.Request] = []

    def handler(req: httpx2.Request) -> httpx2.Response:
        seen.append(req)
        return queue.pop(0)

    backend = OpenAIBackend("m", base_url="http://127.0.0.1:1/v1", transport=httpx2.MockTransport(handler), retry=FAST)
    return backend, seen


def test_error_shapes() -> None:
    backend, seen = mock(httpx2.Response(400, json={"error": {"message": "bad tools", "type": "invalid_request_error", "code": None}}))
    with pytest.raises(BackendError) as info:
        backend.complete(request())
    assert info.value.kind == "invalid_request" and "bad tools" in str(info.value) and len(seen) == 1

    backend, _ = mock(httpx2.Response(404, json={"error": "model 'qwen9' not found"}))  # Ollama
    with pytest.raises(BackendError) as info:
        backend.complete(request())
    assert info.value.kind == "not_found" and "qwen9" in str(info.value)

    backend, _ = mock(httpx2.Response(400, json={"object": "error", "message": "context too long"}))  # vLLM
    with pytest.raises(BackendError, match="context too long"):
        backend.complete(request())

    backend, seen = mock(httpx2.Response(503, text="loading model"), httpx2.Response(200, json=codec.encode_response(FINAL)))
    assert backend.complete(request()).text() == "Snowing in Oslo."
    assert len(seen) == 2


def test_stream_error_chunk_and_ignored_stream_flag() -> None:
    err = b'data: {"error": {"message": "out of memory", "type": "server_error"}}\n\n'
    backend, _ = mock(httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=err))
    with pytest.raises(BackendError, match="out of memory"):
        list(backend.stream(request()))

    # A server that ignores "stream": true and answers one JSON document still streams.
    backend, _ = mock(httpx2.Response(200, json=codec.encode_response(FINAL)))
    assert accumulate(backend.stream(request())).text() == "Snowing in Oslo."

    backend, _ = mock(httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=b"data: {not json\n\n"))
    with pytest.raises(BackendError, match="malformed"):
        list(backend.stream(request()))


def test_spec_strings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    b = load_backend("openai:http://127.0.0.1:11434/v1#qwen2.5")
    assert (b.base_url, b.model) == ("http://127.0.0.1:11434/v1", "qwen2.5")  # type: ignore[attr-defined]
    b = load_backend("openai:gpt-4o-mini")
    assert (b.base_url, b.model) == ("https://api.openai.com/v1", "gpt-4o-mini")  # type: ignore[attr-defined]
