"""Every seed example converts between all formats and back; the documented exceptions are
asserted explicitly (an error naming what and where, or the documented fallback)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from codec_strategies import ANTHROPIC, BEDROCK, OPENAI, Caps, responses
from hypothesis import given, settings
from hypothesis import strategies as st

from tooluse.codecs import CODEC_NAMES, JSON_CODECS, get_codec
from tooluse.errors import ConversionError
from tooluse.messages import JsonBlock, Request, Response, TextBlock, ToolResultBlock
from tooluse.stream import accumulate, events_from_response

SEEDS = Path(__file__).resolve().parents[1] / "fixtures" / "seeds"
MODEL_ID = "anthropic.claude-3-sonnet-20240229-v1:0"

SEED_REQUESTS = sorted(p.name for p in SEEDS.glob("*_request_*.json"))
SEED_RESPONSES = sorted(p.name for p in SEEDS.glob("*_response_*.json"))

# (seed, target) pairs the target cannot carry in strict mode, and what the error names.
CANNOT_CARRY = {
    ("anthropic_request_tool_result_error.json", "openai"): ("messages", 2, "content", 0, "is_error"),
    ("anthropic_request_tool_result_invalid_use.json", "openai"): ("messages", 2, "content", 0, "is_error"),
    ("anthropic_request_tool_result_image.json", "openai"): ("messages", 2, "content", 0, "content", 1),
    ("bedrock_request_tool_result_error.json", "openai"): ("messages", 2, "content", 0, "is_error"),
    # The Responses API's function_call_output has no error flag either.
    ("anthropic_request_tool_result_error.json", "responses"): ("messages", 2, "content", 0, "is_error"),
    ("anthropic_request_tool_result_invalid_use.json", "responses"): ("messages", 2, "content", 0, "is_error"),
    ("bedrock_request_tool_result_error.json", "responses"): ("messages", 2, "content", 0, "is_error"),
}


def load(name: str) -> Any:
    return json.loads((SEEDS / name).read_text(encoding="utf-8"))


def source_of(name: str) -> str:
    return name.split("_")[0]


def decode(fmt: str, data: Any) -> Request:
    """Decode a document; a Converse body names no model (it is in the URL), so seeds get one."""
    codec = get_codec(fmt)
    if fmt == "bedrock" and "modelId" not in data:
        return codec.decode_request(data, model_id=MODEL_ID)
    return codec.decode_request(data)


def carried(req: Request, target: str) -> Request:
    """What ``req`` becomes after a trip through ``target`` (the documented conversions)."""
    req = req.model_copy(deep=True)
    if target in ("anthropic", "openai", "responses"):
        # JSON result parts travel as their JSON text.
        for msg in req.messages:
            for block in msg.content:
                if isinstance(block, ToolResultBlock):
                    block.content = [
                        TextBlock(text=json.dumps(p.value, ensure_ascii=False)) if isinstance(p, JsonBlock) else p
                        for p in block.content
                    ]
    return req


def _prepare(req: Request) -> Request:
    # Converse requests may omit maxTokens; the Messages API requires it (documented).
    return req if req.max_tokens is not None else req.model_copy(update={"max_tokens": 1024})


def test_every_codec_is_reachable() -> None:
    assert set(JSON_CODECS) < set(CODEC_NAMES)
    for name in CODEC_NAMES:
        assert hasattr(get_codec(name), "encode_request")
    with pytest.raises(ValueError, match="unknown format"):
        get_codec("xml")


@pytest.mark.parametrize("target", JSON_CODECS)
@pytest.mark.parametrize("name", SEED_REQUESTS)
def test_seed_requests_cross_every_format(name: str, target: str) -> None:
    source = source_of(name)
    neutral = _prepare(decode(source, load(name)))
    codec = get_codec(target)
    if (name, target) in CANNOT_CARRY:
        with pytest.raises(ConversionError) as info:
            codec.encode_request(neutral)
        assert info.value.path == CANNOT_CARRY[(name, target)]
        codec.encode_request(neutral, strict=False)  # the documented fallback works
        return
    wire = json.loads(json.dumps(codec.encode_request(neutral)))
    through = decode(target, wire)
    assert through == carried(neutral, target)
    # ...and back to the source format: the seed document itself.
    back = get_codec(source).encode_request(through)
    if source == "bedrock":
        back.pop("modelId")
        back.pop("inferenceConfig")  # maxTokens added for the Messages API (see _prepare)
    expected = load(name)
    if source == "bedrock" and target != "bedrock":
        expected = json.loads(json.dumps(expected).replace(
            '{"json": {"song": "Elemental Hotel", "artist": "8 Storey Hike"}}',
            '{"text": "{\\"song\\": \\"Elemental Hotel\\", \\"artist\\": \\"8 Storey Hike\\"}"}'))
    assert back == expected


def test_openai_fallbacks_keep_the_error_visible() -> None:
    neutral = decode("anthropic", load("anthropic_request_tool_result_error.json"))
    wire = get_codec("openai").encode_request(neutral, strict=False)
    assert wire["messages"][-1]["content"].startswith("Error: ConnectionError")


def test_bedrock_json_result_into_anthropic_becomes_text() -> None:
    neutral = decode("bedrock", load("bedrock_request_tool_result_json.json"))
    wire = get_codec("anthropic").encode_request(_prepare(neutral))
    assert wire["messages"][2]["content"][0]["content"] == '{"song": "Elemental Hotel", "artist": "8 Storey Hike"}'


def test_errors_cross_as_errors() -> None:
    neutral = decode("bedrock", load("bedrock_request_tool_result_error.json"))
    wire = get_codec("anthropic").encode_request(_prepare(neutral))
    assert wire["messages"][2]["content"][0] == {
        "type": "tool_result", "tool_use_id": "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q",
        "content": "Station WZPA not found.", "is_error": True}


def test_stock_price_conversation_renders_to_legacy() -> None:
    neutral = decode("anthropic", load("anthropic_request_stock_price.json"))
    prompt = get_codec("legacy").encode_request(neutral)
    text = prompt.render()
    assert "<tool_name>get_ticker_symbol</tool_name>" in text
    assert "<company_name>General Motors</company_name>" in text
    assert "GM" in text and "38.50" in text
    assert "</function_calls>" in prompt.stop_sequences


# Responses: what each format carries of a response (Converse has no id or model;
# Chat Completions has one content string and no matched stop sequence).
def response_carried(resp: Response, target: str) -> Response:
    update: dict[str, Any] = {}
    if target == "bedrock":
        update.update(id="", model=None)
    if target in ("openai", "responses"):
        update["stop_sequence"] = None
        if resp.stop_reason == "stop_sequence":
            update["stop_reason"] = "end_turn"
    if target == "responses":
        # A response object always has an id and a model: a source without them (Converse)
        # gets the ones the codec makes.
        update["model"] = resp.model or ""
    return resp.model_copy(update=update)


@pytest.mark.parametrize("target", JSON_CODECS)
@pytest.mark.parametrize("name", SEED_RESPONSES)
def test_seed_responses_cross_every_format(name: str, target: str) -> None:
    source = get_codec(source_of(name))
    neutral = source.decode_response(load(name))
    codec = get_codec(target)
    through = codec.decode_response(json.loads(json.dumps(codec.encode_response(neutral))))
    expected = response_carried(neutral, target)
    if target == "responses" and not neutral.id:
        assert through.id.startswith("resp_")
        expected = expected.model_copy(update={"id": through.id})
    assert through == expected
    out = source.encode_response(through)
    kept = {k: v for k, v in load(name).items() if not (target == "bedrock" and k in ("id", "model"))}
    assert {k: out[k] for k in kept} == kept


def _common(a: Caps, b: Caps) -> Caps:
    """Responses both formats carry fully."""
    return Caps(
        "both",
        response_id=a.response_id and b.response_id,
        response_model=a.response_model and b.response_model,
        response_text_blocks=min(a.response_text_blocks, b.response_text_blocks),
        text_after_tool=a.text_after_tool and b.text_after_tool,
        stop_sequence=a.stop_sequence and b.stop_sequence,
        stop_reasons=tuple(s for s in a.stop_reasons if s in b.stop_reasons),
    )


PAIRS = [(a, b) for a in (ANTHROPIC, BEDROCK, OPENAI) for b in (ANTHROPIC, BEDROCK, OPENAI) if a != b]


@pytest.mark.parametrize(("a", "b"), PAIRS, ids=[f"{a.name}-{b.name}" for a, b in PAIRS])
@settings(max_examples=40, deadline=None)
@given(data=st.data(), chunk=st.integers(0, 5))
def test_streams_translate_between_formats(a: Caps, b: Caps, data: Any, chunk: int) -> None:
    """A stream in format A, re-encoded as format B by way of neutral events (what the
    gateway does), accumulates to the same response."""
    resp = data.draw(responses(_common(a, b)))
    ca, cb = get_codec(a.name), get_codec(b.name)
    wire_a = [json.loads(json.dumps(e)) for e in ca.encode_events(events_from_response(resp, chunk_size=chunk))]
    wire_b = [json.loads(json.dumps(e)) for e in cb.encode_events(ca.decode_events(wire_a))]
    assert accumulate(cb.decode_events(wire_b)) == resp


@pytest.mark.parametrize("fmt", JSON_CODECS)
def test_misplaced_blocks_are_errors_in_every_format(fmt: str) -> None:
    from tooluse.messages import ImageBlock, Message, ToolUseBlock

    codec = get_codec(fmt)
    use_in_user = Request(model="m", max_tokens=5, messages=[
        Message(role="user", content=[ToolUseBlock(id="t1", name="f")])])
    for strict in (True, False):
        with pytest.raises(ConversionError) as info:
            codec.encode_request(use_in_user, strict=strict)
        assert info.value.path == ("messages", 0, "content", 0)
    result_in_assistant = Request(model="m", max_tokens=5, messages=[
        Message(role="user", content="q"), Message(role="assistant", content=[ToolResultBlock(tool_use_id="t1")])])
    with pytest.raises(ConversionError, match="user turn"):
        codec.encode_request(result_in_assistant, strict=False)
    image = Request(model="m", max_tokens=5, messages=[
        Message(role="user", content="q"),
        Message(role="assistant", content=[ImageBlock(media_type="image/png", data="AA==")])])
    with pytest.raises(ConversionError) as info:
        codec.encode_request(image)
    assert info.value.path == ("messages", 1, "content", 0)
    lenient = decode(fmt, json.loads(json.dumps(codec.encode_request(image, strict=False))))
    assert lenient.messages[1].content == [TextBlock(text="[image omitted: image/png image]")]


def test_anthropic_thinking_crosses_converse_and_back() -> None:
    """Claude Code over Bedrock: a Messages tool loop with thinking, through Converse (as the
    gateway sends it to a Bedrock upstream) and back, keeps the thinking setting, each thinking
    block's text and signature and each redacted block's data; an answer with thinking too."""
    import base64

    signature = "EqQBCkgIARABGAIiQOq9Yw7r+/0Xbp3hWq1ZzKc9d2Nn8v1ThinkingSignature=="
    redacted = base64.b64encode(bytes(range(40, 90))).decode()
    body = {
        "model": "claude-sonnet-4-5", "max_tokens": 4096,
        "thinking": {"type": "enabled", "budget_tokens": 2048},
        "tools": [{"name": "get_weather", "input_schema": {"type": "object"}}],
        "messages": [
            {"role": "user", "content": "Weather in Lima?"},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "The user wants Lima's weather.", "signature": signature},
                {"type": "redacted_thinking", "data": redacted},
                {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {"city": "Lima"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01", "content": "18C"}]},
        ],
    }
    anthropic, bedrock = get_codec("anthropic"), get_codec("bedrock")
    converse = json.loads(json.dumps(bedrock.encode_request(anthropic.decode_request(body))))
    back = anthropic.encode_request(bedrock.decode_request(converse))
    assert back["thinking"] == body["thinking"]
    assert back["messages"][1]["content"][:2] == body["messages"][1]["content"][:2]

    answer = {
        "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [{"type": "thinking", "thinking": "Sunny, then.", "signature": signature},
                    {"type": "redacted_thinking", "data": redacted},
                    {"type": "text", "text": "It is sunny in Lima."}],
        "stop_reason": "end_turn", "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 20},
    }
    through = bedrock.decode_response(json.loads(json.dumps(bedrock.encode_response(anthropic.decode_response(answer)))))
    assert anthropic.encode_response(through)["content"] == answer["content"]
