"""Prompt caching through the codecs: Messages ``cache_control`` and Converse ``cachePoint``
breakpoints <-> :class:`CacheHint`, both ways and across the two; the cache counts of every
API's usage <-> :class:`Usage` (answers and streams)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from codec_strategies import ANTHROPIC, BEDROCK, requests, responses
from hypothesis import given, settings
from hypothesis import strategies as st
from test_codecs_anthropic import TINY_JPEG
from test_codecs_bedrock import botocore_accepts

from tooluse.codecs import anthropic, bedrock, openai
from tooluse.codecs import responses as responses_api
from tooluse.messages import (
    CacheHint,
    Message,
    Request,
    Response,
    TextBlock,
    ToolResultBlock,
    Usage,
)
from tooluse.stream import accumulate, events_from_response

EPHEMERAL = {"type": "ephemeral"}
HOUR = {"type": "ephemeral", "ttl": "1h"}
SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}}


def messages_request() -> dict[str, Any]:
    """A Claude Code-like request: breakpoints on the system prompt, the last tool, a tool
    call, a tool result (and a part of one), an image and the last text block."""
    return {
        "model": "claude-sonnet-4-5",
        "max_tokens": 1024,
        "system": [{"type": "text", "text": "You are Claude Code."},
                   {"type": "text", "text": "Be brief.", "cache_control": HOUR}],
        "messages": [
            {"role": "user", "content": [
                {"type": "text", "text": "read a.txt and b.txt"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg",
                                             "data": TINY_JPEG}, "cache_control": EPHEMERAL}]},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"path": "a.txt"}},
                {"type": "tool_use", "id": "toolu_2", "name": "Read", "input": {"path": "b.txt"},
                 "cache_control": EPHEMERAL}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "alpha",
                 "cache_control": EPHEMERAL},
                {"type": "tool_result", "tool_use_id": "toolu_2", "content": [
                    {"type": "text", "text": "beta", "cache_control": {"type": "ephemeral", "ttl": "5m"}},
                    {"type": "text", "text": "gamma"}]},
                {"type": "text", "text": "what do they say?", "cache_control": EPHEMERAL}]},
        ],
        "tools": [{"name": "Glob", "description": "find files", "input_schema": SCHEMA},
                  {"name": "Read", "description": "read a file", "input_schema": SCHEMA,
                   "cache_control": EPHEMERAL}],
    }


# --- Messages breakpoints ----------------------------------------------------------------


def test_messages_breakpoints_decode_onto_their_blocks_and_tools() -> None:
    req = anthropic.decode_request(messages_request())
    assert [b.cache for b in req.system] == [None, CacheHint(ttl="1h")]
    assert [t.cache for t in req.tools] == [None, CacheHint()]
    first, calls, results = req.messages
    assert [b.cache for b in first.content] == [None, CacheHint()]
    assert [b.cache for b in calls.content] == [None, CacheHint()]
    result_1, result_2, text = results.content
    assert isinstance(result_1, ToolResultBlock) and result_1.cache == CacheHint()
    assert isinstance(result_2, ToolResultBlock) and result_2.cache is None
    assert [p.cache for p in result_2.content] == [CacheHint(ttl="5m"), None]  # type: ignore[union-attr]
    assert text == TextBlock(text="what do they say?", cache=CacheHint())


def test_messages_request_with_breakpoints_round_trips_unchanged() -> None:
    data = messages_request()
    assert anthropic.encode_request(anthropic.decode_request(copy.deepcopy(data))) == data


@pytest.mark.parametrize(("where", "shorthand"), [("system", "Be brief."), ("content", "hi")])
def test_one_text_block_with_a_breakpoint_stays_a_list(where: str, shorthand: str) -> None:
    block = {"type": "text", "text": shorthand, "cache_control": EPHEMERAL}
    data: dict[str, Any] = {"model": "m", "max_tokens": 5,
                            "messages": [{"role": "user", "content": "hi"}]}
    if where == "system":
        data["system"] = [block]
    else:
        data["messages"][0]["content"] = [block]
    assert anthropic.encode_request(anthropic.decode_request(copy.deepcopy(data))) == data
    # without the breakpoint the API's string shorthand is written, as before
    del block["cache_control"]
    out = anthropic.encode_request(anthropic.decode_request(data))
    assert (out["system"] if where == "system" else out["messages"][0]["content"]) == shorthand


def test_document_and_search_result_keep_their_breakpoint_on_their_text() -> None:
    data = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": [
        {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "doc"},
         "title": "T", "cache_control": EPHEMERAL},
        {"type": "search_result", "source": "https://x", "title": "S",
         "content": [{"type": "text", "text": "found"}], "cache_control": HOUR},
        {"type": "text", "text": "question"}]}]}
    blocks = anthropic.decode_request(data).messages[0].content
    assert [b.cache for b in blocks] == [CacheHint(), CacheHint(ttl="1h"), None]


def test_a_breakpoint_on_a_thinking_block_is_left_out() -> None:
    """The API takes no breakpoint on thinking blocks; the neutral block has none."""
    data = {"model": "m", "max_tokens": 5, "messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "hm", "signature": "sig", "cache_control": EPHEMERAL},
            {"type": "text", "text": "hello"}]},
        {"role": "user", "content": "again"}]}
    out = anthropic.encode_request(anthropic.decode_request(data))
    assert out["messages"][1]["content"][0] == {"type": "thinking", "thinking": "hm", "signature": "sig"}


def test_a_bad_cache_control_is_refused_by_path() -> None:
    data = messages_request()
    data["messages"][2]["content"][0]["cache_control"] = {"type": "ephemeral", "ttl": "2d"}
    from tooluse.errors import WireFormatError

    with pytest.raises(WireFormatError) as info:
        anthropic.decode_request(data)
    assert info.value.path[:5] == ("messages", 2, "content", 0, "cache_control")


# --- Converse cachePoints ----------------------------------------------------------------

POINT = {"cachePoint": {"type": "default"}}
POINT_1H = {"cachePoint": {"type": "default", "ttl": "1h"}}


def converse_request() -> dict[str, Any]:
    return {
        "modelId": "anthropic.claude-sonnet-4-5",
        "messages": [
            {"role": "user", "content": [{"text": "read a.txt"}, POINT]},
            {"role": "assistant", "content": [
                {"toolUse": {"toolUseId": "t1", "name": "Read", "input": {"path": "a.txt"}}}, POINT]},
            {"role": "user", "content": [
                {"toolResult": {"toolUseId": "t1", "content": [{"text": "alpha"}]}}, POINT,
                {"text": "and?"}, POINT]},
        ],
        "system": [{"text": "You are helpful."}, POINT_1H],
        "toolConfig": {"tools": [
            {"toolSpec": {"name": "Glob", "inputSchema": {"json": SCHEMA}}},
            {"toolSpec": {"name": "Read", "description": "read", "inputSchema": {"json": SCHEMA}}},
            POINT_1H]},
    }


def test_converse_cache_points_are_hints_on_the_block_before() -> None:
    req = bedrock.decode_request(converse_request())
    assert [b.cache for b in req.system] == [CacheHint(ttl="1h")]
    assert [t.cache for t in req.tools] == [None, CacheHint(ttl="1h")]
    assert [[b.cache for b in m.content] for m in req.messages] == [
        [CacheHint()], [CacheHint()], [CacheHint(), CacheHint()]]


def test_converse_request_with_cache_points_round_trips_unchanged() -> None:
    data = converse_request()
    out = bedrock.encode_request(bedrock.decode_request(copy.deepcopy(data)))
    assert out == data
    botocore_accepts(bedrock.encode_request(bedrock.decode_request(data), binary=True))


def test_converse_cache_point_opening_a_message_marks_the_turn_before() -> None:
    data = converse_request()
    data["messages"][1]["content"] = [data["messages"][1]["content"][0]]
    data["messages"][2]["content"].insert(0, POINT)  # the same prefix as after the toolUse
    req = bedrock.decode_request(data)
    assert req.messages[1].content[0].cache == CacheHint()  # type: ignore[union-attr]


def test_converse_cache_point_with_nothing_before_it_is_left_out() -> None:
    data = converse_request()
    data["system"] = [POINT, {"text": "You are helpful."}]
    data["toolConfig"]["tools"].insert(0, POINT)
    req = bedrock.decode_request(data)
    assert [b.cache for b in req.system] == [None]
    assert req.tools[0].cache is None


def test_converse_bad_cache_point_is_refused_by_path() -> None:
    from tooluse.errors import WireFormatError

    data = converse_request()
    data["messages"][0]["content"][1] = {"cachePoint": {"type": "default", "ttl": "7d"}}
    with pytest.raises(WireFormatError) as info:
        bedrock.decode_request(data)
    assert info.value.path[:5] == ("messages", 0, "content", 1, "cachePoint")


def test_messages_to_converse_to_messages_keeps_the_breakpoints() -> None:
    """Every breakpoint a cachePoint can follow comes back where it was; the one on a tool
    result's part (a toolResult cannot hold a cachePoint) follows its tool result."""
    data = messages_request()
    converse = bedrock.encode_request(anthropic.decode_request(copy.deepcopy(data)))
    botocore_accepts(bedrock.encode_request(anthropic.decode_request(copy.deepcopy(data)), binary=True))
    assert converse["system"] == [{"text": "You are Claude Code."}, {"text": "Be brief."}, POINT_1H]
    assert converse["toolConfig"]["tools"][2] == POINT
    results = converse["messages"][2]["content"]
    assert [next(iter(b)) for b in results] == ["toolResult", "cachePoint", "toolResult",
                                                 "cachePoint", "text", "cachePoint"]
    assert results[3] == {"cachePoint": {"type": "default", "ttl": "5m"}}
    back = anthropic.encode_request(bedrock.decode_request(converse))
    expected = messages_request()
    moved = expected["messages"][2]["content"][1]
    moved["content"][0].pop("cache_control")
    moved["cache_control"] = {"type": "ephemeral", "ttl": "5m"}
    back["model"] = expected["model"]
    assert back == expected


# --- usage -------------------------------------------------------------------------------

CACHED = Usage(input_tokens=12, output_tokens=30, cache_read_input_tokens=4000,
               cache_creation_input_tokens=1500, cache_creation_by_ttl={"5m": 500, "1h": 1000})


def test_messages_usage_cache_counts_both_ways() -> None:
    body = {"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
            "content": [{"type": "text", "text": "hi"}], "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 12, "cache_creation_input_tokens": 1500,
                      "cache_read_input_tokens": 4000,
                      "cache_creation": {"ephemeral_5m_input_tokens": 500,
                                         "ephemeral_1h_input_tokens": 1000},
                      "output_tokens": 30, "service_tier": "standard"}}
    resp = anthropic.decode_response(body)
    assert resp.usage == CACHED
    out = anthropic.encode_response(resp)
    body["usage"].pop("service_tier")  # not carried (docs/server.md)
    assert out == body
    # an answer without cache counts reads as before
    plain = anthropic.encode_response(resp.model_copy(update={"usage": Usage(input_tokens=3, output_tokens=4)}))
    assert plain["usage"] == {"input_tokens": 3, "output_tokens": 4}


def test_messages_stream_carries_the_cache_counts() -> None:
    resp = Response(id="msg_1", model="m", content=[TextBlock(text="hi")], stop_reason="end_turn",
                    usage=CACHED)
    wire = [json.loads(json.dumps(e)) for e in anthropic.encode_events(events_from_response(resp))]
    assert wire[0]["message"]["usage"] == {
        "input_tokens": 12, "cache_creation_input_tokens": 1500, "cache_read_input_tokens": 4000,
        "cache_creation": {"ephemeral_5m_input_tokens": 500, "ephemeral_1h_input_tokens": 1000},
        "output_tokens": 0}
    assert accumulate(anthropic.decode_events(wire)) == resp
    # the API's message_delta repeats the input side: a correction there wins
    wire[-2]["usage"]["cache_read_input_tokens"] = 4100
    assert accumulate(anthropic.decode_events(wire)).usage.cache_read_input_tokens == 4100


def test_converse_usage_cache_counts_both_ways() -> None:
    usage = {"inputTokens": 12, "outputTokens": 30, "totalTokens": 5542,
             "cacheReadInputTokens": 4000, "cacheWriteInputTokens": 1500,
             "cacheDetails": [{"ttl": "5m", "inputTokens": 500}, {"ttl": "1h", "inputTokens": 1000}]}
    body = {"output": {"message": {"role": "assistant", "content": [{"text": "hi"}]}},
            "stopReason": "end_turn", "usage": usage, "metrics": {"latencyMs": 0}}
    resp = bedrock.decode_response(body)
    assert resp.usage == CACHED
    assert bedrock.encode_response(resp) == body
    wire = list(bedrock.encode_events(events_from_response(resp)))
    assert wire[-1]["metadata"]["usage"] == usage
    assert accumulate(bedrock.decode_events(wire)).usage == CACHED


def test_chat_usage_cached_tokens_are_cache_reads() -> None:
    body = {"id": "c", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi", "refusal": None},
                         "logprobs": None, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 4012, "completion_tokens": 30, "total_tokens": 4042,
                      "prompt_tokens_details": {"cached_tokens": 4000}}}
    resp = openai.decode_response(body)
    assert resp.usage == Usage(input_tokens=12, output_tokens=30, cache_read_input_tokens=4000)
    assert openai.encode_response(resp, created=1) == body
    # a Messages upstream's counts: the whole prompt, its reads as cached_tokens
    out = openai.encode_response(resp.model_copy(update={"usage": CACHED}), created=1)
    assert out["usage"] == {"prompt_tokens": 5512, "completion_tokens": 30, "total_tokens": 5542,
                            "prompt_tokens_details": {"cached_tokens": 4000}}
    chunks = list(openai.encode_events(events_from_response(resp.model_copy(update={"usage": CACHED})),
                                       include_usage=True, created=1))
    assert chunks[-1]["usage"] == out["usage"]
    assert accumulate(openai.decode_events(chunks)).usage == Usage(
        input_tokens=1512, output_tokens=30, cache_read_input_tokens=4000)


def test_responses_usage_cached_tokens_both_ways() -> None:
    resp = Response(id="resp_1", model="m", content=[TextBlock(text="hi")], stop_reason="end_turn",
                    usage=Usage(input_tokens=12, output_tokens=30, cache_read_input_tokens=4000,
                                cache_creation_input_tokens=1500))
    body = responses_api.encode_response(resp)
    assert body["usage"]["input_tokens"] == 5512
    assert body["usage"]["input_tokens_details"] == {"cached_tokens": 4000, "cache_write_tokens": 1500}
    assert body["usage"]["total_tokens"] == 5542
    assert responses_api.decode_response(body).usage == resp.usage
    events = list(responses_api.encode_events(events_from_response(resp)))
    assert events[-1]["response"]["usage"] == body["usage"]
    assert accumulate(responses_api.decode_events(events)).usage == resp.usage


# --- properties --------------------------------------------------------------------------


@st.composite
def hinted_requests(draw: Any, caps: Any) -> Request:
    """A request the format carries, with breakpoints (ttl or none) on some system blocks,
    tools and message blocks."""
    req: Request = draw(requests(caps))
    hint = st.none() | st.builds(CacheHint, ttl=st.sampled_from([None, "5m", "1h"]))
    system = [b.model_copy(update={"cache": draw(hint)}) for b in req.system]
    tools = [t.model_copy(update={"cache": draw(hint)}) for t in req.tools]
    messages = [Message(role=m.role, content=[b.model_copy(update={"cache": draw(hint)})
                                              for b in m.content]) for m in req.messages]
    return req.model_copy(update={"system": system, "tools": tools, "messages": messages})


@settings(max_examples=100, deadline=None)
@given(hinted_requests(ANTHROPIC))
def test_messages_round_trip_keeps_every_breakpoint(req: Request) -> None:
    wire = anthropic.encode_request(req)
    assert anthropic.decode_request(json.loads(json.dumps(wire))) == req


@settings(max_examples=100, deadline=None)
@given(hinted_requests(BEDROCK))
def test_converse_round_trip_keeps_every_breakpoint(req: Request) -> None:
    wire = bedrock.encode_request(req)
    assert bedrock.decode_request(json.loads(json.dumps(wire))) == req
    botocore_accepts(bedrock.encode_request(req, binary=True))


cache_usages = st.builds(
    Usage, input_tokens=st.integers(0, 10**6), output_tokens=st.integers(0, 10**6),
    cache_read_input_tokens=st.integers(0, 10**6), cache_creation_input_tokens=st.integers(0, 10**6))


@settings(max_examples=60, deadline=None)
@given(responses(ANTHROPIC), cache_usages)
def test_messages_answers_keep_the_cache_counts(resp: Response, usage: Usage) -> None:
    resp = resp.model_copy(update={"usage": usage})
    assert anthropic.decode_response(json.loads(json.dumps(anthropic.encode_response(resp)))) == resp
    wire = [json.loads(json.dumps(e)) for e in anthropic.encode_events(events_from_response(resp))]
    assert accumulate(anthropic.decode_events(wire)).usage == usage


@settings(max_examples=60, deadline=None)
@given(responses(BEDROCK), cache_usages)
def test_converse_answers_keep_the_cache_counts(resp: Response, usage: Usage) -> None:
    resp = resp.model_copy(update={"usage": usage})
    assert bedrock.decode_response(json.loads(json.dumps(bedrock.encode_response(resp)))) == resp
    assert accumulate(bedrock.decode_events(bedrock.encode_events(events_from_response(resp)))).usage == usage

