"""``POST /v1/messages/count_tokens``, ``GET /v1/models`` and ``GET /v1/models/{id}``.

- **count_tokens** takes a Messages request (``max_tokens`` may be left out, as the real
  endpoint allows) and answers ``{"input_tokens": N}``. The number is exact where the
  backend can count (a text backend counts the tokens of the prompt it would render; the
  anthropic backend asks its upstream's count_tokens) and otherwise an estimate (4
  characters a token over the request's JSON, as a rough rule for English and code); the
  ``x-tooluse-token-count`` header says which (``exact`` or ``estimate``).
- **models** lists the backend's model in one document both SDKs read: the Anthropic
  fields (``type``, ``display_name``, ``created_at``, ``has_more``, ``first_id``,
  ``last_id``) and the OpenAI ones (``object``, ``created``, ``owned_by``). With
  ``--backend`` alone every model id is served by the one backend, so ``/v1/models/{id}``
  answers for any id; with a config (``--config``, docs/routing.md) the list holds the
  ``[[models]]`` entries' exact names the caller's key may use, and ``/v1/models/{id}``
  answers for a name some entry matches (404 otherwise, 403 for a key's other models).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any, Final

import anyio.to_thread
from starlette.requests import Request as HttpRequest
from starlette.responses import JSONResponse, Response

from ...errors import WireFormatError
from ..errors import GatewayError, input_error, output_error
from ..http.auth import check_api_key
from ..http.body import parse_json_object, read_body
from ..state import GatewayState
from .chat import CHAT
from .endpoint import Exchange, WireApi
from .messages import MESSAGES

__all__ = ["CHARS_PER_TOKEN", "count_tokens_endpoint", "estimate_tokens", "model_endpoint",
           "models_endpoint", "models_error_api"]

#: Characters per token of the estimate (a common rule of thumb for English text and code).
CHARS_PER_TOKEN: Final = 4
#: A fixed creation time: the gateway's models have none (2024-01-01T00:00:00Z).
_CREATED: Final = 1704067200


async def count_tokens_endpoint(request: HttpRequest) -> Response:
    state: GatewayState = request.app.state.gateway
    request_id = MESSAGES.new_request_id()
    try:
        MESSAGES.check_headers(request, state)
        data = parse_json_object(await read_body(request, state.max_body_bytes))
        if "stream" in data:
            raise WireFormatError("Extra inputs are not permitted", ("stream",))
        neutral = MESSAGES.decode(Exchange(request, {"max_tokens": 1, **data}, request_id))
        backend = state.router.backend_for(neutral.model, request.headers)
    except Exception as exc:  # noqa: BLE001 - every failure becomes a native error
        return MESSAGES.error_response(input_error(exc), request_id)
    try:
        # what the model would see: deferred tools left out, the search tool in
        count = await anyio.to_thread.run_sync(
            state.server_tools.serving(backend).count_tokens, neutral)
    except Exception as exc:  # noqa: BLE001 - every failure becomes a native error
        return MESSAGES.error_response(output_error(exc), request_id)
    how = "exact"
    if count is None:
        how = "estimate"
        count = estimate_tokens(data)
    return JSONResponse({"input_tokens": count},
                        headers={"request-id": request_id, "x-tooluse-token-count": how})


def estimate_tokens(data: dict[str, Any]) -> int:
    """A rough count of a Messages request's input tokens: its system, messages and tools
    as compact JSON, 4 characters a token."""
    parts = {k: data[k] for k in ("system", "messages", "tools") if k in data}
    text = json.dumps(parts, ensure_ascii=False, separators=(",", ":"))
    return max(1, math.ceil(len(text) / CHARS_PER_TOKEN))


def _model(model_id: str) -> dict[str, Any]:
    return {
        "id": model_id,
        "type": "model",
        "display_name": model_id,
        "created_at": "2024-01-01T00:00:00Z",
        "object": "model",
        "created": _CREATED,
        "owned_by": "tooluse",
    }


def models_error_api(headers: Mapping[str, str]) -> WireApi:
    """The error shape of ``/v1/models``: the Anthropic SDK sends ``anthropic-version``;
    anything else gets OpenAI's shape."""
    return MESSAGES if "anthropic-version" in headers else CHAT


def _api(request: HttpRequest) -> WireApi:
    return models_error_api(request.headers)


def _unauthorized(request: HttpRequest, state: GatewayState) -> Response | None:
    try:
        check_api_key(request.headers, state.api_keys)
    except GatewayError as error:
        return _api(request).error_response(error)
    return None


async def models_endpoint(request: HttpRequest) -> Response:
    state: GatewayState = request.app.state.gateway
    if (refused := _unauthorized(request, state)) is not None:
        return refused
    names = state.router.listed(request.headers)
    return JSONResponse({
        "object": "list",
        "data": [_model(name) for name in names],
        "has_more": False,
        "first_id": names[0] if names else None,
        "last_id": names[-1] if names else None,
    })


async def model_endpoint(request: HttpRequest) -> Response:
    state: GatewayState = request.app.state.gateway
    if (refused := _unauthorized(request, state)) is not None:
        return refused
    model_id = request.path_params["model_id"]
    try:
        state.router.backend_for(model_id, request.headers)
    except GatewayError as error:
        return _api(request).error_response(error)
    return JSONResponse(_model(model_id))

