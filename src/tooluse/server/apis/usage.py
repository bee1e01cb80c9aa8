"""``GET /usage``: the usage the config's keys have run up (:mod:`.usage_store`).

A config key sees its own rows; a ``--api-key`` key (the operator's) sees every key's. The
answer is one JSON document, ``{"usage": [{key, model, route, requests, failed,
input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, first_at, last_at}]}``,
in the shape of the OpenAI error for a failure (as ``/v1/models`` answers a client that is
not the Anthropic SDK). ``tooluse logs --usage`` prints the same rows from the store.
"""

from __future__ import annotations

import anyio.to_thread
from starlette.requests import Request as HttpRequest
from starlette.responses import JSONResponse, Response

from ..errors import GatewayError
from ..http.auth import check_api_key
from ..state import GatewayState
from .chat import CHAT

__all__ = ["usage_endpoint"]


async def usage_endpoint(request: HttpRequest) -> Response:
    state: GatewayState = request.app.state.gateway
    router = state.router
    try:
        check_api_key(request.headers, state.api_keys)
        if router.store is None:
            raise GatewayError("this gateway keeps no usage: it is kept for the [[keys]] of a "
                               "config (tooluse serve --config, docs/routing.md)", "not_found")
        key = router.keys.identify(request.headers) if router.keys else None
        rows = await anyio.to_thread.run_sync(router.store.totals,
                                              key.name if key is not None else None)
    except GatewayError as error:
        return CHAT.error_response(error)
    return JSONResponse({"usage": rows})
