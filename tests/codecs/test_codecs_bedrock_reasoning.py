"""Converse reasoning in the Bedrock codec: ``reasoningContent`` blocks in requests, responses
and ConverseStream deltas, and the reasoning setting in ``additionalModelRequestFields``.
botocore's own service model judges what is encoded."""

from __future__ import annotations

import base64
import json
import logging
from typing import Any

import botocore.session
import pytest
from botocore.validate import ParamValidator

from tooluse.codecs import anthropic
from tooluse.codecs import bedrock as codec
from tooluse.errors import ConversionError, WireFormatError
from tooluse.messages import (
    Message,
    Reasoning,
    RedactedThinkingBlock,
    Request,
    Response,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)
from tooluse.stream import (
    BlockStart,
    SignatureDelta,
    ThinkingDelta,
    accumulate,
    checked,
    events_from_response,
)

_MODEL = botocore.session.get_session().get_service_model("bedrock-runtime")
SIGNATURE = "EqQBCkgIARABGAIiQH1oJ3+Gq/Y0x3zH0i1d0W3+ab/c=="
SECRET = bytes(range(7, 60))
SECRET_B64 = base64.b64encode(SECRET).decode()
TOOLS = {"tools": [{"toolSpec": {"name": "get_weather", "inputSchema": {"json": {"type": "object"}}}}]}


def botocore_accepts(params: dict[str, Any], operation: str = "Converse") -> None:
    report = ParamValidator().validate(params, _MODEL.operation_model(operation).input_shape)
    assert not report.has_errors(), report.generate_report()


def body(fields: dict[str, Any] | None = None, redacted: Any = SECRET_B64) -> dict[str, Any]:
    """A Claude tool loop's second request: the first turn's reasoning handed back."""
    out: dict[str, Any] = {
        "messages": [
            {"role": "user", "content": [{"text": "Weather in Lima?"}]},
            {"role": "assistant", "content": [
                {"reasoningContent": {"reasoningText": {"text": "The user wants Lima.", "signature": SIGNATURE}}},
                {"reasoningContent": {"redactedContent": redacted}},
                {"toolUse": {"toolUseId": "tooluse_1", "name": "get_weather", "input": {"city": "Lima"}}},
            ]},
            {"role": "user", "content": [{"toolResult": {"toolUseId": "tooluse_1", "content": [{"text": "18C"}]}}]},
        ],
        "inferenceConfig": {"maxTokens": 4096},
        "toolConfig": TOOLS,
    }
    if fields is not None:
        out["additionalModelRequestFields"] = fields
    return out


@pytest.mark.parametrize("fields", [
    {"thinking": {"type": "enabled", "budget_tokens": 2048}, "anthropic_beta": ["interleaved-thinking-2025-05-14"]},
    {"anthropic_beta": ["x"], "thinking": {"budget_tokens": 1024, "type": "enabled", "display": "omitted"}},
    {"thinking": {"type": "adaptive"}},
    {"thinking": {"type": "disabled"}},
    {"reasoning_config": {"type": "enabled", "budget_tokens": 4000}},
    {"reasoningConfig": {"type": "enabled", "maxReasoningEffort": "medium"}},
])
def test_converse_request_round_trips_byte_exact(fields: dict[str, Any]) -> None:
    data = body(fields)
    req = codec.decode_request(data, model_id="anthropic.claude-sonnet-4-5")
    assistant = req.messages[1].content
    assert assistant[0] == ThinkingBlock(text="The user wants Lima.", signature=SIGNATURE)
    assert assistant[1] == RedactedThinkingBlock(data=SECRET_B64)
    assert isinstance(assistant[2], ToolUseBlock)
    assert req.reasoning is not None
    out = codec.encode_request(req)
    del out["modelId"]
    assert json.dumps(out) == json.dumps(data)  # same bytes: key order, signature, setting
    botocore_accepts({"modelId": "m", **out})


def test_reasoning_settings_map_to_the_neutral_field() -> None:
    def reasoning(fields: dict[str, Any]) -> Reasoning | None:
        return codec.decode_request(body(fields)).reasoning

    assert reasoning({"thinking": {"type": "enabled", "budget_tokens": 2048, "display": "summarized"}}) == \
        Reasoning(mode="enabled", budget_tokens=2048, display="summarized")
    assert reasoning({"reasoning_config": {"type": "enabled", "budget_tokens": 1024}}) == \
        Reasoning(mode="enabled", budget_tokens=1024)
    assert reasoning({"thinking": {"type": "adaptive"}}) == Reasoning(mode="adaptive")
    assert reasoning({"reasoningConfig": {"type": "enabled", "maxReasoningEffort": "high"}}) == \
        Reasoning(mode="enabled", effort="high")
    off = reasoning({"reasoningConfig": {"type": "disabled"}})
    assert off is not None and not off.on
    assert reasoning({"top_k": 5}) is None
    assert codec.decode_request(body()).reasoning is None


@pytest.mark.parametrize(("fields", "where"), [
    ({"thinking": {"type": "enabled"}}, "additionalModelRequestFields.thinking.budget_tokens"),
    ({"thinking": {"type": "enabled", "budget_tokens": 100}}, "additionalModelRequestFields.thinking.budget_tokens"),
    ({"thinking": {"type": "adaptive", "budget_tokens": 2048}}, "additionalModelRequestFields.thinking.budget_tokens"),
    ({"thinking": {"type": "sometimes"}}, "additionalModelRequestFields.thinking.type"),
    ({"thinking": {"type": "enabled", "budget_tokens": "2048"}}, "additionalModelRequestFields.thinking.budget_tokens"),
    ({"reasoning_config": {"type": "enabled", "budget_tokens": 2048, "frobnicate": 1}},
     "additionalModelRequestFields.reasoning_config.frobnicate"),
    ({"reasoningConfig": {"type": "enabled", "maxReasoningEffort": "extreme"}},
     "additionalModelRequestFields.reasoningConfig.maxReasoningEffort"),
    ({"thinking": {"type": "adaptive"}, "reasoning_config": {"type": "disabled"}},
     "additionalModelRequestFields.reasoning_config"),
])
def test_bad_reasoning_settings_name_the_field(fields: dict[str, Any], where: str) -> None:
    with pytest.raises(WireFormatError) as info:
        codec.decode_request(body(fields))
    assert ".".join(map(str, info.value.path)) == where


@pytest.mark.parametrize(("block", "where"), [
    ({"reasoningContent": {"redactedContent": "not base64!"}}, "redactedContent"),
    ({"reasoningContent": {"reasoningText": {"signature": "s"}}}, "text"),
    ({"reasoningContent": {"reasoningText": {"text": "t"}, "redactedContent": "AAAA"}}, "reasoningContent"),
])
def test_bad_reasoning_blocks_name_the_field(block: dict[str, Any], where: str) -> None:
    data = body()
    data["messages"][1]["content"][0] = block
    with pytest.raises(WireFormatError) as info:
        codec.decode_request(data)
    assert info.value.path[:4] == ("messages", 1, "content", 0)
    assert info.value.path[-1] == where


def test_reasoning_in_a_user_turn_is_refused() -> None:
    data = body()
    data["messages"][0]["content"].append({"reasoningContent": {"reasoningText": {"text": "x"}}})
    with pytest.raises(WireFormatError, match="not allowed in user messages"):
        codec.decode_request(data)


def test_boto3_bytes_both_ways() -> None:
    """boto3 takes and gives ``redactedContent`` as raw bytes; the neutral data is base64."""
    req = codec.decode_request(body(redacted=SECRET))
    assert req.messages[1].content[1] == RedactedThinkingBlock(data=SECRET_B64)
    binary = codec.encode_request(req, binary=True)
    assert binary["messages"][1]["content"][1] == {"reasoningContent": {"redactedContent": SECRET}}
    assert codec.encode_request(req)["messages"][1]["content"][1] == \
        {"reasoningContent": {"redactedContent": SECRET_B64}}
    botocore_accepts({"modelId": "m", **binary})


def neutral(reasoning: Reasoning | None, *blocks: Any) -> Request:
    return Request(
        max_tokens=4096,
        reasoning=reasoning,
        messages=[Message(role="user", content="Hi"), Message(role="assistant", content=list(blocks) or "Hello"),
                  Message(role="user", content="More")],
    )


@pytest.mark.parametrize(("reasoning", "fields"), [
    (Reasoning(mode="enabled", budget_tokens=2048), {"thinking": {"type": "enabled", "budget_tokens": 2048}}),
    (Reasoning(mode="adaptive", display="omitted"), {"thinking": {"type": "adaptive", "display": "omitted"}}),
    (Reasoning(mode="disabled"), {"thinking": {"type": "disabled"}}),
    (None, None),
])
def test_neutral_settings_are_written_as_claude_thinking(reasoning: Reasoning | None, fields: Any) -> None:
    out = codec.encode_request(neutral(reasoning))
    assert out.get("additionalModelRequestFields") == fields
    assert codec.decode_request(out).reasoning == reasoning
    botocore_accepts({"modelId": "m", **out})


def test_effort_none_is_thinking_disabled() -> None:
    out = codec.encode_request(neutral(Reasoning(mode="enabled", effort="none")))
    assert out["additionalModelRequestFields"] == {"thinking": {"type": "disabled"}}


@pytest.mark.parametrize("reasoning", [
    Reasoning(mode="enabled", effort="high"),
    Reasoning(mode="enabled", effort="minimal", display="summarized"),
    Reasoning(mode="adaptive", effort="low"),
    Reasoning(mode="enabled", budget_tokens=5000, effort="medium"),
])
def test_other_apis_settings_become_claude_thinking_as_in_messages(reasoning: Reasoning) -> None:
    """Claude's ``thinking`` on Converse is the Messages API's object: a setting from another
    API (an effort, no budget) is written exactly as the Messages codec writes it."""
    req = neutral(reasoning)
    out = codec.encode_request(req)
    assert out["additionalModelRequestFields"] == {"thinking": anthropic.encode_request(req.model_copy(update={"model": "m"}))["thinking"]}
    botocore_accepts({"modelId": "m", **out})


def test_enabled_without_budget_or_effort(caplog: pytest.LogCaptureFixture) -> None:
    req = neutral(Reasoning(mode="enabled"))
    with pytest.raises(ConversionError) as info:
        codec.encode_request(req)
    assert info.value.path == ("reasoning", "budget_tokens") and info.value.target == "bedrock"
    with caplog.at_level(logging.WARNING):
        out = codec.encode_request(req, strict=False)
    assert out["additionalModelRequestFields"] == {"thinking": {"type": "adaptive"}}
    assert any("adaptive" in r.getMessage() for r in caplog.records)


def test_changed_setting_keeps_the_other_fields_and_nova_spelling() -> None:
    req = codec.decode_request(body({"top_k": 3, "reasoningConfig": {"type": "enabled"}, "x": 1}))
    changed = req.model_copy(update={"reasoning": Reasoning(mode="enabled", effort="low")})
    assert codec.encode_request(changed)["additionalModelRequestFields"] == \
        {"reasoningConfig": {"type": "enabled", "maxReasoningEffort": "low"}, "x": 1, "top_k": 3}
    cleared = req.model_copy(update={"reasoning": None})
    assert codec.encode_request(cleared)["additionalModelRequestFields"] == {"x": 1, "top_k": 3}
    budget = req.model_copy(update={"reasoning": Reasoning(mode="enabled", budget_tokens=3000)})
    assert codec.encode_request(budget)["additionalModelRequestFields"] == \
        {"x": 1, "thinking": {"type": "enabled", "budget_tokens": 3000}, "top_k": 3}


def test_blocks_converse_cannot_hold(caplog: pytest.LogCaptureFixture) -> None:
    summarized = ThinkingBlock(summary=["Looked up Lima."], signature="enc", id="rs_1")
    req = neutral(None, summarized, TextBlock(text="Hello"))
    with pytest.raises(ConversionError) as info:
        codec.encode_request(req)
    assert info.value.path == ("messages", 1, "content", 0, "summary")
    with caplog.at_level(logging.WARNING, logger="tooluse.codecs.bedrock"):
        out = codec.encode_request(req, strict=False)
    # the summary is dropped (logged), the signature kept, the id not carried
    assert out["messages"][1]["content"][0] == {"reasoningContent": {"reasoningText": {"text": "", "signature": "enc"}}}
    assert any("summary" in r.getMessage() for r in caplog.records)

    user_turn = Request(messages=[Message(role="user", content=[TextBlock(text="Hi"), ThinkingBlock(text="x")])])
    with pytest.raises(ConversionError, match="assistant turns only"):
        codec.encode_request(user_turn)
    assert codec.encode_request(user_turn, strict=False)["messages"][0]["content"] == [{"text": "Hi"}]

    not_base64 = neutral(None, RedactedThinkingBlock(data="%%%"), TextBlock(text="Hello"))
    assert codec.encode_request(not_base64)["messages"][1]["content"][0] == \
        {"reasoningContent": {"redactedContent": "%%%"}}  # JSON carries the text as given
    with pytest.raises(ConversionError, match="not base64"):
        codec.encode_request(not_base64, binary=True)


ANSWER = {
    "output": {"message": {"role": "assistant", "content": [
        {"reasoningContent": {"reasoningText": {"text": "Lima is in Peru.", "signature": SIGNATURE}}},
        {"reasoningContent": {"redactedContent": SECRET_B64}},
        {"text": "Checking."},
        {"toolUse": {"toolUseId": "tooluse_2", "name": "get_weather", "input": {"city": "Lima"}}},
    ]}},
    "stopReason": "tool_use",
    "usage": {"inputTokens": 10, "outputTokens": 30, "totalTokens": 40},
    "metrics": {"latencyMs": 0},
}


def test_response_round_trips_byte_exact() -> None:
    resp = codec.decode_response(ANSWER)
    assert resp.content[:2] == [ThinkingBlock(text="Lima is in Peru.", signature=SIGNATURE),
                                RedactedThinkingBlock(data=SECRET_B64)]
    assert resp.thinking == resp.content[:2]
    assert json.dumps(codec.encode_response(resp)) == json.dumps(ANSWER)
    # boto3 hands the redacted bytes raw
    raw = json.loads(json.dumps(ANSWER))
    raw["output"]["message"]["content"][1]["reasoningContent"]["redactedContent"] = SECRET
    assert codec.decode_response(raw).content[1] == RedactedThinkingBlock(data=SECRET_B64)


def test_response_drops_a_summary_with_a_log_line(caplog: pytest.LogCaptureFixture) -> None:
    resp = Response(content=[ThinkingBlock(summary=["short"]), TextBlock(text="Hi")], stop_reason="end_turn")
    with caplog.at_level(logging.WARNING, logger="tooluse.codecs.bedrock"):
        out = codec.encode_response(resp)
    assert out["output"]["message"]["content"] == [{"text": "Hi"}]
    assert any("summary" in r.getMessage() for r in caplog.records)


def boto3_stream(redacted: Any = SECRET) -> list[dict[str, Any]]:
    """ConverseStream events as boto3 yields them for Claude thinking before a tool call."""
    def delta(i: int, d: dict[str, Any]) -> dict[str, Any]:
        return {"contentBlockDelta": {"contentBlockIndex": i, "delta": d}}

    return [
        {"messageStart": {"role": "assistant"}},
        delta(0, {"reasoningContent": {"text": "Lima "}}),
        delta(0, {"reasoningContent": {"text": "is in Peru."}}),
        delta(0, {"reasoningContent": {"signature": SIGNATURE}}),
        {"contentBlockStop": {"contentBlockIndex": 0}},
        delta(1, {"reasoningContent": {"redactedContent": redacted}}),
        {"contentBlockStop": {"contentBlockIndex": 1}},
        delta(2, {"text": "Checking."}),
        {"contentBlockStop": {"contentBlockIndex": 2}},
        {"messageStop": {"stopReason": "end_turn"}},
        {"metadata": {"usage": {"inputTokens": 5, "outputTokens": 9, "totalTokens": 14}, "metrics": {"latencyMs": 1}}},
    ]


def test_stream_decodes_reasoning_in_order() -> None:
    events = list(checked(codec.decode_events(boto3_stream()), source="bedrock"))
    assert events[1] == BlockStart(index=0, block=ThinkingBlock())
    assert events[2:5] == [ThinkingDelta(index=0, text="Lima "), ThinkingDelta(index=0, text="is in Peru."),
                           SignatureDelta(index=0, signature=SIGNATURE)]
    assert events[6] == BlockStart(index=1, block=RedactedThinkingBlock(data=SECRET_B64))
    resp = accumulate(events)
    assert resp.content == [ThinkingBlock(text="Lima is in Peru.", signature=SIGNATURE),
                            RedactedThinkingBlock(data=SECRET_B64), TextBlock(text="Checking.")]


def test_stream_encodes_reasoning_as_boto3_shows_it() -> None:
    resp = Response(content=[ThinkingBlock(text="Lima is in Peru.", signature=SIGNATURE),
                             RedactedThinkingBlock(data=SECRET_B64), TextBlock(text="Checking.")],
                    stop_reason="end_turn", usage=Usage(input_tokens=5, output_tokens=9))
    wire = list(codec.encode_events(events_from_response(resp, chunk_size=5), latency_ms=1))
    # boto3's form has bytes where the JSON form (which the gateway frames) has base64 text
    expected = boto3_stream(redacted=SECRET_B64)
    said = "".join(e["contentBlockDelta"]["delta"]["reasoningContent"].get("text", "") for e in wire
                   if "reasoningContent" in e.get("contentBlockDelta", {}).get("delta", {}))
    assert said == "Lima is in Peru."
    pieces = [e for e in wire if e.get("contentBlockDelta", {}).get("contentBlockIndex") == 0]
    assert pieces[-1] == expected[3]  # the signature after the text, whole
    assert [e for e in wire if "contentBlockStart" in e] == []  # Bedrock sends none for these
    assert expected[5] in wire
    assert accumulate(codec.decode_events(wire)) == resp.model_copy(update={"id": "", "model": None})


def test_stream_drops_summary_deltas_with_one_log_line(caplog: pytest.LogCaptureFixture) -> None:
    resp = Response(content=[ThinkingBlock(text="t", summary=["a", "b"], signature="s")], stop_reason="end_turn")
    with caplog.at_level(logging.WARNING, logger="tooluse.codecs.bedrock"):
        wire = list(codec.encode_events(events_from_response(resp)))
    got = accumulate(codec.decode_events(wire))
    assert got.content == [ThinkingBlock(text="t", signature="s")]
    assert sum("summary" in r.getMessage() for r in caplog.records) == 1


@pytest.mark.parametrize(("delta", "message"), [
    ({"reasoningContent": {"text": 5}}, "valid string"),
    ({"reasoningContent": {"text": "a", "signature": "b"}}, "exactly one"),
    ({"reasoningContent": {"summary": "a"}}, "not supported"),
])
def test_bad_reasoning_deltas_are_wire_errors(delta: dict[str, Any], message: str) -> None:
    events = [{"messageStart": {"role": "assistant"}}, {"contentBlockDelta": {"contentBlockIndex": 0, "delta": delta}}]
    with pytest.raises(WireFormatError, match=message):
        list(codec.decode_events(events))


def test_redacted_content_after_its_block_started_is_an_error() -> None:
    events = boto3_stream()
    events.insert(3, {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"reasoningContent": {"redactedContent": SECRET}}}})
    with pytest.raises(WireFormatError, match="must open its content block"):
        list(codec.decode_events(events))


def test_tool_loop_history_keeps_reasoning_between_turns() -> None:
    """The turn a client hands back (decoded answer + tool result) encodes with the reasoning
    blocks first in the assistant turn, as Claude requires them back."""
    answer = codec.decode_response(ANSWER)
    req = Request(messages=[Message(role="user", content="Weather in Lima?"),
                            Message(role="assistant", content=answer.content),
                            Message(role="user", content=[ToolResultBlock(tool_use_id="tooluse_2", content="18C")])],
                  tools=[], reasoning=Reasoning(mode="enabled", budget_tokens=2048))
    out = codec.encode_request(req, strict=False)
    assert out["messages"][1]["content"] == ANSWER["output"]["message"]["content"]


def test_tooluse_convert_round_trips_and_refuses(monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """``tooluse convert``: Converse -> Converse keeps every byte of the reasoning; Converse ->
    Messages -> Converse keeps the setting and the signed blocks; a summary part is refused
    with the path named unless ``--lenient``."""
    import io
    import sys

    from tooluse.cli import main

    def convert(stdin: str, *args: str) -> tuple[int, str, str]:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
        code = main(["convert", *args])
        out = capsys.readouterr()
        return code, out.out, out.err

    data = {"modelId": "anthropic.claude-3-7-sonnet-20250219-v1:0",
            **body({"reasoning_config": {"budget_tokens": 4000, "type": "enabled"}})}
    code, out, _ = convert(json.dumps(data), "--from", "bedrock", "--to", "bedrock")
    assert code == 0 and json.dumps(json.loads(out)) == json.dumps(data)

    code, messages, _ = convert(json.dumps(data), "--from", "bedrock", "--to", "anthropic")
    assert code == 0 and json.loads(messages)["thinking"] == {"type": "enabled", "budget_tokens": 4000}
    code, back, _ = convert(messages, "--from", "anthropic", "--to", "bedrock")
    assert code == 0
    back_body = json.loads(back)
    assert back_body["messages"] == data["messages"]
    assert back_body["additionalModelRequestFields"] == {"thinking": {"type": "enabled", "budget_tokens": 4000}}

    responses_body = {"model": "m", "input": [
        {"type": "message", "role": "user", "content": "Hi"},
        {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Said hi."}],
         "encrypted_content": "gAAAAB"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Hello"}]},
        {"type": "message", "role": "user", "content": "More"}]}
    code, out, err = convert(json.dumps(responses_body), "--from", "responses", "--to", "bedrock")
    assert code == 1 and out == "" and "summary" in err and "Traceback" not in err
    code, out, _ = convert(json.dumps(responses_body), "--from", "responses", "--to", "bedrock", "--lenient")
    assert code == 0
    assert json.loads(out)["messages"][1]["content"][0] == \
        {"reasoningContent": {"reasoningText": {"text": "", "signature": "gAAAAB"}}}
