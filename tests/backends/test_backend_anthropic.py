"""The Anthropic Messages backend against local fakes: httpx2.MockTransport for the unit
cases (headers, retries, retry-after, 5xx, timeouts, streaming, errors) and one real socket
on 127.0.0.1."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import anyio
import httpx2
import pytest

from tooluse.backends import load_backend
from tooluse.backends._retry import parse_retry_after
from tooluse.backends.anthropic import AnthropicBackend
from tooluse.backends.options import RetryPolicy
from tooluse.codecs import anthropic as codec
from tooluse.errors import BackendError
from tooluse.messages import Message, Request, Response, TextBlock, ToolSpec, ToolUseBlock, Usage
from tooluse.runner import Runner
from tooluse.stream import (
    BlockStart,
    MessageStop,
    TextDelta,
    ToolInputDelta,
    accumulate,
    events_from_response,
)

FAST = RetryPolicy(max_retries=2, initial_delay=0.001, max_delay=0.002)

WEATHER = ToolSpec(
    name="get_weather",
    description="Weather in a city.",
    input_schema={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


def request(**kw: Any) -> Request:
    base: dict[str, Any] = {
        "model": "claude-test",
        "max_tokens": 200,
        "messages": [Message(role="user", content="Weather in Paris?")],
        "tools": [WEATHER],
    }
    base.update(kw)
    return Request(**base)


TOOL_ANSWER = Response(
    id="msg_1",
    model="claude-test",
    content=[TextBlock(text="Let me look."), ToolUseBlock(id="toolu_01", name="get_weather", input={"city": "Paris"})],
    stop_reason="tool_use",
    usage=Usage(input_tokens=12, output_tokens=7),
)


def sse_body(response: Response, *, chunk_size: int = 4, ping: bool = True) -> bytes:
    out = []
    for n, payload in enumerate(codec.encode_events(events_from_response(response, chunk_size=chunk_size))):
        out.append(f"event: {payload['type']}\ndata: {json.dumps(payload)}\n\n")
        if ping and n == 1:
            out.append('event: ping\ndata: {"type": "ping"}\n\n')
    return "".join(out).encode()


class FakeMessagesAPI:
    """A Messages API in a function: answers from a list of responses or error tuples,
    records what it was sent."""

    def __init__(self, script: list[Any]) -> None:
        self.script = list(script)
        self.requests: list[httpx2.Request] = []
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, http_request: httpx2.Request) -> httpx2.Response:
        self.requests.append(http_request)
        body = json.loads(http_request.content)
        self.bodies.append(body)
        item = self.script.pop(0)
        if isinstance(item, Exception):
            raise item
        if isinstance(item, httpx2.Response):
            return item
        assert isinstance(item, Response)
        if body.get("stream"):
            return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=sse_body(item))
        return httpx2.Response(200, json=codec.encode_response(item))

    def transport(self) -> httpx2.MockTransport:
        return httpx2.MockTransport(self)


def error(status: int, type_: str, message: str, **headers: str) -> httpx2.Response:
    return httpx2.Response(
        status, headers=headers, json={"type": "error", "error": {"type": type_, "message": message}}
    )


def backend(api: FakeMessagesAPI, **kw: Any) -> AnthropicBackend:
    kw.setdefault("retry", FAST)
    return AnthropicBackend("claude-test", api_key="sk-test", transport=api.transport(), **kw)


def test_complete_sends_messages_request_and_decodes_answer() -> None:
    api = FakeMessagesAPI([TOOL_ANSWER])
    response = backend(api, betas=["tools-2024-05-16"]).complete(request())
    assert response == TOOL_ANSWER
    (sent,) = api.requests
    assert sent.method == "POST" and sent.url == "https://api.anthropic.com/v1/messages"
    assert sent.headers["x-api-key"] == "sk-test"
    assert sent.headers["anthropic-version"] == "2023-06-01"
    assert sent.headers["anthropic-beta"] == "tools-2024-05-16"
    assert "authorization" not in sent.headers
    body = api.bodies[0]
    assert body["model"] == "claude-test" and body["max_tokens"] == 200
    assert body["tools"][0]["name"] == "get_weather"
    assert "stream" not in body
    # The body is exactly the codec's encoding: one translator per format.
    assert codec.decode_request(body) == request()


def test_bearer_and_base_url() -> None:
    api = FakeMessagesAPI([TOOL_ANSWER, TOOL_ANSWER])
    b = AnthropicBackend(
        "m", auth_token="tok", base_url="http://127.0.0.1:9/", transport=api.transport()
    )
    b.complete(request())
    assert api.requests[0].headers["authorization"] == "Bearer tok"
    assert "x-api-key" not in api.requests[0].headers
    assert str(api.requests[0].url) == "http://127.0.0.1:9/v1/messages"
    both = AnthropicBackend("m", api_key="k", bearer=True, transport=api.transport())
    both.complete(request())
    assert api.requests[1].headers["x-api-key"] == "k"
    assert api.requests[1].headers["authorization"] == "Bearer k"


def test_missing_key_for_the_real_api_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    with pytest.raises(BackendError, match="ANTHROPIC_API_KEY") as info:
        AnthropicBackend("m", transport=FakeMessagesAPI([]).transport()).complete(request())
    assert info.value.kind == "authentication"


def test_429_retry_after_is_honoured() -> None:
    api = FakeMessagesAPI([error(429, "rate_limit_error", "slow down", **{"retry-after": "0.05"}), TOOL_ANSWER])
    b = backend(api)
    start = time.monotonic()
    assert b.complete(request()) == TOOL_ANSWER
    assert time.monotonic() - start >= 0.05
    assert b.retry_delays == [0.05]
    assert len(api.requests) == 2


def test_529_and_5xx_are_retried_with_backoff_then_raised() -> None:
    api = FakeMessagesAPI([error(529, "overloaded_error", "busy"), TOOL_ANSWER])
    assert backend(api).complete(request()) == TOOL_ANSWER

    api = FakeMessagesAPI([error(500, "api_error", "boom")] * 3)
    b = backend(api)
    with pytest.raises(BackendError) as info:
        b.complete(request())
    assert len(api.requests) == 3  # 1 + max_retries
    assert info.value.kind == "api" and info.value.status == 500
    assert "boom" in str(info.value)
    assert len(b.retry_delays) == 2 and all(0 < d <= 0.002 for d in b.retry_delays)


def test_client_errors_are_not_retried_and_keep_the_message() -> None:
    api = FakeMessagesAPI([error(400, "invalid_request_error", "tools.0.name: String should match pattern")])
    with pytest.raises(BackendError) as info:
        backend(api).complete(request())
    assert len(api.requests) == 1
    assert info.value.kind == "invalid_request" and info.value.status == 400
    assert "tools.0.name" in str(info.value)

    for status, type_, kind in [
        (401, "authentication_error", "authentication"),
        (403, "permission_error", "permission"),
        (404, "not_found_error", "not_found"),
        (413, "request_too_large", "request_too_large"),
    ]:
        api = FakeMessagesAPI([error(status, type_, "x")])
        with pytest.raises(BackendError) as info:
            backend(api).complete(request())
        assert info.value.kind == kind and info.value.status == status

    api = FakeMessagesAPI([httpx2.Response(502, text="<html>Bad gateway</html>")] * 3)
    with pytest.raises(BackendError) as info:
        backend(api).complete(request())
    assert info.value.kind == "unavailable" and "Bad gateway" in str(info.value)


def test_long_retry_after_is_raised_not_slept() -> None:
    api = FakeMessagesAPI([error(429, "rate_limit_error", "later", **{"retry-after": "3600"})])
    with pytest.raises(BackendError) as info:
        backend(api).complete(request())
    assert info.value.retry_after == 3600 and info.value.kind == "rate_limit"
    assert len(api.requests) == 1


def test_timeouts_and_connection_errors() -> None:
    api = FakeMessagesAPI([httpx2.ReadTimeout("slow")] * 3)
    with pytest.raises(BackendError) as info:
        backend(api).complete(request())
    assert info.value.kind == "timeout" and len(api.requests) == 3

    api = FakeMessagesAPI([httpx2.ConnectError("refused"), TOOL_ANSWER])
    assert backend(api).complete(request()) == TOOL_ANSWER


def test_real_timeout_against_a_slow_local_server() -> None:
    # The server answers after 3 s; the client gives up after 0.2 s. The bound leaves room
    # for a loaded machine and still fails if the client waited for the answer.
    with local_server(lambda handler: time.sleep(3.0)) as url:
        b = AnthropicBackend("m", api_key="k", base_url=url, timeout=0.2, max_retries=0)
        start = time.monotonic()
        with pytest.raises(BackendError) as info:
            b.complete(request())
        assert info.value.kind == "timeout"
        assert time.monotonic() - start < 2.5


def test_stream_decodes_sse_incrementally() -> None:
    api = FakeMessagesAPI([TOOL_ANSWER])
    events = list(backend(api).stream(request()))
    assert api.bodies[0]["stream"] is True
    assert isinstance(events[-1], MessageStop)
    assert sum(isinstance(e, ToolInputDelta) for e in events) > 2
    assert accumulate(events) == TOOL_ANSWER


def test_stream_error_event_is_raised() -> None:
    body = sse_body(TOOL_ANSWER)
    head = body[: body.index(b"event: content_block_delta")]
    err = b'event: error\ndata: {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}\n\n'
    api = FakeMessagesAPI([httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=head + err)])
    seen: list[Any] = []
    with pytest.raises(BackendError) as info:
        for event in backend(api).stream(request()):
            seen.append(event)
    assert info.value.kind == "overloaded" and "Overloaded" in str(info.value)
    assert any(isinstance(e, BlockStart) for e in seen)


def test_stream_http_error_before_start_is_retried() -> None:
    api = FakeMessagesAPI([error(529, "overloaded_error", "busy"), TOOL_ANSWER])
    assert accumulate(backend(api).stream(request())) == TOOL_ANSWER


def test_async_complete_and_stream() -> None:
    async def main() -> tuple[Response, list[Any]]:
        api = FakeMessagesAPI([error(429, "rate_limit_error", "x", **{"retry-after": "0"}), TOOL_ANSWER, TOOL_ANSWER])
        b = backend(api)
        response = await b.acomplete(request())
        events = [e async for e in b.astream(request())]
        await b.aclose()
        return response, events

    response, events = anyio.run(main)
    assert response == TOOL_ANSWER
    assert accumulate(events) == TOOL_ANSWER


def test_runner_over_the_anthropic_backend() -> None:
    def get_weather(city: str) -> str:
        """Weather.

        Args:
            city: The city.
        """
        return f"Sunny in {city}"

    final = Response(content=[TextBlock(text="Sunny.")], stop_reason="end_turn")
    api = FakeMessagesAPI([TOOL_ANSWER, final])
    result = Runner(backend(api), [get_weather]).run("Weather in Paris?")
    assert result.text == "Sunny."
    second = api.bodies[1]["messages"]
    assert second[-1]["content"][0] == {"type": "tool_result", "tool_use_id": "toolu_01", "content": "Sunny in Paris"}

    api = FakeMessagesAPI([TOOL_ANSWER, final])
    events = list(Runner(backend(api), [get_weather]).stream("Weather in Paris?"))
    assert events[-1].result.text == "Sunny."  # type: ignore[union-attr]


def test_spec_strings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    b = load_backend("anthropic:claude-3-5-haiku-latest")
    assert isinstance(b, AnthropicBackend)
    assert b.model == "claude-3-5-haiku-latest" and b.base_url == "https://api.anthropic.com"
    b = load_backend("anthropic:http://127.0.0.1:8000#claude-x", api_key="k")
    assert b.base_url == "http://127.0.0.1:8000" and b.model == "claude-x"  # type: ignore[attr-defined]


def test_parse_retry_after_forms() -> None:
    assert parse_retry_after({"retry-after": "2"}) == 2.0
    assert parse_retry_after({"Retry-After-Ms": "1500"}) == 1.5
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None
    past = parse_retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"})
    assert past == 0.0


# -- one real socket -----------------------------------------------------------------------

class local_server:
    """A Messages API on 127.0.0.1 (port 0) in a thread; ``behave`` may delay or answer."""

    def __init__(self, behave: Callable[[BaseHTTPRequestHandler], Any]) -> None:
        self.behave = behave

    def __enter__(self) -> str:
        behave = self.behave

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                self.body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                if behave(self) is None:
                    try:
                        self.send_response(500)
                        self.send_header("content-length", "0")
                        self.end_headers()
                    except OSError:
                        pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def serve_messages(handler: BaseHTTPRequestHandler) -> bool:
    body = handler.body  # type: ignore[attr-defined]
    assert handler.headers["x-api-key"] == "sk-local"
    if body.get("stream"):
        handler.send_response(200)
        handler.send_header("content-type", "text/event-stream")
        handler.send_header("transfer-encoding", "chunked")
        handler.end_headers()
        data = sse_body(TOOL_ANSWER, chunk_size=3)
        for i in range(0, len(data), 37):  # cut mid-line, mid-event
            piece = data[i : i + 37]
            handler.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
            handler.wfile.flush()
        handler.wfile.write(b"0\r\n\r\n")
        return True
    payload = json.dumps(codec.encode_response(TOOL_ANSWER)).encode()
    handler.send_response(200)
    handler.send_header("content-type", "application/json")
    handler.send_header("content-length", str(len(payload)))
    handler.end_headers()
    handler.wfile.write(payload)
    return True


def test_over_a_real_socket_sync_and_async() -> None:
    with local_server(serve_messages) as url:
        b = AnthropicBackend("claude-test", api_key="sk-local", base_url=url)
        assert b.complete(request()) == TOOL_ANSWER
        assert accumulate(b.stream(request())) == TOOL_ANSWER
        b.close()

        async def main() -> list[Any]:
            ab = AnthropicBackend("claude-test", api_key="sk-local", base_url=url)
            try:
                return [e async for e in ab.astream(request())]
            finally:
                await ab.aclose()

        events = anyio.run(main)
        assert accumulate(events) == TOOL_ANSWER
        assert any(isinstance(e, TextDelta) for e in events)


def test_async_stream_consumer_can_stop_early() -> None:
    with local_server(serve_messages) as url:

        async def main() -> int:
            ab = AnthropicBackend("claude-test", api_key="sk-local", base_url=url)
            n = 0
            try:
                async for _ in ab.astream(request()):
                    n += 1
                    if n == 3:
                        break
            finally:
                await ab.aclose()
            return n

        box: list[int] = []
        worker = threading.Thread(target=lambda: box.append(anyio.run(main)), daemon=True)
        worker.start()
        worker.join(timeout=10)
        assert box == [3], "closing the stream early must not hang"


def test_async_stream_error_event_and_malformed_event() -> None:
    body = sse_body(TOOL_ANSWER)
    head = body[: body.index(b"event: content_block_delta")]
    err = b'event: error\ndata: {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}\n\n'
    bad = b'event: content_block_delta\ndata: {"type": "content_block_delta", "index": 7, "delta": {"type": "text_delta", "text": "x"}}\n\n'

    async def consume(content: bytes) -> list[Any]:
        api = FakeMessagesAPI([httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=content)])
        b = backend(api)
        seen: list[Any] = []
        try:
            async for event in b.astream(request()):
                seen.append(event)
        finally:
            await b.aclose()
        return seen

    with pytest.raises(BackendError) as info:
        anyio.run(consume, head + err)
    assert info.value.kind == "overloaded"
    with pytest.raises(BackendError, match="never started") as info:
        anyio.run(consume, head + bad)  # a delta for a block that never started
    assert info.value.kind == "api"
