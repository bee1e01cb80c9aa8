"""The ``openai-responses:`` backend: against a real Responses server in-process (a tooluse
gateway on a scripted backend), whole and streamed, and behind a gateway for the unchanged
openai SDK; against httpx2.MockTransport, what it forwards (server tools, reasoning, a
custom tool's grammar) and how upstream errors map."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx2
import openai
import pytest

from tooluse.backends.openai_responses import OpenAIResponsesBackend
from tooluse.backends.registry import available_backends, load_backend
from tooluse.backends.scripted import from_spec as scripted
from tooluse.errors import BackendError
from tooluse.messages import Message, Request, TextBlock, ToolChoice, ToolSpec
from tooluse.server import ServerThread, create_app
from tooluse.stream import accumulate

WEATHER = ToolSpec(name="get_weather", description="Weather in a city.", input_schema={
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})
LOOP = '[{"text": "Looking.", "call": "get_weather", "input": {"city": "Paris"}}, "18 C in Paris."]'


@pytest.fixture()
def upstream() -> Iterator[tuple[str, Any]]:
    """A Responses server: the gateway on a scripted backend."""
    backend = scripted(LOOP)
    with ServerThread(create_app(backend)) as srv:
        yield srv.url + "/v1", backend


def ask(text: str = "Weather in Paris?") -> Request:
    return Request(model="up-model", system=[TextBlock(text="Be brief.")],
                   messages=[Message(role="user", content=[TextBlock(text=text)])],
                   tools=[WEATHER], max_tokens=100)


def test_spec_string() -> None:
    assert "openai-responses" in available_backends()
    backend = load_backend("openai-responses:http://127.0.0.1:4000/v1#gpt-x", api_key="k")
    assert isinstance(backend, OpenAIResponsesBackend)
    assert (backend.model, backend.base_url) == ("gpt-x", "http://127.0.0.1:4000/v1")


@pytest.mark.parametrize("streamed", [False, True])
def test_a_tool_call_from_a_real_responses_server(upstream: tuple[str, Any], streamed: bool) -> None:
    url, seen = upstream
    backend = OpenAIResponsesBackend(base_url=url, api_key="k")
    try:
        response = accumulate(backend.stream(ask())) if streamed else backend.complete(ask())
    finally:
        backend.close()
    assert response.stop_reason == "tool_use"
    assert response.text() == "Looking."
    (call,) = response.tool_uses
    assert (call.name, call.input) == ("get_weather", {"city": "Paris"})
    got = seen.requests[-1]  # what the upstream decoded from our body
    assert got.model == "up-model" and got.system_text() == "Be brief."
    assert [t.name for t in got.tools] == ["get_weather"] and got.max_tokens == 100


def test_the_openai_sdk_through_a_gateway_fronting_a_responses_upstream(
        upstream: tuple[str, Any]) -> None:
    url, seen = upstream
    front = create_app(OpenAIResponsesBackend("up-model", base_url=url, api_key="k"))
    tool = {"type": "function", "name": "get_weather", "description": "Weather in a city.",
            "parameters": WEATHER.input_schema, "strict": False}
    with ServerThread(front) as srv:
        client = openai.OpenAI(base_url=srv.url + "/v1", api_key="k", max_retries=0, timeout=20)
        first = client.responses.create(model="any", input="Weather in Paris?", tools=[tool])
        call = next(item for item in first.output if item.type == "function_call")
        assert json.loads(call.arguments) == {"city": "Paris"}
        # previous_response_id is the front gateway's own: the upstream gets the whole
        # conversation, stateless
        second = client.responses.create(model="any", previous_response_id=first.id, tools=[tool],
                                         input=[{"type": "function_call_output",
                                                 "call_id": call.call_id, "output": "18 C"}])
        assert second.output_text == "18 C in Paris."
        events = [e.type for e in client.responses.create(model="any", input="again",
                                                           tools=[tool], stream=True)]
    assert events[0] == "response.created" and events[-1] == "response.completed"
    last = seen.requests[-2]
    assert last.messages[-1].tool_results[0].text() == "18 C"


class _Recorder:
    """A MockTransport that records request bodies and answers with ``answer``."""

    def __init__(self, answer: httpx2.Response) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.headers: list[httpx2.Headers] = []
        self.answer = answer
        self.transport = httpx2.MockTransport(self.handle)

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        self.bodies.append(json.loads(request.content))
        self.headers.append(request.headers)
        return self.answer

    def backend(self, **options: Any) -> OpenAIResponsesBackend:
        return OpenAIResponsesBackend("m", base_url="http://upstream.test/v1", api_key="sk-1",
                                      transport=self.transport, async_transport=self.transport,
                                      max_retries=0, **options)


COMPLETED = {"id": "resp_1", "object": "response", "created_at": 1, "model": "m",
             "status": "completed", "output": [
                 {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                  "content": [{"type": "output_text", "text": "Hi.", "annotations": []}]}],
             "usage": {"input_tokens": 5, "output_tokens": 2, "total_tokens": 7}}


def test_forwards_what_only_a_responses_upstream_runs() -> None:
    rec = _Recorder(httpx2.Response(200, json=COMPLETED))
    front = create_app(rec.backend())
    lark = 'start: "add " /[0-9]+/'
    with ServerThread(front) as srv:
        client = openai.OpenAI(base_url=srv.url + "/v1", api_key="k", max_retries=0, timeout=20)
        out = client.responses.create(
            model="any", input="hi", reasoning={"effort": "low", "summary": "auto"},
            include=["reasoning.encrypted_content"], prompt_cache_key="pk",
            tools=[{"type": "web_search"}, {"type": "file_search", "vector_store_ids": ["vs_1"]},
                   {"type": "custom", "name": "calc", "description": "Add.",
                    "format": {"type": "grammar", "syntax": "lark", "definition": lark}}],
            text={"format": {"type": "json_schema", "name": "r", "strict": True,
                             "schema": {"type": "object", "properties": {},
                                        "additionalProperties": False}}})
    assert out.output_text == "Hi."
    (body,) = rec.bodies
    assert rec.headers[0]["authorization"] == "Bearer sk-1"
    # the client's model name goes upstream, as with every HTTP backend (the backend's own
    # model only when the request names none); stateless: the upstream keeps nothing
    assert body["model"] == "any" and body["store"] is False
    assert body["reasoning"] == {"effort": "low", "summary": "auto"}
    assert body["include"] == ["reasoning.encrypted_content"] and body["prompt_cache_key"] == "pk"
    by_type = {t["type"]: t for t in body["tools"]}
    assert by_type["web_search"] == {"type": "web_search"}
    assert by_type["file_search"]["vector_store_ids"] == ["vs_1"]  # not refused: forwarded
    assert by_type["custom"]["format"] == {"type": "grammar", "syntax": "lark", "definition": lark}
    assert body["text"]["format"]["type"] == "json_schema"  # the upstream enforces it


@pytest.mark.parametrize("streamed", [False, True])
def test_upstream_errors(streamed: bool) -> None:
    error = {"error": {"message": "This model's maximum context length is 8192 tokens.",
                       "type": "invalid_request_error", "param": "input",
                       "code": "context_length_exceeded"}}
    backend = _Recorder(httpx2.Response(400, json=error)).backend()
    with pytest.raises(BackendError) as caught:
        accumulate(backend.stream(ask())) if streamed else backend.complete(ask())
    assert caught.value.kind == "context_length" and caught.value.status == 400
    assert caught.value.message.startswith("openai-responses: HTTP 400")


def test_an_error_event_in_the_stream() -> None:
    events = [
        {"type": "response.created", "sequence_number": 0,
         "response": {**COMPLETED, "status": "in_progress", "output": []}},
        {"type": "error", "sequence_number": 1, "code": "server_error",
         "message": "the model fell over", "param": None},
    ]
    sse = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
    backend = _Recorder(httpx2.Response(200, text=sse, headers={
        "content-type": "text/event-stream"})).backend()
    with pytest.raises(BackendError, match="the model fell over"):
        accumulate(backend.stream(ask()))


def test_tool_choice_and_parallel_calls_travel() -> None:
    rec = _Recorder(httpx2.Response(200, json=COMPLETED))
    request = ask().model_copy(update={"tool_choice": ToolChoice(
        type="tool", name="get_weather", disable_parallel_tool_use=True)})
    assert rec.backend().complete(request).text() == "Hi."
    body = rec.bodies[0]
    assert body["tool_choice"] == {"type": "function", "name": "get_weather"}
    assert body["parallel_tool_calls"] is False and "stream" not in body
