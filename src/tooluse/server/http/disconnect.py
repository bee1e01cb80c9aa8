"""Stopping a whole (non-streamed) answer's backend call when its client leaves.

Starlette does not cancel an endpoint whose client has disconnected, so a non-streamed
request on a silent upstream would keep its upstream call — and its retries — going for the
whole upstream deadline. :func:`unless_disconnected` runs the call next to a watcher of the
ASGI ``http.disconnect`` message (the body has been read by then, so the next message is the
disconnect); when it comes, the call is cancelled the anyio way, and a
:class:`~tooluse.cancel.CancelSignal` current for the call is set, which reaches a backend
running in a worker thread (context variables are copied into anyio's worker threads): its
HTTP plumbing aborts the blocked read and sends no retry.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio
from starlette.types import Receive

from ...cancel import CancelSignal, cancelling

__all__ = ["ClientGone", "unless_disconnected"]

T = TypeVar("T")


class ClientGone(Exception):
    """The client disconnected before its answer was ready; nobody reads the response."""


async def unless_disconnected(receive: Receive, call: Callable[[], Awaitable[T]]) -> T:
    """``await call()``, cancelled (and its cancel signal set) if the client disconnects
    first; then :class:`ClientGone` is raised."""
    signal = CancelSignal()
    result: list[T] = []
    failure: list[Exception] = []

    async def watch(scope: anyio.CancelScope) -> None:
        while (await receive())["type"] != "http.disconnect":
            pass
        signal.set()
        scope.cancel()

    # the call runs in this task (one task fewer per request), the watcher beside it
    async with anyio.create_task_group() as tg:
        tg.start_soon(watch, tg.cancel_scope)
        try:
            with cancelling(signal):
                result.append(await call())
        except Exception as exc:  # noqa: BLE001 - re-raised as itself, not in an ExceptionGroup
            failure.append(exc)
        tg.cancel_scope.cancel()
    if failure:
        raise failure[0]
    if not result:
        raise ClientGone
    return result[0]
