"""One request's way through the route table: the route its model name picks, the key's
say, the fallbacks, and what the answer tells of the route taken.

:meth:`Router.plan` runs before any backend is called and answers in the client's API
when the request cannot go anywhere: no route for the model (404), a key that may not use
it (403), a key over its ``rpm``/``tpm`` (429 with ``Retry-After``). Otherwise the
:class:`Plan` holds the backend to call: the route's own (a :class:`RouteBackend`), or a
:class:`~tooluse.backends.failover.FallbackBackend` over the route and its fallbacks (the
ones the key may use), which goes on to the next route on a failure before the answer
starts (:mod:`tooluse.backends.failover`).

Each route's try first does what depends on the route's backend: the gateway's
:func:`~.policy.check_servable` (a route that cannot serve the request is passed over for
one that can) and the ``context_window`` (a prompt over it goes on to the next route
before any upstream is called; the tokens are estimated, 4 characters a token over the
request's JSON, as ``count_tokens`` estimates). Then it asks for the route's model and
echoes the client's name in the answer.

Every try is recorded (:func:`~tooluse.backends.failover.recording_attempts`); the plan turns
the record into the response headers :data:`ROUTE_HEADER` (the deployment that answered)
and :data:`ATTEMPTS_HEADER` (those that did not, and why), the trace's attempts and the
span's events, and, for a config key, the usage row.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Final

import anyio.to_thread

from ..backend import Backend
from ..backends.failover import (
    Attempt,
    FallbackBackend,
    Opened,
    aopen_stream,
    falls_over,
    is_available,
    recording_attempts,
    streamed,
)
from ..messages import Request, Response, Usage
from ..prompting.text_model import context_error
from ..stream import MessageDelta, MessageStart, StreamEvent, merge_usage
from ..trace import current_turn
from .errors import GatewayError
from .keys import KeyRing, refuse_model
from .policy import check_servable
from .route_config import KeyEntry, load_config
from .routes import Route, RouteTable
from .stores.usage import UsageRecord, UsageStore

__all__ = ["ATTEMPTS_HEADER", "ROUTE_HEADER", "Plan", "RouteBackend", "Router",
           "estimate_request_tokens"]

#: The response header naming what answered: a ``[[models]]`` name, ``[i]`` for the i-th
#: of its deployments.
ROUTE_HEADER: Final = "x-tooluse-route"
#: The tries before it that did not answer: ``TARGET=WHY TIMEms`` (the error's kind, or
#: ``skipped``, and how long the try took) joined by ``", "``.
ATTEMPTS_HEADER: Final = "x-tooluse-attempts"
#: Characters per token of the estimate (as ``count_tokens`` estimates).
CHARS_PER_TOKEN: Final = 4


def estimate_request_tokens(request: Request) -> int:
    """A rough count of a request's prompt tokens: its system, messages and tools as JSON,
    4 characters a token."""
    text = request.model_dump_json(include={"system", "messages", "tools"}, exclude_none=True)
    return max(1, math.ceil(len(text) / CHARS_PER_TOKEN))


class _Asked:
    """What every route's try of one request shares: the client's model name, the prompt's
    estimated size (counted once), which route answered."""

    def __init__(self, model: str | None, schema_field: tuple[str | int, ...] = ()) -> None:
        self.model = model
        #: Where the client's API holds the answer's JSON schema (named by a refusal).
        self.schema_field = schema_field
        self._tokens: int | None = None
        self.answered_by: str | None = None

    def tokens(self, request: Request) -> int:
        if self._tokens is None:
            self._tokens = estimate_request_tokens(request)
        return self._tokens


def _ascii(text: str) -> str:
    return text.encode("ascii", "backslashreplace").decode("ascii")


class RouteBackend(Backend):
    """One route's try of one request (see the module docstring)."""

    def __init__(self, route: Route, asked: _Asked) -> None:
        self.route = route
        self.asked = asked
        inner = route.backend
        self.name = inner.name
        self.model = inner.model
        self.forwards = inner.forwards
        self.structured_output = inner.structured_output

    def available(self) -> bool:
        return is_available(self.route.backend)

    def _ready(self, request: Request) -> Request:
        check_servable(request, self.route.backend, self.asked.schema_field)
        window = self.route.context_window
        if window is not None:
            tokens = self.asked.tokens(request)
            if tokens > window:
                raise context_error(tokens, window)
        if self.route.pins_model and request.model is not None:
            return request.model_copy(update={"model": None})
        return request

    def _echo(self, response: Response) -> Response:
        self.asked.answered_by = self.route.name
        if self.asked.model is None or response.model == self.asked.model:
            return response
        return response.model_copy(update={"model": self.asked.model})

    def stream(self, request: Request) -> Iterator[StreamEvent]:
        events = iter(self.route.backend.stream(self._ready(request)))
        try:
            for event in events:
                self.asked.answered_by = self.route.name
                if isinstance(event, MessageStart) and self.asked.model is not None:
                    event = event.model_copy(update={"model": self.asked.model})
                yield event
                break
            yield from events
        finally:
            close = getattr(events, "close", None)
            if close is not None:
                close()

    def astream(self, request: Request) -> AsyncIterator[StreamEvent]:
        return streamed(lambda: self.aopen(request))

    async def aopen(self, request: Request) -> Opened:
        """The route's stream opened to its first content event
        (:func:`~tooluse.backends.failover.aopen_stream`), its first event naming the
        client's model."""
        opened = await aopen_stream(self.route.backend, self._ready(request))
        if opened.head:  # the first event: the route answered
            self.asked.answered_by = self.route.name
            first = opened.head[0]
            if isinstance(first, MessageStart) and self.asked.model is not None:
                opened.head[0] = first.model_copy(update={"model": self.asked.model})
        return opened

    def complete(self, request: Request) -> Response:
        return self._echo(self.route.backend.complete(self._ready(request)))

    async def acomplete(self, request: Request) -> Response:
        return self._echo(await self.route.backend.acomplete(self._ready(request)))

    def count_tokens(self, request: Request) -> int | None:
        if self.route.pins_model and request.model is not None:
            request = request.model_copy(update={"model": None})
        return self.route.backend.count_tokens(request)


def _no_route(model: str) -> GatewayError:
    """The native 404 for a model name no route matches."""
    return GatewayError(f"model: {model or '(none)'} (no [[models]] entry of this gateway "
                        "matches this name)", "not_found")


def _falls_over(exc: BaseException) -> bool:
    """A route goes on to the next on what falls over for any backend, and when it cannot
    serve the request (its :func:`~.policy.check_servable` refused: another may)."""
    return falls_over(exc) or isinstance(exc, GatewayError)


class _Seen:
    """The usage of an answer, whole or as its stream passes."""

    def __init__(self) -> None:
        self.usage = Usage()

    def event(self, event: StreamEvent) -> StreamEvent:
        if isinstance(event, MessageStart):
            self.usage = event.usage
        elif isinstance(event, MessageDelta):
            self.usage = merge_usage(self.usage, event.usage)
        return event

    def response(self, response: Response) -> Response:
        self.usage = response.usage
        return response


@dataclass
class Plan:
    """How one request is served: ``backend`` answers ``request`` (for a routed request, a
    :class:`_Planned` wrapper that keeps this plan up to date); ``attempts`` fills as it is
    tried; ``headers`` gets the route taken once an attempt answered."""

    request: Request
    backend: Backend
    routed: bool = False
    attempts: list[Attempt] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=dict)
    key: KeyEntry | None = None
    store: UsageStore | None = None
    table: RouteTable | None = None
    asked: _Asked | None = None
    _finished: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def answered(self) -> dict[str, str]:
        """The route headers, from the attempts so far (also set into :attr:`headers`)."""
        if not self.routed:
            return self.headers
        done = [a for a in self.attempts if a.outcome == "answered"]
        if done:
            self.headers[ROUTE_HEADER] = _ascii(done[-1].target)
        before = [a for a in self.attempts if a.outcome != "answered"]
        if before:
            self.headers[ATTEMPTS_HEADER] = _ascii(", ".join(
                f"{a.target}={a.kind or a.outcome} {a.seconds * 1000:.3g}ms" for a in before))
        return self.headers

    @contextmanager
    def ending(self) -> Iterator[_Seen]:
        """Around the request's call: what it answered (:class:`_Seen`), and once it has
        ended, however it ended, the route headers and :meth:`finish`."""
        seen = _Seen()
        failure: BaseException | None = None
        try:
            yield seen
        except BaseException as exc:
            failure = exc
            raise
        finally:
            self.answered()
            self.finish(seen.usage, failure)

    def finish(self, usage: Usage | None, error: BaseException | None) -> None:
        """The request ended (answered with ``usage``, or failed with ``error``): the
        trace's turn gets the attempts, the key's row the usage, and the table one request
        less. Only the first call counts."""
        with self._lock:
            if self._finished:
                return
            self._finished = True
        turn = current_turn()
        if turn is not None:
            turn.attempts = [a.as_dict() for a in self.attempts]
        if self.table is not None:
            self.table.release()
        if self.key is None or self.store is None:
            return
        used = usage or Usage()
        route = (self.asked.answered_by if self.asked is not None else None) or "-"
        self.store.record(UsageRecord(
            key=self.key.name, model=self.request.model or "", route=route,
            failed=error is not None, input_tokens=used.input_tokens,
            output_tokens=used.output_tokens, cache_read_tokens=used.cache_read_input_tokens,
            cache_write_tokens=used.cache_creation_input_tokens, at=time.time()))


class _Planned(Backend):
    """A routed request's backend: ``inner`` (its route, or the fallbacks over its routes)
    with the plan kept up to date. Every try happens before the first event comes out (a
    failover commits there), so the attempt log is current for that first step only,
    whoever drives the stream (a worker thread, or the event loop)."""

    def __init__(self, inner: Backend, plan: Plan) -> None:
        self.inner = inner
        self.plan = plan
        self.name = inner.name
        self.model = inner.model
        self.forwards = inner.forwards
        self.structured_output = inner.structured_output

    def stream(self, request: Request) -> Iterator[StreamEvent]:
        with self.plan.ending() as seen:
            with recording_attempts(self.plan.attempts):
                events = iter(self.inner.stream(request))
                first = next(events, None)
            self.plan.answered()
            if first is not None:
                yield seen.event(first)
                yield from events if self.plan.store is None else map(seen.event, events)

    async def _aopen(self, request: Request) -> Opened:
        """The inner stream opened (its every try made), or its first event read."""
        if hasattr(self.inner, "aopen"):
            return await aopen_stream(self.inner, request)
        events = aiter(self.inner.astream(request))
        first = await anext(events, None)
        return Opened([] if first is None else [first], events)

    async def astream(self, request: Request) -> AsyncIterator[StreamEvent]:
        with self.plan.ending() as seen:
            with recording_attempts(self.plan.attempts):
                opened = await self._aopen(request)
            self.plan.answered()
            # no usage to record: nothing to watch, each event handed straight through
            async for event in opened.events(None if self.plan.store is None else seen.event):
                yield event

    async def acomplete(self, request: Request) -> Response:
        with self.plan.ending() as seen, recording_attempts(self.plan.attempts):
            return seen.response(await self.inner.acomplete(request))

    def complete(self, request: Request) -> Response:
        with self.plan.ending() as seen, recording_attempts(self.plan.attempts):
            return seen.response(self.inner.complete(request))

    def count_tokens(self, request: Request) -> int | None:
        return self.inner.count_tokens(request)


class Router:
    """The current route table, the config's keys and the usage store; a reload swaps the
    first two for a new config's (requests already running finish on the old ones)."""

    def __init__(self, table: RouteTable, *, keys: KeyRing | None = None,
                 store: UsageStore | None = None, config_path: str | None = None,
                 api_keys: Sequence[str] = ()) -> None:
        self.table = table
        self.keys = keys or KeyRing(())
        self.store = store
        self.config_path = config_path
        self._api_keys = tuple(api_keys)
        self._reload_lock = threading.Lock()

    @property
    def api_keys(self) -> tuple[str, ...]:
        """Every key a request may carry: ``--api-key``'s and the config's."""
        return self._api_keys + self.keys.secrets

    async def plan(self, request: Request, headers: Mapping[str, str],
                   schema_field: tuple[str | int, ...] = (),
                   around: Callable[[Backend], Backend] | None = None) -> Plan:
        """How ``request`` will be served, or the :class:`GatewayError` that answers it
        (``schema_field``: where the client's API holds the answer's JSON schema;
        ``around``: what serves the request with the backend it is routed to, such as the
        gateway's server-tool loop, inside the plan's accounting so the whole loop is one
        request of the key and each model turn its own try of the route's fallbacks)."""
        wrap = around if around is not None else (lambda backend: backend)
        table = self.table
        if table.simple:
            check_servable(request, table.backend, schema_field)
            return Plan(request, wrap(table.backend))
        model = request.model or ""
        route = table.match(model)
        if route is None:
            raise _no_route(model)
        key = self.keys.identify(headers) if self.keys else None
        if key is not None:
            if not key.allows(model):
                raise refuse_model(key, model)
            if key.limited and self.store is not None:
                refused = await anyio.to_thread.run_sync(self.store.admit, key.name, key.rpm,
                                                         key.tpm)
                if refused is not None:
                    wait, which = refused
                    raise GatewayError(f"rate limit of API key {key.name!r} reached "
                                       f"({which}); try again in {wait:g} s", "rate_limit",
                                       retry_after=wait)
        chain = table.chain(route)
        if key is not None:
            chain = [r for r in chain if r is route or key.allows(r.name)]
        asked = _Asked(request.model, schema_field)
        tries = [RouteBackend(r, asked) for r in chain]
        backend: Backend = tries[0] if len(tries) == 1 else FallbackBackend(
            tries, labels=[r.name for r in chain], fall_over=_falls_over)
        table.acquire()
        plan = Plan(request, backend, routed=True, key=key,
                    store=self.store if key is not None else None, table=table, asked=asked)
        plan.backend = _Planned(wrap(backend), plan)
        return plan

    def backend_for(self, model: str | None, headers: Mapping[str, str]) -> Backend:
        """The backend answering ``model`` for the caller (``count_tokens``,
        ``/v1/models/{id}``): the same 404 and 403 as :meth:`plan`, no request counted."""
        table = self.table
        if table.simple:
            return table.backend
        route = table.match(model or "")
        if route is None:
            raise _no_route(model or "")
        key = self.keys.identify(headers) if self.keys else None
        if key is not None and not key.allows(model or ""):
            raise refuse_model(key, model or "")
        return RouteBackend(route, _Asked(model))

    def listed(self, headers: Mapping[str, str]) -> list[str]:
        """The model names the caller may use, for ``/v1/models``."""
        names = self.table.listed()
        key = self.keys.identify(headers) if self.keys else None
        return [n for n in names if key is None or key.allows(n)]

    def reload(self) -> str:
        """Read the config file again and serve it from now on; a one-line summary. Raises
        :class:`~.route_config.ConfigError` (the current table stays) when it is broken."""
        if self.config_path is None:
            raise ValueError("this gateway was not started with a config file")
        with self._reload_lock:
            config = load_config(self.config_path)
            table = RouteTable.build(config, previous=self.table)
            old, self.table, self.keys = self.table, table, KeyRing(config.keys)
            old.retire(table)
        return (f"{self.config_path}: reloaded: {len(table.routes)} model route(s), "
                f"{len(config.keys)} key(s)")

    def close(self) -> None:
        self.table.close()
        if self.store is not None:
            self.store.close()
