"""Trying one request on several backends in turn, before its answer starts, and only then.

A failover is safe only while the caller has seen nothing: after that, a second backend's
answer would be glued to the first one's beginning. So a try *commits* at its first content
event, the first event after :class:`~tooluse.stream.MessageStart`, and only a failure before
it goes on to the next try. ``MessageStart`` is held back until then because an upstream may
open its stream and fail in its very next event (the Messages API sends ``overloaded_error``
that way): for whoever reads this stream, that is still a failure before the first byte.
After the commit, a failure is the caller's, as with one backend.

What goes on to the next try (:func:`falls_over`): the retryable failures (a refused or
reset connection, a timeout, 429, 5xx, 529 overloaded) and a prompt over the model's context
(``context_length``: another model may hold it). Anything else (a malformed request, a key
the upstream refuses) would fail the same way everywhere and is raised at once.

A try with another after it fails at its first failure: an HTTP backend does not retry
inside the call (:func:`more_to_try`), the next try is the retry. The last try of a request
retries as the backend would alone.

Every try is an :class:`Attempt` in the log current in the calling context
(:func:`recording_attempts`; nothing is kept when there is none). It is recorded where it
happened: a composite records only a try whose outcome its inner backend did not record
already, so a fallback over balanced deployments logs each deployment's try once.

:class:`FallbackBackend` is the plain use: backends tried in order.
:class:`~.balanced.BalancedBackend` uses the same loop over deployments of one model.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar, Token
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Generic, Literal, TypeVar

from ..backend import Backend
from ..errors import BackendError
from ..messages import Request, Response
from ..stream import MessageStart, StreamEvent

__all__ = [
    "Attempt",
    "FallbackBackend",
    "Opened",
    "Try",
    "acomplete_first",
    "aopen_stream",
    "astream_first",
    "complete_first",
    "falls_over",
    "is_available",
    "more_to_try",
    "record_attempt",
    "recording_attempts",
    "stream_first",
    "streamed",
]

T = TypeVar("T")
#: One try: what it targets (a label for logs), how to start it, whether it is the last.
Try = tuple[str, Callable[[], T], bool]
Outcome = Literal["answered", "failed", "skipped"]


@dataclass(frozen=True)
class Attempt:
    """One try of a request: its ``target`` (a backend's label), its ``outcome``, how long
    it took and, unless it answered, why (``kind``: the error's kind, ``message``)."""

    target: str
    outcome: Outcome
    seconds: float = 0.0
    kind: str | None = None
    message: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """A plain JSON object (traces keep it)."""
        out: dict[str, Any] = {"target": self.target, "outcome": self.outcome,
                               "ms": round(self.seconds * 1000.0, 3)}
        if self.kind is not None:
            out["error"] = self.kind
        if self.message is not None:
            out["message"] = self.message
        return out

    def event_name(self) -> str:
        return "tooluse.attempt"

    def attributes(self) -> dict[str, str | float]:
        """The attributes of the attempt's span event (telemetry)."""
        out: dict[str, str | float] = {"tooluse.attempt.target": self.target,
                                       "tooluse.attempt.outcome": self.outcome,
                                       "tooluse.attempt.duration_ms": self.seconds * 1000.0}
        if self.kind is not None:
            out["error.type"] = self.kind
        if self.message is not None:
            out["tooluse.attempt.message"] = self.message
        return out


_log: ContextVar[list[Attempt] | None] = ContextVar("tooluse_attempts", default=None)
_more: ContextVar[bool] = ContextVar("tooluse_more_tries", default=False)


def more_to_try() -> bool:
    """Whether a failure of the call running here would go on to another try (so the call
    should not retry by itself: the HTTP backends' retries ask)."""
    return _more.get()


def _reset(var: ContextVar[Any], token: Token[Any]) -> None:
    try:
        var.reset(token)
    except ValueError:  # closed from another context (a generator's finalizer)
        pass


@contextmanager
def recording_attempts(log: list[Attempt] | None = None) -> Iterator[list[Attempt]]:
    """Inside the block, every try of a failover goes into ``log`` (a new list when none is
    given), which the block gets. The list is shared, not copied: a worker thread running
    the request in a copy of this context appends to it too."""
    attempts: list[Attempt] = [] if log is None else log
    token = _log.set(attempts)
    try:
        yield attempts
    finally:
        _reset(_log, token)


def record_attempt(attempt: Attempt) -> None:
    """Add ``attempt`` to the current log (nothing happens when nobody records)."""
    log = _log.get()
    if log is not None:
        log.append(attempt)


def falls_over(exc: BaseException) -> bool:
    """Whether a failure before the answer started should go on to the next try: a
    retryable backend failure, or a prompt over the model's context."""
    return isinstance(exc, BackendError) and (exc.retryable or exc.kind == "context_length")


def is_available(backend: Backend) -> bool:
    """A composite's ``available()`` (False while every deployment cools down); True for a
    backend that has none."""
    available = getattr(backend, "available", None)
    return bool(available()) if callable(available) else True


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


class _Trial:
    """One try's bookkeeping: whether another may follow it (:func:`more_to_try`, for as
    long as its call runs), its time, and its record unless something inside made one."""

    def __init__(self, target: str, final: bool) -> None:
        self.target = target
        self.started = time.perf_counter()
        log = _log.get()
        self.mark = len(log) if log is not None else 0
        self._more: Token[bool] | None = _more.set(_more.get() or not final)

    def settle(self) -> None:
        """The try's call has returned or raised (only the first call counts)."""
        if self._more is not None:
            _reset(_more, self._more)
            self._more = None

    def _record(self, outcome: Outcome, exc: BaseException | None = None) -> None:
        self.settle()
        log = _log.get()
        if log is None or len(log) > self.mark:  # not recording, or recorded inside
            return
        kind = message = None
        if exc is not None:
            kind = getattr(exc, "kind", None) or type(exc).__name__
            message = _short(getattr(exc, "message", None) or str(exc) or type(exc).__name__)
        log.append(Attempt(self.target, outcome, time.perf_counter() - self.started,
                           kind, message))

    def answered(self, value: T) -> T:
        self._record("answered")
        return value


class _Tries(Generic[T]):
    """The loop every failover runs, sync or async: ``for trial, start in tries:`` start
    the try; its value goes through ``trial.answered``; a failure to :meth:`failed`, which
    raises it unless it falls over; after the loop, :meth:`exhausted` is what to raise."""

    def __init__(self, tries: Iterable[Try[T]],
                 fall_over: Callable[[BaseException], bool]) -> None:
        self.tries = tries
        self.fall_over = fall_over
        self.last: BaseException | None = None

    def __iter__(self) -> Iterator[tuple[_Trial, Callable[[], T]]]:
        for target, start, final in self.tries:
            trial = _Trial(target, final)
            try:
                yield trial, start
            finally:
                trial.settle()

    def failed(self, trial: _Trial, exc: Exception) -> None:
        trial._record("failed", exc)
        if not self.fall_over(exc):
            raise exc
        self.last = exc

    def exhausted(self) -> BaseException:
        return self.last if self.last is not None else BackendError("no backend to try",
                                                                    kind="unavailable")


def _head(events: Iterator[StreamEvent]) -> list[StreamEvent]:
    """The events up to and including the first content event (all of them if the stream
    ends before one)."""
    held: list[StreamEvent] = []
    for event in events:
        held.append(event)
        if not isinstance(event, MessageStart):
            break
    return held


async def _ahead(events: AsyncIterator[StreamEvent]) -> list[StreamEvent]:
    """:func:`_head` of an async stream."""
    held: list[StreamEvent] = []
    async for event in events:
        held.append(event)
        if not isinstance(event, MessageStart):
            break
    return held


def _close(events: object) -> None:
    close = getattr(events, "close", None)
    if close is not None:
        close()


async def _aclose(events: object) -> None:
    aclose = getattr(events, "aclose", None)
    if aclose is not None:
        await aclose()


#: What runs once when an opened stream ends: with its failure (None when it ran to its
#: end or its reader left it), and whether it ran to its end.
End = Callable[[BaseException | None, bool], None]


@dataclass
class Opened:
    """An async stream opened up to its failover decision: the events read to make it
    (``head``: up to and including the first content event), the rest unread (``tail``:
    the innermost stream itself, so that once the decision is made each event passes
    through one generator, not one per layer of fallbacks and deployments) and what each
    layer needs run when the stream ends (``ends``, innermost first: a deployment's count
    of requests in flight, its cooldown)."""

    head: list[StreamEvent]
    tail: AsyncIterator[StreamEvent]
    ends: list[End] = field(default_factory=list)

    async def events(self, watch: Callable[[StreamEvent], StreamEvent] | None = None
                     ) -> AsyncIterator[StreamEvent]:
        """The head, then the tail handed through (each event through ``watch`` when
        given); the ends run once when it ends, however: ``finished`` only when the tail
        ran out, the failure only an :class:`Exception` of the tail's (a reader leaving, or
        a cancel, is neither)."""
        failure: BaseException | None = None
        finished = False
        try:
            if watch is None:
                for event in self.head:
                    yield event
                async for event in self.tail:
                    yield event
            else:
                for event in self.head:
                    yield watch(event)
                async for event in self.tail:
                    yield watch(event)
            finished = True
        except Exception as exc:
            failure = exc
            raise
        finally:
            await self.close(failure, finished)

    async def close(self, failure: BaseException | None, finished: bool) -> None:
        """Close the tail, then run every end (each once, even when one raises)."""
        try:
            await _aclose(self.tail)
        finally:
            self._end(0, failure, finished)

    def _end(self, i: int, failure: BaseException | None, finished: bool) -> None:
        for n in range(i, len(self.ends)):
            try:
                self.ends[n](failure, finished)
            except BaseException:
                self._end(n + 1, failure, finished)
                raise


async def aopen_stream(backend: Backend, request: Request) -> Opened:
    """``backend``'s stream of ``request`` opened to its first content event: the
    backend's own ``aopen`` (a composite's: its failover decided, its layers' ends
    gathered), else its ``astream`` read that far. Raises what the opening raised, with
    the stream closed and its ends run."""
    aopen = getattr(backend, "aopen", None)
    if aopen is not None:
        opened: Opened = await aopen(request)
        return opened
    events = aiter(backend.astream(request))
    try:
        head = await _ahead(events)
    except BaseException:
        await _aclose(events)
        raise
    return Opened(head, events)


async def streamed(opening: Callable[[], Awaitable[Opened]]) -> AsyncIterator[StreamEvent]:
    """The events of the stream ``opening()`` opens when the first one is asked for
    (:meth:`Opened.events`)."""
    opened = await opening()
    async for event in opened.events():
        yield event


def stream_first(tries: Iterable[Try[Iterator[StreamEvent]]], *,
                 fall_over: Callable[[BaseException], bool] = falls_over
                 ) -> Iterator[StreamEvent]:
    """The stream of the first try that gets to its first content event; each try before
    it failed in a way ``fall_over`` accepts. Raises the last failure when none did."""
    loop = _Tries(tries, fall_over)
    for trial, start in loop:
        events: Iterator[StreamEvent] | None = None
        try:
            events = iter(start())
            head = trial.answered(_head(events))
        except Exception as exc:  # noqa: BLE001 - failed() raises what does not fall over
            _close(events)
            loop.failed(trial, exc)
            continue
        try:
            yield from head
            yield from events
        finally:
            _close(events)
        return
    raise loop.exhausted()


async def astream_first(tries: Iterable[Try[AsyncIterator[StreamEvent]]], *,
                        fall_over: Callable[[BaseException], bool] = falls_over
                        ) -> AsyncIterator[StreamEvent]:
    """:func:`stream_first` for async streams."""
    loop = _Tries(tries, fall_over)
    for trial, start in loop:
        events: AsyncIterator[StreamEvent] | None = None
        try:
            events = start()
            head = trial.answered(await _ahead(events))
        except Exception as exc:  # noqa: BLE001 - failed() raises what does not fall over
            await _aclose(events)
            loop.failed(trial, exc)
            continue
        try:
            for event in head:
                yield event
            async for event in events:
                yield event
        finally:
            await _aclose(events)
        return
    raise loop.exhausted()


def complete_first(tries: Iterable[Try[Response]], *,
                   fall_over: Callable[[BaseException], bool] = falls_over) -> Response:
    """The answer of the first try that does not fail in a way ``fall_over`` accepts."""
    loop = _Tries(tries, fall_over)
    for trial, start in loop:
        try:
            return trial.answered(start())
        except Exception as exc:  # noqa: BLE001 - failed() raises what does not fall over
            loop.failed(trial, exc)
    raise loop.exhausted()


async def acomplete_first(tries: Iterable[Try[Awaitable[T]]], *,
                          fall_over: Callable[[BaseException], bool] = falls_over) -> T:
    """:func:`complete_first` for async calls (an answer, or an :class:`Opened` stream:
    the first try whose opening does not fail)."""
    loop = _Tries(tries, fall_over)
    for trial, start in loop:
        try:
            return trial.answered(await start())
        except Exception as exc:  # noqa: BLE001 - failed() raises what does not fall over
            loop.failed(trial, exc)
    raise loop.exhausted()


class FallbackBackend(Backend):
    """``backends`` tried in order: a failure before the answer starts that
    :func:`falls_over` accepts (or ``fall_over``, when given) goes on to the next one.

    A backend whose ``available()`` says False (a :class:`~.balanced.BalancedBackend`
    whose every deployment cools down) is skipped, unless every one is unavailable: then
    all are tried in order, since failing without trying would fail for sure. ``labels``
    name the backends in the attempt log (default: each one's ``name``).

    It forwards passthrough and guarantees structured output only where every backend does
    (an answer may come from any of them).
    """

    name = "fallback"

    def __init__(self, backends: Sequence[Backend], *, labels: Sequence[str] | None = None,
                 fall_over: Callable[[BaseException], bool] = falls_over) -> None:
        if not backends:
            raise ValueError("FallbackBackend needs at least one backend")
        if labels is not None and len(labels) != len(backends):
            raise ValueError("FallbackBackend: one label per backend")
        self.backends = list(backends)
        self.labels = list(labels) if labels is not None else [b.name for b in self.backends]
        self.fall_over = fall_over
        first = self.backends[0]
        self.name = first.name
        self.model = first.model
        self.forwards = frozenset.intersection(*(b.forwards for b in self.backends))
        self.structured_output = all(b.structured_output for b in self.backends)

    def available(self) -> bool:
        return any(is_available(b) for b in self.backends)

    def _tries(self, call: Callable[[Backend], T]) -> Iterator[Try[T]]:
        ready = [i for i, b in enumerate(self.backends) if is_available(b)]
        if not ready:
            ready = list(range(len(self.backends)))
        elif len(ready) < len(self.backends):
            for i, label in enumerate(self.labels):
                if i not in ready:
                    record_attempt(Attempt(label, "skipped", message="every deployment is "
                                           "cooling down after failures"))
        for n, i in enumerate(ready):
            yield self.labels[i], partial(call, self.backends[i]), n == len(ready) - 1

    def stream(self, request: Request) -> Iterator[StreamEvent]:
        return stream_first(self._tries(lambda b: b.stream(request)), fall_over=self.fall_over)

    def astream(self, request: Request) -> AsyncIterator[StreamEvent]:
        return streamed(lambda: self.aopen(request))

    async def aopen(self, request: Request) -> Opened:
        """The stream of the first backend that gets to its first content event
        (:func:`aopen_stream`)."""
        return await acomplete_first(self._tries(lambda b: aopen_stream(b, request)),
                                     fall_over=self.fall_over)

    def complete(self, request: Request) -> Response:
        return complete_first(self._tries(lambda b: b.complete(request)),
                              fall_over=self.fall_over)

    async def acomplete(self, request: Request) -> Response:
        return await acomplete_first(self._tries(lambda b: b.acomplete(request)),
                                     fall_over=self.fall_over)

    def count_tokens(self, request: Request) -> int | None:
        for backend in self.backends:
            if is_available(backend):
                return backend.count_tokens(request)
        return self.backends[0].count_tokens(request)

    def close(self) -> None:
        for backend in self.backends:
            backend.close()
