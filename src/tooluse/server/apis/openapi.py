"""``GET /openapi.json``: a compact OpenAPI 3.1 description of the JSON endpoints.

The document is the API table's (:mod:`.table`): each API's paths and schemas
(:mod:`.openapi_paths`), joined, with the app's ``/health``. The schemas are deliberately
shallow: the codecs are the authority on what a body may hold.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request as HttpRequest
from starlette.responses import JSONResponse, Response

from . import openapi_paths
from .table import APIS

__all__ = ["openapi_document", "openapi_endpoint"]

_INFO = {
    "title": "tooluse gateway",
    "version": "1",
    "description": "The Anthropic Messages, AWS Bedrock Converse, OpenAI Chat Completions and "
    "OpenAI Responses APIs with tool use, over any tooluse backend.",
}


def openapi_document() -> dict[str, Any]:
    """The OpenAPI document of every API in the table (and ``/health``)."""
    paths: dict[str, Any] = {}
    schemas: dict[str, Any] = {}
    for fragment in [api.openapi for api in APIS] + [openapi_paths.health]:
        api_paths, api_schemas = fragment()
        paths.update(api_paths)
        for name, schema in api_schemas.items():  # a shared schema (the errors) is one object
            if schemas.setdefault(name, schema) != schema:
                raise RuntimeError(f"two OpenAPI schemas named {name}")
    return {"openapi": "3.1.0", "info": _INFO, "paths": paths,
            "components": {"schemas": schemas}}


async def openapi_endpoint(request: HttpRequest) -> Response:
    return JSONResponse(openapi_document())
