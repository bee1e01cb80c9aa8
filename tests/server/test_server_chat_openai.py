"""The official openai SDK, unchanged except for base_url, against the gateway."""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest

from tooluse.backends.scripted import ScriptedBackend
from tooluse.errors import BackendError
from tooluse.server import ServerThread, create_app

# a real client: a 4xx the policy does not explain fails the test (recording.py)
pytestmark = pytest.mark.client


def oa_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": t["name"], "description": t["description"],
                                               "parameters": t["input_schema"]}} for t in tools]


def client(url: str, key: str = "k") -> openai.OpenAI:
    return openai.OpenAI(base_url=url + "/v1", api_key=key, max_retries=0, timeout=20)


def test_tool_calls_and_tool_result_round_trip(
    server: ServerThread, backend: ScriptedBackend, tools: list[dict[str, Any]]
) -> None:
    c = client(server.url)
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Quito"}]
    first = c.chat.completions.create(model="gpt-test", messages=messages, tools=oa_tools(tools))  # type: ignore[arg-type]
    choice = first.choices[0]
    assert choice.finish_reason == "tool_calls"
    (call,) = choice.message.tool_calls or []
    assert call.function.name == "get_weather"
    assert json.loads(call.function.arguments) == {"location": "Quito", "days": 5}
    assert first.model == "gpt-test"

    messages.append(choice.message.model_dump(exclude_none=True))
    messages.append({"role": "tool", "tool_call_id": call.id, "content": "sunny"})
    second = c.chat.completions.create(model="gpt-test", messages=messages, tools=oa_tools(tools))  # type: ignore[arg-type]
    assert second.choices[0].message.content == "ok: sunny"
    assert second.choices[0].finish_reason == "stop"
    assert backend.requests[-1].messages[-1].tool_results[0].tool_use_id == call.id


@pytest.mark.parametrize(
    ("choice", "names", "neutral"),
    [
        ("auto", ["get_weather"], "auto"),
        ("required", ["get_weather"], "any"),
        ({"type": "function", "function": {"name": "get_time"}}, ["get_time"], "tool"),
        ("none", [], "none"),
    ],
)
def test_tool_choice(server: ServerThread, backend: ScriptedBackend, tools: list[dict[str, Any]],
                     choice: Any, names: list[str], neutral: str) -> None:
    out = client(server.url).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "UTC"}], tools=oa_tools(tools), tool_choice=choice)  # type: ignore[arg-type]
    got = [c.function.name for c in out.choices[0].message.tool_calls or []]
    assert got == names
    assert backend.requests[-1].tool_choice.type == neutral  # type: ignore[union-attr]


def test_parallel_tool_calls_false_keeps_one(server: ServerThread, tools: list[dict[str, Any]]) -> None:
    c = client(server.url)
    two = c.chat.completions.create(model="m", messages=[{"role": "user", "content": "both"}],
                                    tools=oa_tools(tools), tool_choice="required")  # type: ignore[arg-type]
    assert len(two.choices[0].message.tool_calls or []) == 2
    one = c.chat.completions.create(model="m", messages=[{"role": "user", "content": "both"}],
                                    tools=oa_tools(tools), tool_choice="required", parallel_tool_calls=False)  # type: ignore[arg-type]
    assert [t.function.name for t in one.choices[0].message.tool_calls or []] == ["get_weather"]


def test_streaming_tool_calls(server: ServerThread, tools: list[dict[str, Any]]) -> None:
    text = "Reykjavik and both"
    stream = client(server.url).chat.completions.create(
        model="m", messages=[{"role": "user", "content": text}], tools=oa_tools(tools),
        tool_choice="required", stream=True, stream_options={"include_usage": True})  # type: ignore[arg-type]
    args: dict[int, str] = {}
    names: dict[int, str] = {}
    finish = None
    usage = None
    for chunk in stream:
        if chunk.usage is not None:
            usage = chunk.usage
        for choice in chunk.choices:
            finish = choice.finish_reason or finish
            for tc in choice.delta.tool_calls or []:
                if tc.function and tc.function.name:
                    names[tc.index] = tc.function.name
                if tc.function and tc.function.arguments:
                    args[tc.index] = args.get(tc.index, "") + tc.function.arguments
    assert names == {0: "get_weather", 1: "get_time"}
    assert json.loads(args[0]) == {"location": text, "days": len(text)}
    assert json.loads(args[1]) == {"timezone": text}
    assert finish == "tool_calls"
    assert usage is not None and usage.completion_tokens == 5


def test_streaming_text_with_sdk_helper(server: ServerThread) -> None:
    with client(server.url).chat.completions.stream(
        model="m", messages=[{"role": "user", "content": "hello"}]
    ) as stream:
        final = stream.get_final_completion()
    assert final.choices[0].message.content == "echo: hello"


@pytest.mark.provokes_4xx(401, "invalid API key")
@pytest.mark.provokes_4xx(400, "tools.0.function.name")
@pytest.mark.provokes_4xx(429, "slow")
def test_errors_in_openai_shape(tools: list[dict[str, Any]]) -> None:
    backend = ScriptedBackend([BackendError("slow", kind="rate_limit")])
    with ServerThread(create_app(backend, api_keys=["good"])) as srv:
        with pytest.raises(openai.AuthenticationError):
            client(srv.url, "bad").chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
        with pytest.raises(openai.BadRequestError) as info:
            client(srv.url, "good").chat.completions.create(
                model="m", messages=[{"role": "user", "content": "x"}],
                tools=[{"type": "function", "function": {"name": "bad name", "parameters": {"type": "object"}}}])
        body = info.value.body
        assert isinstance(body, dict) and "tools" in body["message"] and body["param"].startswith("tools")
        with pytest.raises(openai.RateLimitError):
            client(srv.url, "good").chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])


def test_error_after_stream_started_reaches_the_sdk() -> None:
    from tooluse.backend import Backend
    from tooluse.messages import TextBlock
    from tooluse.stream import BlockStart, MessageStart, TextDelta

    class Dies(Backend):
        def stream(self, request):  # type: ignore[no-untyped-def]
            yield MessageStart(id="chatcmpl-1", model="m")
            yield BlockStart(index=0, block=TextBlock(text=""))
            yield TextDelta(index=0, text="partial")
            raise BackendError("backend fell over", kind="unavailable")

    with ServerThread(create_app(Dies())) as srv:
        stream = client(srv.url).chat.completions.create(
            model="m", messages=[{"role": "user", "content": "x"}], stream=True)
        got: list[str] = []
        with pytest.raises(openai.APIError) as info:
            for chunk in stream:
                got.extend(c.delta.content or "" for c in chunk.choices)
    assert "".join(got) == "partial"
    assert "backend fell over" in str(info.value)
