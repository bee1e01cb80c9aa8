"""The gateway with a vLLM-style upstream: a reasoning model's Chat Completions
stream (``reasoning_content`` deltas, then a tool call) reaches each client API in its own
format, whole and streamed, reasoning first:

- Chat Completions (the official openai SDK): ``reasoning_content``;
- Messages (the anthropic SDK): a ``thinking`` block (no signature: the upstream has none);
- Converse (boto3): ``reasoningContent.reasoningText``.

A Chat client's ``reasoning_effort`` reaches the upstream as it was sent. The upstream is a
``httpx2.MockTransport`` answering hand-written vLLM bytes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anthropic
import boto3
import httpx2
import openai
import pytest
from botocore.config import Config

from tooluse.backends.openai import OpenAIBackend
from tooluse.server import ServerThread, create_app

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
THOUGHT = ["The user means Paris, France. ", "I will call get_weather."]
ARGUMENTS = ['{"city": ', '"Paris"}']


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"id": "chatcmpl-up", "object": "chat.completion.chunk", "created": 1, "model": "Qwen/Qwen3-8B",
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}


UPSTREAM_STREAM = b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in [
    _chunk({"role": "assistant", "content": ""}),
    *[_chunk({"reasoning_content": piece}) for piece in THOUGHT],
    _chunk({"tool_calls": [{"index": 0, "id": "chatcmpl-tool-7", "type": "function",
                            "function": {"name": "get_weather", "arguments": ""}}]}),
    *[_chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}) for piece in ARGUMENTS],
    _chunk({}, "tool_calls"),
    {"id": "chatcmpl-up", "object": "chat.completion.chunk", "created": 1, "model": "Qwen/Qwen3-8B",
     "choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": 30, "total_tokens": 42}},
]) + b"data: [DONE]\n\n"
UPSTREAM_WHOLE = {
    "id": "chatcmpl-up", "object": "chat.completion", "created": 1, "model": "Qwen/Qwen3-8B",
    "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
        "role": "assistant", "content": None, "reasoning_content": "".join(THOUGHT),
        "tool_calls": [{"id": "chatcmpl-tool-7", "type": "function",
                        "function": {"name": "get_weather", "arguments": "".join(ARGUMENTS)}}]}}],
    "usage": {"prompt_tokens": 12, "completion_tokens": 30, "total_tokens": 42},
}


@pytest.fixture(scope="module")
def gateway() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """The gateway in front of the fake vLLM; yields its URL and the upstream's request bodies."""
    bodies: list[dict[str, Any]] = []

    def upstream(request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        bodies.append(body)
        if body.get("stream"):
            return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=UPSTREAM_STREAM)
        return httpx2.Response(200, json=UPSTREAM_WHOLE)

    backend = OpenAIBackend("Qwen/Qwen3-8B", base_url="http://vllm/v1", transport=httpx2.MockTransport(upstream))
    with ServerThread(create_app(backend, close_backend=True)) as server:
        yield server.url, bodies


# -- Chat Completions -----------------------------------------------------------------------

def _chat(url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=url + "/v1", api_key="k", max_retries=0, timeout=20)


CHAT_TOOLS: Any = [{"type": "function", "function": {"name": "get_weather", "parameters": SCHEMA}}]


def test_chat_client_gets_reasoning_content(gateway: tuple[str, list[dict[str, Any]]]) -> None:
    url, bodies = gateway
    answer = _chat(url).chat.completions.create(
        model="qwen3", messages=[{"role": "user", "content": "Weather in Paris?"}], tools=CHAT_TOOLS,
        reasoning_effort="low")
    message = answer.choices[0].message
    assert (message.model_extra or {})["reasoning_content"] == "".join(THOUGHT)
    assert message.tool_calls is not None and message.tool_calls[0].function.arguments == '{"city": "Paris"}'
    assert bodies[-1]["reasoning_effort"] == "low"


def test_chat_client_gets_reasoning_content_streamed_first(gateway: tuple[str, list[dict[str, Any]]]) -> None:
    url, bodies = gateway
    stream = _chat(url).chat.completions.create(
        model="qwen3", messages=[{"role": "user", "content": "Weather in Paris?"}], tools=CHAT_TOOLS,
        reasoning_effort="high", stream=True)
    order: list[str] = []
    reasoning = ""
    for chunk in stream:
        if not chunk.choices:
            continue
        delta = chunk.choices[0].delta
        piece = (delta.model_extra or {}).get("reasoning_content")
        if piece:
            reasoning += piece
            order.append("reasoning")
        if delta.tool_calls:
            order.append("call")
    assert reasoning == "".join(THOUGHT)
    assert order.index("call") > len(order) - order[::-1].index("reasoning") - 1
    assert bodies[-1]["reasoning_effort"] == "high" and bodies[-1]["stream"] is True


def test_chat_history_reasoning_goes_back_upstream(gateway: tuple[str, list[dict[str, Any]]]) -> None:
    url, bodies = gateway
    messages: Any = [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": None, "reasoning_content": "".join(THOUGHT),
         "tool_calls": [{"id": "chatcmpl-tool-7", "type": "function",
                         "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]},
        {"role": "tool", "tool_call_id": "chatcmpl-tool-7", "content": "18 C"},
    ]
    _chat(url).chat.completions.create(model="qwen3", messages=messages, tools=CHAT_TOOLS)
    assert bodies[-1]["messages"][1]["reasoning_content"] == "".join(THOUGHT)


# -- Messages -------------------------------------------------------------------------------
# The thinking blocks in this API's shape are the Anthropic codec's.

def _messages(url: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=url, api_key="k", max_retries=0, timeout=20)


MESSAGES_ARGS: Any = {"model": "qwen3", "max_tokens": 300,
                      "messages": [{"role": "user", "content": "Weather in Paris?"}],
                      "tools": [{"name": "get_weather", "input_schema": SCHEMA}]}


def test_messages_client_gets_a_thinking_block(gateway: tuple[str, list[dict[str, Any]]]) -> None:
    url, _ = gateway
    message = _messages(url).messages.create(**MESSAGES_ARGS)
    assert [b.type for b in message.content] == ["thinking", "tool_use"]
    thinking = message.content[0]
    assert thinking.type == "thinking" and thinking.thinking == "".join(THOUGHT)
    assert message.content[1].type == "tool_use" and message.content[1].input == {"city": "Paris"}


def test_messages_client_gets_thinking_streamed_first(gateway: tuple[str, list[dict[str, Any]]]) -> None:
    url, _ = gateway
    kinds: list[str] = []
    with _messages(url).messages.stream(**MESSAGES_ARGS) as stream:
        for event in stream:
            if event.type == "content_block_delta":
                kinds.append(event.delta.type)
        final = stream.get_final_message()
    assert "thinking_delta" in kinds and "input_json_delta" in kinds
    assert kinds.index("input_json_delta") > max(i for i, k in enumerate(kinds) if k == "thinking_delta")
    assert [b.type for b in final.content] == ["thinking", "tool_use"]
    assert final.content[0].type == "thinking" and final.content[0].thinking == "".join(THOUGHT)


# -- Converse -------------------------------------------------------------------------------
# reasoningContent in this API's shape is the Bedrock codec's.

def _bedrock(url: str) -> Any:
    return boto3.client("bedrock-runtime", region_name="us-east-1", endpoint_url=url,
                        aws_access_key_id="AKIDEXAMPLE", aws_secret_access_key="dummy-secret",
                        config=Config(retries={"total_max_attempts": 1, "mode": "standard"}, read_timeout=20))


CONVERSE_ARGS: Any = {"modelId": "qwen3", "messages": [{"role": "user", "content": [{"text": "Weather in Paris?"}]}],
                      "toolConfig": {"tools": [{"toolSpec": {"name": "get_weather",
                                                             "inputSchema": {"json": SCHEMA}}}]}}


def test_converse_client_gets_reasoning_content(gateway: tuple[str, list[dict[str, Any]]]) -> None:
    url, _ = gateway
    answer = _bedrock(url).converse(**CONVERSE_ARGS)
    content = answer["output"]["message"]["content"]
    assert [next(iter(b)) for b in content] == ["reasoningContent", "toolUse"]
    assert content[0]["reasoningContent"]["reasoningText"]["text"] == "".join(THOUGHT)
    assert content[1]["toolUse"]["input"] == {"city": "Paris"} and answer["stopReason"] == "tool_use"


def test_converse_client_gets_reasoning_streamed_first(gateway: tuple[str, list[dict[str, Any]]]) -> None:
    url, _ = gateway
    answer = _bedrock(url).converse_stream(**CONVERSE_ARGS)
    order: list[str] = []
    reasoning = ""
    for event in answer["stream"]:
        delta = event.get("contentBlockDelta", {}).get("delta", {})
        if "reasoningContent" in delta:
            reasoning += delta["reasoningContent"].get("text", "")
            order.append("reasoning")
        elif "toolUse" in delta:
            order.append("call")
    assert reasoning == "".join(THOUGHT)
    assert order and order.index("call") > max(i for i, k in enumerate(order) if k == "reasoning")
