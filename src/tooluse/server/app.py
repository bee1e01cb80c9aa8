"""The gateway application: the Messages, Converse, Chat Completions and Responses APIs
over one backend, or over the routes of a config.

``create_app(backend)`` or ``create_app(config=FILE)`` returns a plain Starlette ASGI app, so
it runs under uvicorn (``tooluse serve``), inside a test in-process, or mounted in a bigger
app. Every API is served by every backend: the front ends translate through the codecs to
the neutral model, and the backend never knows which API a request came through.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request as HttpRequest
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..backend import Backend
from ..backends.registry import load_backend
from ..trace.store import TraceStore, open_store
from .apis.endpoint import WireApi
from .apis.openapi import openapi_endpoint
from .apis.table import APIS, api_of_path
from .errors import ErrorKind, GatewayError, output_error
from .http.body import DEFAULT_MAX_BODY_BYTES
from .keys import KeyRing
from .route_config import GatewayConfig, load_config
from .routes import RouteTable
from .routing import Router
from .server_tools import ServerToolOptions
from .state import GatewayState
from .stores import open_response_store, open_usage_store
from .stores.responses import ResponseStore
from .stores.usage import UsageStore, default_usage_path
from .trace_page import trace_routes
from .tracing import TraceMiddleware

__all__ = ["create_app", "reload_app"]

_KIND_OF_STATUS: dict[int, ErrorKind] = {
    404: "not_found",
    405: "invalid_request",
    413: "request_too_large",
}


def _api_of(request: HttpRequest) -> WireApi:
    """The API whose error shape answers for ``request`` (also on paths no route matched)."""
    return api_of_path(request.url.path).error_api(request.headers)


async def _http_exception(request: HttpRequest, exc: Exception) -> Response:
    """Unknown paths and wrong methods, answered in the shape of the API the path belongs to."""
    assert isinstance(exc, HTTPException)
    kind = _KIND_OF_STATUS.get(exc.status_code, "invalid_request")
    if exc.status_code == 404:
        message = f"no such endpoint: {request.method} {request.url.path}"
    elif exc.status_code == 405:
        message = f"method {request.method} is not allowed on {request.url.path}"
    else:
        message = str(exc.detail)
    response = _api_of(request).error_response(GatewayError(message, kind))
    response.status_code = exc.status_code
    return response


async def _unexpected(request: HttpRequest, exc: Exception) -> Response:
    """Last resort: a bug outside the endpoints' own handling; no traceback leaks."""
    return _api_of(request).error_response(output_error(exc))


async def _health(request: HttpRequest) -> Response:
    state: GatewayState = request.app.state.gateway
    table = state.router.table
    if not table.simple:  # each route, and each deployment's state (ready, cooling...)
        return JSONResponse({"status": "ok", "routes": table.health()})
    body: dict[str, Any] = {"status": "ok", "backend": state.backend.name,
                            "model": state.backend.model}
    usage = getattr(state.backend, "slot_usage", None)
    if callable(usage):  # the local backend: its slots, busy ones, requests waiting
        body["slots"] = usage()
    return JSONResponse(body)


async def _root(request: HttpRequest) -> Response:
    """``GET``/``HEAD /``: 200, as the real API hosts answer (Claude Code probes it with HEAD
    before its first request)."""
    return JSONResponse({"service": "tooluse gateway"})


def create_app(
    backend: Backend | str | None = None,
    *,
    config: GatewayConfig | str | os.PathLike[str] | None = None,
    api_keys: Iterable[str] | None = None,
    aws_credentials: Mapping[str, str] | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    max_concurrency: int | None = None,
    ping_interval: float = 10.0,
    close_backend: bool | None = None,
    responses_store: ResponseStore | str | os.PathLike[str] | None = None,
    trace: TraceStore | str | os.PathLike[str] | None = None,
    allow_mcp_hosts: Iterable[str] = (),
    server_tool_turns: int | None = None,
    server_tool_timeout: float | None = None,
    usage_store: UsageStore | str | os.PathLike[str] | None = None,
) -> Starlette:
    """The gateway as an ASGI app.

    - ``backend``: a :class:`~tooluse.backends.Backend`, or a spec string (``"local"``,
      ``"scripted:hello"``, ``"openai:http://...#model"``) loaded now: every model name
      is served by it.
    - ``config``: instead of ``backend``, a config file (or a checked
      :class:`~.route_config.GatewayConfig`): model names routed to backends, deployments
      balanced, fallbacks, API keys with their models and limits (docs/routing.md). Its
      backends are built now; :func:`reload_app` reads the file again.
    - ``api_keys``: when given, Messages and Chat Completions requests must carry one of
      them (``x-api-key`` or ``Authorization: Bearer``); otherwise 401.
    - ``aws_credentials``: access key id → secret key; when given, Converse requests must
      carry a valid SigV4 signature made with one of them; otherwise 403.
    - ``max_body_bytes``: larger bodies are refused with 413 while being read.
    - ``max_concurrency``: at most this many requests run on the backend at once; others
      queue. Defaults to the backend's own ``max_concurrency`` attribute when it has one.
    - ``ping_interval``: seconds of backend silence after which a Messages stream gets a
      ``ping`` keep-alive.
    - ``close_backend``: close the backend on shutdown (default: only when built from a spec).
    - ``responses_store``: where ``/v1/responses`` keeps stored responses: a
      :class:`~.stores.responses.ResponseStore`, a SQLite file path, or a ``postgresql://``
      URL for replicas that share their responses (default: SQLite in memory).
    - ``trace``: keep a trace of every model request (:mod:`tooluse.trace`) in this
      :class:`~tooluse.trace.store.TraceStore` or SQLite file, and serve the trace page at
      ``/trace`` (behind ``api_keys`` when given). Off by default.
    - ``allow_mcp_hosts``: MCP hosts, addresses or networks (``10.0.0.0/8``) a client may
      name although they are not public; others are refused (only public addresses).
    - ``server_tool_turns``, ``server_tool_timeout``: the model turns and seconds one request
      may take while the gateway runs its tool search and MCP calls (default 8 and 300).
    - ``usage_store``: where a config's keys' usage and limits are kept: a
      :class:`~.stores.usage.UsageStore`, a SQLite file or a ``postgresql://`` URL
      (default: the config's ``usage_store``, else ``~/.cache/tooluse/usage.sqlite3``).
    """
    if (backend is None) == (config is None):
        raise ValueError("create_app takes a backend or a config (one of them)")
    router = _router(backend, config, tuple(api_keys or ()), usage_store)
    table = router.table
    instance = table.backend
    if close_backend is None:
        close_backend = not isinstance(backend, Backend)
    limit = max_concurrency if max_concurrency is not None else getattr(instance, "max_concurrency", None)
    if limit is not None and (not isinstance(limit, int) or limit < 1):
        raise ValueError(f"max_concurrency must be a positive integer, not {limit!r}")
    if max_body_bytes < 1:
        raise ValueError(f"max_body_bytes must be positive, not {max_body_bytes!r}")
    state = GatewayState(
        backend=instance,
        router=router,
        api_keys=router.api_keys,
        aws_credentials=dict(aws_credentials or {}),
        max_body_bytes=max_body_bytes,
        limiter=anyio.CapacityLimiter(limit) if limit else None,
        ping_interval=ping_interval,
        server_tools=ServerToolOptions.of(max_turns=server_tool_turns,
                                          timeout=server_tool_timeout,
                                          allow_mcp_hosts=allow_mcp_hosts),
    )

    store = responses_store if isinstance(responses_store, ResponseStore) else (
        open_response_store(responses_store if responses_store is not None else ":memory:"))

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            if close_backend:
                await state.router.table.aclose()
            if router.store is not None and not isinstance(usage_store, UsageStore):
                await anyio.to_thread.run_sync(router.store.close)
            if not isinstance(responses_store, ResponseStore):
                store.close()
            if traces is not None and not isinstance(trace, TraceStore):
                traces.close()

    routes = [route for api in APIS for route in api.routes]
    routes += [
        Route("/health", _health, methods=["GET"]),
        Route("/", _root, methods=["GET"]),
        Route("/openapi.json", openapi_endpoint, methods=["GET"]),
    ]
    traces = open_store(trace)
    if traces is not None:
        routes += trace_routes(traces, _LiveKeys(state))
    handlers: dict[Any, Any] = {HTTPException: _http_exception, Exception: _unexpected}
    app = Starlette(routes=routes, exception_handlers=handlers, lifespan=lifespan)
    # ``/v1/messages/`` is not an endpoint of the real APIs: a native 404, not a bare 307
    # to a URL the client then has to POST its body to again.
    app.router.redirect_slashes = False
    app.state.gateway = state
    app.state.responses_store = store
    if traces is not None:  # only then: an untraced gateway runs without the middleware
        app.add_middleware(TraceMiddleware, store=traces,
                           backend=instance.name if table.simple else "routes")
    app.state.trace_store = traces
    return app


class _LiveKeys(Sequence[str]):
    """The app's API keys as they are now (a reload changes a config's keys)."""

    def __init__(self, state: GatewayState) -> None:
        self._state = state

    def __getitem__(self, index: Any) -> Any:
        return self._state.api_keys[index]

    def __len__(self) -> int:
        return len(self._state.api_keys)


def _router(backend: Backend | str | None, config: GatewayConfig | str | os.PathLike[str] | None,
            api_keys: tuple[str, ...], usage_store: UsageStore | str | os.PathLike[str] | None
            ) -> Router:
    """``--backend``'s one route, or a config's routes, keys and usage store."""
    if config is None:
        assert backend is not None
        instance = load_backend(backend) if isinstance(backend, str) else backend
        return Router(RouteTable.single(instance), api_keys=api_keys)
    if not isinstance(config, GatewayConfig):
        config = load_config(config)
    table = RouteTable.build(config)
    store: UsageStore | None = None
    try:
        if isinstance(usage_store, UsageStore):
            store = usage_store
        elif config.keys:
            store = open_usage_store(usage_store or config.usage_store or default_usage_path())
    except BaseException:
        table.close()
        raise
    return Router(table, keys=KeyRing(config.keys), store=store, config_path=config.path,
                  api_keys=api_keys)


def reload_app(app: Starlette) -> str:
    """Read the app's config file again and serve it from now on (``tooluse serve`` does on
    SIGHUP); requests already running finish as they started. Returns a one-line summary;
    raises :class:`~.route_config.ConfigError` and keeps serving the current config when
    the file is broken. (The usage store stays the one the app started with.)"""
    state: GatewayState = app.state.gateway
    summary = state.router.reload()
    state.api_keys = state.router.api_keys
    return summary
