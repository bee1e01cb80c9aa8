"""One writer thread behind a store: callers hand items over and do not wait; the thread
writes whatever has queued up meanwhile as one batch (one transaction).

The trace store (a gateway request's trace, after its answer went out) and the gateway's
usage store (a request's tokens) both write this way, off the request's path.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from typing import Any, Final, Generic, TypeVar

__all__ = ["BatchWriter"]

T = TypeVar("T")
_STOP: Final[Any] = object()


class BatchWriter(Generic[T]):
    """Hands items to ``write(batch)`` in a daemon thread named ``name`` (started at the
    first item), at most ``batch`` items at a time. ``write`` should deal with its own
    failures; one it raises is logged to ``logger`` and the items are dropped."""

    def __init__(self, write: Callable[[list[T]], None], *, name: str, logger: str,
                 batch: int = 256) -> None:
        self._write = write
        self._name = name
        self._logger = logger
        self._batch = batch
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._pending = 0
        self._idle = threading.Condition()

    def submit(self, item: T) -> None:
        """Queue ``item`` (the caller does not wait for it to be written)."""
        with self._idle:
            self._pending += 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()
        self._queue.put(item)

    def _run(self) -> None:
        stop = False
        while not stop:
            batch = [self._queue.get()]
            while len(batch) < self._batch:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            stop = any(item is _STOP for item in batch)
            items = [item for item in batch if item is not _STOP]
            try:
                if items:
                    self._write(items)
            except Exception:  # the writer goes on; the failure is logged, not silent
                logging.getLogger(self._logger).exception(
                    "could not store %d item(s) (%s)", len(items), self._name)
            finally:
                with self._idle:
                    self._pending -= len(items)
                    self._idle.notify_all()

    def flush(self, timeout: float | None = 10.0) -> bool:
        """Wait until every submitted item is written; False if ``timeout`` ran out."""
        with self._idle:
            return self._idle.wait_for(lambda: self._pending == 0, timeout)

    def close(self, timeout: float = 30.0) -> None:
        """Write what is pending, then stop the thread."""
        if self._thread is not None:
            self._queue.put(_STOP)
            self._thread.join(timeout)
            self._thread = None
