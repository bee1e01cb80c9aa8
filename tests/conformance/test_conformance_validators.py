"""The validators the conformance tests use refuse what their schemas refuse (so a passing
conformance test is not a validator that accepts anything: a ``$ref`` that resolved to
nothing, a union read too loosely, extra fields let through)."""

from __future__ import annotations

from typing import Any

from anthropic import types
from conformance_openai import Document
from conformance_vendor_types import anthropic_errors, bedrock_model, botocore_errors

ERROR = {"error": {"message": "bad", "type": "invalid_request_error", "param": None,
                   "code": None}}
MESSAGE = {"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
           "content": [{"type": "text", "text": "hi", "citations": None}],
           "stop_reason": "end_turn", "stop_sequence": None,
           "usage": {"input_tokens": 1, "output_tokens": 1}}


def _without(data: dict[str, Any], *path: Any) -> dict[str, Any]:
    import copy

    out = copy.deepcopy(data)
    node: Any = out
    for key in path[:-1]:
        node = node[key]
    del node[path[-1]]
    return out


def test_the_openai_document_refuses_what_it_refuses(openai_doc: Document) -> None:
    assert openai_doc.errors("ErrorResponse", ERROR) == []
    assert openai_doc.errors("ErrorResponse", _without(ERROR, "error", "param"))
    assert openai_doc.errors("ErrorResponse", {"error": {**ERROR["error"], "code": 5}})
    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
             "choices": [{"index": 0, "delta": {"content": "x"}, "finish_reason": None}]}
    assert openai_doc.errors("CreateChatCompletionStreamResponse", chunk) == []
    assert openai_doc.errors("CreateChatCompletionStreamResponse", _without(chunk, "choices"))
    assert openai_doc.errors("CreateChatCompletionStreamResponse",
                             {**chunk, "object": "chat.completion"})
    # a function tool without strict (what the gateway echoed before), inside a Response
    tool = {"type": "function", "name": "f", "parameters": {"type": "object"}}
    schema = openai_doc.event_schema("response.output_text.delta")
    assert schema == "ResponseTextDeltaEvent"
    assert openai_doc.event_schema("response.no_such_event") is None
    assert openai_doc.errors("FunctionTool", tool)
    assert openai_doc.errors("FunctionTool", {**tool, "strict": True}) == []
    # OpenAPI 3.0 nulls (nullable: true) and the API's real nulls are read as such
    assert any(k == "nullable" for k in _keys(openai_doc.schemas)) is False


def _keys(node: Any) -> list[str]:
    if isinstance(node, dict):
        return [*node, *(k for v in node.values() for k in _keys(v))]
    if isinstance(node, list):
        return [k for v in node for k in _keys(v)]
    return []


def test_the_anthropic_types_refuse_extra_and_missing_fields() -> None:
    assert anthropic_errors(types.Message, MESSAGE) == []
    assert anthropic_errors(types.Message, {**MESSAGE, "surprise": 1}) == [
        "(top).surprise: not a field of Message"]
    extra_in_block = {**MESSAGE, "content": [{"type": "text", "text": "hi", "x": 1}]}
    assert anthropic_errors(types.Message, extra_in_block)
    assert anthropic_errors(types.Message, _without(MESSAGE, "usage"))
    assert anthropic_errors(types.RawMessageStreamEvent, {"type": "message_stop", "x": 1})


def test_botocore_refuses_unknown_and_missing_members() -> None:
    model, _ = bedrock_model()
    shape = model.operation_model("Converse").output_shape
    good = {"output": {"message": {"role": "assistant", "content": [{"text": "hi"}]}},
            "stopReason": "end_turn", "usage": {"inputTokens": 1, "outputTokens": 1,
                                                "totalTokens": 2},
            "metrics": {"latencyMs": 3}}
    assert botocore_errors(shape, good) == []
    assert botocore_errors(shape, {**good, "surprise": 1})
    assert botocore_errors(shape, _without(good, "stopReason"))
    two = {**good, "output": {"message": {"role": "assistant",
                                          "content": [{"text": "hi", "image": {}}]}}}
    assert botocore_errors(shape, two)
