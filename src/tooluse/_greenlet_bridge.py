"""Synchronous generator pipelines driven from the event loop, without a thread.

The codecs' stream decoders and encoders, the tool-call policy and the trace's watchers are
plain generators pulling from the one before them: one translator per wire format, written
once, for the sync and the async caller alike. Over an async source (an upstream read by an
async HTTP client) they used to run in a worker thread, fed one item at a time across
threads; each stream then cost two thread hand-offs per event and a thread's wake-ups, most
of the gateway's CPU on a proxied stream.

:func:`iterate` runs such a pipeline in a greenlet on the event loop's own thread instead
(the technique SQLAlchemy's asyncio support is built on): where the pipeline's bottom needs
the next item of an async source it calls :func:`sync_iter`'s ``next``, which switches back
to the event loop with the awaitable (:func:`await_only`), and the loop switches in again
with the result. A switch costs about a microsecond; the pipeline runs in a copy of the
caller's context (its trace, its cancel signal), as a worker thread would.
"""

from __future__ import annotations

import contextvars
from collections.abc import AsyncIterator, Awaitable, Callable, Generator, Iterable
from typing import Any, TypeVar

import anyio
import anyio.to_thread
import greenlet

__all__ = ["await_only", "blocking", "iterate", "sync_iter"]

T = TypeVar("T")


class _Bridged(greenlet.greenlet):  # type: ignore[misc]
    """A greenlet running a pipeline for :func:`iterate`."""

    driver: greenlet.greenlet
    pending: list[Any]  # items produced since the driver last took them


class _Await:
    __slots__ = ("awaitable",)

    def __init__(self, awaitable: Awaitable[Any]) -> None:
        self.awaitable = awaitable


_DONE: Any = object()


def await_only(awaitable: Awaitable[T]) -> T:
    """Wait for ``awaitable`` on the event loop from inside :func:`iterate`'s pipeline."""
    current = greenlet.getcurrent()
    if isinstance(current, _Bridged):
        result: T = current.driver.switch(_Await(awaitable))
        return result
    close = getattr(awaitable, "close", None)
    if close is not None:
        close()  # a coroutine never awaited would warn
    raise RuntimeError("await_only() runs only inside a pipeline driven by iterate()")


def blocking(function: Callable[..., T], *args: Any) -> T:
    """``function(*args)``: in a worker thread when called inside :func:`iterate`'s pipeline
    (blocking I/O there would stall the event loop), else here."""
    if isinstance(greenlet.getcurrent(), _Bridged):
        return await_only(anyio.to_thread.run_sync(lambda: function(*args)))
    return function(*args)


def sync_iter(source: AsyncIterator[T]) -> Generator[T, None, None]:
    """``source`` as a plain iterator, for a pipeline :func:`iterate` drives; closing it
    closes ``source`` (an async generator's ``finally`` runs on the loop): close it in the
    pipeline (a generator that fails does not close the iterator it was reading)."""
    try:
        while True:
            try:
                item = await_only(source.__anext__())
            except StopAsyncIteration:
                return
            yield item
    finally:
        aclose = getattr(source, "aclose", None)
        # (collected outside the pipeline, the event loop's own hook finalizes ``source``)
        if aclose is not None and isinstance(greenlet.getcurrent(), _Bridged):
            await_only(aclose())


async def iterate(make: Callable[[], Iterable[T]]) -> AsyncIterator[list[T]]:
    """Run ``make()`` and iterate it in a greenlet; yield its items in batches, each batch
    being what it produced before it next waited on the loop (so a writer can send them in
    one write). Stopping early, or being cancelled, closes the pipeline's generators, their
    own awaits (an HTTP response's close) still served, shielded from the cancellation."""

    def run(_: Any) -> Any:
        # items are kept in the greenlet until it waits (or ends): no switch per item
        pending = greenlet.getcurrent().pending
        iterable = make()
        try:
            for item in iterable:
                pending.append(item)
        finally:
            close = getattr(iterable, "close", None)
            if close is not None:
                close()
        return _DONE

    pipeline = _Bridged(run)
    pipeline.gr_context = contextvars.copy_context()
    pipeline.pending = []
    try:
        value = _switch(pipeline, None)
        while True:
            if pipeline.pending:
                batch, pipeline.pending[:] = list(pipeline.pending), []
                yield batch
            if value is _DONE:
                return
            try:
                result = await value.awaitable
            except anyio.get_cancelled_exc_class() as exc:
                await _unwind(pipeline, exc)
                raise
            except BaseException as exc:  # noqa: BLE001 - raised where the pipeline awaited
                value = _switch(pipeline, exc, throw=True)
            else:
                value = _switch(pipeline, result)
    except BaseException:
        if pipeline.dead and pipeline.pending:  # what it produced before it failed, first
            batch, pipeline.pending[:] = list(pipeline.pending), []
            yield batch
        raise
    finally:
        if not pipeline.dead:
            await _unwind(pipeline, GeneratorExit())


def _switch(pipeline: _Bridged, value: Any, *, throw: bool = False) -> Any:
    here = greenlet.getcurrent()
    pipeline.driver = here
    if pipeline.parent is not here:
        pipeline.parent = here
    if throw:
        return pipeline.throw(type(value), value, value.__traceback__)
    return pipeline.switch(value)


async def _unwind(pipeline: _Bridged, exc: BaseException) -> None:
    """Raise ``exc`` where the pipeline waits and let it unwind, serving the awaits its
    ``finally`` blocks make (shielded: the caller may be cancelled already)."""
    try:
        value = _switch(pipeline, exc, throw=True)
        while not pipeline.dead:
            pipeline.pending.clear()  # produced while closing: nobody takes it
            if isinstance(value, _Await):
                with anyio.CancelScope(shield=True):
                    try:
                        result = await value.awaitable
                    except BaseException as failure:  # noqa: BLE001 - back where it awaited
                        value = _switch(pipeline, failure, throw=True)
                        continue
                value = _switch(pipeline, result)
            else:
                value = _switch(pipeline, None)
    except BaseException as raised:  # the pipeline ended by raising
        if raised is not exc and not isinstance(raised, (GeneratorExit, StopIteration)):
            raise
