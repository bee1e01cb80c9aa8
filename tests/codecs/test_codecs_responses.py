"""OpenAI Responses API codec: mapping rules, validation, streams, round-trip properties.

The wire shapes are checked against the openai SDK's own types (``openai.types.responses``):
what the codec writes must validate as the SDK's ``Response`` and stream event models."""

from __future__ import annotations

import json
from typing import Any

import pytest
from codec_strategies import Caps, requests, responses
from hypothesis import given, settings
from hypothesis import strategies as st

from tooluse.codecs import get_codec
from tooluse.codecs import responses as codec
from tooluse.errors import BackendError, ConversionError, WireFormatError
from tooluse.messages import (
    ImageBlock,
    Reasoning,
    Request,
    Response,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)
from tooluse.stream import accumulate, events_from_response

WEATHER = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"],
           "additionalProperties": False}
PNG = "data:image/png;base64,iVBORw0KGgo="

BODY: dict[str, Any] = {
    "model": "gpt-5",
    "instructions": "Be brief.",
    "input": [
        {"role": "developer", "content": "Use metric units."},
        {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "Weather in Paris?"},
            {"type": "input_image", "image_url": PNG, "detail": "auto"}]},
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "xyz"},
        {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_weather",
         "arguments": "{\"city\": \"Paris\"}", "status": "completed"},
        {"type": "function_call_output", "call_id": "call_1", "output": "18 C"},
        {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
         "content": [{"type": "output_text", "text": "18 C.", "annotations": [], "logprobs": []}]},
        {"role": "user", "content": "And patch it."},
        {"type": "custom_tool_call", "call_id": "call_2", "name": "apply_patch",
         "input": "*** Begin Patch"},
        {"type": "custom_tool_call_output", "call_id": "call_2", "output": "done"},
    ],
    "tools": [
        {"type": "function", "name": "get_weather", "description": "Weather.",
         "parameters": WEATHER, "strict": True},
        {"type": "custom", "name": "apply_patch", "description": "Patch files.",
         "format": {"type": "grammar", "syntax": "lark", "definition": "start: /.+/"}},
        {"type": "custom", "name": "version", "format": {"type": "grammar", "syntax": "regex",
                                                        "definition": "v[0-9]+"}},
        {"type": "namespace", "name": "mcp__fs", "description": "Files.", "tools": [
            {"type": "function", "name": "read", "parameters": {"type": "object", "properties": {}}}]},
        {"type": "web_search"},
    ],
    "tool_choice": "auto",
    "parallel_tool_calls": False,
    "max_output_tokens": 300,
    "temperature": 0.5,
    "store": False,
    "include": ["reasoning.encrypted_content"],
    "reasoning": {"effort": "low", "summary": "auto"},
    "prompt_cache_key": "k",
    "client_metadata": {"session": "s"},
    "metadata": {"a": "b"},
    "safety_identifier": "user-1",
    "text": {"format": {"type": "json_schema", "name": "out", "strict": True,
                        "schema": {"type": "object", "properties": {"a": {"type": "string"}}}}},
}


def test_decode_maps_items_tools_and_settings() -> None:
    req = codec.decode_request(BODY)
    assert req.system_text() == "Be brief.\n\nUse metric units."
    assert [m.role for m in req.messages] == ["user", "assistant"] * 3 + ["user"]
    assert req.messages[0].content[1] == ImageBlock(media_type="image/png", data="iVBORw0KGgo=")
    assert req.messages[1].content == [
        ThinkingBlock(id="rs_1", signature="xyz"),
        ToolUseBlock(id="call_1", name="get_weather", input={"city": "Paris"})]
    assert req.reasoning == Reasoning(effort="low", summary="auto")
    assert req.messages[2].content == [ToolResultBlock(tool_use_id="call_1", content="18 C")]
    assert req.messages[3].content == [TextBlock(text="18 C.")]
    assert req.messages[5].content == [ToolUseBlock(
        id="call_2", name="apply_patch", input={"input": "*** Begin Patch"})]
    assert [t.name for t in req.tools] == ["get_weather", "apply_patch", "version", "mcp__fs__read"]
    assert req.tools[0].strict and req.tools[3].strict  # the API's default strict is true
    assert req.tools[2].input_schema["properties"]["input"]["pattern"] == "^(?:v[0-9]+)$"
    assert "Lark grammar" in req.tools[1].description and "start: /.+/" in req.tools[1].description
    assert req.tool_choice is not None and req.tool_choice.disable_parallel_tool_use
    assert (req.max_tokens, req.temperature, req.metadata) == (300, 0.5, {"user_id": "user-1"})
    assert req.response_schema == {"type": "object", "properties": {"a": {"type": "string"}}}
    assert req.passthrough is not None and req.passthrough.required == []  # web_search drops
    assert req.passthrough.tools == [{"type": "web_search"}]
    assert set(req.passthrough.fields) == {"include", "reasoning", "prompt_cache_key"}


def test_input_string_and_json_object_format() -> None:
    req = codec.decode_request({"model": "m", "input": "hi", "text": {"format": {"type": "json_object"}}})
    assert req.messages[0].content == [TextBlock(text="hi")]
    assert req.response_schema == {"type": "object"}


def test_previous_conversation_is_continued() -> None:
    first = codec.decode_request({"model": "m", "input": "hi", "tools": BODY["tools"][:1]})
    previous = Request(messages=[*first.messages, Response(content=[ToolUseBlock(
        id="c1", name="get_weather", input={"city": "Oslo"})]).to_message()])
    req = codec.decode_request({"model": "m", "input": [
        {"type": "function_call_output", "call_id": "c1", "output": "cold"}]}, previous=previous)
    assert [m.role for m in req.messages] == ["user", "assistant", "user"]
    with pytest.raises(WireFormatError, match="No tool call found for function call output"):
        codec.decode_request({"model": "m", "input": [
            {"type": "function_call_output", "call_id": "c1", "output": "cold"}]})


@pytest.mark.parametrize(("body", "path", "message"), [
    ({"model": "m", "input": "x", "frobnicate": 1}, "frobnicate", "Extra inputs"),
    ({"model": "m", "input": [{"type": "bogus"}]}, "input.0.type", "does not match"),
    ({"model": "m", "input": [{"type": "function_call", "call_id": "c", "name": "f",
                               "arguments": "{"}]}, "input.0.arguments", "not valid JSON"),
    ({"model": "m", "input": [{"type": "function_call", "call_id": "c", "name": "f",
                               "arguments": "{}"}]}, "input.0", "No tool output found"),
    ({"model": "m", "input": "x", "tools": [{"type": "function", "name": "bad name",
                                             "parameters": {"type": "object"}}]}, "tools.0.name", ""),
    ({"model": "m", "input": "x", "tools": [{"type": "custom", "name": "p", "format": {
        "type": "grammar", "syntax": "ebnf", "definition": "x"}}]}, "tools.0.format.syntax", ""),
    ({"model": "m", "input": "x", "tool_choice": {"type": "function", "name": "nope"},
      "tools": [{"type": "function", "name": "f"}]}, "tool_choice.name", "not found"),
    ({"model": "m", "input": "x", "background": True}, "background", "not supported"),
    ({"model": "m", "input": "x", "conversation": "conv_1"}, "conversation", "not supported"),
    ({"model": "m", "input": [{"role": "user", "content": [{"type": "input_file",
                                                            "file_id": "f"}]}]},
     "input.0.content.0.file_id", "Files API"),
    ({"model": "m", "input": []}, "input", "at least one"),
    ({"model": "m", "input": [{"type": "item_reference", "id": "msg_1"}]}, "input.0.id", ""),
    ({"model": "m", "input": "x", "text": {"format": {"type": "json_schema", "name": "x",
                                                      "schema": {"type": "array"}}}},
     "text.format.schema.type", ""),
])
def test_bad_requests_name_the_field(body: dict[str, Any], path: str, message: str) -> None:
    with pytest.raises(WireFormatError, match=message or None) as info:
        codec.decode_request(body)
    assert ".".join(str(p) for p in info.value.path) == path


def test_server_tools_other_than_web_search_are_required() -> None:
    req = codec.decode_request({"model": "m", "input": "x", "tools": [
        {"type": "file_search", "vector_store_ids": ["v"]}, {"type": "web_search_preview"}]})
    assert req.passthrough is not None
    assert req.passthrough.required == [
        "tools.0: file_search: OpenAI searches your vector stores for the model"]


def test_input_file_text_is_carried_as_text() -> None:
    import base64
    data = base64.b64encode(b"hello file").decode()
    req = codec.decode_request({"model": "m", "input": [{"role": "user", "content": [
        {"type": "input_file", "filename": "a.txt", "file_data": f"data:text/plain;base64,{data}"}]}]})
    assert req.messages[0].content == [TextBlock(text="a.txt\n\nhello file")]
    with pytest.raises(WireFormatError, match="application/pdf"):
        codec.decode_request({"model": "m", "input": [{"role": "user", "content": [
            {"type": "input_file", "file_data": f"data:application/pdf;base64,{data}"}]}]})


def test_encode_request_round_trips_the_custom_and_namespace_tools() -> None:
    req = codec.decode_request(BODY)
    wire = codec.encode_request(req)
    assert wire["store"] is False and wire["instructions"] == "Be brief."
    assert wire["input"][0] == {"role": "developer", "content": "Use metric units."}
    assert [t["type"] for t in wire["tools"]] == ["function", "custom", "custom", "namespace",
                                                 "web_search"]
    assert wire["tools"][1] == BODY["tools"][1]
    assert wire["tools"][3]["tools"][0]["name"] == "read"
    again = codec.decode_request(json.loads(json.dumps(wire)))
    assert again.messages == req.messages and again.tools == req.tools


def test_encode_request_cannot_carry_stop_sequences_or_is_error() -> None:
    req = Request(model="m", messages=[
        Request(messages=[]).messages or {"role": "user", "content": "x"}],  # type: ignore[list-item]
        stop_sequences=["END"])
    with pytest.raises(ConversionError, match="stop sequences"):
        codec.encode_request(req)
    assert "stop" not in codec.encode_request(req, strict=False)


RESPONSE = Response(id="resp_1", model="m", content=[
    TextBlock(text="Here."),
    ToolUseBlock(id="c1", name="mcp__fs__read", input={}),
    ToolUseBlock(id="c2", name="apply_patch", input={"input": "*** Begin\n"})],
    stop_reason="tool_use", usage=Usage(input_tokens=10, output_tokens=4))


def test_encode_response_validates_as_the_sdks_response() -> None:
    from openai.types.responses import Response as SdkResponse

    req = codec.decode_request(BODY)
    body = codec.encode_response(RESPONSE, request=req, echo=codec.echo_fields(BODY))
    sdk = SdkResponse.model_validate(body)
    message, read, patch = sdk.output
    assert message.type == "message" and sdk.output_text == "Here."
    assert read.type == "function_call" and (read.name, read.namespace) == ("read", "mcp__fs")
    assert patch.type == "custom_tool_call" and patch.input == "*** Begin\n"
    assert sdk.usage is not None and sdk.usage.total_tokens == 14
    assert (sdk.status, sdk.instructions, sdk.parallel_tool_calls) == ("completed", "Be brief.", False)
    assert codec.decode_response(body) == RESPONSE


def test_incomplete_and_failed_responses() -> None:
    body = codec.encode_response(RESPONSE.model_copy(update={"stop_reason": "max_tokens"}))
    assert body["status"] == "incomplete"
    assert body["incomplete_details"] == {"reason": "max_output_tokens"}
    assert codec.decode_response(body).stop_reason == "max_tokens"
    with pytest.raises(BackendError, match="boom"):
        codec.decode_response({**body, "status": "failed", "error": {"code": "server_error",
                                                                     "message": "boom"}})


def test_stream_events_validate_as_the_sdks_events_in_order() -> None:
    from openai.types.responses import ResponseStreamEvent
    from pydantic import TypeAdapter

    adapter: TypeAdapter[Any] = TypeAdapter(ResponseStreamEvent)
    req = codec.decode_request(BODY)
    events = list(codec.encode_events(events_from_response(RESPONSE, chunk_size=3), request=req))
    for event in events:
        adapter.validate_python(event)
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    kinds = [e["type"] for e in events]
    assert kinds[:4] == ["response.created", "response.in_progress",
                         "response.output_item.added", "response.content_part.added"]
    assert kinds[-1] == "response.completed"
    assert "response.function_call_arguments.done" in kinds
    custom = "".join(e["delta"] for e in events if e["type"] == "response.custom_tool_call_input.delta")
    assert custom == "*** Begin\n"
    assert events[-1]["response"]["output"] == codec.encode_response(
        RESPONSE.model_copy(update={"id": events[0]["response"]["id"]}), request=req,
        echo=codec.echo_fields())["output"]
    assert accumulate(codec.decode_events(events)).content == RESPONSE.content


def test_stream_failure_events() -> None:
    encoder = codec.StreamEncoder(response_id="resp_x")
    list(encoder.encode(list(events_from_response(RESPONSE))[:3]))
    error, failed = encoder.fail("rate_limit", "slow down")
    assert (error["type"], error["code"], error["message"]) == ("error", "rate_limit_exceeded", "slow down")
    assert failed["type"] == "response.failed" and failed["response"]["status"] == "failed"
    assert failed["response"]["error"] == {"code": "rate_limit_exceeded", "message": "slow down"}
    with pytest.raises(BackendError, match="slow down"):
        list(codec.decode_events([{"type": "response.created", "response": {"id": "r"}}, error]))


def test_registered_for_convert() -> None:
    from tooluse.cli.convert import convert_document

    assert get_codec("responses") is codec
    chat = convert_document({"model": "m", "input": "hi", "instructions": "sys"}, "responses", "openai")
    assert chat["messages"] == [{"role": "system", "content": "sys"}, {"role": "user", "content": "hi"}]
    back = convert_document(chat, "openai", "responses")
    assert back["input"] == [{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}]


RESPONSES_CAPS = Caps("responses", json_results=False, is_error=False, top_k=False,
                      stop_sequence=False,
                      stop_reasons=("end_turn", "tool_use", "max_tokens", "content_filtered"),
                      temperature_max=2.0)


@settings(max_examples=150, deadline=None)
@given(requests(RESPONSES_CAPS))
def test_neutral_request_round_trip(req: Request) -> None:
    req = req.model_copy(update={"stop_sequences": []})
    wire = codec.encode_request(req)
    assert codec.decode_request(json.loads(json.dumps(wire))) == req


def _expected(resp: Response) -> Response:
    calls = any(isinstance(b, ToolUseBlock) for b in resp.content)
    stop = resp.stop_reason
    if stop in ("end_turn", "tool_use", "stop_sequence", None):
        stop = "tool_use" if calls else "end_turn"
    return resp.model_copy(update={"stop_reason": stop, "stop_sequence": None})


@settings(max_examples=150, deadline=None)
@given(responses(RESPONSES_CAPS))
def test_neutral_response_round_trip(resp: Response) -> None:
    wire = json.loads(json.dumps(codec.encode_response(resp)))
    assert codec.decode_response(wire) == _expected(resp).model_copy(
        update={"id": wire["id"]})


@settings(max_examples=100, deadline=None)
@given(responses(RESPONSES_CAPS), st.integers(0, 7))
def test_stream_round_trip(resp: Response, chunk: int) -> None:
    wire = [json.loads(json.dumps(e)) for e in codec.encode_events(
        events_from_response(resp, chunk_size=chunk))]
    got = accumulate(codec.decode_events(wire))
    assert got.content == resp.content
    assert got.stop_reason == _expected(resp).stop_reason
