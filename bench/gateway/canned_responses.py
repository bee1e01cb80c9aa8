"""The benchmark's one answer in the OpenAI Responses API (``/v1/responses``): the same text
and ``get_weather`` call as :mod:`canned`, as a ``response`` object and as its SSE events, and
the check the load generator runs on every answer timed on that wire.

Written out by hand from the API's documented shapes (not with tooluse's own codec): the
upstream must not share code with the gateway it measures.
"""

from __future__ import annotations

import json
from typing import Any

from canned import (
    _QUESTION,
    _TOOL_DESCRIPTION,
    _TOOL_SCHEMA,
    _USAGE_IN,
    _USAGE_OUT,
    CHUNK,
    TEXT,
    TOOL_INPUT,
    TOOL_NAME,
    _pieces,
)

__all__ = ["check", "response_object", "responses_request", "responses_sse_events"]

_RESP_ID = "resp_bench000000000000000001"
_MSG_ID = "msg_bench000000000000000001"
_FC_ID = "fc_bench0000000000000000001"
_CALL_ID = "call_bench_get_weather_0001"


def responses_request(model: str, *, stream: bool = False) -> dict[str, Any]:
    """The benchmark request as a Responses client (Codex, the Agents SDK) sends it."""
    body: dict[str, Any] = {
        "model": model,
        "max_output_tokens": 1024,
        "tools": [{"type": "function", "name": TOOL_NAME, "description": _TOOL_DESCRIPTION,
                   "parameters": _TOOL_SCHEMA, "strict": False}],
        "input": [{"role": "user", "content": _QUESTION}],
        "store": False,
    }
    if stream:
        body["stream"] = True
    return body


def _message(status: str, text: str) -> dict[str, Any]:
    return {"id": _MSG_ID, "type": "message", "status": status, "role": "assistant",
            "content": [] if status == "in_progress" else [_text_part(text)]}


def _text_part(text: str) -> dict[str, Any]:
    return {"type": "output_text", "text": text, "annotations": [], "logprobs": []}


def _call(status: str, arguments: str) -> dict[str, Any]:
    return {"id": _FC_ID, "type": "function_call", "status": status, "call_id": _CALL_ID,
            "name": TOOL_NAME, "arguments": arguments}


def response_object(model: str, *, status: str = "completed") -> dict[str, Any]:
    """The whole answer (``status`` ``in_progress``: the empty shell streams start with)."""
    done = status == "completed"
    return {
        "id": _RESP_ID, "object": "response", "created_at": 1763750000, "status": status,
        "error": None, "incomplete_details": None, "instructions": None,
        "max_output_tokens": 1024, "model": model,
        "output": [_message("completed", TEXT), _call("completed", json.dumps(TOOL_INPUT))]
        if done else [],
        "parallel_tool_calls": True, "temperature": 1.0, "tool_choice": "auto", "tools": [],
        "top_p": 1.0, "store": False, "text": {"format": {"type": "text"}},
        "usage": {"input_tokens": _USAGE_IN, "output_tokens": _USAGE_OUT,
                  "total_tokens": _USAGE_IN + _USAGE_OUT,
                  "input_tokens_details": {"cached_tokens": 0},
                  "output_tokens_details": {"reasoning_tokens": 0}} if done else None,
    }


def responses_sse_events(model: str) -> list[tuple[str, dict[str, Any]]]:
    """The streamed answer as ``(event name, data)`` pairs, numbered, in the API's order."""
    out: list[tuple[str, dict[str, Any]]] = []

    def emit(kind: str, **fields: Any) -> None:
        out.append((kind, {"type": kind, "sequence_number": len(out), **fields}))

    emit("response.created", response=response_object(model, status="in_progress"))
    emit("response.in_progress", response=response_object(model, status="in_progress"))
    emit("response.output_item.added", output_index=0, item=_message("in_progress", ""))
    emit("response.content_part.added", item_id=_MSG_ID, output_index=0, content_index=0,
         part=_text_part(""))
    for piece in _pieces(TEXT, CHUNK):
        emit("response.output_text.delta", item_id=_MSG_ID, output_index=0, content_index=0,
             delta=piece, logprobs=[])
    emit("response.output_text.done", item_id=_MSG_ID, output_index=0, content_index=0,
         text=TEXT, logprobs=[])
    emit("response.content_part.done", item_id=_MSG_ID, output_index=0, content_index=0,
         part=_text_part(TEXT))
    emit("response.output_item.done", output_index=0, item=_message("completed", TEXT))
    arguments = json.dumps(TOOL_INPUT)
    emit("response.output_item.added", output_index=1, item=_call("in_progress", ""))
    for piece in _pieces(arguments, CHUNK):
        emit("response.function_call_arguments.delta", item_id=_FC_ID, output_index=1,
             delta=piece)
    emit("response.function_call_arguments.done", item_id=_FC_ID, output_index=1,
         arguments=arguments)
    emit("response.output_item.done", output_index=1, item=_call("completed", arguments))
    emit("response.completed", response=response_object(model))
    return out


def check(stream: bool, body: bytes, frames: list[tuple[str | None, str]]) -> str | None:
    """None if the answer carries the canned call (and, streamed, ends completed)."""
    if not stream:
        data = json.loads(body)
        return _check_output(data.get("status"), data.get("output") or [])
    if frames and frames[-1][1] == "[DONE]":
        # not in the API (its stream ends with response.completed), but LiteLLM adds it and
        # the openai SDK reads past it; counted against no one
        frames = frames[:-1]
    events = [json.loads(payload) for _, payload in frames]
    for n, event in enumerate(events):
        if event.get("sequence_number") != n:
            return f"event {n} numbered {event.get('sequence_number')!r}"
        if event.get("type") in ("error", "response.failed"):
            return f"stream error {event!r}"
    if not events or events[-1].get("type") != "response.completed":
        return "stream did not end with response.completed"
    args = "".join(e.get("delta", "") for e in events
                   if e.get("type") == "response.function_call_arguments.delta")
    if not args or json.loads(args) != TOOL_INPUT:
        return f"streamed arguments {args!r}"
    return _check_output("completed", events[-1]["response"].get("output") or [])


def _check_output(status: Any, output: list[dict[str, Any]]) -> str | None:
    if status != "completed":
        return f"status {status!r}"
    calls = [item for item in output if item.get("type") == "function_call"]
    if len(calls) != 1 or calls[0].get("name") != TOOL_NAME:
        return f"function_call items {calls!r}"
    if json.loads(calls[0].get("arguments") or "null") != TOOL_INPUT:
        return f"arguments {calls[0].get('arguments')!r}"
    return None
