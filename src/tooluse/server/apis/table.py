"""The gateway's wire APIs, in one table: each one's name, paths, :class:`~.endpoint.WireApi`,
routes, OpenAPI paths and error shape.

The app mounts the routes and answers an unknown path or a wrong method in the error shape
of the API the path belongs to; the tracing middleware names a request's trace after it; the
OpenAPI document lists its paths. All three read this table, so a new API is a new module
and a new row here, and no two places can disagree on which API a path belongs to.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from starlette.routing import Route

from . import openapi_paths as paths
from .chat import CHAT, chat_completions_endpoint
from .converse import CONVERSE, converse_endpoint, converse_stream_endpoint
from .endpoint import WireApi
from .info import count_tokens_endpoint, model_endpoint, models_endpoint, models_error_api
from .messages import MESSAGES, messages_endpoint
from .responses import (
    RESPONSES,
    create_response,
    delete_response,
    get_response,
    list_input_items,
)
from .usage import usage_endpoint

__all__ = ["APIS", "DEFAULT", "Api", "api_of_path"]

#: An OpenAPI fragment: the ``paths`` and the ``components.schemas`` an API adds.
OpenApiPaths = tuple[dict[str, Any], dict[str, Any]]


@dataclass(frozen=True)
class Api:
    """One wire API of the gateway (or one endpoint group with an error shape of its own)."""

    #: The API's name: a trace's ``api``, the same as its :attr:`WireApi.name`.
    name: str
    #: The path prefixes that belong to it (the longest matching prefix wins).
    prefixes: tuple[str, ...]
    #: Its codec and error shape.
    wire: WireApi
    routes: tuple[Route, ...]
    #: Its part of the OpenAPI document.
    openapi: Callable[[], OpenApiPaths]
    #: Whether a ``POST`` to it is a model request the tracing middleware records.
    traced: bool = True
    #: The error shape by the request's headers, where the API is read by two SDKs
    #: (``/v1/models``: the Anthropic SDK's shape when it sends ``anthropic-version``).
    shape_for: Callable[[Mapping[str, str]], WireApi] | None = None

    def error_api(self, headers: Mapping[str, str]) -> WireApi:
        """The API whose error shape answers a request with these headers."""
        return self.shape_for(headers) if self.shape_for is not None else self.wire


APIS: tuple[Api, ...] = (
    Api("messages", ("/v1/messages",), MESSAGES,
        (Route("/v1/messages", messages_endpoint, methods=["POST"]),),
        paths.messages),
    Api("count_tokens", ("/v1/messages/count_tokens",), MESSAGES,
        (Route("/v1/messages/count_tokens", count_tokens_endpoint, methods=["POST"]),),
        paths.count_tokens, traced=False),
    Api("converse", ("/model/",), CONVERSE,
        (Route("/model/{model_id:path}/converse-stream", converse_stream_endpoint,
               methods=["POST"]),
         Route("/model/{model_id:path}/converse", converse_endpoint, methods=["POST"])),
        paths.converse),
    Api("chat_completions", ("/v1/chat",), CHAT,
        (Route("/v1/chat/completions", chat_completions_endpoint, methods=["POST"]),),
        paths.chat),
    Api("responses", ("/v1/responses",), RESPONSES,
        (Route("/v1/responses", create_response, methods=["POST"]),
         Route("/v1/responses/{response_id}", get_response, methods=["GET"]),
         Route("/v1/responses/{response_id}", delete_response, methods=["DELETE"]),
         Route("/v1/responses/{response_id}/input_items", list_input_items, methods=["GET"])),
        paths.responses),
    Api("models", ("/v1/models",), CHAT,
        (Route("/v1/models", models_endpoint, methods=["GET"]),
         Route("/v1/models/{model_id:path}", model_endpoint, methods=["GET"])),
        paths.models, traced=False, shape_for=models_error_api),
    Api("usage", ("/usage",), CHAT,
        (Route("/usage", usage_endpoint, methods=["GET"]),),
        paths.usage, traced=False),
)

#: The API a path outside every API's prefixes belongs to (its errors, its trace).
DEFAULT = APIS[0]


def api_of_path(path: str) -> Api:
    """The API ``path`` belongs to: the longest matching prefix, else :data:`DEFAULT`."""
    best, length = DEFAULT, -1
    for api in APIS:
        for prefix in api.prefixes:
            if path.startswith(prefix) and len(prefix) > length:
                best, length = api, len(prefix)
    return best
