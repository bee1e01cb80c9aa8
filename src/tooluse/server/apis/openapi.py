"""``GET /openapi.json``: a compact OpenAPI 3.1 description of the JSON endpoints.

The schemas are written by hand and kept deliberately shallow (the top-level fields and the
tool-related shapes): the codecs are the authority on what a body may hold, and their
errors name the offending field, so this document is a map for humans and client
generators rather than a second validator that could drift from them.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request as HttpRequest
from starlette.responses import JSONResponse, Response

__all__ = ["openapi_document", "openapi_endpoint"]

_OBJ: dict[str, Any] = {"type": "object"}
_ARR: dict[str, Any] = {"type": "array", "items": _OBJ}


def _error(ref: str) -> dict[str, Any]:
    return {"description": "error", "content": {"application/json": {"schema": {"$ref": ref}}}}


def openapi_document() -> dict[str, Any]:
    anthropic_tool = {
        "type": "object",
        "required": ["name", "input_schema"],
        "properties": {
            "name": {"type": "string", "pattern": "^[a-zA-Z0-9_-]{1,64}$"},
            "description": {"type": "string"},
            "input_schema": _OBJ,
        },
    }
    bedrock_tool = {
        "type": "object",
        "properties": {
            "toolSpec": {
                "type": "object",
                "required": ["name", "inputSchema"],
                "properties": {
                    "name": {"type": "string", "pattern": "^[a-zA-Z0-9_-]{1,64}$"},
                    "description": {"type": "string"},
                    "inputSchema": {"type": "object", "properties": {"json": _OBJ}},
                },
            }
        },
    }
    schemas: dict[str, Any] = {
        "MessagesRequest": {
            "type": "object",
            "required": ["model", "max_tokens", "messages"],
            "properties": {
                "model": {"type": "string"},
                "max_tokens": {"type": "integer", "minimum": 1},
                "messages": _ARR,
                "system": {"oneOf": [{"type": "string"}, _ARR]},
                "tools": {"type": "array", "items": anthropic_tool},
                "tool_choice": {
                    "type": "object",
                    "required": ["type"],
                    "properties": {
                        "type": {"enum": ["auto", "any", "tool", "none"]},
                        "name": {"type": "string"},
                        "disable_parallel_tool_use": {"type": "boolean"},
                    },
                },
                "stop_sequences": {"type": "array", "items": {"type": "string"}},
                "temperature": {"type": "number"},
                "top_p": {"type": "number"},
                "top_k": {"type": "integer"},
                "metadata": _OBJ,
                "stream": {"type": "boolean"},
            },
        },
        "MessagesResponse": {
            "type": "object",
            "properties": {
                "id": {"type": "string"},
                "type": {"const": "message"},
                "role": {"const": "assistant"},
                "model": {"type": "string"},
                "content": _ARR,
                "stop_reason": {"enum": ["end_turn", "tool_use", "max_tokens", "stop_sequence", None]},
                "stop_sequence": {"type": ["string", "null"]},
                "usage": _OBJ,
            },
        },
        "MessagesError": {
            "type": "object",
            "properties": {
                "type": {"const": "error"},
                "error": {
                    "type": "object",
                    "properties": {"type": {"type": "string"}, "message": {"type": "string"}},
                },
            },
        },
        "ConverseRequest": {
            "type": "object",
            "required": ["messages"],
            "properties": {
                "messages": _ARR,
                "system": _ARR,
                "inferenceConfig": _OBJ,
                "toolConfig": {
                    "type": "object",
                    "properties": {
                        "tools": {"type": "array", "items": bedrock_tool},
                        "toolChoice": _OBJ,
                    },
                },
            },
        },
        "ConverseResponse": {
            "type": "object",
            "properties": {
                "output": _OBJ,
                "stopReason": {"type": "string"},
                "usage": _OBJ,
                "metrics": _OBJ,
            },
        },
        "ConverseError": {"type": "object", "properties": {"message": {"type": "string"}}},
        "ChatCompletionRequest": {
            "type": "object",
            "required": ["model", "messages"],
            "properties": {
                "model": {"type": "string"},
                "messages": _ARR,
                "tools": _ARR,
                "tool_choice": {"oneOf": [{"type": "string"}, _OBJ]},
                "parallel_tool_calls": {"type": "boolean"},
                "max_tokens": {"type": "integer"},
                "max_completion_tokens": {"type": "integer"},
                "stop": {"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]},
                "temperature": {"type": "number"},
                "top_p": {"type": "number"},
                "stream": {"type": "boolean"},
            },
        },
        "ChatCompletion": {
            "type": "object",
            "properties": {
                "id": {"type": "string"},
                "object": {"const": "chat.completion"},
                "model": {"type": "string"},
                "choices": _ARR,
                "usage": _OBJ,
            },
        },
        "OpenAIError": {
            "type": "object",
            "properties": {
                "error": {
                    "type": "object",
                    "properties": {
                        "message": {"type": "string"},
                        "type": {"type": "string"},
                        "param": {"type": ["string", "null"]},
                        "code": {"type": ["string", "null"]},
                    },
                }
            },
        },
        "Health": {
            "type": "object",
            "properties": {
                "status": {"const": "ok"},
                "backend": {"type": "string"},
                "model": {"type": ["string", "null"]},
            },
        },
    }

    def post(summary: str, req: str, resp: str, err: str, stream_type: str | None) -> dict[str, Any]:
        ok: dict[str, Any] = {"application/json": {"schema": {"$ref": f"#/components/schemas/{resp}"}}}
        if stream_type:
            ok[stream_type] = {"schema": {"type": "string"}}
        return {
            "post": {
                "summary": summary,
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {"schema": {"$ref": f"#/components/schemas/{req}"}}
                    },
                },
                "responses": {
                    "200": {"description": "the model's answer", "content": ok},
                    "default": _error(f"#/components/schemas/{err}"),
                },
            }
        }

    model_param = [
        {"name": "modelId", "in": "path", "required": True, "schema": {"type": "string"}}
    ]
    converse = post("Bedrock Converse", "ConverseRequest", "ConverseResponse", "ConverseError", None)
    converse["parameters"] = model_param
    converse_stream = post(
        "Bedrock ConverseStream (binary event stream)",
        "ConverseRequest",
        "ConverseResponse",
        "ConverseError",
        "application/vnd.amazon.eventstream",
    )
    converse_stream["parameters"] = model_param
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "tooluse gateway",
            "version": "1",
            "description": "The Anthropic Messages, AWS Bedrock Converse and OpenAI Chat "
            "Completions APIs with tool use, over any tooluse backend.",
        },
        "paths": {
            "/v1/messages": post(
                "Anthropic Messages", "MessagesRequest", "MessagesResponse", "MessagesError",
                "text/event-stream",
            ),
            "/model/{modelId}/converse": converse,
            "/model/{modelId}/converse-stream": converse_stream,
            "/v1/chat/completions": post(
                "OpenAI Chat Completions", "ChatCompletionRequest", "ChatCompletion",
                "OpenAIError", "text/event-stream",
            ),
            "/health": {
                "get": {
                    "summary": "liveness and the backend served",
                    "responses": {
                        "200": {
                            "description": "ok",
                            "content": {
                                "application/json": {
                                    "schema": {"$ref": "#/components/schemas/Health"}
                                }
                            },
                        }
                    },
                }
            },
        },
        "components": {"schemas": schemas},
    }


async def openapi_endpoint(request: HttpRequest) -> Response:
    return JSONResponse(openapi_document())
