"""Each wire API's part of the OpenAPI document: its paths and the schemas they name.

Written by hand and kept deliberately shallow (the top-level fields and the tool-related
shapes): the codecs are the authority on what a body may hold, and their errors name the
offending field, so the document is a map for humans, client generators and the robustness
fuzzer rather than a second validator that could drift from them. One function per API,
each returning ``(paths, schemas)``; :mod:`.table` names them, :mod:`.openapi` joins them.
"""

from __future__ import annotations

from typing import Any

__all__ = ["chat", "converse", "count_tokens", "health", "messages", "models", "responses",
           "usage"]

Fragment = tuple[dict[str, Any], dict[str, Any]]

_OBJ: dict[str, Any] = {"type": "object"}
_ARR: dict[str, Any] = {"type": "array", "items": _OBJ}
_STR: dict[str, Any] = {"type": "string"}
_NAME: dict[str, Any] = {"type": "string", "pattern": "^[a-zA-Z0-9_-]{1,64}$"}

_OPENAI_ERROR = {
    "type": "object",
    "properties": {
        "error": {
            "type": "object",
            "properties": {
                "message": _STR,
                "type": _STR,
                "param": {"type": ["string", "null"]},
                "code": {"type": ["string", "null"]},
            },
        }
    },
}
_MESSAGES_ERROR = {
    "type": "object",
    "properties": {
        "type": {"const": "error"},
        "error": {"type": "object", "properties": {"type": _STR, "message": _STR}},
    },
}


def _ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/components/schemas/{name}"}


def _json(name: str) -> dict[str, Any]:
    return {"application/json": {"schema": _ref(name)}}


def _error(name: str) -> dict[str, Any]:
    return {"description": "error", "content": _json(name)}


def _post(summary: str, req: str, resp: str, err: str, stream_type: str | None) -> dict[str, Any]:
    ok = _json(resp)
    if stream_type:
        ok[stream_type] = {"schema": _STR}
    return {
        "post": {
            "summary": summary,
            "requestBody": {"required": True, "content": _json(req)},
            "responses": {
                "200": {"description": "the model's answer", "content": ok},
                "default": _error(err),
            },
        }
    }


def _get(summary: str, resp: str, err: str, *, parameters: list[dict[str, Any]] | None = None,
         ) -> dict[str, Any]:
    operation: dict[str, Any] = {
        "summary": summary,
        "responses": {"200": {"description": "ok", "content": _json(resp)},
                      "default": _error(err)},
    }
    if parameters:
        operation["parameters"] = parameters
    return operation


def _path_param(name: str) -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "schema": _STR}


def _query(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "in": "query", "required": False, "schema": schema}


def _messages_request(*, max_tokens_required: bool) -> dict[str, Any]:
    tool = {
        "type": "object",
        "required": ["name", "input_schema"],
        "properties": {"name": _NAME, "description": _STR, "input_schema": _OBJ},
    }
    return {
        "type": "object",
        "required": ["model", "max_tokens", "messages"] if max_tokens_required
        else ["model", "messages"],
        "properties": {
            "model": _STR,
            "max_tokens": {"type": "integer", "minimum": 1},
            "messages": _ARR,
            "system": {"oneOf": [_STR, _ARR]},
            "tools": {"type": "array", "items": tool},
            "tool_choice": {
                "type": "object",
                "required": ["type"],
                "properties": {
                    "type": {"enum": ["auto", "any", "tool", "none"]},
                    "name": _STR,
                    "disable_parallel_tool_use": {"type": "boolean"},
                },
            },
            "stop_sequences": {"type": "array", "items": _STR},
            "temperature": {"type": "number"},
            "top_p": {"type": "number"},
            "top_k": {"type": "integer"},
            "metadata": _OBJ,
            "stream": {"type": "boolean"},
        },
    }


def messages() -> Fragment:
    """``POST /v1/messages``."""
    schemas = {
        "MessagesRequest": _messages_request(max_tokens_required=True),
        "MessagesResponse": {
            "type": "object",
            "properties": {
                "id": _STR,
                "type": {"const": "message"},
                "role": {"const": "assistant"},
                "model": _STR,
                "content": _ARR,
                "stop_reason": {"enum": ["end_turn", "tool_use", "max_tokens", "stop_sequence",
                                         None]},
                "stop_sequence": {"type": ["string", "null"]},
                "usage": _OBJ,
            },
        },
        "MessagesError": _MESSAGES_ERROR,
    }
    paths = {"/v1/messages": _post("Anthropic Messages", "MessagesRequest", "MessagesResponse",
                                   "MessagesError", "text/event-stream")}
    return paths, schemas


def count_tokens() -> Fragment:
    """``POST /v1/messages/count_tokens``: a Messages request, ``max_tokens`` optional."""
    request = _messages_request(max_tokens_required=False)
    del request["properties"]["stream"]
    schemas = {
        "CountTokensRequest": request,
        "TokenCount": {"type": "object", "required": ["input_tokens"],
                       "properties": {"input_tokens": {"type": "integer"}}},
        "MessagesError": _MESSAGES_ERROR,
    }
    paths = {"/v1/messages/count_tokens": _post(
        "Anthropic Messages token count", "CountTokensRequest", "TokenCount", "MessagesError",
        None)}
    return paths, schemas


def converse() -> Fragment:
    """``POST /model/{modelId}/converse`` and ``converse-stream``."""
    tool = {
        "type": "object",
        "properties": {
            "toolSpec": {
                "type": "object",
                "required": ["name", "inputSchema"],
                "properties": {
                    "name": _NAME,
                    "description": _STR,
                    "inputSchema": {"type": "object", "properties": {"json": _OBJ}},
                },
            }
        },
    }
    schemas = {
        "ConverseRequest": {
            "type": "object",
            "required": ["messages"],
            "properties": {
                "messages": _ARR,
                "system": _ARR,
                "inferenceConfig": _OBJ,
                "toolConfig": {
                    "type": "object",
                    "properties": {"tools": {"type": "array", "items": tool}, "toolChoice": _OBJ},
                },
            },
        },
        "ConverseResponse": {
            "type": "object",
            "properties": {"output": _OBJ, "stopReason": _STR, "usage": _OBJ, "metrics": _OBJ},
        },
        "ConverseError": {"type": "object", "properties": {"message": _STR}},
    }
    whole = _post("Bedrock Converse", "ConverseRequest", "ConverseResponse", "ConverseError",
                  None)
    stream = _post("Bedrock ConverseStream (binary event stream)", "ConverseRequest",
                   "ConverseResponse", "ConverseError", "application/vnd.amazon.eventstream")
    for item in (whole, stream):
        item["parameters"] = [_path_param("modelId")]
    return {"/model/{modelId}/converse": whole,
            "/model/{modelId}/converse-stream": stream}, schemas


def chat() -> Fragment:
    """``POST /v1/chat/completions``."""
    schemas = {
        "ChatCompletionRequest": {
            "type": "object",
            "required": ["model", "messages"],
            "properties": {
                "model": _STR,
                "messages": _ARR,
                "tools": _ARR,
                "tool_choice": {"oneOf": [_STR, _OBJ]},
                "parallel_tool_calls": {"type": "boolean"},
                "max_tokens": {"type": "integer"},
                "max_completion_tokens": {"type": "integer"},
                "stop": {"oneOf": [_STR, {"type": "array", "items": _STR}]},
                "temperature": {"type": "number"},
                "top_p": {"type": "number"},
                "stream": {"type": "boolean"},
            },
        },
        "ChatCompletion": {
            "type": "object",
            "properties": {
                "id": _STR,
                "object": {"const": "chat.completion"},
                "model": _STR,
                "choices": _ARR,
                "usage": _OBJ,
            },
        },
        "OpenAIError": _OPENAI_ERROR,
    }
    paths = {"/v1/chat/completions": _post(
        "OpenAI Chat Completions", "ChatCompletionRequest", "ChatCompletion", "OpenAIError",
        "text/event-stream")}
    return paths, schemas


def responses() -> Fragment:
    """``/v1/responses``: create, and the stored responses' get, delete and input items."""
    schemas = {
        "ResponsesRequest": {
            "type": "object",
            "required": ["model"],
            "properties": {
                "model": _STR,
                "input": {"oneOf": [_STR, _ARR]},
                "instructions": {"type": ["string", "null"]},
                "tools": _ARR,
                "tool_choice": {"oneOf": [_STR, _OBJ]},
                "parallel_tool_calls": {"type": "boolean"},
                "previous_response_id": {"type": ["string", "null"]},
                "store": {"type": "boolean"},
                "stream": {"type": "boolean"},
                "max_output_tokens": {"type": "integer"},
                "temperature": {"type": "number"},
                "top_p": {"type": "number"},
                "text": _OBJ,
                "reasoning": _OBJ,
                "metadata": _OBJ,
            },
        },
        "Response": {
            "type": "object",
            "properties": {
                "id": _STR,
                "object": {"const": "response"},
                "status": _STR,
                "model": _STR,
                "output": _ARR,
                "usage": _OBJ,
            },
        },
        "DeletedResponse": {
            "type": "object",
            "properties": {"id": _STR, "object": {"const": "response"},
                           "deleted": {"type": "boolean"}},
        },
        "InputItemList": {
            "type": "object",
            "properties": {"object": {"const": "list"}, "data": _ARR,
                           "first_id": {"type": ["string", "null"]},
                           "last_id": {"type": ["string", "null"]},
                           "has_more": {"type": "boolean"}},
        },
        "OpenAIError": _OPENAI_ERROR,
    }
    stored = [_path_param("response_id")]
    paths = {
        "/v1/responses": _post("OpenAI Responses", "ResponsesRequest", "Response", "OpenAIError",
                               "text/event-stream"),
        "/v1/responses/{response_id}": {
            "parameters": stored,
            "get": _get("a stored response", "Response", "OpenAIError",
                        parameters=[_query("stream", {"type": "boolean"})]),
            "delete": _get("delete a stored response", "DeletedResponse", "OpenAIError"),
        },
        "/v1/responses/{response_id}/input_items": {
            "parameters": stored,
            "get": _get("a stored response's input items", "InputItemList", "OpenAIError",
                        parameters=[
                            _query("limit", {"type": "integer", "minimum": 1, "maximum": 100}),
                            _query("order", {"enum": ["asc", "desc"]}),
                            _query("after", _STR),
                            _query("before", _STR),
                        ]),
        },
    }
    return paths, schemas


def models() -> Fragment:
    """``GET /v1/models`` and ``/v1/models/{model_id}`` (one document both SDKs read)."""
    schemas = {
        "Model": {
            "type": "object",
            "properties": {"id": _STR, "type": {"const": "model"}, "display_name": _STR,
                           "object": {"const": "model"}, "owned_by": _STR},
        },
        "ModelList": {
            "type": "object",
            "properties": {"object": {"const": "list"}, "data": _ARR,
                           "has_more": {"type": "boolean"}},
        },
        "OpenAIError": _OPENAI_ERROR,
    }
    paths = {
        "/v1/models": {"get": _get("the models served", "ModelList", "OpenAIError")},
        "/v1/models/{model_id}": {"parameters": [_path_param("model_id")],
                                  "get": _get("one model", "Model", "OpenAIError")},
    }
    return paths, schemas


def usage() -> Fragment:
    """``GET /usage``: a config's keys' usage."""
    schemas = {
        "Usage": {"type": "object", "properties": {"usage": _ARR}},
        "OpenAIError": _OPENAI_ERROR,
    }
    return {"/usage": {"get": _get("the usage of the config's keys", "Usage",
                                   "OpenAIError")}}, schemas


def health() -> Fragment:
    """``GET /health`` (the app's, not an API's)."""
    schemas = {
        "Health": {
            "type": "object",
            "properties": {
                "status": {"const": "ok"},
                "backend": _STR,
                "model": {"type": ["string", "null"]},
            },
        }
    }
    paths = {"/health": {"get": {
        "summary": "liveness and the backend served",
        "responses": {"200": {"description": "ok", "content": _json("Health")}},
    }}}
    return paths, schemas
