"""``/v1/chat/completions`` answers validate against OpenAI's published OpenAPI document:
whole (``CreateChatCompletionResponse``), every streamed chunk
(``CreateChatCompletionStreamResponse``, the usage chunk of ``stream_options`` included) and
errors (``ErrorResponse``), for text, one and parallel tool calls, reasoning, an answer cut at
``max_tokens``, and a stream that fails after it started."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from conformance_backends import DiesMidway, StructuredScript
from conformance_openai import Document
from conformance_tally import Tally

from tooluse.backends.scripted import ScriptedBackend
from tooluse.errors import BackendError
from tooluse.server import ServerThread, create_app

API = "chat"
WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "Weather in a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                   "required": ["city"]}}}
TIME = {"type": "function", "function": {
    "name": "get_time", "parameters": {"type": "object", "properties": {"tz": {"type": "string"}}}}}


@pytest.fixture(scope="module")
def gateway() -> Iterator[ServerThread]:
    with ServerThread(create_app(StructuredScript(),
                                 api_keys=["sk-good"])) as srv:
        yield srv


def _post(url: str, body: dict[str, Any], key: str = "sk-good") -> httpx2.Response:
    return httpx2.post(url + "/v1/chat/completions", json=body, timeout=30,
                       headers={"authorization": f"Bearer {key}"})


def _chunks(response: httpx2.Response) -> list[Any]:
    assert response.status_code == 200, response.text
    data = [ln[6:] for ln in response.text.splitlines() if ln.startswith("data: ")]
    assert data[-1] == "[DONE]"
    return [json.loads(d) for d in data[:-1]]


REQUESTS: dict[str, dict[str, Any]] = {
    "text": {"messages": [{"role": "system", "content": "Be brief."},
                          {"role": "user", "content": "hello"}],
             "temperature": 0.5, "max_tokens": 100, "user": "u1"},
    "tool call": {"messages": [{"role": "user", "content": "weather?"}], "tools": [WEATHER, TIME]},
    "parallel calls": {"messages": [{"role": "user", "content": "parallel weather and time"}],
                       "tools": [WEATHER, TIME], "tool_choice": "required"},
    "tool result": {"tools": [WEATHER], "messages": [
        {"role": "user", "content": "weather?"},
        {"role": "assistant", "content": None, "tool_calls": [{
            "id": "call_w", "type": "function",
            "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
        {"role": "tool", "tool_call_id": "call_w", "content": "18 C"}]},
    "reasoning": {"messages": [{"role": "user", "content": "think"}], "reasoning_effort": "low"},
    "length": {"messages": [{"role": "user", "content": "a long one"}], "max_tokens": 5},
}


@pytest.mark.parametrize("name", list(REQUESTS))
def test_whole_and_streamed_answers_conform(gateway: ServerThread, openai_doc: Document,
                                            tally: Tally, name: str) -> None:
    body = {"model": "gpt-test", **REQUESTS[name]}
    whole = _post(gateway.url, body)
    assert whole.status_code == 200, whole.text
    tally.check(API, "completion", "CreateChatCompletionResponse", openai_doc.label,
                whole.json(), lambda b: openai_doc.errors("CreateChatCompletionResponse", b))
    for options in ({}, {"stream_options": {"include_usage": True}}):
        chunks = _chunks(_post(gateway.url, {**body, "stream": True, **options}))
        assert chunks
        for chunk in chunks:
            tally.check(API, "stream chunk", "CreateChatCompletionStreamResponse",
                        openai_doc.label, chunk,
                        lambda c: openai_doc.errors("CreateChatCompletionStreamResponse", c))
        if options:
            assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["total_tokens"] > 0


def test_a_stream_that_fails_midway_ends_in_an_error_document(openai_doc: Document,
                                                              tally: Tally) -> None:
    """Chat has no in-stream error event: the gateway sends OpenAI's error document as the
    last ``data:`` line, which must be an ``ErrorResponse``."""
    with ServerThread(create_app(DiesMidway("unavailable"))) as srv:
        response = httpx2.post(srv.url + "/v1/chat/completions", timeout=30, json={
            "model": "m", "messages": [{"role": "user", "content": "x"}], "stream": True})
    data = [json.loads(ln[6:]) for ln in response.text.splitlines()
            if ln.startswith("data: ") and ln != "data: [DONE]"]
    *chunks, last = data
    for chunk in chunks:
        tally.check(API, "stream chunk", "CreateChatCompletionStreamResponse", openai_doc.label,
                    chunk, lambda c: openai_doc.errors("CreateChatCompletionStreamResponse", c))
    tally.check(API, "in-stream error", "ErrorResponse", openai_doc.label, last,
                lambda b: openai_doc.errors("ErrorResponse", b))


def test_errors_conform(gateway: ServerThread, openai_doc: Document, tally: Tally) -> None:
    def check(response: httpx2.Response, status: int) -> None:
        assert response.status_code == status, response.text
        tally.check(API, f"error {status}", "ErrorResponse", openai_doc.label, response.json(),
                    lambda b: openai_doc.errors("ErrorResponse", b))

    hi = [{"role": "user", "content": "hi"}]
    check(_post(gateway.url, {"model": "m", "messages": hi, "frobnicate": 1}), 400)
    check(_post(gateway.url, {"model": "m", "messages": hi}, key="bad"), 401)
    check(_post(gateway.url, {"model": "m", "messages": hi, "tool_choice": "required"}), 400)
    check(_post(gateway.url, {"model": "m", "messages": [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": ""}}]}]}), 400)
    with ServerThread(create_app(ScriptedBackend([BackendError(
            "prompt is too long: 9000 tokens > 8192 maximum", kind="context_length")]))) as srv:
        over = httpx2.post(srv.url + "/v1/chat/completions", json={"model": "m", "messages": hi},
                           timeout=30)
        check(over, 400)
        assert over.json()["error"]["code"] == "context_length_exceeded"
