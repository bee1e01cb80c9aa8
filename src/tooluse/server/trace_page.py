"""The trace page: ``/trace`` on the gateway (``tooluse serve --trace``) and on
``tooluse logs --serve``.

A static page (``static/trace.html``, ``trace.js``, ``trace.css``: plain HTML and a little
JavaScript, no build step, nothing loaded from elsewhere, so it works offline) over two JSON
routes: ``/trace/api/traces`` (the newest summaries; ``?q=`` a text to find, ``?limit=``,
``?before=`` a ``seq`` for the next page) and ``/trace/api/traces/{id}`` (one whole trace).

When the gateway has API keys, every one of these routes wants one: ``x-api-key`` or
``Authorization: Bearer`` as for the APIs, or HTTP Basic with the key as the password, so a
browser asks for it (the answer to a request without one says ``WWW-Authenticate: Basic``).
"""

from __future__ import annotations

import base64
from collections.abc import Awaitable, Callable, Sequence
from importlib import resources

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..trace.store import TraceStore
from .errors import GatewayError
from .http.auth import check_api_key, extract_api_key

__all__ = ["trace_routes"]

_FILES = {"trace.html": "text/html; charset=utf-8",
          "trace.js": "text/javascript; charset=utf-8",
          "trace.css": "text/css; charset=utf-8"}


def _static(name: str) -> bytes:
    return resources.files("tooluse.server").joinpath("static", name).read_bytes()


def _sent_key(request: Request) -> str | None:
    auth = request.headers.get("authorization", "")
    scheme, _, value = auth.partition(" ")
    if scheme.lower() == "basic":
        try:
            return base64.b64decode(value.strip(), validate=True).decode().partition(":")[2]
        except (ValueError, UnicodeDecodeError):
            return None
    return extract_api_key(request.headers)


def _allowed(request: Request, keys: Sequence[str]) -> bool:
    sent = _sent_key(request)
    try:
        check_api_key({"x-api-key": sent} if sent else {}, keys)
    except GatewayError:
        return False
    return True


def _denied() -> Response:
    return JSONResponse(
        {"error": {"type": "authentication_error",
                   "message": "the trace page needs the gateway's API key (x-api-key, "
                              "Authorization: Bearer, or HTTP Basic with the key as password)"}},
        status_code=401, headers={"www-authenticate": 'Basic realm="tooluse traces"'})


def trace_routes(store: TraceStore, api_keys: Sequence[str] = ()) -> list[Route]:
    """The page's routes over ``store``, guarded by ``api_keys`` when there are any."""

    def guarded(handler: Callable[[Request], Awaitable[Response]]
                ) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            if not _allowed(request, api_keys):
                return _denied()
            return await handler(request)
        return endpoint

    async def page(request: Request) -> Response:
        name = request.path_params.get("name", "trace.html")
        if name not in _FILES:
            return JSONResponse({"error": {"type": "not_found_error",
                                           "message": f"no such file: {name}"}}, 404)
        return Response(_static(name), media_type=_FILES[name],
                        headers={"cache-control": "no-cache"})

    async def listing(request: Request) -> Response:
        query = request.query_params
        try:
            limit = min(max(int(query.get("limit", "100")), 1), 1000)
            before = int(query["before"]) if query.get("before") else None
        except ValueError:
            return JSONResponse({"error": {"type": "invalid_request_error",
                                           "message": "limit and before must be integers"}},
                                400)
        items = await anyio.to_thread.run_sync(
            lambda: store.list(limit, search=query.get("q") or None, before=before))
        return JSONResponse({"traces": items})

    async def one(request: Request) -> Response:
        trace_id = request.path_params["trace_id"]
        data = await anyio.to_thread.run_sync(store.get, trace_id)
        if data is None:
            return JSONResponse({"error": {"type": "not_found_error",
                                           "message": f"no trace {trace_id!r}"}}, 404)
        return JSONResponse(data)

    return [
        Route("/trace", guarded(page), methods=["GET"]),
        Route("/trace/api/traces", guarded(listing), methods=["GET"]),
        Route("/trace/api/traces/{trace_id}", guarded(one), methods=["GET"]),
        Route("/trace/{name}", guarded(page), methods=["GET"]),
    ]
