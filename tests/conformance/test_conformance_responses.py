"""``/v1/responses`` answers validate against OpenAI's published OpenAPI document: the
response object (``Response``) whole, every stream event by its own schema (a member of
``ResponseStreamEvent``), ``GET /v1/responses/{id}`` (``Response``), ``input_items``
(``ResponseItemList``), ``DELETE`` (``DeleteResponse``-like document, when the document has
it) and errors (``ErrorResponse``). The answers cover text, function calls (one and
parallel), custom and namespace tool calls, reasoning, an answer cut at
``max_output_tokens``, structured output, a stream that fails after it started, and the
request settings a response echoes (tools as sent, ``tool_choice`` forms, ``reasoning``,
``instructions``, ``metadata``...)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from conformance_backends import DiesMidway, StructuredScript, sse_events
from conformance_openai import Document
from conformance_tally import Tally

from tooluse.backends.scripted import ScriptedBackend
from tooluse.errors import BackendError
from tooluse.server import ServerThread, create_app

API = "responses"
WEATHER = {"type": "function", "name": "get_weather", "description": "Weather in a city",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                          "required": ["city"], "additionalProperties": False}}
TIME = {"type": "function", "name": "get_time",
        "parameters": {"type": "object", "properties": {"tz": {"type": "string"}}},
        "strict": False}
SQL = {"type": "custom", "name": "run_sql", "description": "Run one SQL statement",
       "format": {"type": "grammar", "syntax": "regex", "definition": "SELECT [0-9]+"}}
PATCH = {"type": "custom", "name": "apply_patch"}
FILES = {"type": "namespace", "name": "fs", "description": "Files.", "tools": [
    {"type": "function", "name": "read", "description": "Read a file",
     "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}]}
SEARCH = {"type": "web_search"}
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"],
          "additionalProperties": False}


@pytest.fixture(scope="module")
def gateway() -> Iterator[ServerThread]:
    with ServerThread(create_app(StructuredScript(), api_keys=["sk-good"])) as srv:
        yield srv


def _post(url: str, body: dict[str, Any], key: str = "sk-good") -> httpx2.Response:
    return httpx2.post(url + "/v1/responses", json=body, timeout=30,
                       headers={"authorization": f"Bearer {key}"})


def _get(url: str, path: str) -> httpx2.Response:
    return httpx2.get(url + path, timeout=30, headers={"authorization": "Bearer sk-good"})


def check_stream(doc: Document, tally: Tally, events: list[dict[str, Any]]) -> None:
    for event in events:
        schema = doc.event_schema(event["type"])
        assert schema is not None, f"{event['type']} is no ResponseStreamEvent of {doc.label}"
        tally.check(API, "stream event", schema, doc.label, event,
                    lambda e, s=schema: doc.errors(s, e))
    assert [e["sequence_number"] for e in events] == list(range(len(events)))


def check_response(doc: Document, tally: Tally, body: Any, kind: str = "response") -> None:
    tally.check(API, kind, "Response", doc.label, body, lambda b: doc.errors("Response", b))


def check_error(doc: Document, tally: Tally, response: httpx2.Response, status: int) -> None:
    assert response.status_code == status, response.text
    tally.check(API, f"error {status}", "ErrorResponse", doc.label, response.json(),
                lambda b: doc.errors("ErrorResponse", b))


REQUESTS: dict[str, dict[str, Any]] = {
    "text": {"input": "hello", "instructions": "Be brief.", "metadata": {"who": "test"},
             "temperature": 0.2, "top_p": 0.9, "max_output_tokens": 200, "user": "u1",
             "safety_identifier": "s1", "prompt_cache_key": "k", "text": {"verbosity": "low"}},
    "function call": {"input": "weather in Paris?", "tools": [WEATHER, TIME, SEARCH],
                      "tool_choice": "auto", "parallel_tool_calls": True},
    "forced call": {"input": "weather please", "tools": [WEATHER, TIME],
                    "tool_choice": {"type": "function", "name": "get_weather"}},
    "required call": {"input": "weather now", "tools": [WEATHER], "tool_choice": "required"},
    "allowed tools": {"input": "weather here", "tools": [WEATHER, TIME], "tool_choice": {
        "type": "allowed_tools", "mode": "auto",
        "tools": [{"type": "function", "name": "get_weather"}]}},
    "parallel calls": {"input": "parallel weather and time", "tools": [WEATHER, TIME]},
    "custom call": {"input": "sql please", "tools": [SQL, PATCH],
                    "tool_choice": {"type": "custom", "name": "run_sql"}},
    "namespace call": {"input": "read a file", "tools": [FILES]},
    "reasoning": {"input": "think about it", "reasoning": {"effort": "low", "summary": "auto"},
                  "include": ["reasoning.encrypted_content"]},
    "incomplete": {"input": "a long answer", "max_output_tokens": 16},
    "structured output": {"input": "json please", "text": {"format": {
        "type": "json_schema", "name": "city", "schema": SCHEMA, "strict": True}}},
    "message items": {"input": [
        {"role": "developer", "content": "Be brief."},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
        {"role": "assistant", "content": "Hello."},
        {"role": "user", "content": "and again"}]},
}


@pytest.mark.parametrize("name", list(REQUESTS))
def test_whole_streamed_stored_and_listed_answers_conform(
        gateway: ServerThread, openai_doc: Document, tally: Tally, name: str) -> None:
    body = {"model": "gpt-test", **REQUESTS[name]}
    whole = _post(gateway.url, body)
    assert whole.status_code == 200, whole.text
    answer = whole.json()
    check_response(openai_doc, tally, answer)
    stored = _get(gateway.url, f"/v1/responses/{answer['id']}")
    assert stored.status_code == 200
    check_response(openai_doc, tally, stored.json(), "GET response")
    items = _get(gateway.url, f"/v1/responses/{answer['id']}/input_items?order=asc")
    assert items.status_code == 200
    tally.check(API, "input_items", "ResponseItemList", openai_doc.label, items.json(),
                lambda b: openai_doc.errors("ResponseItemList", b))
    events = sse_events(_post(gateway.url, {**body, "stream": True}))
    check_stream(openai_doc, tally, events)
    final = events[-1]
    assert final["type"] in ("response.completed", "response.incomplete")
    # the streamed answer is the whole one, but for ids and times
    assert [o["type"] for o in final["response"]["output"]] == [o["type"] for o in answer["output"]]


def test_function_tools_are_echoed_with_strict(gateway: ServerThread,
                                               openai_doc: Document) -> None:
    """The API always writes a function tool's ``strict`` (its schema requires it): whole, in
    every event that carries the response, and from GET."""
    body = {"model": "gpt-test", "input": "weather", "tools": [WEATHER, TIME, FILES]}
    answer = _post(gateway.url, body).json()
    events = sse_events(_post(gateway.url, {**body, "stream": True}))
    stored = _get(gateway.url, f"/v1/responses/{answer['id']}").json()
    carried = [e["response"] for e in events if "response" in e]
    assert len(carried) == 3  # created, in_progress, completed
    for response in [answer, stored, *carried]:
        functions = [t for t in response["tools"] if t["type"] == "function"]
        assert [(t["name"], t["strict"]) for t in functions] == [("get_weather", True),
                                                                 ("get_time", False)]
        assert not openai_doc.errors("Response", response)


def test_a_stream_that_fails_midway_conforms(openai_doc: Document, tally: Tally) -> None:
    with ServerThread(create_app(DiesMidway("unavailable"))) as srv:
        events = sse_events(httpx2.post(srv.url + "/v1/responses", timeout=30, json={
            "model": "m", "input": "x", "stream": True}))
    assert [e["type"] for e in events[-2:]] == ["error", "response.failed"]
    check_stream(openai_doc, tally, events)


def test_chained_and_deleted_responses_conform(gateway: ServerThread, openai_doc: Document,
                                               tally: Tally) -> None:
    first = _post(gateway.url, {"model": "m", "input": "weather?", "tools": [WEATHER]}).json()
    call = first["output"][-1]
    second = _post(gateway.url, {"model": "m", "previous_response_id": first["id"],
                                 "tools": [WEATHER], "input": [
        {"type": "function_call_output", "call_id": call["call_id"], "output": "18 C"}]})
    check_response(openai_doc, tally, second.json(), "chained response")
    items = _get(gateway.url, f"/v1/responses/{second.json()['id']}/input_items").json()
    tally.check(API, "input_items", "ResponseItemList", openai_doc.label, items,
                lambda b: openai_doc.errors("ResponseItemList", b))
    deleted = httpx2.delete(gateway.url + f"/v1/responses/{first['id']}", timeout=30,
                            headers={"authorization": "Bearer sk-good"})
    assert deleted.status_code == 200
    assert deleted.json() == {"id": first["id"], "object": "response", "deleted": True}


def test_errors_conform(gateway: ServerThread, openai_doc: Document, tally: Tally) -> None:
    url = gateway.url
    check_error(openai_doc, tally, _post(url, {"model": "m", "input": "x", "frobnicate": 1}), 400)
    check_error(openai_doc, tally, _post(url, {"model": "m", "input": "x"}, key="bad"), 401)
    check_error(openai_doc, tally, _get(url, "/v1/responses/resp_nope"), 404)
    check_error(openai_doc, tally, _post(url, {"model": "m", "input": "x",
                                               "previous_response_id": "resp_nope"}), 400)
    check_error(openai_doc, tally, _post(url, {"model": "m", "input": "x", "tools": [
        {"type": "file_search", "vector_store_ids": ["vs_1"]}]}), 400)
    check_error(openai_doc, tally, _post(url, {"model": "m", "input": [{"role": "user", "content": [
        {"type": "input_image", "image_url": ""}]}]}), 400)
    with ServerThread(create_app(ScriptedBackend(
            [BackendError("prompt is too long: 9000 tokens > 8192 maximum",
                          kind="context_length")] * 2))) as srv:
        over = httpx2.post(srv.url + "/v1/responses", json={"model": "m", "input": "x"},
                           timeout=30)
        check_error(openai_doc, tally, over, 400)
        assert over.json()["error"]["param"] == "input"
