"""Attributes kept per caller: ``backend.last_end`` is the last turn made in *this* context.

The gateway serves every request through one backend instance, with requests side by side
(worker threads, and the local model's slots decoding them together). An attribute such as
``last_end`` stored on the instance is overwritten by whichever request ended last, so a
request reading it back may read another's. A :class:`PerContext` attribute is kept per
:mod:`contextvars` context instead: per thread, and per task or worker thread with the
context it copied (``anyio.to_thread.run_sync``, ``Backend.astream``'s worker, the gateway's
stream threads all copy the request's context).

- A caller that makes a turn and reads the attribute in the same thread (the demo, the
  benchmarks, the eval harness, tests) reads its own turn's value, as before.
- Concurrent requests, each in its own context, never see each other's.
- A value set in a worker thread's copied context stays there: after
  ``await backend.acomplete(...)`` the caller's context still holds its earlier value. The
  request's trace (:mod:`tooluse.trace`) has each request's counters wherever it ran.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any, Generic, TypeVar, overload

__all__ = ["PerContext"]

T = TypeVar("T")

#: id(instance) -> (a weak reference to it, its value): the reference tells a live instance
#: from a dead one whose id was reused, and lets dead ones be pruned.
_Values = dict[int, tuple["weakref.ref[Any]", Any]]


class PerContext(Generic[T]):
    """A class attribute whose value, per instance, belongs to the current context; an
    instance reads ``default()`` where nothing was set in its context.

    Written as a plain attribute (``self.last_end = end``); the mapping held in the context
    is copied on each write, never changed in place, since a copied context shares it."""

    def __init__(self, default: Callable[[], T]) -> None:
        self.default = default
        self._var: ContextVar[_Values] = ContextVar("tooluse.per_context")

    def __set_name__(self, owner: type[Any], name: str) -> None:
        self._var = ContextVar(f"{owner.__module__}.{owner.__qualname__}.{name}")

    @overload
    def __get__(self, instance: None, owner: type[Any] | None = None) -> PerContext[T]: ...

    @overload
    def __get__(self, instance: object, owner: type[Any] | None = None) -> T: ...

    def __get__(self, instance: object | None,
                owner: type[Any] | None = None) -> PerContext[T] | T:
        if instance is None:
            return self
        entry = self._var.get({}).get(id(instance))
        if entry is not None and entry[0]() is instance:
            value: T = entry[1]
            return value
        return self.default()

    def __set__(self, instance: object, value: T) -> None:
        values = {key: entry for key, entry in self._var.get({}).items()
                  if entry[0]() is not None}
        values[id(instance)] = (weakref.ref(instance), value)
        self._var.set(values)
