"""Telling blocking work below that its caller has gone.

The gateway runs a stream's whole pipeline (backend → codec → bytes) in a worker thread.
When the client disconnects, the thread must stop at once: no retry of an upstream call
nobody will read, and no thread parked on a silent upstream socket for minutes. Passing a
flag through every layer's signature would put a gateway concern into the backend protocol,
so the caller instead makes a :class:`CancelSignal` *current* (a context variable, so it is
per thread and per task) and the code that blocks — the HTTP plumbing of the backends —
looks it up with :func:`current_cancel`: it checks it before each attempt, waits on it
instead of sleeping between retries, and registers a callback that aborts a blocked socket
read when the signal is set.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from contextvars import ContextVar

__all__ = ["CancelSignal", "cancelling", "current_cancel"]


class CancelSignal(threading.Event):
    """A :class:`threading.Event` that also runs callbacks when set (once, in the setting
    thread). A callback added after the signal was set runs at once."""

    def __init__(self) -> None:
        super().__init__()
        self._callbacks: dict[int, Callable[[], None]] = {}
        self._next = 0
        self._guard = threading.Lock()

    def set(self) -> None:
        with self._guard:
            if self.is_set():
                return
            super().set()
            callbacks = list(self._callbacks.values())
            self._callbacks.clear()
        for callback in callbacks:
            with contextlib.suppress(Exception):  # a failing abort must not hide the others
                callback()

    @contextlib.contextmanager
    def on_set(self, callback: Callable[[], None]) -> Iterator[None]:
        """Run ``callback`` if the signal is set while the ``with`` block runs."""
        with self._guard:
            fired = self.is_set()
            if not fired:
                key = self._next
                self._next += 1
                self._callbacks[key] = callback
        if fired:
            callback()
        try:
            yield
        finally:
            if not fired:
                with self._guard:
                    self._callbacks.pop(key, None)


_current: ContextVar[CancelSignal | None] = ContextVar("tooluse_cancel", default=None)


def current_cancel() -> CancelSignal | None:
    """The signal the code running now should honour, or ``None``."""
    return _current.get()


@contextlib.contextmanager
def cancelling(signal: CancelSignal) -> Iterator[CancelSignal]:
    """Make ``signal`` current for the ``with`` block (in this thread / task)."""
    token = _current.set(signal)
    try:
        yield signal
    finally:
        _current.reset(token)
