"""tooluse._greenlet_bridge: synchronous generator pipelines driven from the event loop.

The gateway runs a stream's whole pipeline this way over an HTTP upstream, and the HTTP
backends their codecs' decoders; what must hold is what a worker thread gave: items in
order, the caller's context, errors raised as themselves, and every generator closed (its
async source too) when the consumer stops, fails or is cancelled."""

from __future__ import annotations

import contextvars
import threading
from collections.abc import AsyncIterator, Iterator

import anyio
import anyio.lowlevel
import pytest

from tooluse._greenlet_bridge import await_only, blocking, iterate, sync_iter

VAR: contextvars.ContextVar[str | None] = contextvars.ContextVar("bridge_test", default=None)


async def _numbers(n: int, closed: list[str], *, wait: float = 0.0) -> AsyncIterator[int]:
    try:
        for i in range(n):
            await anyio.sleep(wait)
            yield i
    finally:
        with anyio.CancelScope(shield=True):
            await anyio.lowlevel.checkpoint()  # an await in a finally, as a response close
        closed.append("source")


def test_items_come_in_order_batched_by_waits_in_the_callers_context() -> None:
    closed: list[str] = []
    seen: list[str | None] = []

    def pipeline() -> Iterator[int]:
        seen.append(VAR.get())
        for x in sync_iter(_numbers(3, closed)):
            yield x * 10
            yield x * 10 + 1

    async def main() -> list[list[int]]:
        VAR.set("request")
        return [batch async for batch in iterate(pipeline)]

    assert anyio.run(main) == [[0, 1], [10, 11], [20, 21]]
    assert seen == ["request"] and closed == ["source"]


def test_stopping_early_closes_the_pipeline_and_its_async_source() -> None:
    closed: list[str] = []

    def pipeline() -> Iterator[int]:
        try:
            yield from sync_iter(_numbers(100, closed))
        finally:
            closed.append("pipeline")

    async def main() -> None:
        batches = iterate(pipeline)
        async for batch in batches:
            assert batch == [0]
            break
        await batches.aclose()  # type: ignore[attr-defined]

    anyio.run(main)
    assert closed == ["source", "pipeline"]


def test_an_error_in_the_pipeline_is_raised_as_itself_after_its_items() -> None:
    closed: list[str] = []

    def pipeline() -> Iterator[int]:
        for x in sync_iter(_numbers(5, closed)):
            if x == 2:
                raise ValueError("boom")
            yield x

    async def main() -> list[int]:
        got: list[int] = []
        with pytest.raises(ValueError, match="boom"):
            async for batch in iterate(pipeline):
                got += batch
        return got

    assert anyio.run(main) == [0, 1]
    assert closed == ["source"]


def test_an_error_of_the_awaited_source_reaches_the_pipeline_which_may_handle_it() -> None:
    async def failing() -> AsyncIterator[int]:
        yield 1
        raise ConnectionError("reset")

    def pipeline() -> Iterator[str]:
        try:
            for x in sync_iter(failing()):
                yield str(x)
        except ConnectionError as exc:
            yield f"handled {exc}"

    async def main() -> list[str]:
        return [x async for batch in iterate(pipeline) for x in batch]

    assert anyio.run(main) == ["1", "handled reset"]


def test_cancellation_unwinds_the_pipeline_and_closes_its_source() -> None:
    closed: list[str] = []

    def pipeline() -> Iterator[int]:
        try:
            yield from sync_iter(_numbers(10, closed, wait=5))
        finally:
            closed.append("pipeline")

    async def main() -> None:
        with anyio.move_on_after(0.05):
            async for _ in iterate(pipeline):
                pass

    anyio.run(main)
    assert closed == ["source", "pipeline"]


def test_await_only_outside_a_pipeline_is_refused() -> None:
    async def main() -> None:
        with pytest.raises(RuntimeError, match="only inside"):
            await_only(anyio.lowlevel.checkpoint())

    anyio.run(main)


def test_blocking_work_in_a_pipeline_runs_in_a_worker_thread() -> None:
    loop_thread: list[int] = []

    def pipeline() -> Iterator[bool]:
        yield blocking(threading.get_ident) != loop_thread[0]

    async def main() -> list[list[bool]]:
        loop_thread.append(threading.get_ident())
        return [batch async for batch in iterate(pipeline)]

    assert anyio.run(main) == [[True]]
    assert blocking(threading.get_ident) == threading.get_ident()  # outside: here
