"""Anthropic Messages codec: seed examples, validation paths, streams, round-trip properties."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from codec_strategies import ANTHROPIC, requests, responses
from hypothesis import given, settings
from hypothesis import strategies as st

from tooluse.codecs import anthropic as codec
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
    ToolUseBlock,
)
from tooluse.stream import accumulate, events_from_response

SEEDS = Path(__file__).resolve().parents[1] / "fixtures" / "seeds"


#: The seed's image, abbreviated there as "/9j/4AAQSkZJRg...", as a complete tiny JPEG.
TINY_JPEG = "/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAP//////////////////////////////////////////////////////////////////////////////////////wgALCAABAAEBAREA/8QAFBABAAAAAAAAAAAAAAAAAAAAAP/aAAgBAQABPxD/2Q=="


def load(name: str) -> Any:
    return json.loads((SEEDS / name).read_text(encoding="utf-8"))


REQUESTS = sorted(p.name for p in SEEDS.glob("anthropic_request_*.json"))
RESPONSES = sorted(p.name for p in SEEDS.glob("anthropic_response_*.json"))


@pytest.mark.parametrize("name", REQUESTS)
def test_seed_request_round_trips_unchanged(name: str) -> None:
    data = load(name)
    assert codec.encode_request(codec.decode_request(data)) == data


@pytest.mark.parametrize("name", RESPONSES)
def test_seed_response_round_trips(name: str) -> None:
    data = load(name)
    out = codec.encode_response(codec.decode_response(data))
    # The seed's response omits type/usage/stop_sequence; everything it gives is kept.
    assert {k: out[k] for k in data} == data
    assert out["type"] == "message" and "usage" in out


def test_seed_tool_result_variants_decode_to_the_neutral_blocks() -> None:
    def result(name: str) -> ToolResultBlock:
        req = codec.decode_request(load(name))
        block = req.messages[-1].content[0]
        assert isinstance(block, ToolResultBlock)
        return block

    assert result("anthropic_request_tool_result.json").content == [TextBlock(text="15 grados")]
    img = result("anthropic_request_tool_result_image.json")
    assert img.content[1] == ImageBlock(media_type="image/jpeg", data=TINY_JPEG)
    err = result("anthropic_request_tool_result_error.json")
    assert err.is_error and "HTTP 500" in err.text()
    assert result("anthropic_request_tool_result_empty.json").content == []
    assert not result("anthropic_request_tool_result_empty.json").is_error


def test_seed_tool_use_response() -> None:
    resp = codec.decode_response(load("anthropic_response_tool_use.json"))
    assert resp.stop_reason == "tool_use"
    assert resp.tool_uses == [ToolUseBlock(id="toolu_01A09q90qw90lq917835lq9", name="get_weather",
                                           input={"location": "San Francisco, CA", "unit": "celsius"})]


def test_stream_flag() -> None:
    data = load("anthropic_request_get_weather.json")
    assert codec.stream_requested(data) is False
    assert codec.stream_requested({**data, "stream": True}) is True
    codec.decode_request({**data, "stream": True})
    with pytest.raises(WireFormatError) as info:
        codec.stream_requested({**data, "stream": "yes"})
    assert info.value.path == ("stream",)
    with pytest.raises(WireFormatError):
        codec.decode_request({**data, "stream": "yes"})


# --- bad input ---------------------------------------------------------------------------


def _base() -> dict[str, Any]:
    return copy.deepcopy(load("anthropic_request_tool_result.json"))


def _bad(mutate: Any) -> WireFormatError:
    data = _base()
    mutate(data)
    with pytest.raises(WireFormatError) as info:
        codec.decode_request(data)
    return info.value


def _pop(*path: Any) -> Any:
    def f(d: Any) -> None:
        for p in path[:-1]:
            d = d[p]
        del d[path[-1]]
    return f


def _set(value: Any, *path: Any) -> Any:
    def f(d: Any) -> None:
        for p in path[:-1]:
            d = d[p]
        d[path[-1]] = value
    return f


BAD = [
    (_pop("max_tokens"), "max_tokens: Field required"),
    (_pop("model"), "model: Field required"),
    (_pop("messages"), "messages: Field required"),
    (_set("100", "max_tokens"), "max_tokens: Input should be a valid integer"),
    (_set(0, "max_tokens"), "max_tokens: Input should be greater than or equal to 1"),
    (_set(1, "foo"), "foo: Extra inputs are not permitted"),
    (_set(1.5, "temperature"), "temperature: Input should be less than or equal to 1"),
    (_set("math.factorial", "tools", 0, "name"),
     "tools.0.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'"),
    (_set("x" * 65, "tools", 0, "name"), "tools.0.name: String should match pattern"),
    (_pop("tools", 0, "input_schema"), "tools.0.input_schema: Field required"),
    (_set({"type": "array"}, "tools", 0, "input_schema"), "tools.0.input_schema.type: Input should be 'object'"),
    (_set({"type": "object", "anyOf": [{"required": ["a"]}]}, "tools", 0, "input_schema"),
     "tools.0.input_schema.anyOf: input_schema does not support oneOf, allOf, or anyOf"),
    (_set({"type": "object", "properties": {"a": {"type": "nope"}}}, "tools", 0, "input_schema"),
     "tools.0.input_schema.properties.a.type: JSON schema is invalid"),
    (_pop("messages", 2, "content", 0, "tool_use_id"), "messages.2.content.0.tool_use_id: Field required"),
    (_set("toolu_other", "messages", 2, "content", 0, "tool_use_id"),
     "messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_other"),
    (_set([{"type": "text", "text": "no result"}], "messages", 2, "content"),
     "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_01A09q90qw90lq917835lq9"),
    (_set("tool", "messages", 0, "role"), "messages.0.role: Input should be 'user', 'assistant' or 'system'"),
    (_set("video", "messages", 1, "content", 0, "type"),
     "messages.1.content.0.type: Input tag 'video' found using 'type' does not match any of the expected tags"),
    (_pop("messages", 1, "content", 1, "input"), "messages.1.content.1.input: Field required"),
    (_set("bad id!", "messages", 1, "content", 1, "id"), "messages.1.content.1.id: String should match pattern"),
    (_set("", "messages", 1, "content", 0, "text"), "messages.1.content.0.text: text content blocks must be non-empty"),
    (_set([], "messages", 0, "content"), "messages.0: all messages must have non-empty content"),
    (_set({"type": "url"}, "messages", 2, "content", 0, "content"),
     "messages.2.content.0.content: Input should be a valid string or a valid list"),
    (_set([{"type": "image", "source": {"type": "base64", "media_type": "image/bmp", "data": "AA=="}}],
          "messages", 2, "content", 0, "content"),
     "messages.2.content.0.content.0.source.media_type: Input should be"),
    (_set("yes", "messages", 2, "content", 0, "is_error"), "messages.2.content.0.is_error: Input should be a valid boolean"),
    (_set({"type": "tool", "name": "nope"}, "tool_choice"), "tool_choice.name: tool 'nope' named by tool_choice"),
    (_set({"type": "tool"}, "tool_choice"), "tool_choice.name: Field required"),
    (_set({"type": "sometimes"}, "tool_choice"), "tool_choice.type: Input tag 'sometimes'"),
    (_set({"user_id": "u", "x": 1}, "metadata"), "metadata.x: Extra inputs are not permitted"),
    (_set("\n", "stop_sequences"), "stop_sequences: Input should be a valid list"),
    (_set(7, "system"), "system: Input should be a valid string or a valid list"),
    (_set([], "messages"), "messages: at least one message is required"),
]


@pytest.mark.parametrize(("mutate", "expected"), BAD, ids=[e for _, e in BAD])
def test_bad_requests_name_the_field(mutate: Any, expected: str) -> None:
    assert str(_bad(mutate)).startswith(expected)


def test_tool_choice_without_tools() -> None:
    data = load("anthropic_request_get_weather.json")
    del data["tools"]
    data["tool_choice"] = {"type": "any"}
    with pytest.raises(WireFormatError, match="`tool_choice` may only be specified while providing tools"):
        codec.decode_request(data)


def test_duplicate_tool_names() -> None:
    data = load("anthropic_request_get_weather.json")
    data["tools"].append(data["tools"][0])
    with pytest.raises(WireFormatError) as info:
        codec.decode_request(data)
    assert info.value.path == ("tools", 1, "name")


def test_first_message_must_be_user() -> None:
    data = load("anthropic_request_get_weather.json")
    data["messages"].insert(0, {"role": "assistant", "content": "Hola"})
    with pytest.raises(WireFormatError, match='first message must use the "user" role'):
        codec.decode_request(data)


def test_consecutive_same_role_turns_are_merged_like_the_api() -> None:
    data = load("anthropic_request_get_weather.json")
    data["messages"].append({"role": "user", "content": [{"type": "text", "text": "Y en Madrid?"}]})
    req = codec.decode_request(data)
    assert len(req.messages) == 1
    assert [b.text for b in req.messages[0].content] == ["¿Cómo está el clima en San Francisco?", "Y en Madrid?"]


def test_tool_result_in_a_merged_turn_still_answers() -> None:
    data = _base()
    data["messages"].insert(2, {"role": "user", "content": "aquí va"})
    req = codec.decode_request(data)
    assert len(req.messages) == 3
    assert isinstance(req.messages[2].content[1], ToolResultBlock)


def test_tool_use_in_user_message_is_rejected() -> None:
    data = _base()
    data["messages"][0]["content"] = [data["messages"][1]["content"][1]]
    with pytest.raises(WireFormatError) as info:
        codec.decode_request(data)
    assert info.value.path == ("messages", 0, "content", 0, "type")


def test_final_assistant_prefill_may_be_empty_or_partial() -> None:
    data = load("anthropic_request_get_weather.json")
    data["messages"].append({"role": "assistant", "content": "<thinking>"})
    assert codec.decode_request(data).messages[-1].text() == "<thinking>"


# --- encoding: what the Messages API cannot carry -----------------------------------------


def _req(**kw: Any) -> Request:
    base: dict[str, Any] = {"model": "m", "max_tokens": 10, "messages": [Message(role="user", content="hi")]}
    base.update(kw)
    return Request(**base)


def test_json_result_becomes_text() -> None:
    req = _req(messages=[
        Message(role="user", content="q"),
        Message(role="assistant", content=[ToolUseBlock(id="t1", name="f")]),
        Message(role="user", content=[ToolResultBlock(tool_use_id="t1", content=[JsonBlock(value={"a": 1})])]),
    ])
    out = codec.encode_request(req)
    assert out["messages"][2]["content"][0]["content"] == '{"a": 1}'


def test_unsupported_image_type_strict_and_lenient() -> None:
    req = _req(messages=[Message(role="user", content=[ImageBlock(media_type="image/bmp", data="AA==")])])
    with pytest.raises(ConversionError) as info:
        codec.encode_request(req)
    assert info.value.path == ("messages", 0, "content", 0, "media_type")
    out = codec.encode_request(req, strict=False)
    assert out["messages"][0]["content"] == "[image omitted: image/bmp image]"


def test_missing_max_tokens_and_foreign_metadata() -> None:
    with pytest.raises(ConversionError, match="max_tokens"):
        codec.encode_request(_req(max_tokens=None))
    assert codec.encode_request(_req(max_tokens=None), strict=False)["max_tokens"] == 4096
    with pytest.raises(ConversionError, match="metadata"):
        codec.encode_request(_req(metadata={"user_id": "u", "team": "x"}))
    assert codec.encode_request(_req(metadata={"user_id": "u", "team": "x"}), strict=False)["metadata"] == {"user_id": "u"}


def test_tool_choice_encoding() -> None:
    out = codec.encode_request(_req(tool_choice=ToolChoice(type="any", disable_parallel_tool_use=True)))
    assert out["tool_choice"] == {"type": "any", "disable_parallel_tool_use": True}


# --- responses and errors -----------------------------------------------------------------


def test_refusal_maps_to_content_filtered() -> None:
    data = {**load("anthropic_response_stock_answer.json"), "stop_reason": "refusal"}
    resp = codec.decode_response(data)
    assert resp.stop_reason == "content_filtered"
    assert codec.encode_response(resp)["stop_reason"] == "refusal"


def test_bad_response_paths() -> None:
    data = load("anthropic_response_tool_use.json")
    data["content"][1].pop("name")
    with pytest.raises(WireFormatError) as info:
        codec.decode_response(data)
    assert str(info.value) == "content.1.name: Field required"
    with pytest.raises(WireFormatError, match="stop_reason"):
        codec.decode_response({**load("anthropic_response_stock_answer.json"), "stop_reason": "bored"})


def test_error_bodies() -> None:
    status, body = codec.error_body("overloaded", "busy")
    assert status == 529 and body == {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}
    err = codec.backend_error(body, status)
    assert err.kind == "overloaded" and err.message == "busy" and err.retryable


# --- streams ------------------------------------------------------------------------------


def test_stream_shape_matches_the_api() -> None:
    resp = codec.decode_response(load("anthropic_response_tool_use.json"))
    wire = list(codec.encode_events(events_from_response(resp, chunk_size=10)))
    types = [e["type"] for e in wire]
    assert types[0] == "message_start" and types[-2:] == ["message_delta", "message_stop"]
    assert wire[0]["message"]["content"] == [] and "usage" in wire[0]["message"]
    assert "ping" not in types
    starts = [e for e in wire if e["type"] == "content_block_start"]
    assert starts[1]["content_block"] == {"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9",
                                          "name": "get_weather", "input": {}}
    deltas = [e["delta"] for e in wire if e["type"] == "content_block_delta" and e["index"] == 1]
    assert all(d["type"] == "input_json_delta" for d in deltas)
    assert json.loads("".join(d["partial_json"] for d in deltas)) == resp.tool_uses[0].input
    assert wire[-2]["delta"] == {"stop_reason": "tool_use", "stop_sequence": None}


def test_decode_events_skips_ping_and_raises_errors() -> None:
    resp = codec.decode_response(load("anthropic_response_tool_use.json"))
    wire = list(codec.encode_events(events_from_response(resp, chunk_size=3)))
    wire.insert(2, {"type": "ping"})
    assert accumulate(codec.decode_events(wire)) == resp
    as_text = [json.dumps(e) for e in wire]
    assert accumulate(codec.decode_events(as_text)) == resp
    broken = [*wire[:3], {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}]
    with pytest.raises(BackendError) as info:
        list(codec.decode_events(broken))
    assert info.value.kind == "overloaded"


def test_decode_events_rejects_unknown_events() -> None:
    with pytest.raises(WireFormatError) as info:
        list(codec.decode_events([{"type": "message_start", "message": {}}, {"type": "weird"}]))
    assert info.value.path == (1, "type")


# --- properties ---------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(requests(ANTHROPIC))
def test_neutral_request_round_trip(req: Request) -> None:
    wire = codec.encode_request(req)
    assert codec.decode_request(json.loads(json.dumps(wire))) == req


@settings(max_examples=150, deadline=None)
@given(responses(ANTHROPIC))
def test_neutral_response_round_trip(resp: Response) -> None:
    assert codec.decode_response(json.loads(json.dumps(codec.encode_response(resp)))) == resp


@settings(max_examples=100, deadline=None)
@given(responses(ANTHROPIC), st.integers(0, 7))
def test_stream_round_trip(resp: Response, chunk: int) -> None:
    wire = [json.loads(json.dumps(e)) for e in codec.encode_events(events_from_response(resp, chunk_size=chunk))]
    assert accumulate(codec.decode_events(wire)) == resp


def test_citations_null_from_a_response_is_accepted_as_history() -> None:
    """Clients pass response content back unchanged; the API's text blocks carry
    ``citations: null``. A non-empty list cannot be carried and is refused by path."""
    from tooluse.codecs import anthropic as codec
    from tooluse.errors import WireFormatError

    body = {
        "model": "m",
        "max_tokens": 5,
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [{"type": "text", "text": "x", "citations": None}]},
            {"role": "user", "content": "y"},
        ],
    }
    assert codec.decode_request(body).messages[1].text() == "x"
    body["messages"][1]["content"][0]["citations"] = [{"type": "char_location"}]  # type: ignore[index]
    try:
        codec.decode_request(body)
    except WireFormatError as exc:
        assert exc.path == ("messages", 1, "content", 0, "citations")
    else:
        raise AssertionError("non-empty citations must be refused")


def test_deeply_nested_schema_is_a_clear_error_not_a_crash() -> None:
    from tooluse.codecs import anthropic as codec
    from tooluse.errors import WireFormatError

    schema: dict = {"type": "object", "properties": {}}
    node = schema
    for _ in range(3000):
        child: dict = {"type": "object", "properties": {}}
        node["properties"]["a"] = child
        node = child
    body = {
        "model": "m",
        "max_tokens": 5,
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"name": "t", "input_schema": schema}],
    }
    try:
        codec.decode_request(body)
    except WireFormatError as exc:
        assert exc.path == ("tools", 0, "input_schema")
    else:
        raise AssertionError("expected WireFormatError")
