"""Messages thinking: ``thinking`` / ``redacted_thinking`` blocks with their
signatures in requests, responses and streams, the ``thinking`` setting, what the API cannot
take back, and the byte-exact Anthropic -> neutral -> Anthropic round trips (codec and
``tooluse convert``)."""

from __future__ import annotations

import copy
import io
import json
import logging
import sys
from typing import Any

import pytest
from codec_strategies import ANTHROPIC, requests
from hypothesis import given, settings
from hypothesis import strategies as st

from tooluse.cli import main
from tooluse.codecs import anthropic as codec
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
)
from tooluse.stream import (
    BlockStart,
    BlockStop,
    MessageDelta,
    MessageStart,
    MessageStop,
    SignatureDelta,
    ThinkingDelta,
    accumulate,
    events_from_response,
)

#: Signatures as the API writes them: base64 with '+', '/' and '=' (kept byte for byte).
SIG = "EqQBCkgIARABGAIiQL2UoU0b1OHYi+3/Xk9+u1Ww0aUBdH2nKz==/Zr+Q8aZ3wIbmYQc5oCnH3rHvq5Y0Q=="
SIG2 = "ErUBCkYIARgCIkACJWxzySUOJzOlZ8WFdgQSbeQA3H1i5rfkKLV9eC4HN6Jcnrlw1NcnPRIPaTs9jLF3rllsfoidjZapJ+5MLwjVEgzTfQ6r9tDZvyBP0nEaDHWRqRWP7CoPOc+ksSIwSlxHzaMbnyXGoiNmCj9thC3N6EDMpemJPx3UZqDtrgmKZgQMMzNzNsh9IxgvtuYKKh1PxXUmWexqlckSVETQj3LbHLK/nwEK+bz0+2b/pA=="
REDACTED = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB5URj2pabk"
WEATHER = {"name": "get_weather", "description": "Weather of a city",
           "input_schema": {"type": "object", "properties": {"city": {"type": "string"}},
                            "required": ["city"]}}

#: The second request of a tool loop with thinking, as a client sends it back.
LOOP_REQUEST: dict[str, Any] = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 16000,
    "thinking": {"type": "enabled", "budget_tokens": 10000, "display": "summarized"},
    "tools": [WEATHER],
    "messages": [
        {"role": "user", "content": "What's the weather in Paris?"},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "The user wants Paris weather.\nI'll call the tool.",
             "signature": SIG},
            {"type": "redacted_thinking", "data": REDACTED},
            {"type": "text", "text": "Let me check."},
            {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {"city": "Paris"}},
        ]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01", "content": "18C, sunny"}]},
    ],
}

RESPONSE: dict[str, Any] = {
    "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
    "content": [
        {"type": "thinking", "thinking": "Sunny and 18C: say so.", "signature": SIG2},
        {"type": "redacted_thinking", "data": REDACTED},
        {"type": "text", "text": "It is 18C and sunny in Paris."},
    ],
    "stop_reason": "end_turn", "stop_sequence": None,
    "usage": {"input_tokens": 120, "output_tokens": 40},
}

#: A stream as the API sends it (the first turn of the loop, interleaved thinking).
STREAM: list[dict[str, Any]] = [
    {"type": "message_start", "message": {
        "id": "msg_02", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 90, "output_tokens": 1}}},
    {"type": "content_block_start", "index": 0,
     "content_block": {"type": "thinking", "thinking": "", "signature": ""}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "The user wants "}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Paris weather."}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": SIG}},
    {"type": "content_block_stop", "index": 0},
    {"type": "content_block_start", "index": 1,
     "content_block": {"type": "redacted_thinking", "data": REDACTED}},
    {"type": "content_block_stop", "index": 1},
    {"type": "content_block_start", "index": 2, "content_block": {"type": "text", "text": ""}},
    {"type": "content_block_delta", "index": 2, "delta": {"type": "text_delta", "text": "Let me check."}},
    {"type": "content_block_stop", "index": 2},
    {"type": "content_block_start", "index": 3, "content_block": {
        "type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {}}},
    {"type": "content_block_delta", "index": 3,
     "delta": {"type": "input_json_delta", "partial_json": "{\"city\": \"Paris\"}"}},
    {"type": "content_block_stop", "index": 3},
    {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None},
     "usage": {"output_tokens": 60}},
    {"type": "message_stop"},
]


# --- requests -----------------------------------------------------------------------------


def test_history_thinking_decodes_to_signed_blocks() -> None:
    req = codec.decode_request(LOOP_REQUEST)
    assistant = req.messages[1]
    assert assistant.thinking == [
        ThinkingBlock(text="The user wants Paris weather.\nI'll call the tool.", signature=SIG),
        RedactedThinkingBlock(data=REDACTED),
    ]
    assert [b.type for b in assistant.content] == ["thinking", "redacted_thinking", "text", "tool_use"]
    assert req.reasoning == Reasoning(mode="enabled", budget_tokens=10000, display="summarized")


def test_request_round_trip_is_byte_exact_with_signatures() -> None:
    body = copy.deepcopy(LOOP_REQUEST)
    body["output_config"] = {"effort": "high"}
    body["context_management"] = {"edits": [{"type": "clear_thinking_20251015", "keep": "all"}]}
    out = codec.encode_request(codec.decode_request(json.loads(json.dumps(body))))
    assert out == body
    assert json.dumps(out, sort_keys=True) == json.dumps(body, sort_keys=True)
    assert out["messages"][1]["content"][0]["signature"] == SIG


@pytest.mark.parametrize(("thinking", "reasoning"), [
    ({"type": "enabled", "budget_tokens": 1024}, Reasoning(mode="enabled", budget_tokens=1024)),
    ({"type": "enabled", "budget_tokens": 4096, "display": "omitted"},
     Reasoning(mode="enabled", budget_tokens=4096, display="omitted")),
    ({"type": "adaptive"}, Reasoning(mode="adaptive")),
    ({"type": "adaptive", "display": "summarized"}, Reasoning(mode="adaptive", display="summarized")),
    ({"type": "disabled"}, Reasoning(mode="disabled")),
])
def test_thinking_setting_both_ways(thinking: dict[str, Any], reasoning: Reasoning) -> None:
    body = {"model": "m", "max_tokens": 9000, "messages": [{"role": "user", "content": "hi"}],
            "thinking": thinking}
    req = codec.decode_request(body)
    assert req.reasoning == reasoning
    assert codec.encode_request(req) == body


def test_effort_is_read_beside_thinking_and_stays_forwarded() -> None:
    body = {"model": "m", "max_tokens": 900, "messages": [{"role": "user", "content": "hi"}],
            "thinking": {"type": "adaptive"}, "output_config": {"effort": "low"}}
    req = codec.decode_request(body)
    assert req.reasoning == Reasoning(mode="adaptive", effort="low")
    assert codec.encode_request(req) == body
    no_thinking = codec.decode_request({**body, "thinking": None})
    assert no_thinking.reasoning is None  # effort alone does not ask for thinking


@pytest.mark.parametrize(("reasoning", "thinking"), [
    (Reasoning(effort="high"), {"type": "enabled", "budget_tokens": 4096}),
    (Reasoning(effort="low"), {"type": "enabled", "budget_tokens": 1024}),
    (Reasoning(effort="minimal"), {"type": "enabled", "budget_tokens": 1024}),
    (Reasoning(effort="none"), {"type": "disabled"}),
    (Reasoning(budget_tokens=3000, effort="high"), {"type": "enabled", "budget_tokens": 3000}),
    (Reasoning(mode="adaptive", effort="medium", summary="auto"), {"type": "adaptive"}),
])
def test_other_apis_settings_are_written_as_thinking(reasoning: Reasoning, thinking: dict[str, Any]) -> None:
    req = Request(model="m", max_tokens=9000, messages=[Message(role="user", content=[TextBlock(text="hi")])],
                  reasoning=reasoning)
    assert codec.encode_request(req)["thinking"] == thinking


def test_enabled_without_budget_or_effort_is_refused_or_adaptive(caplog: pytest.LogCaptureFixture) -> None:
    req = Request(model="m", max_tokens=9000, messages=[Message(role="user", content=[TextBlock(text="hi")])],
                  reasoning=Reasoning())
    with pytest.raises(ConversionError) as info:
        codec.encode_request(req)
    assert info.value.path == ("reasoning", "budget_tokens")
    with caplog.at_level(logging.WARNING, logger="tooluse.codecs.anthropic"):
        assert codec.encode_request(req, strict=False)["thinking"] == {"type": "adaptive"}
    assert "sent as adaptive" in caplog.text


def test_thinking_setting_is_validated() -> None:
    base = {"model": "m", "max_tokens": 9000, "messages": [{"role": "user", "content": "hi"}]}
    for thinking, where in [({"type": "enabled", "budget_tokens": 10}, "thinking.budget_tokens"),
                            ({"type": "enabled"}, "thinking.budget_tokens"),
                            ({"type": "sometimes"}, "thinking.type"),
                            ({"type": "disabled", "display": "omitted"}, "thinking.display")]:
        with pytest.raises(WireFormatError) as info:
            codec.decode_request({**base, "thinking": thinking})
        assert str(info.value).startswith(where), info.value


def test_thinking_in_a_user_turn_is_refused_on_decode() -> None:
    body = {"model": "m", "max_tokens": 9, "messages": [{"role": "user", "content": [
        {"type": "thinking", "thinking": "x", "signature": SIG}]}]}
    with pytest.raises(WireFormatError) as info:
        codec.decode_request(body)
    assert info.value.path == ("messages", 0, "content", 0, "type")


def _with_assistant(*blocks: Any, role: str = "assistant") -> Request:
    messages = [Message(role="user", content=[TextBlock(text="hi")])]
    if role == "assistant":
        messages.append(Message(role="assistant", content=[*blocks, TextBlock(text="hello")]))
        messages.append(Message(role="user", content=[TextBlock(text="more")]))
    else:
        messages = [Message(role="user", content=[*blocks, TextBlock(text="hi")])]
    return Request(model="m", max_tokens=10, messages=messages)


@pytest.mark.parametrize(("block", "role", "words"), [
    (ThinkingBlock(text="local reasoning"), "assistant", "no signature"),
    (ThinkingBlock(text="", summary=["a summary"], signature="gAAAAenc", id="rs_1"), "assistant",
     "summary without its text"),
    (ThinkingBlock(text="x", signature=SIG), "user", "belongs in an assistant turn"),
    (RedactedThinkingBlock(data=REDACTED), "user", "belongs in an assistant turn"),
])
def test_what_the_api_cannot_take_back_is_refused_or_dropped_with_a_log_line(
    block: Any, role: str, words: str, caplog: pytest.LogCaptureFixture
) -> None:
    req = _with_assistant(block, role=role)
    with pytest.raises(ConversionError) as info:
        codec.encode_request(req)
    assert words in str(info.value)
    at = 1 if role == "assistant" else 0
    assert info.value.path == ("messages", at, "content", 0)
    with caplog.at_level(logging.WARNING, logger="tooluse.codecs.anthropic"):
        out = codec.encode_request(req, strict=False)
    assert words in caplog.text and "dropped" in caplog.text
    assert all(b.get("type") not in ("thinking", "redacted_thinking")
               for m in out["messages"] if isinstance(m["content"], list) for b in m["content"])
    # sendable drops the same blocks, and keeps what the API issued
    signed = ThinkingBlock(text="mine", signature=SIG)
    kept = codec.sendable(_with_assistant(signed, block) if role == "assistant" else req)
    assert block not in [b for m in kept.messages for b in m.content]
    if role == "assistant":
        assert kept.messages[1].thinking == [signed]


def test_sendable_leaves_a_sendable_request_as_it_is() -> None:
    req = codec.decode_request(LOOP_REQUEST)
    assert codec.sendable(req) is req


# --- responses ----------------------------------------------------------------------------


def test_response_round_trip_is_byte_exact_with_signatures() -> None:
    resp = codec.decode_response(RESPONSE)
    assert resp.thinking == [ThinkingBlock(text="Sunny and 18C: say so.", signature=SIG2),
                             RedactedThinkingBlock(data=REDACTED)]
    assert codec.encode_response(resp) == RESPONSE


def test_another_apis_reasoning_is_shown_to_a_messages_client() -> None:
    resp = Response(id="r", model="m", stop_reason="end_turn", content=[
        ThinkingBlock(text="", summary=["First part.", "Second part."], signature="gAAAAenc", id="rs_1"),
        ThinkingBlock(text="plain reasoning"),
        TextBlock(text="answer"),
    ])
    blocks = codec.encode_response(resp)["content"]
    assert blocks[0] == {"type": "thinking", "thinking": "First part.\n\nSecond part.", "signature": "gAAAAenc"}
    assert blocks[1] == {"type": "thinking", "thinking": "plain reasoning", "signature": ""}
    # streamed, the client sees the same text
    wire = list(codec.encode_events(events_from_response(resp, chunk_size=4)))
    streamed = accumulate(codec.decode_events(wire))
    assert codec.encode_response(streamed)["content"] == blocks


# --- streams ------------------------------------------------------------------------------


def test_stream_decodes_thinking_and_signature_in_order() -> None:
    events = list(codec.decode_events([{"type": "ping"}, *STREAM]))
    kinds = [type(e) for e in events]
    assert kinds[:6] == [MessageStart, BlockStart, ThinkingDelta, ThinkingDelta, SignatureDelta, BlockStop]
    assert events[4] == SignatureDelta(index=0, signature=SIG)
    assert isinstance(events[6], BlockStart) and events[6].block == RedactedThinkingBlock(data=REDACTED)
    assert isinstance(events[-2], MessageDelta) and isinstance(events[-1], MessageStop)
    resp = accumulate(iter(events))
    assert resp.content[0] == ThinkingBlock(text="The user wants Paris weather.", signature=SIG)
    assert resp.content[1] == RedactedThinkingBlock(data=REDACTED)
    assert isinstance(resp.content[3], ToolUseBlock) and resp.stop_reason == "tool_use"


def test_stream_round_trip_is_byte_exact() -> None:
    assert list(codec.encode_events(codec.decode_events(STREAM))) == STREAM


def test_a_signature_in_pieces_is_sent_whole_before_the_block_stops() -> None:
    events = [MessageStart(id="m", model="x"), BlockStart(index=0, block=ThinkingBlock()),
              ThinkingDelta(index=0, text="hmm"), SignatureDelta(index=0, signature=SIG[:10]),
              SignatureDelta(index=0, signature=SIG[10:]), BlockStop(index=0),
              MessageDelta(stop_reason="end_turn"), MessageStop()]
    wire = list(codec.encode_events(iter(events)))
    deltas = [e["delta"] for e in wire if e["type"] == "content_block_delta"]
    assert deltas == [{"type": "thinking_delta", "thinking": "hmm"},
                      {"type": "signature_delta", "signature": SIG}]
    assert [e["type"] for e in wire][-3] == "content_block_stop"


def test_a_thinking_delta_on_a_text_block_is_a_wire_error() -> None:
    from tooluse.stream import checked

    broken = [*STREAM[:9], {"type": "content_block_delta", "index": 2,
                            "delta": {"type": "thinking_delta", "thinking": "x"}}]
    with pytest.raises(WireFormatError):
        accumulate(checked(codec.decode_events(broken)))


# --- properties ---------------------------------------------------------------------------

signatures = st.from_regex(r"[A-Za-z0-9+/]{8,40}={0,2}", fullmatch=True)
thinking_blocks = (
    st.builds(lambda t, s: ThinkingBlock(text=t, signature=s), st.text(max_size=12), signatures)
    | st.builds(lambda d: RedactedThinkingBlock(data=d), signatures)
)


@st.composite
def thinking_requests(draw: Any) -> Request:
    req: Request = draw(requests(ANTHROPIC))
    messages = [
        Message(role=m.role, content=[*draw(st.lists(thinking_blocks, max_size=2)), *m.content])
        if m.role == "assistant" else m
        for m in req.messages
    ]
    reasoning = draw(st.none() | st.builds(
        Reasoning, mode=st.just("enabled"), budget_tokens=st.integers(1024, 64000),
        display=st.none() | st.sampled_from(["summarized", "omitted"])) | st.just(Reasoning(mode="adaptive"))
        | st.just(Reasoning(mode="disabled")))
    return req.model_copy(update={"messages": messages, "reasoning": reasoning})


@settings(max_examples=100, deadline=None)
@given(thinking_requests())
def test_neutral_request_with_thinking_round_trips(req: Request) -> None:
    wire = codec.encode_request(req)
    assert codec.decode_request(json.loads(json.dumps(wire))) == req


@settings(max_examples=100, deadline=None)
@given(st.lists(thinking_blocks, min_size=1, max_size=3), st.integers(0, 7))
def test_responses_and_streams_with_thinking_round_trip(blocks: list[Any], chunk: int) -> None:
    resp = Response(id="msg_1", model="m", content=[*blocks, TextBlock(text="ok")], stop_reason="end_turn")
    assert codec.decode_response(json.loads(json.dumps(codec.encode_response(resp)))) == resp
    wire = [json.loads(json.dumps(e)) for e in codec.encode_events(events_from_response(resp, chunk_size=chunk))]
    assert accumulate(codec.decode_events(wire)) == resp


# --- tooluse convert ----------------------------------------------------------------------


def convert(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], stdin: str,
            *args: str) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    code = main(["convert", "--from", "anthropic", "--to", "anthropic", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_convert_anthropic_to_anthropic_keeps_every_signature(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = convert(monkeypatch, capsys, json.dumps(LOOP_REQUEST))
    assert code == 0, err
    assert json.loads(out) == LOOP_REQUEST and SIG in out and REDACTED in out
    code, out, err = convert(monkeypatch, capsys, json.dumps(RESPONSE), "--response")
    assert code == 0, err
    assert json.loads(out) == RESPONSE
    lines = "".join(json.dumps(e) + "\n" for e in STREAM)
    code, out, err = convert(monkeypatch, capsys, lines, "--stream")
    assert code == 0, err
    assert [json.loads(line) for line in out.splitlines()] == STREAM


def test_convert_refuses_unsigned_thinking_unless_lenient(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    body = copy.deepcopy(LOOP_REQUEST)
    body["messages"][1]["content"][0]["signature"] = ""
    code, out, err = convert(monkeypatch, capsys, json.dumps(body))
    assert code == 1 and out == "" and "messages.1.content.0" in err and "no signature" in err
    code, out, err = convert(monkeypatch, capsys, json.dumps(body), "--lenient")
    assert code == 0
    assert [b["type"] for b in json.loads(out)["messages"][1]["content"]] == \
        ["redacted_thinking", "text", "tool_use"]


def test_a_signed_block_back_from_a_responses_client_goes_back_as_thinking() -> None:
    """A Responses client over an Anthropic backend sends the gateway's reasoning items back
    with their id (and Codex with its summary): the signed text reaches the API as issued."""
    block = ThinkingBlock(text="the weather first", signature=SIG, id="rs_abc", summary=["s"])
    out = codec.encode_request(_with_assistant(block))
    assert out["messages"][1]["content"][0] == {
        "type": "thinking", "thinking": "the weather first", "signature": SIG}


def test_a_turn_of_unsigned_thinking_only_does_not_reach_the_api_empty() -> None:
    """A local model's turn that was only thinking (no signature) is left out whole: the
    Messages API refuses an empty assistant turn."""
    req = Request(model="m", max_tokens=10, messages=[
        Message(role="user", content=[TextBlock(text="hi")]),
        Message(role="assistant", content=[ThinkingBlock(text="local reasoning")]),
        Message(role="user", content=[TextBlock(text="more")]),
    ])
    kept = codec.sendable(req)
    assert [m.role for m in kept.messages] == ["user", "user"]
    assert all(m["content"] for m in codec.encode_request(kept)["messages"])


def test_a_thinking_block_that_starts_with_content_streams_as_it_shows_whole() -> None:
    """A backend's BlockStart may carry text and summary parts already; the stream shows them
    as the whole answer does (a blank line before each summary part), and a later summary
    delta goes on after its own blank line."""
    block = ThinkingBlock(text="first", summary=["a summary"], signature=SIG)
    events = [MessageStart(id="m"), BlockStart(index=0, block=block),
              ThinkingDelta(index=0, text="more", summary=1), BlockStop(index=0),
              MessageDelta(stop_reason="end_turn"), MessageStop()]
    wire = list(codec.encode_events(events))
    shown = "".join(e["delta"].get("thinking", "") for e in wire
                    if e["type"] == "content_block_delta")
    whole = ThinkingBlock(text="first", summary=["a summary", "more"], signature=SIG)
    assert shown == codec.encode_response(Response(
        id="m", content=[whole], stop_reason="end_turn"))["content"][0]["thinking"]
    assert shown == "first\n\na summary\n\nmore"
