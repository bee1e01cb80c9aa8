"""The gateway's OpenTelemetry spans, caught in memory: one
``chat {model}`` span per request through each API, JSON and streamed, named and attributed
by the GenAI semantic conventions; the calls the model asked for as events with their
origin; error.type on failure; the caller's trace continued; content only when opted in;
two concurrent requests each in their own span."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest

pytest.importorskip("opentelemetry.sdk", reason="needs the [otel] extra: pip install 'tooluse[otel]'")
from opentelemetry.trace import SpanKind, StatusCode
from otel_spans import Spans

from tooluse.backends.scripted import ScriptedBackend
from tooluse.errors import BackendError
from tooluse.messages import CallOrigin, Request, Response, TextBlock, ToolUseBlock, Usage
from tooluse.server import ServerThread, create_app

WEATHER = {"name": "get_weather", "description": "Weather in a city.",
           "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}
ADDED = CallOrigin(source="added", rule="fan_out")


def answer(request: Request) -> Response:
    """Two calls, the second added by a rule; usage from the request's own size."""
    city = request.messages[-1].text() or "Paris"
    return Response(
        id=f"msg_{request.model}",
        content=[TextBlock(text="Checking."),
                 ToolUseBlock(id="toolu_1", name="get_weather", input={"city": city}),
                 ToolUseBlock(id="toolu_2", name="get_weather", input={"city": "Lyon"},
                              origin=ADDED)],
        stop_reason="tool_use",
        usage=Usage(input_tokens=len(city), output_tokens=9),
    )


@pytest.fixture()
def gateway() -> Iterator[str]:
    with ServerThread(create_app(ScriptedBackend(answer, model="scripted-model"))) as server:
        yield server.url


def _body(api: str, model: str, *, stream: bool = False) -> tuple[str, dict[str, Any]]:
    if api == "messages":
        return "/v1/messages", {"model": model, "max_tokens": 64, "temperature": 0.25,
                                "top_p": 0.5, "stream": stream, "tools": [WEATHER],
                                "messages": [{"role": "user", "content": "Nice"}]}
    if api == "chat_completions":
        return "/v1/chat/completions", {
            "model": model, "max_tokens": 64, "temperature": 0.25, "top_p": 0.5,
            "stream": stream, "messages": [{"role": "user", "content": "Nice"}],
            "tools": [{"type": "function", "function": {
                "name": "get_weather", "parameters": WEATHER["input_schema"]}}]}
    if api == "responses":
        return "/v1/responses", {"model": model, "max_output_tokens": 64, "temperature": 0.25,
                                 "top_p": 0.5, "stream": stream, "input": "Nice",
                                 "tools": [{"type": "function", "name": "get_weather",
                                            "parameters": WEATHER["input_schema"]}]}
    path = f"/model/{model}/converse" + ("-stream" if stream else "")
    return path, {"messages": [{"role": "user", "content": [{"text": "Nice"}]}],
                  "inferenceConfig": {"maxTokens": 64, "temperature": 0.25, "topP": 0.5},
                  "toolConfig": {"tools": [{"toolSpec": {
                      "name": "get_weather", "inputSchema": {"json": WEATHER["input_schema"]}}}]}}


@pytest.mark.parametrize("api", ["messages", "chat_completions", "responses", "converse"])
@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_each_request_is_one_chat_span_by_the_conventions(
        gateway: str, spans: Spans, api: str, stream: bool) -> None:
    path, body = _body(api, f"m-{api}", stream=stream)
    reply = httpx2.post(gateway + path, json=body, timeout=30)
    assert reply.status_code == 200, reply.text
    span = spans.one(f"chat m-{api}")
    attrs = dict(span.attributes or {})
    assert span.kind is SpanKind.INTERNAL  # the scripted model runs in this process
    assert span.status.status_code is StatusCode.UNSET
    assert attrs["gen_ai.operation.name"] == "chat"
    assert attrs["gen_ai.provider.name"] == attrs["gen_ai.system"] == "tooluse.scripted"
    assert attrs["gen_ai.request.model"] == f"m-{api}"
    assert attrs["gen_ai.request.max_tokens"] == 64
    assert attrs["gen_ai.request.temperature"] == 0.25
    assert attrs["gen_ai.request.top_p"] == 0.5
    assert attrs["gen_ai.response.model"] == f"m-{api}"
    assert attrs["gen_ai.usage.input_tokens"] == len("Nice")
    assert attrs["gen_ai.usage.output_tokens"] == 9
    assert attrs["gen_ai.response.finish_reasons"] == ("tool_call",)
    assert attrs["tooluse.api"] == (api if not (stream and api == "converse") else "converse_stream")
    assert attrs["tooluse.call_origins"] == ("model", "added")
    assert attrs.get("gen_ai.request.stream") is (True if stream else None)
    assert ("gen_ai.response.time_to_first_chunk" in attrs) is stream
    if not stream and api in ("messages", "chat_completions", "responses"):
        assert attrs["gen_ai.response.id"] == reply.json()["id"]
    if stream and api == "responses":  # the id the client saw, not the backend's
        assert f'"id":"{attrs["gen_ai.response.id"]}"' in reply.text.replace(" ", "")
        assert str(attrs["gen_ai.response.id"]).startswith("resp_")
    # the calls the model asked for: events (the gateway runs no tool), each with its origin
    events = [(e.name, dict(e.attributes or {})) for e in span.events]
    assert events == [
        ("tooluse.tool_call", {"gen_ai.tool.name": "get_weather", "gen_ai.tool.call.id": "toolu_1",
                               "tooluse.call.origin": "model"}),
        ("tooluse.tool_call", {"gen_ai.tool.name": "get_weather", "gen_ai.tool.call.id": "toolu_2",
                               "tooluse.call.origin": "added",
                               "tooluse.call.origin_detail": "added (fan_out)"}),
    ]
    # no content without the opt-in
    assert not [k for k in attrs if k in ("gen_ai.input.messages", "gen_ai.output.messages",
                                          "gen_ai.tool.definitions")]


def test_a_failed_request_has_error_type_and_an_error_status(spans: Spans) -> None:
    backend = ScriptedBackend([BackendError("slow down", kind="rate_limit", status=429)])
    with ServerThread(create_app(backend)) as server:
        path, body = _body("messages", "m-fail")
        reply = httpx2.post(server.url + path, json=body)
    assert reply.status_code == 429
    span = spans.one("chat m-fail")
    assert span.attributes is not None and span.attributes["error.type"] == "rate_limit"
    assert span.status.status_code is StatusCode.ERROR
    assert span.status.description == "slow down"
    assert "gen_ai.usage.input_tokens" not in span.attributes


def test_a_stream_that_fails_after_it_started_ends_its_span_as_failed(spans: Spans) -> None:
    def stream(request: Request) -> Iterator[Any]:
        from tooluse.stream import MessageStart

        yield MessageStart(id="msg_cut", model="m-cut")
        raise BackendError("upstream went away", kind="unavailable")

    backend = ScriptedBackend(answer)
    backend.stream = stream  # type: ignore[method-assign]
    with ServerThread(create_app(backend)) as server:
        path, body = _body("messages", "m-cut", stream=True)
        reply = httpx2.post(server.url + path, json=body)
    assert reply.status_code == 200 and "upstream went away" in reply.text  # in-stream error
    span = spans.one("chat m-cut")
    assert span.attributes is not None and span.attributes["error.type"] == "unavailable"
    assert span.status.status_code is StatusCode.ERROR


def test_the_span_continues_the_callers_trace(gateway: str, spans: Spans) -> None:
    trace_id, parent_id = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
    path, body = _body("messages", "m-traced")
    httpx2.post(gateway + path, json=body,
                headers={"traceparent": f"00-{trace_id}-{parent_id}-01"}).raise_for_status()
    span = spans.one("chat m-traced")
    assert span.parent is not None and span.parent.is_remote
    assert format(span.parent.span_id, "016x") == parent_id
    assert span.context is not None and format(span.context.trace_id, "032x") == trace_id


def test_content_only_when_opted_in(gateway: str, spans: Spans,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    path, body = _body("messages", "m-content")
    body["system"] = "Be brief."
    httpx2.post(gateway + path, json=body).raise_for_status()
    attrs = dict(spans.one("chat m-content").attributes or {})
    assert json.loads(attrs["gen_ai.system_instructions"]) == [
        {"type": "text", "content": "Be brief."}]
    assert json.loads(attrs["gen_ai.input.messages"]) == [
        {"role": "user", "parts": [{"type": "text", "content": "Nice"}]}]
    assert json.loads(attrs["gen_ai.output.messages"]) == [{
        "role": "assistant", "finish_reason": "tool_call", "parts": [
            {"type": "text", "content": "Checking."},
            {"type": "tool_call", "id": "toolu_1", "name": "get_weather",
             "arguments": {"city": "Nice"}},
            {"type": "tool_call", "id": "toolu_2", "name": "get_weather",
             "arguments": {"city": "Lyon"}}]}]
    assert json.loads(attrs["gen_ai.tool.definitions"])[0]["name"] == "get_weather"
    call_event = dict(spans.one("chat m-content").events[0].attributes or {})
    assert json.loads(call_event["gen_ai.tool.call.arguments"]) == {"city": "Nice"}


def test_two_concurrent_requests_get_a_span_each(spans: Spans) -> None:
    both_inside = threading.Barrier(2, timeout=10)

    def slow(request: Request) -> Response:
        both_inside.wait()  # each request waits until the other is in the backend too
        return answer(request)

    with ServerThread(create_app(ScriptedBackend(slow))) as server:
        def send(model: str, city: str, out: dict[str, Any]) -> None:
            path, body = _body("messages", model)
            body["messages"] = [{"role": "user", "content": city}]
            out[model] = httpx2.post(server.url + path, json=body, timeout=30).json()

        replies: dict[str, Any] = {}
        threads = [threading.Thread(target=send, args=(m, c, replies))
                   for m, c in (("m-a", "Oslo"), ("m-b", "Montevideo"))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    a, b = spans.one("chat m-a"), spans.one("chat m-b")
    assert a.attributes is not None and b.attributes is not None
    assert (a.attributes["gen_ai.usage.input_tokens"], b.attributes["gen_ai.usage.input_tokens"]
            ) == (len("Oslo"), len("Montevideo"))
    assert a.attributes["gen_ai.response.id"] == replies["m-a"]["id"]
    assert b.attributes["gen_ai.response.id"] == replies["m-b"]["id"]
    assert a.start_time is not None and b.end_time is not None
    assert a.start_time < b.end_time and b.start_time is not None and a.end_time is not None
    assert b.start_time < a.end_time  # they really overlapped
    assert a.context is not None and b.context is not None
    assert a.context.trace_id != b.context.trace_id
