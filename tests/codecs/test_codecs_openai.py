"""OpenAI Chat Completions codec: mapping rules, validation, streams, round-trip properties."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from codec_strategies import OPENAI, requests, responses
from hypothesis import given, settings
from hypothesis import strategies as st

from tooluse.codecs import openai as codec
from tooluse.errors import BackendError, ConversionError, WireFormatError
from tooluse.messages import (
    ImageBlock,
    JsonBlock,
    Message,
    Request,
    Response,
    TextBlock,
    ToolChoice,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
    Usage,
)
from tooluse.stream import accumulate, events_from_response

WEATHER = {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]}

CHAT: dict[str, Any] = {
    "model": "gpt-4o",
    "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": [{"type": "text", "text": "Weather in SF and NYC?"},
                                     {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}]},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"location\": \"SF\"}"}},
            {"id": "call_2", "type": "function", "function": {"name": "get_weather", "arguments": "{\"location\": \"NYC\"}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "15 C"},
        {"role": "tool", "tool_call_id": "call_2", "content": [{"type": "text", "text": "20 C"}]},
    ],
    "tools": [{"type": "function", "function": {"name": "get_weather", "description": "Get weather.", "parameters": WEATHER}}],
    "tool_choice": "auto",
    "parallel_tool_calls": False,
    "max_tokens": 100,
    "stop": ["END"],
}


def test_decode_maps_the_tool_conversation() -> None:
    req = codec.decode_request(CHAT)
    assert req.system == [TextBlock(text="Be brief.")]
    assert [m.role for m in req.messages] == ["user", "assistant", "user"]
    assert req.messages[0].content[1] == ImageBlock(media_type="image/png", data="iVBORw0KGgo=")
    assert req.messages[1].tool_uses[1] == ToolUseBlock(id="call_2", name="get_weather", input={"location": "NYC"})
    assert req.messages[2].tool_results == [
        ToolResultBlock(tool_use_id="call_1", content="15 C"), ToolResultBlock(tool_use_id="call_2", content="20 C")]
    assert req.tool_choice == ToolChoice(type="auto", disable_parallel_tool_use=True)
    assert (req.max_tokens, req.stop_sequences) == (100, ["END"])


def test_encode_round_trip_of_a_canonical_body() -> None:
    canonical = copy.deepcopy(CHAT)
    canonical["messages"][4]["content"] = "20 C"  # one text part is written as a string
    assert codec.encode_request(codec.decode_request(CHAT)) == canonical


def test_tool_choice_mapping() -> None:
    base = {k: v for k, v in CHAT.items() if k != "parallel_tool_calls"}
    for wire, neutral in [("required", ToolChoice(type="any")), ("none", ToolChoice(type="none")),
                          ({"type": "function", "function": {"name": "get_weather"}}, ToolChoice(type="tool", name="get_weather"))]:
        req = codec.decode_request({**base, "tool_choice": wire})
        assert req.tool_choice == neutral
        assert codec.encode_request(req)["tool_choice"] == wire


def test_developer_and_late_system_messages_join_the_system() -> None:
    data = copy.deepcopy(CHAT)
    data["messages"].insert(0, {"role": "developer", "content": [{"type": "text", "text": "Dev."}]})
    data["messages"].append({"role": "system", "content": "Late."})
    assert [b.text for b in codec.decode_request(data).system] == ["Dev.", "Be brief.", "Late."]


def test_default_valued_parameters_are_accepted_others_rejected() -> None:
    codec.decode_request({**CHAT, "n": 1, "presence_penalty": 0, "logprobs": False, "stream": True,
                          "stream_options": {"include_usage": True}})
    assert codec.stream_requested({**CHAT, "stream": True})
    with pytest.raises(WireFormatError) as info:
        codec.decode_request({**CHAT, "seed": 4})
    assert info.value.path == ("seed",)
    with pytest.raises(WireFormatError, match="Extra inputs"):
        codec.decode_request({**CHAT, "frobnicate": 1})


def _bad(mutate: Any) -> WireFormatError:
    data = copy.deepcopy(CHAT)
    mutate(data)
    with pytest.raises(WireFormatError) as info:
        codec.decode_request(data)
    return info.value


BAD = [
    (lambda d: d["messages"][2]["tool_calls"][0]["function"].__setitem__("arguments", "{\"location\": "),
     "messages.2.tool_calls.0.function.arguments: arguments are not valid JSON"),
    (lambda d: d["messages"][2]["tool_calls"][0]["function"].__setitem__("arguments", "[1]"),
     "messages.2.tool_calls.0.function.arguments: arguments must be a JSON object"),
    (lambda d: d["messages"][3].pop("tool_call_id"), "messages.3.tool_call_id: Field required"),
    (lambda d: d["messages"][3].__setitem__("tool_call_id", "call_9"), "messages.3: Invalid parameter: messages with role 'tool'"),
    (lambda d: d["messages"].pop(4), "messages.2: An assistant message with 'tool_calls' must be followed by tool messages"),
    (lambda d: d["messages"][1].__setitem__("role", "human"), "messages.1.role: Input tag 'human' found using 'role'"),
    (lambda d: d["tools"][0]["function"].__setitem__("name", "math.factorial"),
     "tools.0.function.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'"),
    (lambda d: d["tools"][0]["function"].__setitem__("parameters", {"type": "array"}),
     "tools.0.function.parameters.type: Input should be 'object'"),
    (lambda d: d.__setitem__("tool_choice", "sometimes"), "tool_choice: Input should be 'auto', 'required' or 'none'"),
    (lambda d: d.__setitem__("tool_choice", {"type": "function", "function": {"name": "nope"}}), "tool_choice.function.name"),
    (lambda d: d.__setitem__("stop", ["a", "b", "c", "d", "e"]), "stop: List should have at most 4 items"),
    (lambda d: d.__setitem__("temperature", 3), "temperature: Input should be less than or equal to 2"),
    (lambda d: d["messages"][1]["content"].append({"type": "input_audio", "input_audio": {}}),
     "messages.1.content.2.type: Input tag 'input_audio'"),
    (lambda d: d.pop("model"), "model: Field required"),
    (lambda d: d.__setitem__("max_completion_tokens", 5), "max_tokens: max_tokens and max_completion_tokens disagree"),
]


@pytest.mark.parametrize(("mutate", "expected"), BAD, ids=[e for _, e in BAD])
def test_bad_requests_name_the_field(mutate: Any, expected: str) -> None:
    assert str(_bad(mutate)).startswith(expected)


def test_error_param_spelling() -> None:
    assert codec.error_param(("messages", 1, "content")) == "messages.[1].content"


# --- encoding: what Chat Completions cannot carry ----------------------------------------------


def _conv(result: ToolResultBlock) -> Request:
    return Request(model="m", tools=[ToolSpec(name="f")], messages=[
        Message(role="user", content="q"),
        Message(role="assistant", content=[TextBlock(text="calling"), ToolUseBlock(id="t1", name="f", input={"a": 1})]),
        Message(role="user", content=[result, TextBlock(text="and then?")]),
    ])


def test_is_error_strict_and_fallback() -> None:
    req = _conv(ToolResultBlock(tool_use_id="t1", content="boom", is_error=True))
    with pytest.raises(ConversionError) as info:
        codec.encode_request(req)
    assert info.value.path == ("messages", 2, "content", 0, "is_error")
    out = codec.encode_request(req, strict=False)
    assert out["messages"][2] == {"role": "tool", "tool_call_id": "t1", "content": "Error: boom"}
    assert out["messages"][3] == {"role": "user", "content": "and then?"}


def test_image_in_tool_result() -> None:
    req = _conv(ToolResultBlock(tool_use_id="t1", content=[ImageBlock(media_type="image/png", data="AA==")]))
    with pytest.raises(ConversionError) as info:
        codec.encode_request(req)
    assert info.value.path == ("messages", 2, "content", 0, "content", 0)
    assert codec.encode_request(req, strict=False)["messages"][2]["content"] == "[image omitted: image/png image]"


def test_json_result_and_top_k() -> None:
    req = _conv(ToolResultBlock(tool_use_id="t1", content=[JsonBlock(value={"t": 15})]))
    assert codec.encode_request(req)["messages"][2]["content"] == '{"t": 15}'
    with pytest.raises(ConversionError, match="top_k"):
        codec.encode_request(req.model_copy(update={"top_k": 3}))
    assert "top_k" not in codec.encode_request(req.model_copy(update={"top_k": 3}), strict=False)


def test_max_completion_tokens_field() -> None:
    req = Request(model="o3", messages=[Message(role="user", content="hi")], max_tokens=50)
    assert codec.encode_request(req, max_tokens_field="max_completion_tokens")["max_completion_tokens"] == 50
    assert codec.decode_request({"model": "o3", "messages": [{"role": "user", "content": "hi"}],
                                 "max_completion_tokens": 50}).max_tokens == 50


# --- responses ---------------------------------------------------------------------------------


COMPLETION = {
    "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-4o",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": None, "refusal": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"location\": \"SF\"}"}}]},
        "logprobs": None, "finish_reason": "tool_calls"}],
    "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
}


def test_response_round_trip() -> None:
    resp = codec.decode_response(COMPLETION)
    assert resp.stop_reason == "tool_use" and resp.usage == Usage(input_tokens=10, output_tokens=5)
    assert codec.encode_response(resp, created=1) == COMPLETION
    bad = copy.deepcopy(COMPLETION)
    bad["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = "{oops"
    with pytest.raises(WireFormatError) as info:
        codec.decode_response(bad)
    assert info.value.path == ("choices", 0, "message", "tool_calls", 0, "function", "arguments")


def test_finish_reasons() -> None:
    for finish, stop in [("stop", "end_turn"), ("length", "max_tokens"), ("content_filter", "content_filtered")]:
        data = copy.deepcopy(COMPLETION)
        data["choices"][0]["finish_reason"] = finish
        assert codec.decode_response(data).stop_reason == stop
    assert codec.encode_response(Response(stop_reason="stop_sequence", stop_sequence="X"))["choices"][0]["finish_reason"] == "stop"


def test_errors() -> None:
    status, body = codec.error_body("invalid_request", "bad", "messages.[0]")
    assert status == 400 and body["error"]["param"] == "messages.[0]"
    assert codec.backend_error(body, 429).kind == "rate_limit"


# --- streams -------------------------------------------------------------------------------------


def test_stream_chunks_look_like_openai() -> None:
    resp = Response(id="c1", model="gpt", content=[TextBlock(text="Checking."), ToolUseBlock(id="call_1", name="f", input={"a": [1, 2]})],
                    stop_reason="tool_use", usage=Usage(input_tokens=3, output_tokens=4))
    wire = list(codec.encode_events(events_from_response(resp, chunk_size=3), created=7))
    assert wire[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert all(c["object"] == "chat.completion.chunk" for c in wire)
    first_call = next(c for c in wire if "tool_calls" in c["choices"][0]["delta"])
    assert first_call["choices"][0]["delta"]["tool_calls"][0] == {
        "index": 0, "id": "call_1", "type": "function", "function": {"name": "f", "arguments": ""}}
    assert wire[-2]["choices"][0]["finish_reason"] == "tool_calls"
    assert wire[-1]["choices"] == [] and wire[-1]["usage"]["total_tokens"] == 7
    as_sse = [json.dumps(c) for c in wire] + ["[DONE]"]
    assert accumulate(codec.decode_events(as_sse)) == resp


def test_stream_tolerates_servers_that_repeat_ids() -> None:
    chunks = [
        {"id": "x", "model": "m", "choices": [{"index": 0, "delta": {"role": "assistant"}}]},
        {"id": "x", "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "c", "type": "function", "function": {"name": "f", "arguments": "{\"a\""}}]}}]},
        {"id": "x", "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "c", "function": {"arguments": ": 1}"}}]}}]},
        {"id": "x", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    ]
    resp = accumulate(codec.decode_events(chunks))
    assert resp.tool_uses == [ToolUseBlock(id="c", name="f", input={"a": 1})] and resp.stop_reason == "tool_use"


def test_stream_error_chunk() -> None:
    with pytest.raises(BackendError):
        list(codec.decode_events([{"error": {"message": "overloaded", "type": "server_error"}}]))


# --- properties ------------------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(requests(OPENAI))
def test_neutral_request_round_trip(req: Request) -> None:
    wire = codec.encode_request(req)
    assert codec.decode_request(json.loads(json.dumps(wire))) == req


@settings(max_examples=150, deadline=None)
@given(responses(OPENAI))
def test_neutral_response_round_trip(resp: Response) -> None:
    assert codec.decode_response(json.loads(json.dumps(codec.encode_response(resp)))) == resp


@settings(max_examples=100, deadline=None)
@given(responses(OPENAI), st.integers(0, 7))
def test_stream_round_trip(resp: Response, chunk: int) -> None:
    wire = [json.loads(json.dumps(c)) for c in codec.encode_events(events_from_response(resp, chunk_size=chunk))]
    assert accumulate(codec.decode_events(wire)) == resp
