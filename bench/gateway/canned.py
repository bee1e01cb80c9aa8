"""The one answer every benchmarked path returns: a model calling ``get_weather``.

The benchmark compares proxies, so the upstream must answer the same thing, instantly, in the
wire format each proxy speaks to it (Anthropic Messages or OpenAI Chat Completions). Keeping
the request, the expected tool call and both wire encodings in one module lets the load
generator check every response it times against the very values the upstream sent: a proxy
that answered fast but dropped or mangled the tool call would be counted as an error, not
as a fast request.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = [
    "CHUNK",
    "MODEL",
    "TEXT",
    "TOOL_INPUT",
    "TOOL_NAME",
    "TOOL_USE_ID",
    "anthropic_message",
    "anthropic_request",
    "anthropic_sse_events",
    "openai_completion",
    "openai_request",
    "openai_sse_chunks",
]

MODEL = "bench-model"
TOOL_NAME = "get_weather"
TOOL_USE_ID = "toolu_01BenchGetWeather0001"
TEXT = "I'll look up the current weather in San Francisco for you."
TOOL_INPUT: dict[str, Any] = {"location": "San Francisco, CA", "unit": "celsius"}

_TOOL_DESCRIPTION = (
    "Get the current weather in a given location. Use it whenever the user asks about "
    "present conditions (temperature, rain, wind) in a city; do not use it for forecasts. "
    "The location is a city and state or country, e.g. 'San Francisco, CA'. The unit is "
    "'celsius' or 'fahrenheit' and defaults to the unit customary at the location."
)
_TOOL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "location": {
            "type": "string",
            "description": "The city and state, e.g. San Francisco, CA",
        },
        "unit": {
            "type": "string",
            "enum": ["celsius", "fahrenheit"],
            "description": "The unit of temperature",
        },
    },
    "required": ["location"],
}
_QUESTION = "What is the weather like in San Francisco right now?"
#: Characters per streamed text or tool-input delta (the scripted gateway backend uses the same).
CHUNK = 16
_USAGE_IN = 412
_USAGE_OUT = 58


def anthropic_request(model: str = MODEL, *, stream: bool = False) -> dict[str, Any]:
    """A Messages API request with one tool, as a client sends it to the proxy."""
    body: dict[str, Any] = {
        "model": model,
        "max_tokens": 1024,
        "tools": [
            {"name": TOOL_NAME, "description": _TOOL_DESCRIPTION, "input_schema": _TOOL_SCHEMA}
        ],
        "messages": [{"role": "user", "content": _QUESTION}],
    }
    if stream:
        body["stream"] = True
    return body


def openai_request(model: str = MODEL, *, stream: bool = False) -> dict[str, Any]:
    """The same request in the Chat Completions format."""
    body: dict[str, Any] = {
        "model": model,
        "max_tokens": 1024,
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": TOOL_NAME,
                    "description": _TOOL_DESCRIPTION,
                    "parameters": _TOOL_SCHEMA,
                },
            }
        ],
        "messages": [{"role": "user", "content": _QUESTION}],
    }
    if stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    return body


def anthropic_message(model: str) -> dict[str, Any]:
    """The non-streaming Messages API answer: some text, then the ``tool_use`` block."""
    return {
        "id": "msg_01BenchUpstream000000001",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [
            {"type": "text", "text": TEXT},
            {"type": "tool_use", "id": TOOL_USE_ID, "name": TOOL_NAME, "input": TOOL_INPUT},
        ],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": _USAGE_IN, "output_tokens": _USAGE_OUT},
    }


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def anthropic_sse_events(model: str) -> list[tuple[str, dict[str, Any]]]:
    """The streaming answer as ``(event name, data)`` pairs, in the order the API sends them.

    Text and tool-input JSON are cut into several deltas, as the real API does, so a proxy
    has to reassemble partial JSON rather than pass one whole object along.
    """
    start = anthropic_message(model)
    start["content"] = []
    start["stop_reason"] = None
    start["usage"] = {"input_tokens": _USAGE_IN, "output_tokens": 1}
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": start}),
        (
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        ),
        ("ping", {"type": "ping"}),
    ]
    for piece in _pieces(TEXT, CHUNK):
        events.append(
            (
                "content_block_delta",
                {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}},
            )
        )
    events.append(("content_block_stop", {"type": "content_block_stop", "index": 0}))
    events.append(
        (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 1,
                "content_block": {"type": "tool_use", "id": TOOL_USE_ID, "name": TOOL_NAME, "input": {}},
            },
        )
    )
    for piece in _pieces(json.dumps(TOOL_INPUT), CHUNK):
        events.append(
            (
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 1,
                    "delta": {"type": "input_json_delta", "partial_json": piece},
                },
            )
        )
    events.append(("content_block_stop", {"type": "content_block_stop", "index": 1}))
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                "usage": {"output_tokens": _USAGE_OUT},
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def openai_completion(model: str) -> dict[str, Any]:
    """The non-streaming Chat Completions answer with one ``tool_calls`` entry."""
    return {
        "id": "chatcmpl-bench000000000001",
        "object": "chat.completion",
        "created": 1763750000,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": TEXT,
                    "tool_calls": [
                        {
                            "id": "call_bench_get_weather_0001",
                            "type": "function",
                            "function": {"name": TOOL_NAME, "arguments": json.dumps(TOOL_INPUT)},
                        }
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {
            "prompt_tokens": _USAGE_IN,
            "completion_tokens": _USAGE_OUT,
            "total_tokens": _USAGE_IN + _USAGE_OUT,
        },
    }


def openai_sse_chunks(model: str, *, include_usage: bool) -> list[dict[str, Any]]:
    """The streaming Chat Completions answer as ``chat.completion.chunk`` payloads."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-bench000000000001",
            "object": "chat.completion.chunk",
            "created": 1763750000,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    chunks = [chunk({"role": "assistant", "content": ""})]
    chunks += [chunk({"content": piece}) for piece in _pieces(TEXT, CHUNK)]
    chunks.append(
        chunk(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "call_bench_get_weather_0001",
                        "type": "function",
                        "function": {"name": TOOL_NAME, "arguments": ""},
                    }
                ]
            }
        )
    )
    for piece in _pieces(json.dumps(TOOL_INPUT), CHUNK):
        chunks.append(chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}))
    chunks.append(chunk({}, "tool_calls"))
    if include_usage:
        usage_chunk = chunk({})
        usage_chunk["choices"] = []
        usage_chunk["usage"] = {
            "prompt_tokens": _USAGE_IN,
            "completion_tokens": _USAGE_OUT,
            "total_tokens": _USAGE_IN + _USAGE_OUT,
        }
        chunks.append(usage_chunk)
    return chunks
