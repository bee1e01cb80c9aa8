"""The Converse request surface with boto3, one test per extra of the policy table in
docs/server.md: cachePoint (system, messages, tools), document, reasoningContent in the
history, guardContent, additionalModelRequestFields (its reasoning setting too),
requestMetadata, serviceTier, performanceConfig. A Bedrock upstream is a :class:`BedrockBackend` over a recording client."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from tooluse.backends.bedrock import BedrockBackend
from tooluse.backends.scripted import ScriptedBackend
from tooluse.messages import Reasoning, RedactedThinkingBlock, TextBlock, ThinkingBlock
from tooluse.server import ServerThread, create_app

MODEL = "anthropic.claude-3-haiku-20240307-v1:0"
USER = [{"role": "user", "content": [{"text": "hi"}]}]
TOOLS = {"tools": [{"toolSpec": {"name": "get_time", "inputSchema": {"json": {"type": "object"}}}},
                   {"cachePoint": {"type": "default"}}]}


def client(url: str) -> Any:
    return boto3.client(
        "bedrock-runtime", region_name="us-east-1", endpoint_url=url,
        aws_access_key_id="AKID", aws_secret_access_key="x",
        config=Config(retries={"total_max_attempts": 1, "mode": "standard"}, read_timeout=20))


class RecordingBedrock:
    """A bedrock-runtime client stand-in: records each converse call's arguments."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def converse(self, **kwargs: Any) -> dict[str, Any]:
        self.calls.append(kwargs)
        return {"output": {"message": {"role": "assistant", "content": [{"text": "from upstream"}]}},
                "stopReason": "end_turn", "usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2},
                "metrics": {"latencyMs": 1}}


@pytest.fixture()
def scripted() -> Iterator[tuple[Any, ScriptedBackend]]:
    backend = ScriptedBackend(lambda request: "ok")
    with ServerThread(create_app(backend)) as srv:
        yield client(srv.url), backend


@pytest.fixture()
def upstream() -> Iterator[tuple[Any, RecordingBedrock]]:
    recording = RecordingBedrock()
    with ServerThread(create_app(BedrockBackend(MODEL, client=recording))) as srv:
        yield client(srv.url), recording


CACHED = {"system": [{"text": "be brief"}, {"cachePoint": {"type": "default", "ttl": "1h"}}],
          "messages": [{"role": "user", "content": [{"text": "hi"}, {"cachePoint": {"type": "default"}}]}],
          "toolConfig": TOOLS}


def test_cache_points_are_hints_on_the_block_before(scripted: Any) -> None:
    """A backend without a prompt cache the client steers answers as usual (the hint is
    dropped by policy), and saw each point as the breakpoint of the block before it."""
    bedrock, backend = scripted
    out = bedrock.converse(modelId=MODEL, **CACHED)
    assert out["output"]["message"]["content"] == [{"text": "ok"}]
    seen = backend.requests[-1]
    assert [b.text for b in seen.system] == ["be brief"] and seen.messages[0].text() == "hi"
    assert [t.name for t in seen.tools] == ["get_time"]
    assert seen.system[0].cache is not None and seen.system[0].cache.ttl == "1h"
    assert seen.messages[0].content[0].cache is not None and seen.tools[0].cache is not None


def test_cache_points_reach_a_bedrock_upstream_where_they_were(upstream: Any) -> None:
    bedrock, recording = upstream
    bedrock.converse(modelId=MODEL, **CACHED)
    (call,) = recording.calls
    assert {k: call[k] for k in CACHED} == CACHED


def test_text_documents_are_carried_as_text(scripted: Any) -> None:
    bedrock, backend = scripted
    content = [{"document": {"format": "txt", "name": "notes", "source": {"bytes": b"the sky is green"}}},
               {"document": {"format": "md", "name": "readme", "source": {"text": "# Title"}}},
               {"text": "what colour?"}]
    bedrock.converse(modelId=MODEL, messages=[{"role": "user", "content": content}])
    texts = [b.text for b in backend.requests[-1].messages[0].content if isinstance(b, TextBlock)]
    assert texts == ["notes\n\nthe sky is green", "readme\n\n# Title", "what colour?"]


def test_pdf_documents_are_refused_naming_the_field(scripted: Any) -> None:
    bedrock, _ = scripted
    content = [{"document": {"format": "pdf", "name": "paper", "source": {"bytes": b"%PDF-1.4"}}}]
    with pytest.raises(ClientError) as info:
        bedrock.converse(modelId=MODEL, messages=[{"role": "user", "content": content}])
    error = info.value.response["Error"]
    assert error["Code"] == "ValidationException"
    assert error["Message"].startswith("messages.0.content.0.document.source.bytes")


REASONED = [*USER,
            {"role": "assistant", "content": [
                {"reasoningContent": {"reasoningText": {"text": "hmm", "signature": "sig"}}},
                {"reasoningContent": {"redactedContent": b"\x00opaque\xff"}},
                {"text": "hello"}]},
            {"role": "user", "content": [{"text": "more"}]}]


def test_reasoning_content_in_history_is_carried(scripted: Any, upstream: Any) -> None:
    bedrock, backend = scripted
    bedrock.converse(modelId=MODEL, messages=REASONED)
    assert backend.requests[-1].messages[1].content == [
        ThinkingBlock(text="hmm", signature="sig"),
        RedactedThinkingBlock(data=base64.b64encode(b"\x00opaque\xff").decode()),
        TextBlock(text="hello"),
    ]
    up, recording = upstream
    up.converse(modelId=MODEL, messages=REASONED)
    assert recording.calls[-1]["messages"] == REASONED  # as sent: signature, raw bytes
    in_user_turn = [{"role": "user", "content": [{"reasoningContent": {"reasoningText": {"text": "x"}}}]}]
    with pytest.raises(ClientError) as info:
        bedrock.converse(modelId=MODEL, messages=in_user_turn)
    assert info.value.response["Error"]["Code"] == "ValidationException"
    assert info.value.response["Error"]["Message"].startswith("messages.0.content.0.reasoningContent")


def test_guard_content_is_carried_as_text(scripted: Any) -> None:
    bedrock, backend = scripted
    bedrock.converse(
        modelId=MODEL, system=[{"guardContent": {"text": {"text": "stay polite"}}}],
        messages=[{"role": "user", "content": [
            {"guardContent": {"text": {"text": "is this ok?", "qualifiers": ["query"]}}}]}])
    seen = backend.requests[-1]
    assert seen.system[0].text == "stay polite" and seen.messages[0].text() == "is this ok?"


def test_additional_model_request_fields(scripted: Any, upstream: Any) -> None:
    bedrock, backend = scripted
    fields = {"top_k": 7, "anthropic_beta": ["x-2025"]}
    bedrock.converse(modelId=MODEL, messages=USER, additionalModelRequestFields=fields)
    assert backend.requests[-1].top_k == 7  # applied; the rest is ignored here
    up, recording = upstream
    up.converse(modelId=MODEL, messages=USER, additionalModelRequestFields=fields)
    assert recording.calls[-1]["additionalModelRequestFields"] == fields  # and forwarded
    with pytest.raises(ClientError) as info:
        bedrock.converse(modelId=MODEL, messages=USER, additionalModelRequestFields={"top_k": -1})
    assert info.value.response["Error"]["Message"].startswith("additionalModelRequestFields.top_k")


@pytest.mark.parametrize(("fields", "reasoning"), [
    ({"thinking": {"type": "enabled", "budget_tokens": 2048}, "anthropic_beta": ["interleaved-thinking-2025-05-14"]},
     Reasoning(mode="enabled", budget_tokens=2048)),
    ({"thinking": {"type": "adaptive", "display": "omitted"}}, Reasoning(mode="adaptive", display="omitted")),
    ({"reasoning_config": {"type": "enabled", "budget_tokens": 1024}}, Reasoning(mode="enabled", budget_tokens=1024)),
    ({"reasoningConfig": {"type": "enabled", "maxReasoningEffort": "high"}}, Reasoning(mode="enabled", effort="high")),
])
def test_reasoning_setting_in_additional_fields(scripted: Any, upstream: Any, fields: dict[str, Any],
                                                reasoning: Reasoning) -> None:
    bedrock, backend = scripted
    bedrock.converse(modelId=MODEL, messages=USER, additionalModelRequestFields=fields)
    assert backend.requests[-1].reasoning == reasoning  # applied: the request's reasoning
    up, recording = upstream
    up.converse(modelId=MODEL, messages=USER, additionalModelRequestFields=fields)
    assert recording.calls[-1]["additionalModelRequestFields"] == fields  # forwarded as sent


@pytest.mark.parametrize(("fields", "field"), [
    ({"thinking": {"type": "enabled"}}, "additionalModelRequestFields.thinking.budget_tokens"),
    ({"thinking": {"type": "enabled", "budget_tokens": 10}}, "additionalModelRequestFields.thinking.budget_tokens"),
    ({"reasoningConfig": {"type": "on"}}, "additionalModelRequestFields.reasoningConfig.type"),
])
def test_bad_reasoning_setting_is_a_validation_exception(scripted: Any, fields: dict[str, Any], field: str) -> None:
    bedrock, _ = scripted
    with pytest.raises(ClientError) as info:
        bedrock.converse(modelId=MODEL, messages=USER, additionalModelRequestFields=fields)
    error = info.value.response["Error"]
    assert error["Code"] == "ValidationException" and error["Message"].startswith(field)


def test_request_metadata_is_applied(scripted: Any, upstream: Any) -> None:
    bedrock, backend = scripted
    bedrock.converse(modelId=MODEL, messages=USER, requestMetadata={"team": "blue"})
    assert backend.requests[-1].metadata == {"team": "blue"}
    up, recording = upstream
    up.converse(modelId=MODEL, messages=USER, requestMetadata={"team": "blue"})
    assert recording.calls[-1]["requestMetadata"] == {"team": "blue"}


@pytest.mark.parametrize(("field", "value"), [
    ("serviceTier", {"type": "priority"}),
    ("performanceConfig", {"latency": "optimized"}),
])
def test_service_tier_and_performance_config(scripted: Any, upstream: Any, field: str, value: Any) -> None:
    bedrock, _ = scripted
    out = bedrock.converse(modelId=MODEL, messages=USER, **{field: value})
    assert out["output"]["message"]["content"] == [{"text": "ok"}]  # accepted, ignored here
    up, recording = upstream
    up.converse(modelId=MODEL, messages=USER, **{field: value})
    assert recording.calls[-1][field] == value  # forwarded to a Bedrock upstream
