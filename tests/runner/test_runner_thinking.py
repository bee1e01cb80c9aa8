"""The runner keeps the model's thinking: a tool loop over a fake Anthropic
upstream with thinking on keeps the signed blocks in ``result.messages`` and sends them back
on the next turn, whole and streamed, sync and async."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx2
import pytest

from tooluse.backends.anthropic import AnthropicBackend
from tooluse.messages import Reasoning, RedactedThinkingBlock, ThinkingBlock, ToolUseBlock
from tooluse.runner import Runner
from tooluse.runner.events import FinalEvent
from tooluse.stream import events_from_response

SIG = "EqQBCkgIARABGAIiQL2UoU0b1OHYi+3/Xk9+u1Ww0aUBdH2nKz==/Zr+Q8aZ3wIbmYQc5oCnH3rHvq5Y0Q=="
SIG2 = "ErUBCkYIARgCIkACJWxzySUOJzOlZ8WFdgQSbeQA3H1i5rfkKLV9eC4HN6Jcnrlw1Nc+/w=="
REDACTED = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPk=="


def _message(content: list[dict[str, Any]], stop: str) -> dict[str, Any]:
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-up",
            "content": content, "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": 30, "output_tokens": 10}}


FIRST = _message([
    {"type": "thinking", "thinking": "I need the weather tool.", "signature": SIG},
    {"type": "redacted_thinking", "data": REDACTED},
    {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {"city": "Oslo"}},
], "tool_use")
SECOND = _message([
    {"type": "thinking", "thinking": "Sunny: answer.", "signature": SIG2},
    {"type": "text", "text": "Sunny in Oslo."},
], "end_turn")


class Upstream:
    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        self.bodies.append(body)
        last = body["messages"][-1]["content"]
        answered = isinstance(last, list) and any(b.get("type") == "tool_result" for b in last)
        message = SECOND if answered else FIRST
        if not body.get("stream"):
            return httpx2.Response(200, json=message)
        from tooluse.codecs import anthropic as codec

        events = codec.encode_events(events_from_response(codec.decode_response(message), chunk_size=5))
        sse = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
        return httpx2.Response(200, content=sse.encode(), headers={"content-type": "text/event-stream"})

    async def ahandle(self, request: httpx2.Request) -> httpx2.Response:
        await request.aread()
        return self.handle(request)


def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


def runner(seen: Upstream) -> Runner:
    backend = AnthropicBackend(
        "claude-up", base_url="http://upstream.invalid", api_key="k", max_retries=0,
        transport=httpx2.MockTransport(seen.handle), async_transport=httpx2.MockTransport(seen.ahandle),
    )
    return Runner(backend, [get_weather], max_tokens=4096,
                  reasoning={"mode": "enabled", "budget_tokens": 2048})


@pytest.mark.parametrize("how", ["run", "arun", "stream"])
def test_a_tool_loop_with_thinking_sends_the_signed_blocks_back(how: str) -> None:
    seen = Upstream()
    loop = runner(seen)
    if how == "run":
        result = loop.run("Weather in Oslo?")
    elif how == "arun":
        result = asyncio.run(loop.arun("Weather in Oslo?"))
    else:
        final = [e for e in loop.stream("Weather in Oslo?") if isinstance(e, FinalEvent)]
        result = final[0].result
    assert result.response.text() == "Sunny in Oslo."
    # result.messages keeps the thinking as it came, signatures included
    first = result.messages[1]
    assert first.thinking == [ThinkingBlock(text="I need the weather tool.", signature=SIG),
                              RedactedThinkingBlock(data=REDACTED)]
    assert isinstance(first.content[2], ToolUseBlock)
    assert result.messages[-1].thinking == [ThinkingBlock(text="Sunny: answer.", signature=SIG2)]
    # the second request carried the first turn's blocks back, byte for byte
    assert len(seen.bodies) == 2
    assert seen.bodies[1]["messages"][1]["content"][:2] == FIRST["content"][:2]
    assert all(b["thinking"] == {"type": "enabled", "budget_tokens": 2048} for b in seen.bodies)


def test_reasoning_is_checked_when_the_runner_is_made() -> None:
    loop = runner(Upstream())
    assert loop.settings.request_options["reasoning"] == Reasoning(budget_tokens=2048)
    with pytest.raises(ValueError, match="mode"):
        Runner("scripted:hi", reasoning={"mode": "sometimes"})
