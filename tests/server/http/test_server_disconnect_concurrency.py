"""A client leaving mid-stream stops generation; a concurrency limit queues requests."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import anthropic
import httpx2
import pytest

from tooluse.backend import Backend
from tooluse.messages import Request, TextBlock, Usage
from tooluse.server import ServerThread, create_app
from tooluse.stream import BlockStart, BlockStop, MessageDelta, MessageStart, MessageStop, TextDelta


class SlowBackend(Backend):
    """Emits ``steps`` text deltas ``delay`` seconds apart; counts what was pulled."""

    name = "slow"

    def __init__(self, steps: int = 200, delay: float = 0.02) -> None:
        self.steps = steps
        self.delay = delay
        self.pulled = 0
        self.closed = threading.Event()
        self.active = 0
        self.max_active = 0
        self._lock = threading.Lock()

    def stream(self, request: Request) -> Iterator[Any]:
        with self._lock:
            self.active += 1
            self.max_active = max(self.max_active, self.active)
        try:
            yield MessageStart(id="msg_slow", model="slow")
            yield BlockStart(index=0, block=TextBlock(text=""))
            for i in range(self.steps):
                time.sleep(self.delay)
                self.pulled += 1
                yield TextDelta(index=0, text=f"{request.messages[-1].text()}{i} ")
            yield BlockStop(index=0)
            yield MessageDelta(stop_reason="end_turn", usage=Usage(output_tokens=self.steps))
            yield MessageStop()
        finally:
            with self._lock:
                self.active -= 1
            self.closed.set()


BODY = {"model": "m", "max_tokens": 5, "stream": True, "messages": [{"role": "user", "content": "x"}]}


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/messages", BODY),
        ("/model/m/converse-stream", {"messages": [{"role": "user", "content": [{"text": "x"}]}]}),
    ],
)
def test_disconnect_stops_generation(path: str, body: dict[str, Any]) -> None:
    backend = SlowBackend()
    with ServerThread(create_app(backend)) as srv:
        with httpx2.Client(timeout=10) as client, client.stream("POST", srv.url + path, json=body) as response:
            assert response.status_code == 200
            received = 0
            for chunk in response.iter_bytes():
                received += len(chunk)
                if backend.pulled >= 5:
                    break
        # the connection is closed: the backend generator must be closed soon after
        assert backend.closed.wait(5), "backend generator was not closed after disconnect"
        stopped_at = backend.pulled
        time.sleep(0.3)
        assert backend.pulled == stopped_at, "events were still pulled after the disconnect"
        assert stopped_at < 50, stopped_at
    assert received > 0


def test_full_stream_still_completes() -> None:
    backend = SlowBackend(steps=10, delay=0.0)
    with ServerThread(create_app(backend)) as srv:
        r = httpx2.post(srv.url + "/v1/messages", json=BODY, timeout=10)
    assert r.text.count("event: content_block_delta") == 10
    assert r.text.rstrip().endswith('event: message_stop\ndata: {"type":"message_stop"}')


def test_idle_stream_gets_pings() -> None:
    backend = SlowBackend(steps=2, delay=0.5)
    with ServerThread(create_app(backend, ping_interval=0.1)) as srv:
        r = httpx2.post(srv.url + "/v1/messages", json=BODY, timeout=10)
    assert r.text.count("event: ping") >= 4  # one after message_start, the rest keep-alives
    events = [f.split("\n")[0] for f in r.text.split("\n\n") if f]
    assert events[-1] == "event: message_stop"


def run_three(url: str) -> list[str]:
    client = anthropic.Anthropic(base_url=url, api_key="k", max_retries=0, timeout=30)

    def one(word: str) -> str:
        with client.messages.stream(model="m", max_tokens=5,
                                    messages=[{"role": "user", "content": word}]) as s:
            return "".join(s.text_stream)

    with ThreadPoolExecutor(3) as pool:
        return list(pool.map(one, ["a", "b", "c"]))


def test_concurrency_limit_queues_requests() -> None:
    backend = SlowBackend(steps=5, delay=0.05)
    with ServerThread(create_app(backend, max_concurrency=1)) as srv:
        texts = run_three(srv.url)
    assert texts == ["a0 a1 a2 a3 a4 ", "b0 b1 b2 b3 b4 ", "c0 c1 c2 c3 c4 "]
    assert backend.max_active == 1


def test_without_limit_requests_overlap() -> None:
    backend = SlowBackend(steps=5, delay=0.05)
    with ServerThread(create_app(backend)) as srv:
        run_three(srv.url)
    assert backend.max_active > 1  # so the test above can fail


def test_backend_declared_limit_is_used() -> None:
    backend = SlowBackend(steps=3, delay=0.05)
    backend.max_concurrency = 1  # type: ignore[attr-defined]
    with ServerThread(create_app(backend)) as srv:
        run_three(srv.url)
    assert backend.max_active == 1


def test_converse_stream_reports_latency() -> None:
    import boto3
    from botocore.config import Config

    backend = SlowBackend(steps=3, delay=0.1)
    with ServerThread(create_app(backend)) as srv:
        client = boto3.client("bedrock-runtime", region_name="us-east-1", endpoint_url=srv.url,
                              aws_access_key_id="A", aws_secret_access_key="s",
                              config=Config(retries={"total_max_attempts": 1}))
        events = list(client.converse_stream(modelId="m", messages=[{"role": "user", "content": [{"text": "x"}]}])["stream"])
    assert 250 <= events[-1]["metadata"]["metrics"]["latencyMs"] < 5000


class AsyncOnlyBackend(Backend):
    """A backend with only a native async stream (as an HTTP backend might have)."""

    name = "async-only"

    def __init__(self, steps: int = 500, delay: float = 0.02) -> None:
        self.steps = steps
        self.delay = delay
        self.pulled = 0
        self.closed = threading.Event()

    async def astream(self, request: Request) -> Any:  # type: ignore[override]
        import anyio

        try:
            yield MessageStart(id="msg_async", model="a")
            yield BlockStart(index=0, block=TextBlock(text=""))
            for i in range(self.steps):
                await anyio.sleep(self.delay)
                self.pulled += 1
                yield TextDelta(index=0, text=f"{i} ")
            yield BlockStop(index=0)
            yield MessageDelta(stop_reason="end_turn")
            yield MessageStop()
        finally:
            self.closed.set()


def test_disconnect_closes_an_async_only_backend_stream() -> None:
    backend = AsyncOnlyBackend()
    with ServerThread(create_app(backend)) as srv:
        with httpx2.Client(timeout=10) as client, client.stream("POST", srv.url + "/v1/messages", json=BODY) as response:
            for _ in response.iter_bytes():
                if backend.pulled >= 5:
                    break
        assert backend.closed.wait(5), "the async generator was not closed after the disconnect"
        stopped_at = backend.pulled
        time.sleep(0.3)
        assert backend.pulled == stopped_at
        assert stopped_at < 100
        # and a full, uninterrupted stream through the same path works
        full = AsyncOnlyBackend(steps=50, delay=0)
        full_app = create_app(full)
    with ServerThread(full_app) as srv2:
        import anthropic as sdk

        with sdk.Anthropic(base_url=srv2.url, api_key="k", max_retries=0).messages.stream(
            model="m", max_tokens=5, messages=[{"role": "user", "content": "x"}]) as s:
            text = "".join(s.text_stream)
    assert text == "".join(f"{i} " for i in range(50))
