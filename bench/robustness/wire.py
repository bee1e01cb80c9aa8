"""What the campaign knows of the wire APIs: endpoints, valid requests, and how to judge an
answer — a native error, a complete answer, or something else (a bug).

The judgments are deliberately independent of the gateway's code: they read the bytes a
client gets, as the official SDKs would (Anthropic's error object, Bedrock's
``x-amzn-ErrorType`` header and ``{"message"}``, OpenAI's ``{"error": {...}}``; for streams,
the terminal event each API ends with).
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any

__all__ = ["ENDPOINTS", "Endpoint", "Verdict", "judge", "valid_request"]


@dataclass(frozen=True)
class Endpoint:
    name: str
    path: str
    api: str  # anthropic | bedrock | openai | responses: the request body and the error shape
    stream: bool
    method: str = "POST"
    #: The operation's path in the gateway's /openapi.json (default: ``path``).
    template: str | None = None
    #: What a complete 200 answer is (default: the API's model answer): count_tokens,
    #: models, stored (a stored response, its input items or its deletion).
    answer: str | None = None

    @property
    def mutated(self) -> bool:
        """Whether the mutators send it malformed bodies (GET and DELETE take none)."""
        return self.method == "POST"


ENDPOINTS: dict[str, Endpoint] = {
    "messages": Endpoint("messages", "/v1/messages", "anthropic", False),
    "converse": Endpoint("converse", "/model/bench-model/converse", "bedrock", False,
                         template="/model/{modelId}/converse"),
    "converse-stream": Endpoint("converse-stream", "/model/bench-model/converse-stream", "bedrock", True,
                                template="/model/{modelId}/converse-stream"),
    "chat": Endpoint("chat", "/v1/chat/completions", "openai", False),
    "responses": Endpoint("responses", "/v1/responses", "responses", False),
    "count-tokens": Endpoint("count-tokens", "/v1/messages/count_tokens", "anthropic", False,
                             answer="count_tokens"),
    "models": Endpoint("models", "/v1/models", "openai", False, method="GET", answer="models"),
    "model": Endpoint("model", "/v1/models/bench-model", "openai", False, method="GET",
                      template="/v1/models/{model_id}", answer="models"),
    "response-get": Endpoint("response-get", "/v1/responses/resp_x", "openai", False, method="GET",
                             template="/v1/responses/{response_id}", answer="stored"),
    "response-delete": Endpoint("response-delete", "/v1/responses/resp_x", "openai", False,
                                method="DELETE", template="/v1/responses/{response_id}", answer="stored"),
    "response-input-items": Endpoint("response-input-items", "/v1/responses/resp_x/input_items", "openai",
                                     False, method="GET", answer="stored",
                                     template="/v1/responses/{response_id}/input_items"),
}

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
          "required": ["city"]}
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


def valid_request(api: str, stream: bool = False) -> dict[str, Any]:
    """A valid request with tools, a tool round trip and an image: mutations of it reach the
    deep validation (tool pairing, schemas, images), not only the first type check. A fresh
    copy each time (mutators change it in place)."""
    return copy.deepcopy(_valid_request(api, stream))


def _valid_request(api: str, stream: bool) -> dict[str, Any]:
    if api == "anthropic":
        body: dict[str, Any] = {
            "model": "bench-model", "max_tokens": 64, "system": "be brief",
            "tools": [{"name": "get_weather", "description": "weather", "input_schema": SCHEMA}],
            "tool_choice": {"type": "auto"},
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "weather in Paris?"},
                                             {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}]},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny", "is_error": False}]},
            ],
        }
        if stream:
            body["stream"] = True
        return body
    if api == "bedrock":
        return {
            "system": [{"text": "be brief"}],
            "inferenceConfig": {"maxTokens": 64, "temperature": 0.5},
            "toolConfig": {"tools": [{"toolSpec": {"name": "get_weather", "description": "weather",
                                                    "inputSchema": {"json": SCHEMA}}}],
                           "toolChoice": {"auto": {}}},
            "messages": [
                {"role": "user", "content": [{"text": "weather in Paris?"},
                                             {"image": {"format": "png", "source": {"bytes": PNG}}}]},
                {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "get_weather", "input": {"city": "Paris"}}}]},
                {"role": "user", "content": [{"toolResult": {"toolUseId": "t1", "content": [{"json": {"t": 18}}], "status": "success"}}]},
            ],
        }
    if api == "responses":
        body = {
            "model": "bench-model", "max_output_tokens": 64, "instructions": "be brief",
            "tools": [{"type": "function", "name": "get_weather", "description": "weather", "parameters": SCHEMA}],
            "tool_choice": "auto",
            "input": [
                {"role": "user", "content": [{"type": "input_text", "text": "weather in Paris?"},
                                             {"type": "input_image", "image_url": "data:image/png;base64," + PNG}]},
                {"type": "function_call", "call_id": "c1", "name": "get_weather", "arguments": "{\"city\": \"Paris\"}"},
                {"type": "function_call_output", "call_id": "c1", "output": "sunny"},
            ],
        }
        if stream:
            body["stream"] = True
        return body
    body = {
        "model": "bench-model", "max_tokens": 64,
        "tools": [{"type": "function", "function": {"name": "get_weather", "description": "weather", "parameters": SCHEMA}}],
        "tool_choice": "auto",
        "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": [{"type": "text", "text": "weather in Paris?"},
                                         {"type": "image_url", "image_url": {"url": "data:image/png;base64," + PNG}}]},
            {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
        ],
    }
    if stream:
        body["stream"] = True
    return body


@dataclass
class Verdict:
    """``kind``: ``native_error`` (an HTTP error in the API's shape), ``complete`` (a whole
    answer, JSON or a stream with its terminal event), ``stream_error`` (a stream that ended
    in the API's in-stream error), or ``bad`` (anything else: ``detail`` says what)."""

    kind: str
    status: int
    detail: str = ""


def _json(raw: bytes) -> Any:
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None


def _native_error(api: str, status: int, headers: dict[str, str], raw: bytes) -> Verdict:
    body = _json(raw)
    ok = False
    if api == "anthropic":
        ok = (isinstance(body, dict) and body.get("type") == "error" and isinstance(body.get("error"), dict)
              and isinstance(body["error"].get("type"), str) and isinstance(body["error"].get("message"), str))
    elif api == "bedrock":
        ok = (bool(headers.get("x-amzn-errortype")) and isinstance(body, dict)
              and isinstance(body.get("message"), str))
    else:  # openai, responses
        error = body.get("error") if isinstance(body, dict) else None
        ok = (isinstance(error, dict) and isinstance(error.get("message"), str)
              and {"type", "param", "code"} <= set(error))
    if ok:
        return Verdict("native_error", status)
    return Verdict("bad", status, f"non-native error body: {raw[:200]!r}")


def _sse(raw: bytes) -> list[tuple[str, str]]:
    events = []
    for block in raw.decode("utf-8").split("\n\n"):
        name, data = "", []
        for line in block.split("\n"):
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                data.append(line[6:])
        if name or data:
            events.append((name, "\n".join(data)))
    return events


def _judge_stream(api: str, raw: bytes) -> Verdict:
    try:
        if api == "anthropic":
            events = _sse(raw)
            names = [n for n, _ in events if n != "ping"]
            if names and names[-1] == "error":
                return Verdict("stream_error", 200)
            if names and names[0] == "message_start" and names[-1] == "message_stop" and "message_delta" in names:
                stop = [json.loads(d) for n, d in events if n == "message_delta"][-1]["delta"]["stop_reason"]
                if stop:
                    return Verdict("complete", 200)
            return Verdict("bad", 200, f"stream not terminated: {names[-3:]}")
        if api == "responses":
            names = [n for n, _ in _sse(raw)]
            if names and names[-1] in ("error", "response.failed"):
                return Verdict("stream_error", 200)
            if names and names[0] == "response.created" and names[-1] in ("response.completed", "response.incomplete"):
                return Verdict("complete", 200)
            return Verdict("bad", 200, f"stream not terminated: {names[-3:]}")
        if api == "openai":
            datas = [d for _, d in _sse(raw)]
            if datas and datas[-1] != "[DONE]":
                last = json.loads(datas[-1])
                if "error" in last:
                    return Verdict("stream_error", 200)
                return Verdict("bad", 200, "stream ended without [DONE] or an error")
            chunks = [json.loads(d) for d in datas[:-1]]
            if any(c.get("choices") and c["choices"][0].get("finish_reason") for c in chunks):
                return Verdict("complete", 200)
            return Verdict("bad", 200, "[DONE] without a finish_reason: a cut answer sent as complete")
        from botocore.eventstream import EventStreamBuffer

        buffer = EventStreamBuffer()
        buffer.add_data(raw)
        frames = [(m.headers.get(":message-type"), m.headers.get(":event-type") or m.headers.get(":exception-type"))
                  for m in buffer]
        if frames and frames[-1][0] == "exception":
            return Verdict("stream_error", 200)
        kinds = [k for _, k in frames]
        if "messageStop" in kinds and kinds and kinds[-1] == "metadata":
            return Verdict("complete", 200)
        return Verdict("bad", 200, f"event stream not terminated: {kinds[-3:]}")
    except Exception as exc:  # noqa: BLE001 - unparseable is a finding, not a crash of the bench
        return Verdict("bad", 200, f"unparseable stream: {type(exc).__name__}: {exc}"[:200])


def judge(api: str, status: int, headers: dict[str, str], raw: bytes, content_type: str,
          answer: str | None = None) -> Verdict:
    """What a client of ``api`` got (``answer``: what a complete 200 is, when it is not the
    API's model answer; see :class:`Endpoint`)."""
    if status >= 400:
        return _native_error(api, status, headers, raw)
    if status != 200:
        return Verdict("bad", status, f"unexpected status {status}")
    if "event-stream" in content_type or "eventstream" in content_type:
        return _judge_stream(api, raw)
    body = _json(raw)
    if answer is not None:
        complete = isinstance(body, dict) and (
            (answer == "count_tokens" and isinstance(body.get("input_tokens"), int))
            or (answer == "models" and body.get("object") in ("list", "model"))
            or (answer == "stored" and body.get("object") in ("response", "list")))
        return Verdict("complete", 200) if complete else Verdict("bad", 200, f"200 that is not a {answer} answer: {raw[:200]!r}")
    if api == "responses" and isinstance(body, dict) and body.get("object") == "response" and body.get("status") in ("completed", "incomplete"):
        return Verdict("complete", 200)
    if api == "anthropic" and isinstance(body, dict) and body.get("type") == "message" and body.get("stop_reason"):
        return Verdict("complete", 200)
    if api == "bedrock" and isinstance(body, dict) and "output" in body and body.get("stopReason"):
        return Verdict("complete", 200)
    if api == "openai" and isinstance(body, dict) and body.get("choices") and body["choices"][0].get("finish_reason"):
        return Verdict("complete", 200)
    return Verdict("bad", 200, f"200 that is not a complete answer: {raw[:200]!r}")
