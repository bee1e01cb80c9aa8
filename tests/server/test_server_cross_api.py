"""One conversation through the Messages, Converse and Chat Completions endpoints, each with
its own real SDK, against one scripted backend: same calls, same inputs, and the backend
saw equivalent neutral requests."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import boto3
import openai
from botocore.config import Config

from tooluse.backends.scripted import ScriptedBackend
from tooluse.messages import Request
from tooluse.server import ServerThread

SYSTEM = "You are a weather assistant."
QUESTION = "What's the weather in Tbilisi?"
RESULT = "21 C and clear"


def via_messages(url: str, tools: list[dict[str, Any]]) -> tuple[list[tuple[str, dict[str, Any]]], str]:
    c = anthropic.Anthropic(base_url=url, api_key="k", max_retries=0)
    msgs: list[Any] = [{"role": "user", "content": QUESTION}]
    first = c.messages.create(model="same-model", max_tokens=64, system=SYSTEM, tools=tools,
                              tool_choice={"type": "any"}, messages=msgs)
    calls = [(b.name, b.input) for b in first.content if b.type == "tool_use"]
    ids = [b.id for b in first.content if b.type == "tool_use"]
    msgs += [{"role": "assistant", "content": first.content},
             {"role": "user", "content": [{"type": "tool_result", "tool_use_id": ids[0], "content": RESULT}]}]
    second = c.messages.create(model="same-model", max_tokens=64, system=SYSTEM, tools=tools,
                               tool_choice={"type": "any"}, messages=msgs)
    return calls, second.content[0].text  # type: ignore[union-attr]


def via_converse(url: str, tools: list[dict[str, Any]]) -> tuple[list[tuple[str, dict[str, Any]]], str]:
    c = boto3.client("bedrock-runtime", region_name="us-east-1", endpoint_url=url,
                     aws_access_key_id="AKID", aws_secret_access_key="x",
                     config=Config(retries={"total_max_attempts": 1}))
    config = {"tools": [{"toolSpec": {"name": t["name"], "description": t["description"],
                                      "inputSchema": {"json": t["input_schema"]}}} for t in tools],
              "toolChoice": {"any": {}}}
    msgs: list[Any] = [{"role": "user", "content": [{"text": QUESTION}]}]
    first = c.converse(modelId="same-model", system=[{"text": SYSTEM}], messages=msgs, toolConfig=config,
                       inferenceConfig={"maxTokens": 64})
    uses = [b["toolUse"] for b in first["output"]["message"]["content"] if "toolUse" in b]
    msgs += [first["output"]["message"],
             {"role": "user", "content": [{"toolResult": {"toolUseId": uses[0]["toolUseId"],
                                                          "content": [{"text": RESULT}]}}]}]
    second = c.converse(modelId="same-model", system=[{"text": SYSTEM}], messages=msgs, toolConfig=config,
                        inferenceConfig={"maxTokens": 64})
    return [(u["name"], u["input"]) for u in uses], second["output"]["message"]["content"][0]["text"]


def via_chat(url: str, tools: list[dict[str, Any]]) -> tuple[list[tuple[str, dict[str, Any]]], str]:
    c = openai.OpenAI(base_url=url + "/v1", api_key="k", max_retries=0)
    fns = [{"type": "function", "function": {"name": t["name"], "description": t["description"],
                                             "parameters": t["input_schema"]}} for t in tools]
    msgs: list[Any] = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": QUESTION}]
    first = c.chat.completions.create(model="same-model", max_tokens=64, messages=msgs, tools=fns,  # type: ignore[arg-type]
                                      tool_choice="required")
    message = first.choices[0].message
    calls = [(t.function.name, json.loads(t.function.arguments)) for t in message.tool_calls or []]
    msgs += [message.model_dump(exclude_none=True),
             {"role": "tool", "tool_call_id": (message.tool_calls or [])[0].id, "content": RESULT}]
    second = c.chat.completions.create(model="same-model", max_tokens=64, messages=msgs, tools=fns,  # type: ignore[arg-type]
                                       tool_choice="required")
    return calls, second.choices[0].message.content or ""


def comparable(req: Request) -> dict[str, Any]:
    """The neutral request minus what legitimately differs per API (the call ids)."""
    data = req.model_dump(exclude={"metadata"})
    for message in data["messages"]:
        for block in message["content"]:
            block.pop("id", None)
            block.pop("tool_use_id", None)
    return data


def test_same_conversation_through_all_three_apis(
    server: ServerThread, backend: ScriptedBackend, tools: list[dict[str, Any]]
) -> None:
    results = {
        "messages": via_messages(server.url, tools),
        "converse": via_converse(server.url, tools),
        "chat": via_chat(server.url, tools),
    }
    expected_calls = [("get_weather", {"location": QUESTION, "days": len(QUESTION)})]
    for api, (calls, answer) in results.items():
        assert calls == expected_calls, api
        assert answer == f"ok: {RESULT}", api

    assert len(backend.requests) == 6
    by_api = [backend.requests[0:2], backend.requests[2:4], backend.requests[4:6]]
    for turn in (0, 1):
        seen = [comparable(reqs[turn]) for reqs in by_api]
        assert seen[0] == seen[1] == seen[2], turn
    # and the ids the backend issued came back to it, whichever API carried them
    for reqs in by_api:
        issued = next(b for b in reqs[1].messages[1].content if b.type == "tool_use").id  # type: ignore[union-attr]
        answered = reqs[1].messages[2].tool_results[0].tool_use_id
        assert issued == answered
