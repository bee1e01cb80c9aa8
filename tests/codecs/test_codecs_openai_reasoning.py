"""Chat Completions reasoning: ``reasoning_content`` / Ollama's ``reasoning`` on
assistant messages and in stream deltas <-> thinking blocks, ``reasoning_effort`` <->
``Request.reasoning``, and what the format cannot hold (signatures, redacted blocks, a
budget): refused in strict mode, otherwise left out with a log line."""

from __future__ import annotations

import copy
import json
import logging
from typing import Any

import pytest

from tooluse.codecs import openai as codec
from tooluse.errors import ConversionError, WireFormatError
from tooluse.messages import (
    Message,
    Reasoning,
    RedactedThinkingBlock,
    Request,
    Response,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    Usage,
)
from tooluse.stream import (
    BlockStart,
    BlockStop,
    TextDelta,
    ThinkingDelta,
    accumulate,
    events_from_response,
)

CALL = {"id": "call_1", "type": "function",
        "function": {"name": "get_weather", "arguments": "{\"location\": \"SF\"}"}}
TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "parameters": {"type": "object", "properties": {"location": {"type": "string"}}}}}]
BODY: dict[str, Any] = {
    "model": "qwen3",
    "messages": [
        {"role": "user", "content": "Weather in SF?"},
        {"role": "assistant", "content": None, "reasoning_content": "SF means San Francisco.",
         "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "call_1", "content": "15 C"},
    ],
    "tools": TOOLS,
    "reasoning_effort": "high",
}


def _loss_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "tooluse.codecs"]


def test_history_reasoning_is_a_thinking_block_before_the_calls() -> None:
    req = codec.decode_request(BODY)
    assert req.messages[1].content == [
        ThinkingBlock(text="SF means San Francisco."),
        ToolUseBlock(id="call_1", name="get_weather", input={"location": "SF"}),
    ]
    assert req.reasoning == Reasoning(mode="enabled", effort="high")


def test_chat_to_neutral_to_chat_is_byte_exact() -> None:
    wire = codec.encode_request(codec.decode_request(BODY))
    assert json.dumps(wire, sort_keys=True) == json.dumps(BODY, sort_keys=True)


def test_ollama_reasoning_field_is_read_too() -> None:
    body = copy.deepcopy(BODY)
    message = body["messages"][1]
    message["reasoning"] = message.pop("reasoning_content")
    assert codec.decode_request(body).messages[1].thinking == [ThinkingBlock(text="SF means San Francisco.")]
    # Written back in the field the gateway writes.
    assert codec.encode_request(codec.decode_request(body))["messages"][1]["reasoning_content"] == (
        "SF means San Francisco.")


def test_both_reasoning_fields_must_agree() -> None:
    body = copy.deepcopy(BODY)
    body["messages"][1]["reasoning"] = "SF means San Francisco."  # vLLM's transition: both
    assert len(codec.decode_request(body).messages[1].thinking) == 1
    body["messages"][1]["reasoning"] = "something else"
    with pytest.raises(WireFormatError, match="disagree") as info:
        codec.decode_request(body)
    assert info.value.path == ("messages", 1, "reasoning")


def test_reasoning_must_be_text() -> None:
    body = copy.deepcopy(BODY)
    body["messages"][1]["reasoning_content"] = {"text": "x"}
    with pytest.raises(WireFormatError) as info:
        codec.decode_request(body)
    assert info.value.path[:3] == ("messages", 1, "reasoning_content")


@pytest.mark.parametrize("effort", ["none", "minimal", "low", "medium", "high", "xhigh"])
def test_each_effort_round_trips(effort: str) -> None:
    req = codec.decode_request({**BODY, "reasoning_effort": effort})
    assert req.reasoning is not None and req.reasoning.effort == effort
    assert req.reasoning.on is (effort != "none")
    assert codec.encode_request(req)["reasoning_effort"] == effort


def test_an_unknown_effort_is_refused_naming_the_field() -> None:
    with pytest.raises(WireFormatError, match="'minimal'") as info:
        codec.decode_request({**BODY, "reasoning_effort": "maximum"})
    assert info.value.path == ("reasoning_effort",)


def _signed_history(**reasoning: Any) -> Request:
    return Request(
        model="m",
        messages=[
            Message(role="user", content=[TextBlock(text="hi")]),
            Message(role="assistant", content=[
                ThinkingBlock(text="first", signature="EqQBCkYI"),
                RedactedThinkingBlock(data="EmwKAhgB"),
                ThinkingBlock(text="", summary=["second", "third"]),
                TextBlock(text="hello"),
            ]),
            Message(role="user", content=[TextBlock(text="again")]),
        ],
        reasoning=Reasoning(**reasoning) if reasoning else None,
    )


def test_strict_refuses_a_signature_naming_where_it_is() -> None:
    with pytest.raises(ConversionError, match="signature") as info:
        codec.encode_request(_signed_history())
    assert info.value.path == ("messages", 1, "content", 0, "signature")


def test_strict_refuses_a_redacted_block() -> None:
    req = _signed_history()
    req.messages[1].content[0] = ThinkingBlock(text="first")
    with pytest.raises(ConversionError, match="redacted") as info:
        codec.encode_request(req)
    assert info.value.path == ("messages", 1, "content", 1)


def test_lenient_keeps_the_text_and_logs_each_loss(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="tooluse.codecs")
    wire = codec.encode_request(_signed_history(), strict=False)
    assert wire["messages"][1] == {"role": "assistant", "content": "hello",
                                   "reasoning_content": "first\n\nsecond\n\nthird"}
    lines = _loss_lines(caplog)
    assert len(lines) == 2
    assert "signature" in lines[0] and "messages.1.content.0.signature" in lines[0]
    assert "redacted" in lines[1] and "messages.1.content.1" in lines[1]


def test_a_thinking_block_in_a_user_turn_is_not_lost_silently(caplog: pytest.LogCaptureFixture) -> None:
    req = Request(model="m", messages=[Message(role="user", content=[
        TextBlock(text="hi"), ThinkingBlock(text="odd")])])
    with pytest.raises(ConversionError):
        codec.encode_request(req)
    caplog.set_level(logging.INFO, logger="tooluse.codecs")
    assert codec.encode_request(req, strict=False)["messages"] == [{"role": "user", "content": "hi"}]
    assert any("user message cannot carry a thinking block" in line for line in _loss_lines(caplog))


def test_only_an_effort_is_forwarded(caplog: pytest.LogCaptureFixture) -> None:
    req = Request(model="m", messages=[Message(role="user", content=[TextBlock(text="hi")])],
                  reasoning=Reasoning(mode="enabled", budget_tokens=2048, effort="low"))
    with pytest.raises(ConversionError, match="budget_tokens") as info:
        codec.encode_request(req)
    assert info.value.path == ("reasoning", "budget_tokens")
    caplog.set_level(logging.INFO, logger="tooluse.codecs")
    assert codec.encode_request(req, strict=False)["reasoning_effort"] == "low"
    assert len(_loss_lines(caplog)) == 1


@pytest.mark.parametrize("reasoning, forwarded, lost", [
    (Reasoning(mode="adaptive"), {}, 0),  # the model decides: Chat's default
    (Reasoning(mode="enabled", budget_tokens=4096), {}, 1),  # a budget has no field
    (Reasoning(mode="disabled"), {}, 1),  # no effort to say "off" with
    (Reasoning(mode="enabled", effort="medium", summary="auto", display="omitted"),
     {"reasoning_effort": "medium"}, 2),
])
def test_settings_without_a_chat_field(reasoning: Reasoning, forwarded: dict[str, Any], lost: int,
                                       caplog: pytest.LogCaptureFixture) -> None:
    req = Request(model="m", messages=[Message(role="user", content=[TextBlock(text="hi")])],
                  reasoning=reasoning)
    caplog.set_level(logging.INFO, logger="tooluse.codecs")
    wire = codec.encode_request(req, strict=False)
    assert {k: v for k, v in wire.items() if k.startswith("reasoning")} == forwarded
    assert len(_loss_lines(caplog)) == lost
    if lost:
        with pytest.raises(ConversionError):
            codec.encode_request(req)
    else:
        codec.encode_request(req)


def _completion(message: dict[str, Any]) -> dict[str, Any]:
    return {"id": "chatcmpl-1", "model": "qwen3", "choices": [
        {"index": 0, "message": {"role": "assistant", **message}, "finish_reason": "tool_calls"}]}


@pytest.mark.parametrize("message", [
    {"reasoning_content": "think", "content": None, "tool_calls": [CALL]},  # vLLM < 0.11, DeepSeek
    {"reasoning": "think", "content": None, "tool_calls": [CALL]},  # Ollama, vLLM >= 0.11
    {"reasoning_content": "think", "reasoning": "think", "content": None, "tool_calls": [CALL]},
])
def test_a_servers_reasoning_is_a_thinking_block_first(message: dict[str, Any]) -> None:
    resp = codec.decode_response(_completion(message))
    assert resp.content == [ThinkingBlock(text="think"),
                            ToolUseBlock(id="call_1", name="get_weather", input={"location": "SF"})]


def test_a_routers_reasoning_object_is_not_the_text() -> None:
    resp = codec.decode_response(_completion({"content": "hi", "reasoning": {"effort": "low"}}))
    assert resp.content == [TextBlock(text="hi")]


def test_response_round_trip_and_signature_log(caplog: pytest.LogCaptureFixture) -> None:
    resp = Response(id="r", model="m", stop_reason="tool_use", content=[
        ThinkingBlock(text="think"), TextBlock(text="ok"),
        ToolUseBlock(id="call_1", name="get_weather", input={"location": "SF"})])
    out = codec.encode_response(resp, created=1)
    assert out["choices"][0]["message"]["reasoning_content"] == "think"
    assert codec.decode_response(out) == resp
    caplog.set_level(logging.INFO, logger="tooluse.codecs")
    signed = resp.model_copy(update={"content": [ThinkingBlock(text="think", signature="sig"),
                                                 *resp.content[1:]]})
    assert codec.encode_response(signed, created=1) == out  # never refused, the proof left out
    assert len(_loss_lines(caplog)) == 1


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"id": "c1", "model": "qwen3",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_a_vllm_stream_reasoning_then_calls(field: str) -> None:
    chunks = [
        _chunk({"role": "assistant", "content": ""}),
        _chunk({field: "SF is "}), _chunk({field: "San Francisco."}),
        _chunk({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                                "function": {"name": "get_weather", "arguments": ""}}]}),
        _chunk({"tool_calls": [{"index": 0, "function": {"arguments": "{\"location\": \"SF\"}"}}]}),
        _chunk({}, "tool_calls"),
        "[DONE]",
    ]
    events = list(codec.decode_events(chunks))
    kinds = [type(e).__name__ for e in events[1:6]]
    assert kinds == ["BlockStart", "ThinkingDelta", "ThinkingDelta", "BlockStop", "BlockStart"]
    assert isinstance(events[1], BlockStart) and events[1].block == ThinkingBlock()
    resp = accumulate(iter(events))
    assert resp.content == [ThinkingBlock(text="SF is San Francisco."),
                            ToolUseBlock(id="call_1", name="get_weather", input={"location": "SF"})]


def test_reasoning_and_text_in_one_delta_keep_their_order() -> None:
    events = list(codec.decode_events([_chunk({"reasoning_content": "a", "content": "b"}),
                                       _chunk({"reasoning_content": "c"}), _chunk({}, "stop")]))
    body = [e for e in events if isinstance(e, (ThinkingDelta, TextDelta, BlockStart, BlockStop))]
    assert [(type(e).__name__, getattr(e, "index", None)) for e in body] == [
        ("BlockStart", 0), ("ThinkingDelta", 0), ("BlockStop", 0), ("BlockStart", 1),
        ("TextDelta", 1), ("BlockStop", 1), ("BlockStart", 2), ("ThinkingDelta", 2), ("BlockStop", 2)]


@pytest.mark.parametrize("chunk_size", [0, 1, 3])
def test_stream_encoding_matches_the_whole_message(chunk_size: int,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="tooluse.codecs")
    resp = Response(id="r", model="m", stop_reason="tool_use", usage=Usage(input_tokens=3), content=[
        ThinkingBlock(text="one", signature="sig"), RedactedThinkingBlock(data="opaque"),
        ThinkingBlock(summary=["two", "", "three"]), TextBlock(text="ok"),
        ToolUseBlock(id="call_1", name="get_weather", input={"location": "SF"})])
    chunks = list(codec.encode_events(events_from_response(resp, chunk_size=chunk_size), created=1))
    streamed = "".join(c["choices"][0]["delta"].get("reasoning_content", "")
                       for c in chunks if c["choices"])
    whole = codec.encode_response(resp, created=1)["choices"][0]["message"]["reasoning_content"]
    assert streamed == whole == "one\n\ntwo\n\nthree"
    # Every reasoning chunk comes before the answer's.
    kinds = [next(iter(c["choices"][0]["delta"])) for c in chunks[1:] if c["choices"] and c["choices"][0]["delta"]]
    assert kinds.index("content") > max(i for i, k in enumerate(kinds) if k == "reasoning_content")
    lines = _loss_lines(caplog)
    assert sum("signature" in line for line in lines) == 2  # once by the stream, once by the whole
    assert sum("redacted" in line for line in lines) == 2
    back = accumulate(codec.decode_events(json.loads(json.dumps(chunks))))
    assert back.content[0] == ThinkingBlock(text="one\n\ntwo\n\nthree")
    assert back.content[1:] == resp.content[3:]


def test_tool_input_after_reasoning_in_a_stream_is_an_error_not_a_wrong_call() -> None:
    chunks = [
        _chunk({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                                "function": {"name": "get_weather", "arguments": "{"}}]}),
        _chunk({"reasoning_content": "wait"}),
        _chunk({"tool_calls": [{"index": 0, "function": {"arguments": "}"}}]}),
    ]
    with pytest.raises(WireFormatError, match="after another block began"):
        list(codec.decode_events(chunks))
