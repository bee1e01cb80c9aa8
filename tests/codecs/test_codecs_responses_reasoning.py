"""Responses ``reasoning`` items and settings <-> thinking blocks: byte-exact round
trips of the items a client or an upstream sends, the request's ``reasoning`` setting, the
reasoning stream events (checked against the openai SDK's own event types) both ways, and
what has no Responses form (a redacted block)."""

from __future__ import annotations

import copy
import json
import logging
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tooluse.codecs import responses as codec
from tooluse.errors import ConversionError
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
from tooluse.stream import accumulate, events_from_response

# As the API writes them: o-series (a summary and the encrypted content), gpt-oss (reasoning
# text), and Codex sending one back (no id: it never serializes it).
SUMMARISED = {"id": "rs_68a1", "type": "reasoning", "summary": [
    {"type": "summary_text", "text": "**Checking the weather**\n\nI should call the tool."},
    {"type": "summary_text", "text": "**Answering**"}],
    "encrypted_content": "gAAAAABo-opaque+/=="}
WITH_TEXT = {"id": "rs_68a2", "type": "reasoning", "summary": [],
             "content": [{"type": "reasoning_text", "text": "The user wants Paris. Call it."}]}
CODEX = {"type": "reasoning", "summary": [{"type": "summary_text", "text": "Plan"}],
         "encrypted_content": "gAAAAABo-codex"}
CALL = {"type": "function_call", "call_id": "call_1", "name": "get_weather",
        "arguments": "{\"city\": \"Paris\"}"}
OUTPUT = {"type": "function_call_output", "call_id": "call_1", "output": "18 C"}


def body(*items: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"model": "o4-mini", "input": [{"role": "user", "content": "Weather in Paris?"},
                                          *items], **extra}


def test_reasoning_items_in_the_input_are_thinking_blocks() -> None:
    req = codec.decode_request(body(SUMMARISED, WITH_TEXT, CALL, OUTPUT))
    assert req.messages[1] == Message(role="assistant", content=[
        ThinkingBlock(id="rs_68a1", summary=["**Checking the weather**\n\nI should call the tool.",
                                             "**Answering**"], signature="gAAAAABo-opaque+/=="),
        ThinkingBlock(id="rs_68a2", text="The user wants Paris. Call it."),
        ToolUseBlock(id="call_1", name="get_weather", input={"city": "Paris"})])


@pytest.mark.parametrize("items", [
    [SUMMARISED, CALL, OUTPUT],
    [WITH_TEXT, CALL, OUTPUT],
    [CODEX, CALL, OUTPUT],
    [SUMMARISED, WITH_TEXT, CODEX, CALL, OUTPUT,
     {"type": "reasoning", "summary": []}, {"role": "assistant", "content": "18 C."}],
])
def test_request_round_trip_keeps_the_items_byte_for_byte(items: list[dict[str, Any]]) -> None:
    sent = body(*items)
    wire = json.loads(json.dumps(codec.encode_request(codec.decode_request(copy.deepcopy(sent)))))
    reasoning = [i for i in wire["input"] if i.get("type") == "reasoning"]
    assert reasoning == [i for i in items if i.get("type") == "reasoning"]
    # in their places: each before the call or message that followed it
    kinds = [i.get("type", "message") for i in wire["input"]]
    assert kinds == [i.get("type", "message") for i in sent["input"]]


def test_a_status_on_an_input_item_is_ignored_as_on_every_item() -> None:
    req = codec.decode_request(body({**SUMMARISED, "status": "completed"}, CALL, OUTPUT))
    assert req.messages[1].thinking[0] == ThinkingBlock(
        id="rs_68a1", summary=[p["text"] for p in SUMMARISED["summary"]],
        signature="gAAAAABo-opaque+/==")


@pytest.mark.parametrize(("item", "path"), [
    ({"type": "reasoning"}, "input.1.summary"),
    ({"type": "reasoning", "summary": [{"type": "reasoning_text", "text": "x"}]},
     "input.1.summary.0.type"),
    ({"type": "reasoning", "summary": [], "encrypted_content": 5}, "input.1.encrypted_content"),
    ({"type": "reasoning", "summary": [], "content": [{"type": "reasoning_text"}]},
     "input.1.content.0.text"),
])
def test_a_malformed_reasoning_item_is_refused_naming_the_field(item: dict[str, Any],
                                                                 path: str) -> None:
    from tooluse.errors import WireFormatError

    with pytest.raises(WireFormatError) as info:
        codec.decode_request(body(item))
    assert ".".join(str(p) for p in info.value.path) == path


def test_several_reasoning_text_parts_are_joined_with_a_log_line(
        caplog: pytest.LogCaptureFixture) -> None:
    item = {"type": "reasoning", "summary": [], "content": [
        {"type": "reasoning_text", "text": "one "}, {"type": "reasoning_text", "text": "two"}]}
    with caplog.at_level(logging.INFO, logger="tooluse.codecs.responses"):
        req = codec.decode_request(body(item))
    assert req.messages[1].thinking == [ThinkingBlock(text="one two")]
    assert "2 reasoning_text parts joined" in caplog.text and "input.1.content" in caplog.text


# --- the request's reasoning setting -------------------------------------------------------


@pytest.mark.parametrize(("raw", "neutral"), [
    ({"effort": "high", "summary": "detailed"}, Reasoning(effort="high", summary="detailed")),
    ({"effort": "none"}, Reasoning(mode="disabled", effort="none")),
    ({"generate_summary": "concise"}, Reasoning(summary="concise")),
    ({}, None),
])
def test_reasoning_setting_is_request_reasoning(raw: dict[str, Any],
                                                neutral: Reasoning | None) -> None:
    req = codec.decode_request({"model": "m", "input": "hi", "reasoning": raw})
    assert req.reasoning == neutral
    assert req.reasoning is None or req.reasoning.on == (raw.get("effort") != "none")


def test_a_clients_reasoning_and_include_go_upstream_as_sent() -> None:
    sent = {"model": "m", "input": "hi", "reasoning": {"effort": "low", "generate_summary": "auto"},
            "include": ["reasoning.encrypted_content", "message.output_text.logprobs"]}
    wire = codec.encode_request(codec.decode_request(copy.deepcopy(sent)))
    assert (wire["reasoning"], wire["include"]) == (sent["reasoning"], sent["include"])
    plain = codec.encode_request(codec.decode_request({"model": "m", "input": "hi"}))
    assert "reasoning" not in plain and "include" not in plain


def ask(reasoning: Reasoning) -> Request:
    return Request(model="m", messages=[Message(role="user", content=[TextBlock(text="hi")])],
                   reasoning=reasoning)


@pytest.mark.parametrize(("reasoning", "fields"), [
    (Reasoning(effort="medium", summary="auto"),
     {"reasoning": {"effort": "medium", "summary": "auto"},
      "include": ["reasoning.encrypted_content"]}),
    # Messages: adaptive thinking, shown summarized
    (Reasoning(mode="adaptive", display="summarized"),
     {"reasoning": {"summary": "auto"}, "include": ["reasoning.encrypted_content"]}),
    (Reasoning(mode="adaptive", display="omitted"), {"include": ["reasoning.encrypted_content"]}),
    (Reasoning(mode="disabled"), {"reasoning": {"effort": "none"}}),
])
def test_another_apis_reasoning_setting_in_responses_terms(reasoning: Reasoning,
                                                           fields: dict[str, Any]) -> None:
    wire = codec.encode_request(ask(reasoning))
    assert {k: wire[k] for k in ("reasoning", "include") if k in wire} == fields


def test_a_token_budget_has_no_responses_field(caplog: pytest.LogCaptureFixture) -> None:
    req = ask(Reasoning(mode="enabled", budget_tokens=4000))
    with pytest.raises(ConversionError, match="not a token budget") as info:
        codec.encode_request(req)
    assert info.value.path == ("reasoning", "budget_tokens")
    with caplog.at_level(logging.INFO, logger="tooluse.codecs"):
        wire = codec.encode_request(req, strict=False)
    assert "reasoning" not in wire and wire["include"] == ["reasoning.encrypted_content"]
    assert "not a token budget" in caplog.text and "left out" in caplog.text


# --- what has no Responses form ------------------------------------------------------------


def test_a_redacted_block_is_refused_in_strict_mode_else_left_out_with_a_log_line(
        caplog: pytest.LogCaptureFixture) -> None:
    req = Request(model="m", messages=[
        Message(role="user", content=[TextBlock(text="hi")]),
        Message(role="assistant", content=[RedactedThinkingBlock(data="EmwKAhgB"),
                                           TextBlock(text="Hello.")]),
        Message(role="user", content=[TextBlock(text="and?")])])
    with pytest.raises(ConversionError, match="no redacted reasoning") as info:
        codec.encode_request(req)
    assert info.value.path == ("messages", 1, "content", 0)
    with caplog.at_level(logging.INFO, logger="tooluse.codecs"):
        wire = codec.encode_request(req, strict=False)
    assert [i.get("type", "message") for i in wire["input"]] == ["message"] * 3
    assert "messages.1.content.0" in caplog.text
    answer = Response(id="resp_1", content=[RedactedThinkingBlock(data="EmwKAhgB"),
                                            TextBlock(text="Hi.")])
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="tooluse.codecs"):
        out = codec.encode_response(answer)
        events = list(codec.encode_events(events_from_response(answer)))
    assert [i["type"] for i in out["output"]] == ["message"]
    assert out["output"][0]["id"] == events[-1]["response"]["output"][0]["id"]
    assert events[-1]["response"]["output"] == out["output"]
    assert caplog.text.count("no redacted reasoning") == 2


def test_a_thinking_block_in_a_user_turn_is_refused() -> None:
    req = Request(model="m", messages=[Message(role="user", content=[
        ThinkingBlock(text="hm"), TextBlock(text="hi")])])
    with pytest.raises(ConversionError, match="belongs in an assistant turn"):
        codec.encode_request(req)


# --- responses -----------------------------------------------------------------------------


UPSTREAM = {"id": "resp_up", "object": "response", "created_at": 1, "model": "o4-mini",
            "status": "completed", "output": [SUMMARISED, WITH_TEXT, {
                "id": "fc_1", "type": "function_call", "status": "completed", **CALL}],
            "usage": {"input_tokens": 9, "output_tokens": 30}}


def test_response_round_trip_keeps_the_items_byte_for_byte() -> None:
    from openai.types.responses import Response as SdkResponse

    resp = codec.decode_response(UPSTREAM)
    assert resp.thinking == [
        ThinkingBlock(id="rs_68a1", summary=[p["text"] for p in SUMMARISED["summary"]],
                      signature="gAAAAABo-opaque+/=="),
        ThinkingBlock(id="rs_68a2", text="The user wants Paris. Call it.")]
    out = json.loads(json.dumps(codec.encode_response(resp)))
    assert out["output"][:2] == [SUMMARISED, WITH_TEXT]
    sdk = SdkResponse.model_validate(out)
    first = sdk.output[0]
    assert first.type == "reasoning" and first.encrypted_content == "gAAAAABo-opaque+/=="
    assert [s.text for s in first.summary] == [p["text"] for p in SUMMARISED["summary"]]


def test_a_thinking_block_without_an_id_gets_the_positional_one() -> None:
    resp = Response(id="resp_abc", content=[ThinkingBlock(text="t", signature="sig"),
                                           TextBlock(text="x")])
    out = codec.encode_response(resp)
    assert out["output"][0] == {"id": "rs_abc000", "type": "reasoning", "summary": [],
                                "content": [{"type": "reasoning_text", "text": "t"}],
                                "encrypted_content": "sig"}
    streamed = list(codec.encode_events(events_from_response(resp), request=None))
    assert streamed[-1]["response"]["output"] == out["output"]


# --- streams -------------------------------------------------------------------------------


THOUGHTFUL = Response(id="resp_1", model="m", content=[
    ThinkingBlock(text="Let me think.", summary=["**Plan**\n\nCall the tool.", ""],
                  signature="gAAAA+sig/==", id="rs_up"),
    TextBlock(text="Checking."),
    ToolUseBlock(id="call_1", name="get_weather", input={"city": "Paris"})],
    stop_reason="tool_use")


def test_stream_events_in_order_validate_as_the_sdks_types() -> None:
    from openai.types.responses import ResponseStreamEvent
    from pydantic import TypeAdapter

    adapter: TypeAdapter[Any] = TypeAdapter(ResponseStreamEvent)
    events = list(codec.encode_events(events_from_response(THOUGHTFUL, chunk_size=4)))
    parsed = [adapter.validate_python(e) for e in events]
    assert [e.sequence_number for e in parsed] == list(range(len(events)))
    kinds = [e["type"] for e in events if e.get("output_index") == 0]
    squeezed = [k for n, k in enumerate(kinds) if n == 0 or k != kinds[n - 1]]
    assert squeezed == [
        "response.output_item.added",
        "response.content_part.added", "response.reasoning_text.delta",
        "response.reasoning_text.done", "response.content_part.done",
        "response.reasoning_summary_part.added", "response.reasoning_summary_text.delta",
        "response.reasoning_summary_text.done", "response.reasoning_summary_part.done",
        "response.reasoning_summary_part.added",  # the empty second part: no delta
        "response.reasoning_summary_text.done", "response.reasoning_summary_part.done",
        "response.output_item.done"]
    summary_deltas = [e for e in events if e["type"] == "response.reasoning_summary_text.delta"]
    assert {e["summary_index"] for e in summary_deltas} == {0}
    assert "".join(e["delta"] for e in summary_deltas) == "**Plan**\n\nCall the tool."
    done = next(e for e in events if e["type"] == "response.output_item.done")
    assert done["item"] == codec.encode_response(THOUGHTFUL)["output"][0]
    assert done["item"]["encrypted_content"] == "gAAAA+sig/=="
    final = events[-1]["response"]["output"]
    assert final == codec.encode_response(THOUGHTFUL.model_copy(
        update={"id": events[0]["response"]["id"]}))["output"]


def test_an_upstream_stream_as_the_api_sends_it() -> None:
    """OpenAI's order for an o-series model: the item added with an empty summary, its
    summary parts, then the finished item with the encrypted content."""
    ids = {"item_id": "rs_1", "output_index": 0}
    events = [
        {"type": "response.created", "response": {"id": "resp_u", "model": "o4-mini"}},
        {"type": "response.output_item.added", "output_index": 0,
         "item": {"id": "rs_1", "type": "reasoning", "summary": []}},
        {"type": "response.reasoning_summary_part.added", **ids, "summary_index": 0,
         "part": {"type": "summary_text", "text": ""}},
        {"type": "response.reasoning_summary_text.delta", **ids, "summary_index": 0,
         "delta": "**Greeting**"},
        {"type": "response.reasoning_summary_text.delta", **ids, "summary_index": 0,
         "delta": " back"},
        {"type": "response.reasoning_summary_text.done", **ids, "summary_index": 0,
         "text": "**Greeting** back"},
        {"type": "response.reasoning_summary_part.done", **ids, "summary_index": 0,
         "part": {"type": "summary_text", "text": "**Greeting** back"}},
        {"type": "response.output_item.done", "output_index": 0, "item": {
            "id": "rs_1", "type": "reasoning", "encrypted_content": "gAAAA-full",
            "summary": [{"type": "summary_text", "text": "**Greeting** back"}]}},
        {"type": "response.output_item.added", "output_index": 1, "item": {
            "id": "msg_1", "type": "message", "role": "assistant", "content": []}},
        {"type": "response.content_part.added", "item_id": "msg_1", "output_index": 1,
         "content_index": 0, "part": {"type": "output_text", "text": ""}},
        {"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 1,
         "content_index": 0, "delta": "Hello!"},
        {"type": "response.output_item.done", "output_index": 1, "item": {"type": "message"}},
        {"type": "response.completed", "response": {"id": "resp_u", "status": "completed",
                                                    "output": []}},
    ]
    got = accumulate(codec.decode_events(events))
    assert got.content == [ThinkingBlock(id="rs_1", summary=["**Greeting** back"],
                                         signature="gAAAA-full"), TextBlock(text="Hello!")]


def test_what_a_finished_item_holds_beyond_its_deltas_is_kept() -> None:
    """A server that sends the reasoning only in the finished item (no deltas), or cuts a
    delta short: the item's text, summary parts and encrypted content still arrive."""
    events = [
        {"type": "response.created", "response": {"id": "r"}},
        {"type": "response.output_item.added", "output_index": 0,
         "item": {"id": "rs_9", "type": "reasoning", "summary": []}},
        {"type": "response.reasoning_text.delta", "item_id": "rs_9", "output_index": 0,
         "content_index": 0, "delta": "Thinking ab"},
        {"type": "response.output_item.done", "output_index": 0, "item": {
            "id": "rs_9", "type": "reasoning", "encrypted_content": "enc",
            "content": [{"type": "reasoning_text", "text": "Thinking about it."}],
            "summary": [{"type": "summary_text", "text": "S1"}, {"type": "summary_text",
                                                                 "text": ""}]}},
        {"type": "response.completed", "response": {"id": "r", "status": "completed"}},
    ]
    (block,) = accumulate(codec.decode_events(events)).content
    assert block == ThinkingBlock(id="rs_9", text="Thinking about it.", summary=["S1", ""],
                                  signature="enc")


def test_a_reasoning_delta_for_another_kind_of_item_is_a_wire_error() -> None:
    from tooluse.errors import WireFormatError

    events = [
        {"type": "response.created", "response": {"id": "r"}},
        {"type": "response.output_item.added", "output_index": 0,
         "item": {"id": "msg_1", "type": "message", "role": "assistant", "content": []}},
        {"type": "response.content_part.added", "item_id": "msg_1", "output_index": 0,
         "content_index": 0, "part": {"type": "output_text", "text": ""}},
        {"type": "response.reasoning_summary_text.delta", "item_id": "msg_1", "output_index": 0,
         "summary_index": 0, "delta": "x"},
    ]
    with pytest.raises(WireFormatError, match="not a reasoning item") as info:
        list(codec.decode_events(events))
    assert info.value.path == (3, "type")


thinking_blocks = st.builds(
    ThinkingBlock,
    text=st.text(max_size=30),
    summary=st.lists(st.text(max_size=20), max_size=3),
    signature=st.none() | st.text(min_size=1, max_size=40),
    id=st.none() | st.from_regex(r"rs_[a-z0-9]{1,8}", fullmatch=True),
)


@settings(max_examples=100, deadline=None)
@given(st.lists(thinking_blocks, min_size=1, max_size=3), st.integers(0, 6))
def test_thinking_round_trips_whole_and_streamed(blocks: list[ThinkingBlock], chunk: int) -> None:
    resp = Response(id="resp_p", model="m", content=[*blocks, TextBlock(text="ok")],
                    stop_reason="end_turn")
    # a block without an id gets its positional one; nothing else changes
    expected = [b if b.id is not None else b.model_copy(update={"id": f"rs_p{k:03d}"})
                for k, b in enumerate(blocks)]
    whole = codec.decode_response(json.loads(json.dumps(codec.encode_response(resp))))
    assert whole.content == [*expected, TextBlock(text="ok")]
    wire = [json.loads(json.dumps(e)) for e in codec.encode_events(
        events_from_response(resp.model_copy(update={"content": [*expected, TextBlock(
            text="ok")]}), chunk_size=chunk))]
    assert accumulate(codec.decode_events(wire)).content == [*expected, TextBlock(text="ok")]


def test_convert_knows_reasoning(monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    """``tooluse convert`` (through the CLI's main, stdin patched): requests, responses and
    streams keep their reasoning items."""
    import io
    import sys

    from tooluse.cli import main

    def convert(document: Any, *args: str, lines: bool = False) -> Any:
        text = "\n".join(json.dumps(e) for e in document) if lines else json.dumps(document)
        monkeypatch.setattr(sys, "stdin", io.StringIO(text))
        assert main(["convert", "--from", "responses", "--to", "responses", *args]) == 0
        out = capsys.readouterr().out
        return [json.loads(line) for line in out.splitlines()] if lines else json.loads(out)

    out = convert(body(SUMMARISED, CALL, OUTPUT, reasoning={"effort": "low"}))
    assert out["input"][1] == SUMMARISED and out["reasoning"] == {"effort": "low"}
    assert convert(UPSTREAM, "--response")["output"][:2] == [SUMMARISED, WITH_TEXT]
    streamed = list(codec.encode_events(events_from_response(THOUGHTFUL)))
    again = convert(streamed, "--stream", lines=True)
    assert [e["type"] for e in again] == [e["type"] for e in streamed]
    assert again[-1]["response"]["output"][0] == streamed[-1]["response"]["output"][0]
