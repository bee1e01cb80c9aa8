"""boto3's bedrock-runtime client, unchanged except for endpoint_url, against the gateway;
boto3's own event-stream parser reads converse_stream."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError, EventStreamError

from tooluse.backend import Backend
from tooluse.backends.scripted import ScriptedBackend
from tooluse.errors import BackendError
from tooluse.messages import TextBlock
from tooluse.server import ServerThread, create_app
from tooluse.stream import BlockStart, MessageStart, TextDelta

# a real client: a 4xx the policy does not explain fails the test (recording.py)
pytestmark = pytest.mark.client

MODEL = "anthropic.claude-3-haiku-20240307-v1:0"


def bedrock(
    url: str, key: str = "AKIDEXAMPLE", secret: str = "dummy-secret", verify: str | None = None
) -> Any:
    return boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        endpoint_url=url,
        verify=verify,
        aws_access_key_id=key,
        aws_secret_access_key=secret,
        config=Config(retries={"total_max_attempts": 1, "mode": "standard"}, read_timeout=20),
    )


def tool_config(tools: list[dict[str, Any]], choice: dict[str, Any] | None = None) -> dict[str, Any]:
    config: dict[str, Any] = {
        "tools": [
            {"toolSpec": {"name": t["name"], "description": t["description"],
                          "inputSchema": {"json": t["input_schema"]}}}
            for t in tools
        ]
    }
    if choice is not None:
        config["toolChoice"] = choice
    return config


def test_converse_tool_use_and_result_round_trip(
    server: ServerThread, backend: ScriptedBackend, tools: list[dict[str, Any]]
) -> None:
    client = bedrock(server.url)
    messages: list[dict[str, Any]] = [{"role": "user", "content": [{"text": "Lima"}]}]
    first = client.converse(modelId=MODEL, messages=messages, toolConfig=tool_config(tools),
                            inferenceConfig={"maxTokens": 100})
    assert first["stopReason"] == "tool_use"
    content = first["output"]["message"]["content"]
    use = next(b["toolUse"] for b in content if "toolUse" in b)
    assert use["name"] == "get_weather" and use["input"] == {"location": "Lima", "days": 4}
    assert first["usage"]["totalTokens"] == first["usage"]["inputTokens"] + first["usage"]["outputTokens"]
    # the model id was URL-encoded by boto3 and arrives decoded
    assert backend.requests[-1].model == MODEL
    assert backend.requests[-1].max_tokens == 100

    messages.append(first["output"]["message"])
    messages.append({"role": "user", "content": [{"toolResult": {
        "toolUseId": use["toolUseId"], "content": [{"json": {"temp": 18}}], "status": "success"}}]})
    second = client.converse(modelId=MODEL, messages=messages, toolConfig=tool_config(tools))
    assert second["stopReason"] == "end_turn"
    assert second["output"]["message"]["content"][0]["text"] == 'ok: {"temp": 18}'

    messages[-1] = {"role": "user", "content": [{"toolResult": {
        "toolUseId": use["toolUseId"], "content": [{"text": "timeout"}], "status": "error"}}]}
    third = client.converse(modelId=MODEL, messages=messages, toolConfig=tool_config(tools))
    assert third["output"]["message"]["content"][0]["text"] == "error: timeout"
    assert backend.requests[-1].messages[-1].tool_results[0].is_error


@pytest.mark.parametrize(
    ("choice", "names"),
    [({"auto": {}}, ["get_weather"]), ({"any": {}}, ["get_weather"]), ({"tool": {"name": "get_time"}}, ["get_time"])],
)
def test_converse_tool_choice(server: ServerThread, backend: ScriptedBackend, tools: list[dict[str, Any]],
                              choice: dict[str, Any], names: list[str]) -> None:
    out = bedrock(server.url).converse(
        modelId=MODEL, messages=[{"role": "user", "content": [{"text": "UTC"}]}],
        toolConfig=tool_config(tools, choice))
    got = [b["toolUse"]["name"] for b in out["output"]["message"]["content"] if "toolUse" in b]
    assert got == names
    assert backend.requests[-1].tool_choice.type == next(iter(choice))  # type: ignore[union-attr]


def test_converse_stream_parsed_by_boto3(server: ServerThread, tools: list[dict[str, Any]]) -> None:
    text = "Ulaanbaatar, Mongolia, please"
    response = bedrock(server.url).converse_stream(
        modelId=MODEL, messages=[{"role": "user", "content": [{"text": text}]}],
        toolConfig=tool_config(tools))
    events = list(response["stream"])
    kinds = [next(iter(e)) for e in events]
    assert kinds[0] == "messageStart" and kinds[-2:] == ["messageStop", "metadata"]
    assert events[0]["messageStart"] == {"role": "assistant"}
    start = [e["contentBlockStart"] for e in events if "contentBlockStart" in e]
    assert start[0]["start"]["toolUse"]["name"] == "get_weather"
    index = start[0]["contentBlockIndex"]
    pieces = [e["contentBlockDelta"]["delta"]["toolUse"]["input"] for e in events
              if "contentBlockDelta" in e and e["contentBlockDelta"]["contentBlockIndex"] == index]
    assert len(pieces) > 1  # the input really arrives as partial JSON
    import json

    assert json.loads("".join(pieces)) == {"location": text, "days": len(text)}
    said = "".join(e["contentBlockDelta"]["delta"].get("text", "") for e in events if "contentBlockDelta" in e)
    assert said == "<thinking>I will use a tool.</thinking>"
    assert events[-2]["messageStop"]["stopReason"] == "tool_use"
    assert events[-1]["metadata"]["usage"]["outputTokens"] == 5


def test_converse_stream_text(server: ServerThread) -> None:
    response = bedrock(server.url).converse_stream(
        modelId=MODEL, messages=[{"role": "user", "content": [{"text": "hi there"}]}])
    said = "".join(e["contentBlockDelta"]["delta"]["text"] for e in response["stream"] if "contentBlockDelta" in e)
    assert said == "echo: hi there"


@pytest.mark.parametrize(
    ("exc", "code", "status"),
    [
        (BackendError("slow down", kind="rate_limit"), "ThrottlingException", 429),
        (BackendError("took too long", kind="timeout"), "ModelTimeoutException", 408),
        (BackendError("down", kind="unavailable"), "ServiceUnavailableException", 503),
        (BackendError("boom", kind="api"), "InternalServerException", 500),
        (ValueError("internal detail"), "InternalServerException", 500),
    ],
)
@pytest.mark.provokes_4xx(429, "slow down")
@pytest.mark.provokes_4xx(408, "took too long")
@pytest.mark.parametrize("stream", [False, True])
def test_backend_errors_as_aws_errors(exc: BaseException, code: str, status: int, stream: bool) -> None:
    with ServerThread(create_app(ScriptedBackend([exc]))) as srv:
        client = bedrock(srv.url)
        call = client.converse_stream if stream else client.converse
        with pytest.raises(ClientError) as info:
            call(modelId=MODEL, messages=[{"role": "user", "content": [{"text": "x"}]}])
    err = info.value.response
    assert err["Error"]["Code"] == code
    assert err["ResponseMetadata"]["HTTPStatusCode"] == status
    assert "internal detail" not in str(err)


def test_error_inside_stream_is_an_exception_frame() -> None:
    class Dies(Backend):
        def stream(self, request):  # type: ignore[no-untyped-def]
            yield MessageStart(id="m1")
            yield BlockStart(index=0, block=TextBlock(text=""))
            yield TextDelta(index=0, text="partial")
            raise BackendError("throttled mid-way", kind="rate_limit")

    with ServerThread(create_app(Dies())) as srv:
        response = bedrock(srv.url).converse_stream(
            modelId=MODEL, messages=[{"role": "user", "content": [{"text": "x"}]}])
        seen: list[dict[str, Any]] = []
        with pytest.raises(EventStreamError) as info:
            seen.extend(response["stream"])
    assert info.value.response["Error"]["Code"] == "throttlingException"
    assert info.value.response["Error"]["Message"] == "throttled mid-way"
    assert seen[-1]["contentBlockDelta"]["delta"]["text"] == "partial"


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"messages": [{"role": "user", "content": [{"text": "x"}]}],
          "toolConfig": {"tools": [{"toolSpec": {"name": "bad.name", "inputSchema": {"json": {"type": "object"}}}}]}},
         "toolConfig.tools.0.toolSpec.name"),
        ({"messages": [{"role": "assistant", "content": [{"text": "x"}]}]}, "messages"),
        ({"messages": [
            {"role": "user", "content": [{"text": "w"}]},
            {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "get_weather", "input": {}}}]},
            {"role": "user", "content": [{"toolResult": {"toolUseId": "t1", "content": [{"text": "x"}]}}]}]},
         "toolConfig"),
        ({"messages": [{"role": "user", "content": [{"text": "x"}]}],
          "toolConfig": {"tools": [{"toolSpec": {"name": "t", "inputSchema": {"json": {"type": "object"}}}}],
                         "toolChoice": {"tool": {"name": "missing"}}}},
         "toolChoice"),
    ],
)
@pytest.mark.provokes_4xx(400)
def test_validation_exceptions(server: ServerThread, kwargs: dict[str, Any], needle: str) -> None:
    with pytest.raises(ClientError) as info:
        bedrock(server.url).converse(modelId=MODEL, **kwargs)
    err = info.value.response
    assert err["Error"]["Code"] == "ValidationException"
    assert err["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert needle in err["Error"]["Message"]


@pytest.fixture()
def signed_server(backend: ScriptedBackend) -> Iterator[ServerThread]:
    app = create_app(backend, aws_credentials={"AKIDGOOD": "good-secret"})
    with ServerThread(app) as srv:
        yield srv


@pytest.mark.provokes_4xx(403)
def test_sigv4_verified_with_real_boto3(signed_server: ServerThread) -> None:
    msgs = [{"role": "user", "content": [{"text": "signed"}]}]
    ok = bedrock(signed_server.url, "AKIDGOOD", "good-secret").converse(modelId=MODEL, messages=msgs)
    assert ok["output"]["message"]["content"][0]["text"] == "echo: signed"
    stream = bedrock(signed_server.url, "AKIDGOOD", "good-secret").converse_stream(modelId=MODEL, messages=msgs)
    assert next(next(iter(e)) for e in stream["stream"]) == "messageStart"

    with pytest.raises(ClientError) as info:
        bedrock(signed_server.url, "AKIDGOOD", "wrong-secret").converse(modelId=MODEL, messages=msgs)
    assert info.value.response["Error"]["Code"] == "InvalidSignatureException"
    assert info.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403

    with pytest.raises(ClientError) as info:
        bedrock(signed_server.url, "AKIDOTHER", "good-secret").converse_stream(modelId=MODEL, messages=msgs)
    assert info.value.response["Error"]["Code"] == "UnrecognizedClientException"
    assert info.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403


@pytest.mark.provokes_4xx(403)
def test_api_keys_protect_converse_too(
    backend: ScriptedBackend, monkeypatch: pytest.MonkeyPatch, tls_cert: tuple[str, str, str]
) -> None:
    """With API keys configured (and no AWS credentials), Converse takes a Bedrock API key
    as boto3 sends it (AWS_BEARER_TOKEN_BEDROCK) and refuses an unverifiable SigV4.

    Current botocore sends a bearer token only over TLS, so the gateway serves HTTPS with a
    certificate from a throwaway CA, and boto3 trusts that CA through ``verify=``."""
    ca, cert, key = tls_cert
    msgs = [{"role": "user", "content": [{"text": "keyed"}]}]
    app = create_app(backend, api_keys=["brk-key"])
    with ServerThread(app, ssl_certfile=cert, ssl_keyfile=key) as srv:
        assert srv.url.startswith("https://")
        with pytest.raises(ClientError) as info:
            bedrock(srv.url, verify=ca).converse(modelId=MODEL, messages=msgs)  # SigV4 only
        assert info.value.response["Error"]["Code"] == "AccessDeniedException"
        assert info.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403

        monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "brk-key")
        ok = bedrock(srv.url, verify=ca).converse(modelId=MODEL, messages=msgs)
        assert ok["output"]["message"]["content"][0]["text"] == "echo: keyed"
        events = list(bedrock(srv.url, verify=ca).converse_stream(modelId=MODEL, messages=msgs)["stream"])
        assert next(iter(events[0])) == "messageStart"

        # AWS_CA_BUNDLE: the documented way to trust the gateway's CA without code changes
        monkeypatch.setenv("AWS_CA_BUNDLE", ca)
        ok = bedrock(srv.url).converse(modelId=MODEL, messages=msgs)
        assert ok["output"]["message"]["content"][0]["text"] == "echo: keyed"

        monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "wrong")
        with pytest.raises(ClientError) as info:
            bedrock(srv.url, verify=ca).converse(modelId=MODEL, messages=msgs)
        assert info.value.response["Error"]["Code"] == "UnrecognizedClientException"

