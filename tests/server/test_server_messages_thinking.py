"""Thinking through the gateway to an Anthropic upstream: a fake upstream
(``httpx2.MockTransport`` behind a real :class:`AnthropicBackend`) answers with thinking,
``redacted_thinking`` and ``signature_delta``; the Messages client receives them in order,
whole or streamed, and the anthropic SDK's own tool loop sends the first turn's signed block
back, with the client's ``thinking``, ``context_management`` and ``interleaved-thinking``
beta reaching the upstream unchanged."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx2
import pytest

from tooluse.backends.anthropic import AnthropicBackend
from tooluse.server import ServerThread, create_app

# a real client: a 4xx the policy does not explain fails the test (recording.py)
pytestmark = pytest.mark.client

SIG = "EqQBCkgIARABGAIiQL2UoU0b1OHYi+3/Xk9+u1Ww0aUBdH2nKz==/Zr+Q8aZ3wIbmYQc5oCnH3rHvq5Y0Q=="
SIG2 = "ErUBCkYIARgCIkACJWxzySUOJzOlZ8WFdgQSbeQA3H1i5rfkKLV9eC4HN6Jcnrlw1NcnPRIPaTs9jLF3rll+/w=="
REDACTED = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5s=="
THINKING = {"type": "enabled", "budget_tokens": 2048}
BETAS = ["interleaved-thinking-2025-05-14", "context-management-2025-06-27"]
CONTEXT = {"edits": [{"type": "clear_tool_uses_20250919",
                      "trigger": {"type": "input_tokens", "value": 30000},
                      "keep": {"type": "tool_uses", "value": 2}}]}


def _message(content: list[dict[str, Any]], stop: str) -> dict[str, Any]:
    return {"id": "msg_up", "type": "message", "role": "assistant", "model": "claude-up",
            "content": content, "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": 50, "output_tokens": 20}}


#: The first turn: think (signed), a redacted block, then call the tool.
FIRST = _message([
    {"type": "thinking", "thinking": "The user wants the weather.\nCall get_weather.", "signature": SIG},
    {"type": "redacted_thinking", "data": REDACTED},
    {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {"city": "Oslo"}},
], "tool_use")
#: The second turn: interleaved thinking after the result, then the answer.
SECOND = _message([
    {"type": "thinking", "thinking": "It is sunny.", "signature": SIG2},
    {"type": "text", "text": "It is sunny in Oslo."},
], "end_turn")


def sse_events(message: dict[str, Any], piece: int = 7) -> list[dict[str, Any]]:
    """The stream the API sends for ``message``: thinking in pieces, then its signature."""
    start = {**message, "content": [], "stop_reason": None,
             "usage": {"input_tokens": 50, "output_tokens": 1}}
    events: list[dict[str, Any]] = [{"type": "message_start", "message": start}]
    for i, block in enumerate(message["content"]):
        def delta(d: dict[str, Any], i: int = i) -> dict[str, Any]:
            return {"type": "content_block_delta", "index": i, "delta": d}
        if block["type"] == "thinking":
            events.append({"type": "content_block_start", "index": i,
                           "content_block": {"type": "thinking", "thinking": "", "signature": ""}})
            text = block["thinking"]
            events += [delta({"type": "thinking_delta", "thinking": text[k:k + piece]})
                       for k in range(0, len(text), piece)]
            events.append(delta({"type": "signature_delta", "signature": block["signature"]}))
        elif block["type"] == "text":
            events.append({"type": "content_block_start", "index": i,
                           "content_block": {"type": "text", "text": ""}})
            events.append(delta({"type": "text_delta", "text": block["text"]}))
        elif block["type"] == "tool_use":
            events.append({"type": "content_block_start", "index": i,
                           "content_block": {**block, "input": {}}})
            events.append(delta({"type": "input_json_delta", "partial_json": json.dumps(block["input"])}))
        else:
            events.append({"type": "content_block_start", "index": i, "content_block": block})
        events.append({"type": "content_block_stop", "index": i})
    events.append({"type": "message_delta", "delta": {"stop_reason": message["stop_reason"],
                                                      "stop_sequence": None},
                   "usage": {"output_tokens": 20}})
    events.append({"type": "message_stop"})
    return events


def sse_bytes(events: list[dict[str, Any]]) -> bytes:
    out = []
    for k, event in enumerate(events):
        out.append(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n")
        if k == 0:
            out.append('event: ping\ndata: {"type": "ping"}\n\n')
    return "".join(out).encode()


class Upstream:
    """A fake Messages API: the first turn until the request carries a tool result, then
    the second; whole or streamed as asked. It records every body and header it got."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        self.bodies.append(body)
        self.headers.append(dict(request.headers))
        last = body["messages"][-1]["content"]
        answered = isinstance(last, list) and any(b.get("type") == "tool_result" for b in last)
        message = SECOND if answered else FIRST
        if body.get("stream"):
            return httpx2.Response(200, content=sse_bytes(sse_events(message)),
                                   headers={"content-type": "text/event-stream"})
        return httpx2.Response(200, json=message)

    async def ahandle(self, request: httpx2.Request) -> httpx2.Response:
        await request.aread()
        return self.handle(request)


@pytest.fixture()
def gateway() -> Iterator[tuple[ServerThread, Upstream]]:
    seen = Upstream()
    backend = AnthropicBackend(
        "claude-up", base_url="http://upstream.invalid", api_key="k", max_retries=0,
        transport=httpx2.MockTransport(seen.handle), async_transport=httpx2.MockTransport(seen.ahandle),
    )
    with ServerThread(create_app(backend)) as srv:
        yield srv, seen


def ask(text: str = "Weather in Oslo?") -> dict[str, Any]:
    return {"model": "claude-up", "max_tokens": 4096, "thinking": THINKING,
            "tools": [{"name": "get_weather", "description": "The weather in a city.",
                       "input_schema": {"type": "object", "properties": {"city": {"type": "string"}},
                                        "required": ["city"]}}],
            "messages": [{"role": "user", "content": text}]}


def read_sse(response: httpx2.Response) -> list[dict[str, Any]]:
    events = []
    for chunk in response.text.split("\n\n"):
        data = [line[5:].strip() for line in chunk.splitlines() if line.startswith("data:")]
        if data:
            events.append(json.loads(data[0]))
    return events


def test_the_upstreams_thinking_stream_reaches_the_client_in_order(gateway: Any) -> None:
    srv, seen = gateway
    response = httpx2.post(srv.url + "/v1/messages", json={**ask(), "stream": True}, timeout=20)
    assert response.status_code == 200, response.text
    got = [e for e in read_sse(response) if e["type"] != "ping"]
    sent = sse_events(FIRST)
    # every event as the upstream sent it, in its order: thinking pieces, the signature
    # before the block stops, the redacted block whole; only the ids are the gateway's own
    assert [e["type"] for e in got] == [e["type"] for e in sent]
    assert got[1:-2] == sent[1:-2]
    assert seen.bodies[-1]["thinking"] == THINKING and seen.bodies[-1]["stream"] is True


def test_the_upstreams_thinking_reaches_the_client_whole(gateway: Any) -> None:
    srv, _ = gateway
    response = httpx2.post(srv.url + "/v1/messages", json=ask(), timeout=20)
    assert response.status_code == 200, response.text
    assert response.json()["content"] == FIRST["content"]


def test_the_sdk_stream_accumulates_thinking_with_its_signature(gateway: Any) -> None:
    srv, _ = gateway
    client = anthropic.Anthropic(base_url=srv.url, api_key="k", max_retries=0)
    kinds = []
    with client.messages.stream(**ask()) as stream:  # type: ignore[arg-type]
        for event in stream:
            if event.type == "content_block_delta":
                kinds.append(event.delta.type)
        final = stream.get_final_message()
    assert kinds.index("signature_delta") > kinds.index("thinking_delta")
    assert kinds[-1] == "input_json_delta"
    thinking = final.content[0]
    assert thinking.type == "thinking" and thinking.signature == SIG
    assert thinking.thinking == FIRST["content"][0]["thinking"]
    assert final.content[1].type == "redacted_thinking" and final.content[1].data == REDACTED


@pytest.mark.parametrize("stream", [False, True])
def test_the_sdk_tool_loop_sends_the_signed_block_back(gateway: Any, stream: bool) -> None:
    srv, seen = gateway
    client = anthropic.Anthropic(base_url=srv.url, api_key="k", max_retries=0)
    cities: list[str] = []

    @anthropic.beta_tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        cities.append(city)
        return "sunny"

    runner = client.beta.messages.tool_runner(
        model="claude-up", max_tokens=4096, thinking=THINKING,  # type: ignore[arg-type]
        tools=[get_weather], messages=[{"role": "user", "content": "Weather in Oslo?"}],
        betas=BETAS, context_management=CONTEXT, stream=stream,  # type: ignore[arg-type]
    )
    if stream:
        final = None
        for message_stream in runner:
            final = message_stream.get_final_message()
    else:
        final = runner.until_done()
    assert cities == ["Oslo"]
    assert final is not None and final.content[-1].text == "It is sunny in Oslo."  # type: ignore[union-attr]
    assert final.content[0].signature == SIG2  # type: ignore[union-attr]
    assert len(seen.bodies) == 2
    second = seen.bodies[1]
    # the first turn's blocks went back byte for byte, the signature with them
    assistant = second["messages"][1]
    assert assistant["role"] == "assistant"
    assert assistant["content"][:2] == FIRST["content"][:2]
    assert assistant["content"][2]["id"] == "toolu_01"
    assert second["messages"][2]["content"][0]["tool_use_id"] == "toolu_01"
    for body, headers in zip(seen.bodies, seen.headers, strict=True):
        assert body["thinking"] == THINKING
        assert body["context_management"] == CONTEXT
        assert set(BETAS) <= set(headers["anthropic-beta"].split(","))


def test_another_backends_reasoning_is_shown_as_thinking_blocks() -> None:
    """Reasoning from a backend that is not the Messages API (here a Responses-style summary
    with its encrypted content, and unsigned text) reaches a Messages client as ``thinking``
    blocks, whole and streamed alike."""
    from tooluse.backends.scripted import ScriptedBackend
    from tooluse.messages import Response, TextBlock, ThinkingBlock

    answer = Response(model="gpt-x", stop_reason="end_turn", content=[
        ThinkingBlock(summary=["Look it up.", "Then answer."], signature="gAAAAB-enc", id="rs_1"),
        ThinkingBlock(text="plain reasoning"),
        TextBlock(text="done"),
    ])
    expected = [
        {"type": "thinking", "thinking": "Look it up.\n\nThen answer.", "signature": "gAAAAB-enc"},
        {"type": "thinking", "thinking": "plain reasoning", "signature": ""},
        {"type": "text", "text": "done"},
    ]
    with ServerThread(create_app(ScriptedBackend(lambda request: answer))) as srv:
        client = anthropic.Anthropic(base_url=srv.url, api_key="k", max_retries=0)
        whole = client.messages.create(model="m", max_tokens=100,
                                       messages=[{"role": "user", "content": "hi"}])
        with client.messages.stream(model="m", max_tokens=100,
                                    messages=[{"role": "user", "content": "hi"}]) as stream:
            streamed = stream.get_final_message()
    for message in (whole, streamed):
        assert [b.model_dump(exclude_none=True) for b in message.content] == expected


@pytest.mark.parametrize("stream", [False, True])
def test_a_responses_client_over_an_anthropic_upstream_sends_its_signed_thinking_back(
    gateway: tuple[ServerThread, Upstream], stream: bool
) -> None:
    """The openai SDK's tool loop through /v1/responses (store: false, as Codex runs it):
    the reasoning items the gateway gave it (the upstream's signed thinking) go back with the
    function_call_output, and the upstream gets its signed block back as it issued it."""
    openai = pytest.importorskip("openai")
    srv, seen = gateway
    client = openai.OpenAI(base_url=srv.url + "/v1", api_key="k", max_retries=0, timeout=20)
    tool = {"type": "function", "name": "get_weather", "description": "The weather in a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                           "required": ["city"]}}
    ask_ = {"model": "claude-up", "tools": [tool], "store": False,
            "reasoning": {"effort": "medium"}, "include": ["reasoning.encrypted_content"]}
    history: list[Any] = [{"role": "user", "content": "Weather in Oslo?"}]
    if stream:
        with client.responses.stream(input=history, **ask_) as events:
            first = events.get_final_response()
    else:
        first = client.responses.create(input=history, **ask_)
    reasoning = [item for item in first.output if item.type == "reasoning"]
    assert reasoning and reasoning[0].encrypted_content == SIG
    call = next(item for item in first.output if item.type == "function_call")
    history += [item.model_dump(exclude_none=True) for item in first.output]
    history.append({"type": "function_call_output", "call_id": call.call_id, "output": "sunny"})
    second = client.responses.create(input=history, **ask_)
    assert second.output_text == "It is sunny in Oslo."
    sent_back = seen.bodies[-1]["messages"][1]["content"]
    assert sent_back[0] == FIRST["content"][0]  # the signed block, as the upstream issued it
