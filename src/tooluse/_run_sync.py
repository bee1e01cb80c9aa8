"""Running async code to completion from sync code (private).

A sync entry point that meets an async callable (an async tool called through
:meth:`~tooluse.tools.Tool.run`, an async approval callback of :meth:`~tooluse.runner.Runner.run`)
runs it on a fresh event loop. Inside a running loop (sync code called from async code) that
loop cannot be blocked on itself, so the fresh loop runs in a worker thread instead.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio

__all__ = ["run_to_completion"]

T = TypeVar("T")


def run_to_completion(factory: Callable[[], Awaitable[T]]) -> T:
    """What ``await factory()`` gives, from sync code: on a fresh event loop, in a worker
    thread when this thread already runs one."""

    async def wait() -> T:
        return await factory()

    import asyncio  # here, not at the top: a synchronous program never needs it

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return anyio.run(wait)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(anyio.run, wait).result()
