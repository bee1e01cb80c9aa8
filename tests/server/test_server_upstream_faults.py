"""What the gateway's clients get when the *upstream* of an
HTTP backend fails, in each API's stream (Messages SSE, ConverseStream frames, Chat chunks).

- F4: an upstream stream that ends without its terminal event is an error, never a stop.
- F5: tool-argument JSON that does not parse when its block closes is an error.
- A silent upstream is answered with the API's native timeout error within the total bound.
- A client that leaves while the upstream is silent leaves no upstream retries and no
  thread inside the backend behind (requests counted at a real local upstream).

The upstreams are fakes: ``httpx2.MockTransport`` for the stream contents, a raw socket
server that never answers for the silence.
"""

from __future__ import annotations

import json
import socket
import socketserver
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, Self

import httpx2
import pytest
from botocore.eventstream import EventStreamBuffer

from tooluse.backends.anthropic import AnthropicBackend
from tooluse.backends.openai import OpenAIBackend
from tooluse.backends.openai_prompt import OpenAIPromptBackend
from tooluse.backends.options import RetryPolicy
from tooluse.server import ServerThread, create_app

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}}
FAST = RetryPolicy(max_retries=2, initial_delay=0.01, max_delay=0.02, jitter=0.0)


# -- fake upstream streams ------------------------------------------------------------------

def _anthropic_sse(*events: dict[str, Any]) -> bytes:
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


_START = {"type": "message_start", "message": {
    "id": "msg_up", "type": "message", "role": "assistant", "model": "m", "content": [],
    "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 3, "output_tokens": 0}}}


def _text_delta(text: str) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}


def _json_delta(text: str) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": text}}


_TOOL_START = {"type": "content_block_start", "index": 0, "content_block": {
    "type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}}}
_TEXT_START = {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}


def _end(reason: str) -> list[dict[str, Any]]:
    return [{"type": "content_block_stop", "index": 0},
            {"type": "message_delta", "delta": {"stop_reason": reason, "stop_sequence": None},
             "usage": {"output_tokens": 5}},
            {"type": "message_stop"}]


ANTHROPIC = {
    "complete": _anthropic_sse(_START, _TOOL_START, _json_delta('{"city": "Paris"}'), *_end("tool_use")),
    # F4: the connection closes after a delta; no content_block_stop, message_delta, message_stop
    "cut": _anthropic_sse(_START, _TEXT_START, _text_delta("Hello, wor")),
    # F4: everything but the terminal message_stop
    "no_stop": _anthropic_sse(_START, _TEXT_START, _text_delta("Hello"), *_end("end_turn")[:2]),
    # F5: the tool's input is cut mid-string, yet the block stops and the message says tool_use
    "broken_json": _anthropic_sse(_START, _TOOL_START, _json_delta('{"city": "Par'), *_end("tool_use")),
}


def _chunk(delta: dict[str, Any], finish: str | None = None) -> str:
    return "data: " + json.dumps({"id": "chatcmpl-up", "object": "chat.completion.chunk",
                                  "model": "m", "choices": [{"index": 0, "delta": delta,
                                                             "finish_reason": finish}]}) + "\n\n"


def _call(arguments: str) -> list[str]:
    return [_chunk({"role": "assistant", "tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                                                        "function": {"name": "get_weather", "arguments": ""}}]}),
            _chunk({"tool_calls": [{"index": 0, "function": {"arguments": arguments}}]})]


OPENAI = {
    "complete": "".join([*_call('{"city": "Paris"}'), _chunk({}, "tool_calls"), "data: [DONE]\n\n"]).encode(),
    # F4: no finish_reason and no [DONE]: the connection just closed
    "cut": "".join([_chunk({"role": "assistant", "content": "Hello, wor"})]).encode(),
    # F4: a finish_reason but no [DONE] (the usage chunk and the end marker are lost)
    "no_stop": "".join([_chunk({"role": "assistant", "content": "Hello"}), _chunk({}, "stop")]).encode(),
    # F5
    "broken_json": "".join([*_call('{"city": "Par'), _chunk({}, "tool_calls"), "data: [DONE]\n\n"]).encode(),
}


def _backend(kind: str, body: bytes) -> Any:
    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    transport = httpx2.MockTransport(handler)
    if kind == "anthropic":
        return AnthropicBackend("m", api_key="k", base_url="http://upstream", transport=transport, retry=FAST)
    return OpenAIBackend("m", base_url="http://upstream/v1", transport=transport, retry=FAST)


# -- the three APIs, streamed ---------------------------------------------------------------

def _messages(url: str, client: httpx2.Client) -> httpx2.Response:
    return client.post(url + "/v1/messages", json={
        "model": "m", "max_tokens": 50, "stream": True,
        "messages": [{"role": "user", "content": "weather in Paris?"}],
        "tools": [{"name": "get_weather", "input_schema": SCHEMA}]})


def _converse(url: str, client: httpx2.Client) -> httpx2.Response:
    return client.post(url + "/model/m/converse-stream", json={
        "messages": [{"role": "user", "content": [{"text": "weather in Paris?"}]}],
        "toolConfig": {"tools": [{"toolSpec": {"name": "get_weather", "inputSchema": {"json": SCHEMA}}}]}})


def _chat(url: str, client: httpx2.Client) -> httpx2.Response:
    return client.post(url + "/v1/chat/completions", json={
        "model": "m", "stream": True,
        "messages": [{"role": "user", "content": "weather in Paris?"}],
        "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": SCHEMA}}]})


def _sse_events(body: bytes) -> list[tuple[str, Any]]:
    """(event name, data) pairs; Chat's data-only lines get the name 'data'."""
    out: list[tuple[str, Any]] = []
    for block in body.decode().split("\n\n"):
        name, data = "data", None
        for line in block.splitlines():
            if line.startswith("event: "):
                name = line[len("event: "):]
            elif line.startswith("data: "):
                raw = line[len("data: "):]
                data = raw if raw == "[DONE]" else json.loads(raw)
        if data is not None:
            out.append((name, data))
    return out


def _frames(body: bytes) -> list[tuple[str, str, Any]]:
    """(message type, event or exception type, payload) of each ConverseStream frame."""
    buffer = EventStreamBuffer()
    buffer.add_data(body)
    out = []
    for message in buffer:
        headers = message.headers
        kind = headers.get(":message-type")
        name = headers.get(":event-type") or headers.get(":exception-type")
        out.append((kind, name, json.loads(message.payload or b"{}")))
    return out


def _outcome(api: str, response: httpx2.Response) -> tuple[str, str]:
    """('complete', stop reason) or ('error', native error type) of a streamed answer, and
    checks that an error is never preceded by the API's normal end."""
    assert response.status_code == 200, response.text
    if api == "messages":
        events = _sse_events(response.content)
        names = [name for name, _ in events]
        if names[-1] == "error":
            assert "message_stop" not in names
            assert not any(n == "message_delta" for n in names), names
            return "error", events[-1][1]["error"]["type"]
        assert names[-1] == "message_stop"
        delta = [d for n, d in events if n == "message_delta"][-1]
        return "complete", delta["delta"]["stop_reason"]
    if api == "converse":
        frames = _frames(response.content)
        if frames[-1][0] == "exception":
            assert not any(name == "messageStop" for _, name, _ in frames)
            return "error", frames[-1][1]
        stop = [p for _, name, p in frames if name == "messageStop"][-1]
        return "complete", stop["stopReason"]
    events = _sse_events(response.content)
    datas = [d for _, d in events]
    if isinstance(datas[-1], dict) and "error" in datas[-1]:
        assert "[DONE]" not in datas
        assert not any(isinstance(d, dict) and d.get("choices") and d["choices"][0].get("finish_reason")
                       for d in datas)
        return "error", datas[-1]["error"]["type"]
    assert datas[-1] == "[DONE]"
    finish = [d["choices"][0]["finish_reason"] for d in datas
              if isinstance(d, dict) and d.get("choices") and d["choices"][0].get("finish_reason")]
    return "complete", finish[-1]


CALL = {"messages": _messages, "converse": _converse, "chat": _chat}
#: The native in-stream error each API reports an upstream's failure (kind 'api') with.
NATIVE_ERROR = {"messages": "api_error", "converse": "internalServerException", "chat": "server_error"}
NATIVE_STOP = {"messages": "tool_use", "converse": "tool_use", "chat": "tool_calls"}


@pytest.mark.parametrize("upstream", ["anthropic", "openai"])
@pytest.mark.parametrize("api", ["messages", "converse", "chat"])
@pytest.mark.parametrize("fault", ["complete", "cut", "no_stop", "broken_json"])
def test_a_cut_or_broken_upstream_stream_is_a_native_in_stream_error(upstream: str, api: str, fault: str) -> None:
    body = (ANTHROPIC if upstream == "anthropic" else OPENAI)[fault]
    with ServerThread(create_app(_backend(upstream, body), close_backend=True)) as srv, \
            httpx2.Client(timeout=20) as client:
        outcome = _outcome(api, CALL[api](srv.url, client))
    if fault == "complete":  # the control: a whole upstream stream ends normally
        assert outcome == ("complete", NATIVE_STOP[api])
    else:
        assert outcome == ("error", NATIVE_ERROR[api])


def test_the_error_says_what_was_wrong_with_the_upstream_stream() -> None:
    with ServerThread(create_app(_backend("anthropic", ANTHROPIC["broken_json"]))) as srv, \
            httpx2.Client(timeout=20) as client:
        events = _sse_events(_messages(srv.url, client).content)
    message = events[-1][1]["error"]["message"]
    assert "incomplete" in message and "not valid JSON" in message and "get_weather" in message
    # the cut tool call was streamed as it came, but never closed as a complete call
    assert ("content_block_stop" not in [name for name, _ in events])


# -- a silent upstream ----------------------------------------------------------------------

class SilentUpstream:
    """A TCP server that reads each HTTP request and never answers. Counts the requests it
    received and the connections the client closed."""

    def __init__(self) -> None:
        self.requests = 0
        self.closed = 0
        self.lock = threading.Lock()
        self.conns: list[socket.socket] = []
        outer = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                sock: socket.socket = self.request
                with outer.lock:
                    outer.conns.append(sock)
                data = b""
                while True:
                    while b"\r\n\r\n" not in data:
                        chunk = sock.recv(65536)
                        if not chunk:
                            with outer.lock:
                                outer.closed += 1
                            return
                        data += chunk
                    head, _, data = data.partition(b"\r\n\r\n")
                    length = 0
                    for line in head.split(b"\r\n"):
                        if line.lower().startswith(b"content-length:"):
                            length = int(line.split(b":")[1])
                    while len(data) < length:
                        chunk = sock.recv(65536)
                        if not chunk:
                            break
                        data += chunk
                    data = data[length:]
                    with outer.lock:
                        outer.requests += 1

        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        for sock in self.conns:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def _wait(condition: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


@pytest.mark.parametrize("upstream", ["anthropic", "openai"])
@pytest.mark.parametrize("api, stream, status, native", [
    ("messages", True, 504, "timeout_error"),
    ("messages", False, 504, "timeout_error"),
    ("converse", True, 408, "ModelTimeoutException"),
    ("chat", True, 408, "timeout"),
])
def test_a_silent_upstream_is_answered_natively_within_the_total_timeout(
        upstream: str, api: str, stream: bool, status: int, native: str) -> None:
    total = 1.5
    with SilentUpstream() as silent:
        options: dict[str, Any] = {
            "timeout": total, "read_timeout": 0.4, "connect_timeout": 1.0,
            "retry": RetryPolicy(max_retries=20, initial_delay=0.01, jitter=0.0)}
        backend: Any = (AnthropicBackend("m", api_key="k", base_url=silent.url, **options)
                        if upstream == "anthropic"
                        else OpenAIBackend("m", base_url=silent.url + "/v1", **options))
        with ServerThread(create_app(backend, close_backend=True)) as srv, httpx2.Client(timeout=30) as client:
            started = time.monotonic()
            if api == "messages" and not stream:
                response = client.post(srv.url + "/v1/messages", json={
                    "model": "m", "max_tokens": 50, "messages": [{"role": "user", "content": "hi"}]})
            else:
                response = CALL[api](srv.url, client)
            elapsed = time.monotonic() - started
    # the bound holds (slack for a loaded machine), and it was not one attempt that waited it out
    assert elapsed < total + 1.5, elapsed
    assert response.status_code == status, response.text
    if api == "messages":
        assert response.json()["error"]["type"] == native
    elif api == "converse":
        assert response.headers["x-amzn-ErrorType"] == native
    else:
        assert response.json()["error"]["type"] == native
    if stream:  # a stream's attempts wait read_timeout each: retried, within the deadline
        assert 2 <= silent.requests <= 5, silent.requests
    else:  # a non-streamed answer is generated in silence: one attempt, bounded by the deadline
        assert silent.requests == 1


def _threads_inside_backend_http() -> list[str]:
    """Threads whose stack is inside the backends' HTTP plumbing right now."""
    names = {t.ident: t.name for t in threading.enumerate()}
    found = []
    for ident, frame in sys._current_frames().items():
        f: Any = frame
        while f is not None:
            if f.f_code.co_filename.endswith(("backends/_upstream.py", "backends/_http.py")):
                found.append(names.get(ident, str(ident)))
                break
            f = f.f_back
    return found


def _open_streams(url: str, n: int, path: str, body: dict[str, Any]) -> Iterator[socket.socket]:
    """Start ``n`` streaming requests on raw sockets (so the test decides when they close)."""
    host, port = url.removeprefix("http://").split(":")
    raw = json.dumps(body).encode()
    for _ in range(n):
        sock = socket.create_connection((host, int(port)))
        sock.sendall(f"POST {path} HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/json\r\n"
                     f"content-length: {len(raw)}\r\n\r\n".encode() + raw)
        yield sock


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
@pytest.mark.parametrize("upstream", ["anthropic", "openai", "openai-prompt"])
def test_clients_that_leave_while_the_upstream_is_silent_leave_no_retries_and_no_threads(
        upstream: str, stream: bool) -> None:
    n = 6
    read_timeout = 2.0
    with SilentUpstream() as silent:
        # Without cancellation every call would be retried after read_timeout, 5 times.
        options: dict[str, Any] = {
            "timeout": 60, "read_timeout": read_timeout,
            "retry": RetryPolicy(max_retries=5, initial_delay=0.01, jitter=0.0)}
        backend: Any = (AnthropicBackend("m", api_key="k", base_url=silent.url, **options)
                        if upstream == "anthropic"
                        else OpenAIBackend("m", base_url=silent.url + "/v1", **options)
                        if upstream == "openai"
                        else OpenAIPromptBackend("m", base_url=silent.url + "/v1", **options))
        with ServerThread(create_app(backend, close_backend=True)) as srv:
            assert _wait(lambda: not _threads_inside_backend_http(), 5)
            body = {"model": "m", "max_tokens": 50, "stream": stream,
                    "messages": [{"role": "user", "content": "hi"}]}
            clients = list(_open_streams(srv.url, n, "/v1/messages", body))
            assert _wait(lambda: silent.requests == n, 10), silent.requests
            # each call waits on the upstream: in a thread of its own where the backend is sync
            # (openai-prompt), on the event loop where it is async (streams too: their
            # pipeline runs there, in a greenlet)
            in_threads = n if upstream == "openai-prompt" else 0
            assert len(_threads_inside_backend_http()) == in_threads
            left = time.monotonic()
            for sock in clients:
                sock.close()
            # the gateway notices, aborts each blocked upstream read at once (well before the
            # read timeout), and its threads leave the backend
            assert _wait(lambda: silent.closed == n, 5), (silent.closed, silent.requests)
            assert _wait(lambda: not _threads_inside_backend_http(), 5), _threads_inside_backend_http()
            aborted = time.monotonic() - left
            # no retry after the clients left: nothing more reaches the upstream
            time.sleep(read_timeout + 0.5)
            assert silent.requests == n
    assert aborted < 0.75 * read_timeout, aborted  # aborted, not waited out
