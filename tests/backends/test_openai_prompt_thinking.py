"""openai-prompt and a reasoning model's ``<think>`` section, against a scripted
OpenAI-compatible server: a think section at the start of the text comes back as a thinking
block streamed before the call; ``think_tags=True`` (a thinking model) adds the bounded think
section to the grammar sent and ``chat_template_kwargs.enable_thinking`` to each turn, and
changes nothing else."""

from __future__ import annotations

import json
from typing import Any

import httpx2

from tooluse.backends.openai_prompt import OpenAIPromptBackend, from_spec
from tooluse.backends.options import RetryPolicy
from tooluse.messages import Message, Reasoning, Request, ThinkingBlock, ToolSpec
from tooluse.stream import BlockStart, BlockStop, ThinkingDelta, accumulate

URL = "http://127.0.0.1:9/v1"
WEATHER = ToolSpec(name="get_weather", description="Current weather in a city.",
                   input_schema={"type": "object", "properties": {"city": {"type": "string"}},
                                 "required": ["city"]})
CALL = ("<function_calls>\n<invoke>\n<tool_name>get_weather</tool_name>\n<parameters>\n"
        "<city>Paris</city>\n</parameters>\n</invoke>\n")


def _stream(*pieces: str) -> bytes:
    chunks = [{"choices": [{"index": 0, "delta": {"content": p}, "finish_reason": None}]}
              for p in pieces]
    chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop",
                                "stop_reason": "</function_calls>"}]})
    return "".join(f"data: {json.dumps(c)}\n\n" for c in chunks).encode() + b"data: [DONE]\n\n"


class Server:
    def __init__(self, body: bytes) -> None:
        self.body = body
        self.requests: list[dict[str, Any]] = []
        self.transport = httpx2.MockTransport(self.handle)

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(json.loads(request.content))
        return httpx2.Response(200, headers={"content-type": "text/event-stream"},
                               content=self.body)

    def backend(self, **options: Any) -> OpenAIPromptBackend:
        return OpenAIPromptBackend("m", base_url=URL, transport=self.transport,
                                   retry=RetryPolicy(max_retries=0), **options)


def _ask(**kw: Any) -> Request:
    return Request(model="m", max_tokens=100, tools=[WEATHER],
                   messages=[Message(role="user", content="Weather in Paris?")], **kw)


def test_a_leading_think_section_is_a_thinking_block_streamed_first() -> None:
    server = Server(_stream("<think>\nParis", " is a city;", " call it.\n</th", "ink>\n\n",
                            CALL))
    events = list(server.backend().stream(_ask()))
    starts = [e for e in events if isinstance(e, BlockStart)]
    assert [s.block.type for s in starts] == ["thinking", "tool_use"]
    first_stop = next(i for i, e in enumerate(events) if isinstance(e, BlockStop))
    assert events.index(starts[1]) > first_stop
    deltas = [e.text for e in events if isinstance(e, ThinkingDelta)]
    assert len(deltas) > 1 and "".join(deltas) == "Paris is a city; call it."
    response = accumulate(iter(events))
    assert response.content[0] == ThinkingBlock(text="Paris is a city; call it.")
    assert response.tool_uses[0].input == {"city": "Paris"}
    # no thinking model declared: nothing new is sent
    assert "chat_template_kwargs" not in server.requests[0]


def test_think_tags_puts_the_think_section_in_the_grammar_sent() -> None:
    server = Server(_stream("<think>\nok\n</think>\n\n", CALL))
    thinking = server.backend(grammar_field="grammar", think_tags=True)
    response = thinking.complete(_ask(reasoning=Reasoning(budget_tokens=16)))
    assert response.thinking == [ThinkingBlock(text="ok")] and response.tool_uses
    asked = server.requests[-1]
    assert asked["chat_template_kwargs"] == {"enable_thinking": True}
    assert '"<think>\\n"' in asked["grammar"] and "{0,64}" in asked["grammar"]
    # not asked to reason: the same request as without think_tags, but for the switch
    thinking.complete(_ask())
    quiet = server.requests[-1]
    assert quiet.pop("chat_template_kwargs") == {"enable_thinking": False}
    server.backend(grammar_field="grammar").complete(_ask())
    assert quiet == server.requests[-1]
    assert "<think>" not in quiet["grammar"]


def test_think_tags_from_a_spec() -> None:
    backend = from_spec(f"{URL}?think_tags=1#m")
    assert backend.think_tags is True and backend.text_model.think_tags is True
    assert from_spec(f"{URL}#m").think_tags is False
