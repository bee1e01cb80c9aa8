"""The async upstream calls on aiohttp (backends/_aiohttp.py), against real sockets: the
answers are those httpx2 would give, and every way the network fails is the same
BackendError kind as before (unavailable, timeout, a cut stream an error, never an answer)."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import anyio
import pytest

from tooluse.backends._aiohttp import AiohttpTransport
from tooluse.backends.anthropic import AnthropicBackend
from tooluse.backends.options import RetryPolicy
from tooluse.errors import BackendError
from tooluse.messages import Request
from tooluse.stream import MessageStop, accumulate

pytest.importorskip("aiohttp")

NO_RETRY = RetryPolicy(max_retries=0)
MESSAGE = {"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
           "content": [{"type": "text", "text": "héllo"}], "stop_reason": "end_turn",
           "stop_sequence": None, "usage": {"input_tokens": 3, "output_tokens": 1}}
EVENTS = [
    ("message_start", {"type": "message_start", "message": {**MESSAGE, "content": [],
                                                            "stop_reason": None}}),
    ("content_block_start", {"type": "content_block_start", "index": 0,
                             "content_block": {"type": "text", "text": ""}}),
    ("ping", {"type": "ping"}),
    ("content_block_delta", {"type": "content_block_delta", "index": 0,
                             "delta": {"type": "text_delta", "text": "hé"}}),
    ("content_block_delta", {"type": "content_block_delta", "index": 0,
                             "delta": {"type": "text_delta", "text": "llo"}}),
    ("content_block_stop", {"type": "content_block_stop", "index": 0}),
    ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                       "usage": {"output_tokens": 1}}),
    ("message_stop", {"type": "message_stop"}),
]


def _sse(events: list[tuple[str, dict[str, object]]]) -> bytes:
    return b"".join(f"event: {n}\ndata: {json.dumps(d)}\n\n".encode() for n, d in events)


@contextmanager
def _server(answer: Callable[[socket.socket], None]) -> Iterator[str]:
    """A socket server on 127.0.0.1 that reads one request head and body, then ``answer``s."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    stop = threading.Event()

    def serve() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                data = b""
                while b"\r\n\r\n" not in data:
                    data += conn.recv(65536)
                head, _, body = data.partition(b"\r\n\r\n")
                length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                                  if line.lower().startswith(b"content-length")))
                while len(body) < length:
                    body += conn.recv(65536)
                answer(conn)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        stop.set()
        thread.join(5)
        listener.close()


def _head(status: str, ctype: str, length: int | None = None) -> bytes:
    head = f"HTTP/1.1 {status}\r\ncontent-type: {ctype}\r\n"
    head += f"content-length: {length}\r\n" if length is not None else "connection: close\r\n"
    return (head + "\r\n").encode()


def _request() -> Request:
    return Request.model_validate({"model": "m", "max_tokens": 10,
                                   "messages": [{"role": "user", "content": "hi"}]})


def _backend(url: str, **options: object) -> AnthropicBackend:
    backend = AnthropicBackend("m", base_url=url, api_key="k", retry=NO_RETRY,
                               **options)  # type: ignore[arg-type]
    assert backend.upstream._fast_ok, "aiohttp is installed: the async calls must use it"
    return backend


def test_a_json_answer_and_a_stream_come_through_whole() -> None:
    body = json.dumps(MESSAGE).encode()

    def answer(conn: socket.socket) -> None:
        conn.sendall(_head("200 OK", "application/json", len(body)) + body)

    async def main() -> None:
        with _server(answer) as url:
            backend = _backend(url)
            response = await backend.acomplete(_request())
            assert response.content[0].text == "héllo"  # type: ignore[union-attr]
            await backend.aclose()

    anyio.run(main)

    stream = _sse(EVENTS)

    def answer_stream(conn: socket.socket) -> None:
        conn.sendall(_head("200 OK", "text/event-stream"))
        for k in range(0, len(stream), 7):  # in pieces that cut lines and UTF-8 characters
            conn.sendall(stream[k:k + 7])

    async def main_stream() -> None:
        with _server(answer_stream) as url:
            backend = _backend(url)
            events = [e async for e in backend.astream(_request())]
            assert isinstance(events[-1], MessageStop)
            assert accumulate(events).content[0].text == "héllo"  # type: ignore[union-attr]
            await backend.aclose()

    anyio.run(main_stream)


def test_an_http_error_is_read_from_its_body() -> None:
    body = json.dumps({"type": "error", "error": {"type": "rate_limit_error",
                                                  "message": "slow down"}}).encode()

    def answer(conn: socket.socket) -> None:
        conn.sendall(_head("429 Too Many Requests", "application/json", len(body)) + body)

    async def main() -> None:
        with _server(answer) as url:
            backend = _backend(url)
            with pytest.raises(BackendError) as caught:
                await backend.acomplete(_request())
            await backend.aclose()
            assert caught.value.kind == "rate_limit" and "slow down" in caught.value.message

    anyio.run(main)


def test_nobody_listening_is_unavailable() -> None:
    with socket.create_server(("127.0.0.1", 0)) as sock:
        port = sock.getsockname()[1]  # closed when the block ends: nothing listens there

    async def main() -> None:
        backend = _backend(f"http://127.0.0.1:{port}")
        with pytest.raises(BackendError) as caught:
            await backend.acomplete(_request())
        await backend.aclose()
        assert caught.value.kind == "unavailable"

    anyio.run(main)


def test_a_silent_upstream_is_a_timeout_within_the_bound() -> None:
    def answer(conn: socket.socket) -> None:
        time.sleep(1.5)

    async def main() -> None:
        with _server(answer) as url:
            started = time.monotonic()
            backend = _backend(url, timeout=0.5)
            with pytest.raises(BackendError) as caught:
                await backend.acomplete(_request())
            await backend.aclose()
            assert caught.value.kind == "timeout"
            assert time.monotonic() - started < 1.4

    anyio.run(main)


@pytest.mark.parametrize("cut", [40, 300])
def test_a_stream_cut_by_the_upstream_is_an_error_never_an_answer(cut: int) -> None:
    stream = _sse(EVENTS)

    def answer(conn: socket.socket) -> None:
        conn.sendall(_head("200 OK", "text/event-stream") + stream[:cut])
        conn.shutdown(socket.SHUT_RDWR)

    async def main() -> None:
        with _server(answer) as url:
            backend = _backend(url)
            with pytest.raises(BackendError):
                [e async for e in backend.astream(_request())]
            await backend.aclose()

    anyio.run(main)


def test_a_backend_used_on_a_second_event_loop_leaves_nothing_unclosed() -> None:
    body = json.dumps(MESSAGE).encode()

    def answer(conn: socket.socket) -> None:
        conn.sendall(_head("200 OK", "application/json", len(body)) + body)

    with _server(answer) as url:
        backend = _backend(url)
        for _ in range(2):  # each anyio.run is a new loop: a new pool, the old one closed
            anyio.run(backend.acomplete, _request())
        first_gone = backend.upstream._fast
        backend.close()
    assert first_gone is not None and first_gone._session is None


def test_the_transport_closes_its_session() -> None:
    async def main() -> None:
        transport = AiohttpTransport()
        transport._open()
        session = transport._session
        await transport.aclose()
        assert session is not None and session.closed

    anyio.run(main)
