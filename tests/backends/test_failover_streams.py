"""Async streams through the composites once their failover decision is made: the innermost
stream is handed through (one generator per event, not one per layer), and each
deployment's accounting still ends exactly once, however the stream ends: run to its end,
failed in the middle, left by its reader, or cancelled.

The backend under them is natively async (an HTTP backend's shape): an async generator
that says whether it was closed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio
import pytest

from tooluse.backend import Backend
from tooluse.backends.balanced import BalancedBackend
from tooluse.backends.failover import FallbackBackend, aopen_stream, recording_attempts
from tooluse.errors import BackendError
from tooluse.messages import Message, Request, Response, TextBlock
from tooluse.stream import MessageStart, StreamEvent, accumulate, events_from_response

REQUEST = Request(messages=[Message(role="user", content="hi")], max_tokens=10)


class AsyncUpstream(Backend):
    """Streams ``text`` natively async, in 3-character pieces. ``fail_after``: raise an
    overloaded error after that many events; ``hang_after``: wait forever after that many
    (until cancelled). Counts its streams opened and closed (its generator's end ran)."""

    name = "async-upstream"

    def __init__(self, text: str = "a long enough answer", *, fail_after: int | None = None,
                 hang_after: int | None = None) -> None:
        self.text = text
        self.fail_after = fail_after
        self.hang_after = hang_after
        self.opened = 0
        self.closed = 0
        self.generators: list[Any] = []

    def stream(self, request: Request) -> Iterator[StreamEvent]:
        raise AssertionError("the async path must not fall back to the sync one")

    def astream(self, request: Request) -> AsyncIterator[StreamEvent]:
        generator = self._events()
        self.generators.append(generator)
        return generator

    async def _events(self) -> AsyncIterator[StreamEvent]:
        self.opened += 1
        try:
            events = events_from_response(Response(content=[TextBlock(text=self.text)],
                                                   stop_reason="end_turn"), chunk_size=3)
            for n, event in enumerate(events):
                if n == self.fail_after:
                    raise BackendError("Overloaded", kind="overloaded")
                if n == self.hang_after:
                    await anyio.sleep_forever()
                yield event
        finally:
            self.closed += 1


def _text(events: list[StreamEvent]) -> str:
    response = accumulate(iter(events))
    return "".join(b.text for b in response.content if isinstance(b, TextBlock))


def _counts(pool: BalancedBackend) -> list[tuple[int, int, int]]:
    return [(s["in_flight"], s["served"], s["failed"]) for s in pool.states()]


def test_the_committed_stream_is_the_innermost_one_handed_through() -> None:
    """Fallback over balanced deployments: once a deployment got to its first content
    event, what is left to read is that deployment's own generator, not a wrapper per
    layer; the ends of the layers run when it is closed."""
    broken, good = AsyncUpstream(fail_after=1), AsyncUpstream()
    pool = BalancedBackend([broken, good], labels=["p[0]", "p[1]"])
    backend = FallbackBackend([pool, AsyncUpstream()], labels=["p", "spare"])

    async def run() -> list[StreamEvent]:
        with recording_attempts() as log:
            opened = await aopen_stream(backend, REQUEST)
        assert [(a.target, a.outcome) for a in log] == [("p[0]", "failed"), ("p[1]", "answered")]
        assert opened.tail is good.generators[0]
        assert _counts(pool) == [(0, 0, 1), (1, 0, 0)]
        return [e async for e in opened.events()]

    events = anyio.run(run)
    assert _text(events) == "a long enough answer"
    assert sum(isinstance(e, MessageStart) for e in events) == 1
    assert _counts(pool) == [(0, 0, 1), (0, 1, 0)]
    assert (broken.opened, broken.closed, good.opened, good.closed) == (1, 1, 1, 1)


def test_a_stream_run_to_its_end_is_served_once() -> None:
    upstream = AsyncUpstream()
    pool = BalancedBackend([upstream])
    backend = FallbackBackend([pool, AsyncUpstream()])

    async def run() -> str:
        return _text([e async for e in backend.astream(REQUEST)])

    assert anyio.run(run) == "a long enough answer"
    assert _counts(pool) == [(0, 1, 0)]
    assert upstream.closed == 1


def test_a_failure_after_the_first_content_counts_once_and_cools_down() -> None:
    upstream = AsyncUpstream(fail_after=4)
    pool = BalancedBackend([upstream])
    spare = AsyncUpstream()
    backend = FallbackBackend([pool, spare])
    seen: list[StreamEvent] = []

    async def run() -> None:
        async for event in backend.astream(REQUEST):
            seen.append(event)

    with pytest.raises(BackendError, match="Overloaded"):
        anyio.run(run)
    assert len(seen) == 4  # not replayed on the spare
    assert spare.opened == 0
    assert _counts(pool) == [(0, 0, 1)]
    assert pool.states()[0]["state"] == "cooling"
    assert upstream.closed == 1


def test_a_reader_leaving_the_stream_is_neither_served_nor_failed() -> None:
    upstream = AsyncUpstream()
    pool = BalancedBackend([upstream])
    backend = FallbackBackend([pool, AsyncUpstream()])

    async def run() -> None:
        stream = backend.astream(REQUEST)
        async for _ in stream:
            break
        assert _counts(pool) == [(1, 0, 0)]
        await stream.aclose()  # type: ignore[attr-defined]

    anyio.run(run)
    assert _counts(pool) == [(0, 0, 0)]
    assert pool.states()[0]["state"] == "ready"
    assert upstream.closed == 1


@pytest.mark.parametrize("hang_after", [1, 5], ids=["while-opening", "mid-stream"])
def test_a_cancelled_stream_is_neither_served_nor_failed(hang_after: int) -> None:
    """A client that disconnects cancels the task reading the stream: before the first
    content event (the failover still deciding) or after it."""
    upstream = AsyncUpstream(hang_after=hang_after)
    pool = BalancedBackend([upstream])
    backend = FallbackBackend([pool, AsyncUpstream()])
    seen: list[StreamEvent] = []

    async def read() -> None:
        stream = backend.astream(REQUEST)
        try:
            async for event in stream:
                seen.append(event)
        finally:
            await stream.aclose()  # type: ignore[attr-defined]

    async def run() -> None:
        with anyio.move_on_after(0.2):
            await read()

    anyio.run(run)
    assert len(seen) == (0 if hang_after == 1 else hang_after)
    assert _counts(pool) == [(0, 0, 0)]
    assert pool.states()[0]["state"] == "ready"
    assert upstream.closed == 1


def test_an_end_that_raises_does_not_skip_the_others() -> None:
    """Every layer's end runs even when one before it raises."""
    upstream = AsyncUpstream()
    pool = BalancedBackend([upstream])
    ran: list[str] = []

    def broken(exc: BaseException | None, finished: bool) -> None:
        ran.append("broken")
        raise RuntimeError("an end failed")

    async def run() -> None:
        opened = await aopen_stream(pool, REQUEST)
        opened.ends.insert(0, broken)
        opened.ends.append(lambda exc, finished: ran.append(f"last {finished}"))
        async for _ in opened.events():
            pass

    with pytest.raises(RuntimeError, match="an end failed"):
        anyio.run(run)
    assert ran == ["broken", "last True"]
    assert _counts(pool) == [(0, 1, 0)]
