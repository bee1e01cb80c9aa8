"""Reasoning through ``/v1/responses``, with the unchanged openai SDK parsing it
with its own types: a backend's thinking comes back as reasoning items (whole, streamed,
stored); a reasoning item sent back reaches the backend; behind the gateway, an
``openai-responses:`` upstream gets the client's reasoning items and settings unchanged and
its reasoning (with ``encrypted_content``) comes back to the client, whole and streamed."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import openai
import pytest

from tooluse.backends.openai_responses import OpenAIResponsesBackend
from tooluse.backends.scripted import ScriptedBackend
from tooluse.messages import Response, TextBlock, ThinkingBlock, ToolUseBlock
from tooluse.server import ServerThread, create_app

# a real client: a 4xx the policy does not explain fails the test (recording.py)
pytestmark = pytest.mark.client

WEATHER = {"type": "function", "name": "get_weather", "description": "Weather in a city.",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                          "required": ["city"], "additionalProperties": False},
           "strict": True}
THOUGHT = ThinkingBlock(text="The user wants Paris.", summary=["**Weather**", "**Tool**"],
                        signature="gAAAAB-opaque/+==")
FIRST = Response(content=[THOUGHT, ToolUseBlock(id="call_1", name="get_weather",
                                                input={"city": "Paris"})], stop_reason="tool_use")
SECOND = Response(content=[TextBlock(text="18 C in Paris.")], stop_reason="end_turn")


def client(url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=url + "/v1", api_key="k", max_retries=0, timeout=20)


def script(request: Any) -> Response:
    """The first turn thinks and calls; once a tool output is there, it answers."""
    return SECOND if request.messages[-1].tool_results else FIRST


@pytest.fixture()
def thinking_server() -> Any:
    backend = ScriptedBackend(script)
    with ServerThread(create_app(backend)) as srv:
        yield srv, backend


def test_a_backends_thinking_is_a_reasoning_item_and_comes_back(thinking_server: Any) -> None:
    srv, backend = thinking_server
    c = client(srv.url)
    first = c.responses.create(model="o4-mini", input="Weather in Paris?", tools=[WEATHER],
                               store=False, include=["reasoning.encrypted_content"],
                               reasoning={"effort": "high", "summary": "auto"})
    reasoning, call = first.output
    assert reasoning.type == "reasoning" and call.type == "function_call"
    assert [s.text for s in reasoning.summary] == ["**Weather**", "**Tool**"]
    assert reasoning.content is not None
    assert [p.text for p in reasoning.content] == ["The user wants Paris."]
    assert reasoning.encrypted_content == "gAAAAB-opaque/+=="
    got = backend.requests[-1].reasoning
    assert got is not None and (got.effort, got.summary) == ("high", "auto")
    # the client hands the output back, as a stateless client (store: false) must
    history = [{"role": "user", "content": "Weather in Paris?"},
               *[item.model_dump(exclude_none=True) for item in first.output],
               {"type": "function_call_output", "call_id": call.call_id, "output": "18 C"}]
    second = c.responses.create(model="o4-mini", input=history, tools=[WEATHER], store=False)
    assert second.output_text == "18 C in Paris."
    assert backend.requests[-1].messages[1].content[0] == THOUGHT.model_copy(
        update={"id": reasoning.id})


def test_streamed_reasoning_events_parsed_by_the_sdk(thinking_server: Any) -> None:
    from openai.types.responses import (
        ResponseReasoningItem,
        ResponseReasoningSummaryPartAddedEvent,
        ResponseReasoningSummaryTextDeltaEvent,
        ResponseReasoningTextDeltaEvent,
    )

    srv, _ = thinking_server
    c = client(srv.url)
    with c.responses.stream(model="m", input="Weather in Paris?", tools=[WEATHER]) as stream:
        events = list(stream)
        final = stream.get_final_response()
    assert [e.sequence_number for e in events] == list(range(len(events)))
    parts = [e for e in events if isinstance(e, ResponseReasoningSummaryPartAddedEvent)]
    assert [p.summary_index for p in parts] == [0, 1]
    summary: dict[int, str] = {}
    for e in events:
        if isinstance(e, ResponseReasoningSummaryTextDeltaEvent):
            summary[e.summary_index] = summary.get(e.summary_index, "") + e.delta
    assert summary == {0: "**Weather**", 1: "**Tool**"}
    text = "".join(e.delta for e in events if isinstance(e, ResponseReasoningTextDeltaEvent))
    assert text == "The user wants Paris."
    added = next(e for e in events if e.type == "response.output_item.added")
    assert added.item.type == "reasoning"
    done = next(e for e in events if e.type == "response.output_item.done")
    assert isinstance(done.item, ResponseReasoningItem)
    assert done.item.encrypted_content == "gAAAAB-opaque/+=="
    item = final.output[0]
    assert isinstance(item, ResponseReasoningItem) and item.id == done.item.id
    assert item.encrypted_content == "gAAAAB-opaque/+==" and final.output[1].type == "function_call"


@pytest.mark.parametrize("streamed", [False, True])
def test_a_stored_responses_reasoning_continues_with_previous_response_id(
        thinking_server: Any, streamed: bool) -> None:
    srv, backend = thinking_server
    c = client(srv.url)
    if streamed:
        with c.responses.stream(model="m", input="Weather in Paris?", tools=[WEATHER]) as stream:
            first = stream.get_final_response()
    else:
        first = c.responses.create(model="m", input="Weather in Paris?", tools=[WEATHER])
    assert c.responses.retrieve(first.id).output[0].type == "reasoning"
    c.responses.create(model="m", previous_response_id=first.id, tools=[WEATHER], input=[
        {"type": "function_call_output", "call_id": "call_1", "output": "18 C"}])
    # the stored conversation holds the backend's own block, without the id the gateway
    # gave its item (a client sending the item back sends that id: see the first test)
    (thought,) = backend.requests[-1].messages[1].thinking
    assert thought == THOUGHT


# --- an openai-responses: upstream behind the gateway ----------------------------------------

UP_ITEM = {"id": "rs_up1", "type": "reasoning", "encrypted_content": "gAAAA-upstream==",
           "summary": [{"type": "summary_text", "text": "**Looking up**"}]}
UP_CALL = {"id": "fc_up1", "type": "function_call", "status": "completed", "call_id": "call_9",
           "name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}
UP_RESPONSE = {"id": "resp_up", "object": "response", "created_at": 1, "model": "o4-mini",
               "status": "completed", "output": [UP_ITEM, UP_CALL],
               "usage": {"input_tokens": 5, "output_tokens": 20}}


def _sse(events: list[dict[str, Any]]) -> str:
    numbered = [{**e, "sequence_number": n} for n, e in enumerate(events)]
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in numbered)


UP_STREAM = _sse([
    {"type": "response.created", "response": {**UP_RESPONSE, "status": "in_progress",
                                              "output": []}},
    {"type": "response.output_item.added", "output_index": 0,
     "item": {"id": "rs_up1", "type": "reasoning", "summary": []}},
    {"type": "response.reasoning_summary_part.added", "item_id": "rs_up1", "output_index": 0,
     "summary_index": 0, "part": {"type": "summary_text", "text": ""}},
    {"type": "response.reasoning_summary_text.delta", "item_id": "rs_up1", "output_index": 0,
     "summary_index": 0, "delta": "**Looking"},
    {"type": "response.reasoning_summary_text.delta", "item_id": "rs_up1", "output_index": 0,
     "summary_index": 0, "delta": " up**"},
    {"type": "response.reasoning_summary_text.done", "item_id": "rs_up1", "output_index": 0,
     "summary_index": 0, "text": "**Looking up**"},
    {"type": "response.reasoning_summary_part.done", "item_id": "rs_up1", "output_index": 0,
     "summary_index": 0, "part": {"type": "summary_text", "text": "**Looking up**"}},
    {"type": "response.output_item.done", "output_index": 0, "item": UP_ITEM},
    {"type": "response.output_item.added", "output_index": 1,
     "item": {**UP_CALL, "arguments": "", "status": "in_progress"}},
    {"type": "response.function_call_arguments.delta", "item_id": "fc_up1", "output_index": 1,
     "delta": UP_CALL["arguments"]},
    {"type": "response.output_item.done", "output_index": 1, "item": UP_CALL},
    {"type": "response.completed", "response": UP_RESPONSE},
])


class _Upstream:
    """A MockTransport Responses server: records each body, answers whole or streamed."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        self.bodies.append(body)
        if body["input"][-1].get("type") == "function_call_output":
            return httpx2.Response(200, json={**UP_RESPONSE, "output": [{
                "id": "msg_up", "type": "message", "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": "18 C.", "annotations": []}]}]})
        if body.get("stream"):
            return httpx2.Response(200, text=UP_STREAM,
                                   headers={"content-type": "text/event-stream"})
        return httpx2.Response(200, json=UP_RESPONSE)

    def app(self) -> Any:
        transport = httpx2.MockTransport(self.handle)
        return create_app(OpenAIResponsesBackend(
            "o4-mini", base_url="http://upstream.test/v1", api_key="sk-up", transport=transport,
            async_transport=transport, max_retries=0))


@pytest.mark.parametrize("streamed", [False, True])
def test_an_upstreams_reasoning_reaches_the_client_and_goes_back_unchanged(
        streamed: bool) -> None:
    up = _Upstream()
    settings: dict[str, Any] = {"reasoning": {"effort": "medium", "summary": "auto"},
                                "include": ["reasoning.encrypted_content"], "store": False}
    with ServerThread(up.app()) as srv:
        c = client(srv.url)
        if streamed:
            with c.responses.stream(model="o4-mini", input="Weather in Paris?",
                                    tools=[WEATHER], **settings) as stream:
                kinds = [e.type for e in stream]
                first = stream.get_final_response()
            assert kinds.count("response.reasoning_summary_text.delta") == 2
            assert kinds.index("response.reasoning_summary_part.added") < kinds.index(
                "response.function_call_arguments.delta")
        else:
            first = c.responses.create(model="o4-mini", input="Weather in Paris?",
                                       tools=[WEATHER], **settings)
        reasoning = first.output[0]
        assert reasoning.type == "reasoning"
        assert reasoning.model_dump(exclude_none=True) == UP_ITEM  # the upstream's own item
        # the next turn, as Codex sends it: the reasoning item back without its id
        sent_back = {k: v for k, v in reasoning.model_dump(exclude_none=True).items()
                     if k != "id"}
        history = [{"role": "user", "content": "Weather in Paris?"}, sent_back,
                   first.output[1].model_dump(exclude_none=True),
                   {"type": "function_call_output", "call_id": "call_9", "output": "18 C"}]
        second = c.responses.create(model="o4-mini", input=history, tools=[WEATHER], **settings)
    assert second.output_text == "18 C."
    one, two = up.bodies
    assert (one["reasoning"], one["include"]) == (settings["reasoning"], settings["include"])
    assert one.get("stream", False) is streamed
    assert two["input"][1] == sent_back  # unchanged, encrypted_content byte for byte
    assert (two["reasoning"], two["include"]) == (settings["reasoning"], settings["include"])
