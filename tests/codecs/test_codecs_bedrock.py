"""Bedrock Converse codec: seed examples, validation, botocore's own model, streams."""

from __future__ import annotations

import base64
import copy
import json
from pathlib import Path
from typing import Any

import botocore.session
import pytest
from botocore.validate import ParamValidator
from codec_strategies import BEDROCK, requests, responses
from hypothesis import given, settings
from hypothesis import strategies as st

from tooluse.codecs import bedrock as codec
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
)
from tooluse.stream import accumulate, events_from_response

SEEDS = Path(__file__).resolve().parents[1] / "fixtures" / "seeds"
_MODEL = botocore.session.get_session().get_service_model("bedrock-runtime")


def load(name: str) -> Any:
    return json.loads((SEEDS / name).read_text(encoding="utf-8"))


def botocore_accepts(params: dict[str, Any], operation: str = "Converse") -> None:
    """botocore's parameter validator, from the service model of the real API."""
    report = ParamValidator().validate(params, _MODEL.operation_model(operation).input_shape)
    assert not report.has_errors(), report.generate_report()


REQUESTS = sorted(p.name for p in SEEDS.glob("bedrock_request_*.json"))
RESPONSES = sorted(p.name for p in SEEDS.glob("bedrock_response_*.json"))


@pytest.mark.parametrize("name", REQUESTS)
def test_seed_request_round_trips_unchanged(name: str) -> None:
    data = load(name)
    assert codec.encode_request(codec.decode_request(data)) == data
    botocore_accepts({"modelId": "anthropic.claude-3-sonnet-20240229-v1:0", **data})


@pytest.mark.parametrize("name", RESPONSES)
def test_seed_response_round_trips(name: str) -> None:
    data = load(name)
    out = codec.encode_response(codec.decode_response(data))
    assert {k: out[k] for k in data} == data
    assert out["usage"] == {"inputTokens": 0, "outputTokens": 0, "totalTokens": 0}


def test_seed_contents() -> None:
    req = codec.decode_request(load("bedrock_request_tool_result_json.json"), model_id="m1")
    assert req.model == "m1"
    result = req.messages[2].content[0]
    assert isinstance(result, ToolResultBlock)
    assert result.content == [JsonBlock(value={"song": "Elemental Hotel", "artist": "8 Storey Hike"})]
    err = codec.decode_request(load("bedrock_request_tool_result_error.json")).messages[2].content[0]
    assert isinstance(err, ToolResultBlock) and err.is_error and err.text() == "Station WZPA not found."
    forced = codec.decode_request(load("bedrock_request_top_song_forced.json"))
    assert forced.tool_choice == ToolChoice(type="tool", name="top_song")
    resp = codec.decode_response(load("bedrock_response_tool_use.json"))
    assert resp.stop_reason == "tool_use"
    assert resp.tool_uses == [ToolUseBlock(id="tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", name="top_song", input={"sign": "WZPZ"})]


def test_model_id_and_boto3_style_bytes() -> None:
    raw = b"\x89PNG\r\n\x1a\n"
    data = {"modelId": "m2", "messages": [{"role": "user", "content": [
        {"image": {"format": "png", "source": {"bytes": raw}}}, {"text": "describe"}]}]}
    req = codec.decode_request(data)
    assert req.model == "m2"
    assert req.messages[0].content[0] == ImageBlock(media_type="image/png", data=base64.b64encode(raw).decode())
    assert codec.encode_request(req, binary=True)["messages"][0]["content"][0]["image"]["source"]["bytes"] == raw
    assert codec.decode_request(data, model_id="url-model").model == "url-model"


# --- bad input ---------------------------------------------------------------------------


def _bad(name: str, mutate: Any) -> WireFormatError:
    data = copy.deepcopy(load(name))
    mutate(data)
    with pytest.raises(WireFormatError) as info:
        codec.decode_request(data)
    return info.value


def _set(value: Any, *path: Any) -> Any:
    def f(d: Any) -> None:
        for p in path[:-1]:
            d = d[p]
        d[path[-1]] = value
    return f


def _pop(*path: Any) -> Any:
    def f(d: Any) -> None:
        for p in path[:-1]:
            d = d[p]
        del d[path[-1]]
    return f


R = "bedrock_request_tool_result_json.json"
BAD = [
    (_pop("messages"), "messages: Field required"),
    (_set(1, "foo"), "foo: Extra inputs are not permitted"),
    (_set({"maxTokens": 0}, "inferenceConfig"), "inferenceConfig.maxTokens: Input should be greater than or equal to 1"),
    (_set({"topK": 3}, "inferenceConfig"), "inferenceConfig.topK: Extra inputs are not permitted"),
    (_pop("toolConfig"), "toolConfig: The toolConfig field must be defined when using toolUse and toolResult"),
    (_set("math.factorial", "toolConfig", "tools", 0, "toolSpec", "name"),
     "toolConfig.tools.0.toolSpec.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'"),
    (_set({"type": "object"}, "toolConfig", "tools", 0, "toolSpec", "inputSchema"),
     "toolConfig.tools.0.toolSpec.inputSchema.type: ToolInputSchema member 'type' is not supported"),
    (_set({"json": {"type": "string"}}, "toolConfig", "tools", 0, "toolSpec", "inputSchema"),
     "toolConfig.tools.0.toolSpec.inputSchema.json.type: Input should be 'object'"),
    (_set({"none": {}}, "toolConfig", "toolChoice"), "toolConfig.toolChoice.none: ToolChoice member 'none' is not supported"),
    (_set({"tool": {"name": "other"}}, "toolConfig", "toolChoice"), "toolConfig.toolChoice.tool.name: The tool other"),
    (_set("assistant", "messages", 0, "role"), "messages.0.role: A conversation must start with a user message"),
    (_set("user", "messages", 1, "role"), "messages.1.content.0.toolUse: toolUse blocks are not allowed in user messages"),
    (_set([], "messages", 0, "content"), "messages.0.content: The content field in the Message object at messages.0 is empty"),
    (_set([{"text": " "}], "messages", 0, "content"), "messages.0.content.0.text: The text field in the ContentBlock object"),
    (_set([{"text": "a", "image": {}}], "messages", 0, "content"), "messages.0.content.0: ContentBlock must hold exactly one of"),
    (_set([{"video": {}}], "messages", 0, "content"), "messages.0.content.0.video: ContentBlock member 'video' is not supported"),
    (_pop("messages", 2, "content", 0, "toolResult", "toolUseId"), "messages.2.content.0.toolResult.toolUseId: Field required"),
    (_set("nope", "messages", 2, "content", 0, "toolResult", "toolUseId"),
     "messages.2.content.0: The toolResult block's toolUseId nope does not match"),
    (_set("failed", "messages", 2, "content", 0, "toolResult", "status"),
     "messages.2.content.0.toolResult.status: Input should be 'success' or 'error'"),
    (_set([{"xml": "<a/>"}], "messages", 2, "content", 0, "toolResult", "content"),
     "messages.2.content.0.toolResult.content.0.xml: ToolResultContentBlock member 'xml' is not supported"),
    (_set([{"text": "thanks"}], "messages", 2, "content"),
     "messages.1: Expected toolResult blocks in the next message for the following Ids: tooluse_kZJMlvQmRJ6eAyJE5GIl7Q"),
    (_set("bad id!", "messages", 1, "content", 0, "toolUse", "toolUseId"),
     "messages.1.content.0.toolUse.toolUseId: String should match pattern '^[a-zA-Z0-9_.:-]{1,64}$'"),
    (_set("x" * 65, "messages", 1, "content", 0, "toolUse", "name"),
     "messages.1.content.0.toolUse.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'"),
    (_set([1, 2], "messages", 1, "content", 0, "toolUse", "input"), "messages.1.content.0.toolUse.input: toolUse input must be a JSON object"),
    (_set({"image": {"format": "bmp", "source": {"bytes": "AA=="}}}, "messages", 2, "content", 0, "toolResult", "content", 0),
     "messages.2.content.0.toolResult.content.0.image.format: Input should be 'png', 'jpeg', 'gif' or 'webp'"),
    (_set({"top_k": -1, "thinking": {}}, "additionalModelRequestFields"), "additionalModelRequestFields.top_k: Input should be greater than or equal to 0"),
]


@pytest.mark.parametrize(("mutate", "expected"), BAD, ids=[e for _, e in BAD])
def test_bad_requests_name_the_field(mutate: Any, expected: str) -> None:
    assert str(_bad(R, mutate)).startswith(expected)


def test_roles_must_alternate() -> None:
    data = load("bedrock_request_top_song.json")
    data["messages"].append({"role": "user", "content": [{"text": "again"}]})
    with pytest.raises(WireFormatError, match="must alternate") as info:
        codec.decode_request(data)
    assert info.value.path == ("messages", 1, "role")


# --- encoding: what Converse cannot carry -------------------------------------------------


def _req(**kw: Any) -> Request:
    base: dict[str, Any] = {"model": "m", "messages": [Message(role="user", content="hi")],
                            "tools": [ToolSpec(name="f")]}
    base.update(kw)
    return Request(**base)


def test_none_tool_choice() -> None:
    req = _req(tool_choice=ToolChoice(type="none"))
    with pytest.raises(ConversionError) as info:
        codec.encode_request(req)
    assert info.value.path == ("tool_choice", "type") and "none" in str(info.value)
    assert "toolConfig" not in codec.encode_request(req, strict=False)
    history = _req(tool_choice=ToolChoice(type="none"), messages=[
        Message(role="user", content="q"),
        Message(role="assistant", content=[ToolUseBlock(id="t1", name="f")]),
        Message(role="user", content=[ToolResultBlock(tool_use_id="t1")]),
    ])
    out = codec.encode_request(history, strict=False)
    assert out["toolConfig"] == {"tools": [{"toolSpec": {"name": "f", "inputSchema": {"json": {"type": "object"}}}}]}


def test_disable_parallel_and_url_images() -> None:
    req = _req(tool_choice=ToolChoice(type="any", disable_parallel_tool_use=True))
    with pytest.raises(ConversionError, match="parallel"):
        codec.encode_request(req)
    assert codec.encode_request(req, strict=False)["toolConfig"]["toolChoice"] == {"any": {}}
    url = _req(messages=[Message(role="user", content=[ImageBlock(url="https://x/y.png")])])
    with pytest.raises(ConversionError) as info:
        codec.encode_request(url)
    assert info.value.path == ("messages", 0, "content", 0, "url")
    assert codec.encode_request(url, strict=False)["messages"][0]["content"] == [{"text": "[image omitted: https://x/y.png]"}]


def test_history_without_tools() -> None:
    req = _req(tools=[], messages=[
        Message(role="user", content="q"),
        Message(role="assistant", content=[ToolUseBlock(id="t1", name="g", input={"a": 1})]),
        Message(role="user", content=[ToolResultBlock(tool_use_id="t1", content="r", is_error=True)]),
    ])
    with pytest.raises(ConversionError, match="toolConfig"):
        codec.encode_request(req)
    out = codec.encode_request(req, strict=False)
    assert out["toolConfig"]["tools"][0]["toolSpec"]["name"] == "g"
    assert out["messages"][2]["content"][0]["toolResult"]["status"] == "error"
    codec.decode_request(out)


def test_consecutive_roles_are_merged_on_encode() -> None:
    req = _req(messages=[Message(role="user", content="a"), Message(role="user", content="b")])
    assert codec.encode_request(req)["messages"] == [{"role": "user", "content": [{"text": "a"}, {"text": "b"}]}]


def test_top_k_and_metadata_travel() -> None:
    req = _req(top_k=5, metadata={"user_id": "u1"}, stop_sequences=["</x>"], max_tokens=9)
    out = codec.encode_request(req)
    assert out["additionalModelRequestFields"] == {"top_k": 5}
    assert out["requestMetadata"] == {"user_id": "u1"}
    assert out["inferenceConfig"] == {"maxTokens": 9, "stopSequences": ["</x>"]}
    assert codec.decode_request(out) == req


# --- responses, errors --------------------------------------------------------------------


def test_response_mappings() -> None:
    data = load("bedrock_response_final.json")
    assert codec.decode_response({**data, "stopReason": "guardrail_intervened"}).stop_reason == "content_filtered"
    resp = codec.decode_response({**data, "stopReason": "stop_sequence",
                                  "additionalModelResponseFields": {"stop_sequence": "</function_calls>"},
                                  "ResponseMetadata": {"RequestId": "req-1"}, "usage": {"inputTokens": 3, "outputTokens": 4, "totalTokens": 7}})
    assert (resp.stop_sequence, resp.id, resp.usage.input_tokens) == ("</function_calls>", "req-1", 3)
    with pytest.raises(BackendError):
        codec.decode_response({**data, "stopReason": "malformed_tool_use"})
    with pytest.raises(WireFormatError) as info:
        codec.decode_response({"output": {"message": {"role": "assistant", "content": [{"toolUse": {"name": "x"}}]}}})
    assert str(info.value) == "output.message.content.0.toolUse.toolUseId: Field required"


def test_error_mapping() -> None:
    assert codec.error_body("rate_limit", "slow down") == (429, "ThrottlingException", {"message": "slow down"})
    err = codec.backend_error("ValidationException:http://internal.amazon.com/", "bad", 400)
    assert err.kind == "invalid_request"
    assert codec.backend_error("ThrottlingException", "x").retryable


# --- streams ------------------------------------------------------------------------------


def test_stream_shape_like_boto3() -> None:
    resp = Response(content=[TextBlock(text="Let me check."), ToolUseBlock(id="t1", name="top_song", input={"sign": "WZPZ"})],
                    stop_reason="tool_use")
    wire = list(codec.encode_events(events_from_response(resp, chunk_size=4)))
    assert wire[0] == {"messageStart": {"role": "assistant"}}
    starts = [e for e in wire if "contentBlockStart" in e]
    assert starts == [{"contentBlockStart": {"contentBlockIndex": 1, "start": {"toolUse": {"toolUseId": "t1", "name": "top_song"}}}}]
    assert wire[-2] == {"messageStop": {"stopReason": "tool_use"}}
    assert set(wire[-1]["metadata"]) == {"usage", "metrics"}
    # every event is a member of botocore's ConverseStreamOutput union
    members = _MODEL.operation_model("ConverseStream").output_shape.members["stream"].members
    assert all(len(e) == 1 and next(iter(e)) in members for e in wire)
    decoded = list(codec.decode_events(wire))
    assert accumulate(decoded) == resp


def test_stream_exception_event() -> None:
    with pytest.raises(BackendError) as info:
        list(codec.decode_events([{"messageStart": {"role": "assistant"}},
                                  {"throttlingException": {"message": "Too many requests"}}]))
    assert info.value.kind == "rate_limit"


def test_stream_without_metadata_still_finishes() -> None:
    events = list(codec.decode_events([{"messageStart": {"role": "assistant"}},
                                       {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "hi"}}},
                                       {"contentBlockStop": {"contentBlockIndex": 0}},
                                       {"messageStop": {"stopReason": "end_turn"}}]))
    assert accumulate(events) == Response(content=[TextBlock(text="hi")], stop_reason="end_turn")


# --- properties ---------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(requests(BEDROCK))
def test_neutral_request_round_trip(req: Request) -> None:
    wire = codec.encode_request(req)
    assert codec.decode_request(json.loads(json.dumps(wire))) == req
    botocore_accepts(codec.encode_request(req, binary=True))


@settings(max_examples=150, deadline=None)
@given(responses(BEDROCK))
def test_neutral_response_round_trip(resp: Response) -> None:
    assert codec.decode_response(json.loads(json.dumps(codec.encode_response(resp)))) == resp


@settings(max_examples=100, deadline=None)
@given(responses(BEDROCK), st.integers(0, 7))
def test_stream_round_trip(resp: Response, chunk: int) -> None:
    wire = [json.loads(json.dumps(e)) for e in codec.encode_events(events_from_response(resp, chunk_size=chunk))]
    assert accumulate(codec.decode_events(wire)) == resp
