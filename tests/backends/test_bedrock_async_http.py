"""BedrockBackend's async calls go over HTTP (backends/_bedrock_http.py), signed with
botocore's SigV4, to any server speaking Converse: here a tooluse gateway that verifies the
signature as Bedrock would. The answers, the stream and the errors are those boto3's path
gives; a backend given a client (a stub) keeps boto3's path."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anyio
import boto3
import pytest
from botocore.stub import Stubber

from tooluse.backends.bedrock import BedrockBackend
from tooluse.backends.scripted import ScriptedBackend
from tooluse.errors import BackendError
from tooluse.messages import Request, Response, TextBlock, ToolUseBlock
from tooluse.server import ServerThread, create_app
from tooluse.stream import MessageStop, accumulate

MODEL = "anthropic.claude-3-haiku-20240307-v1:0"


def _answer(request: Request) -> Response:
    if request.messages[-1].content[0].text == "fail":  # type: ignore[union-attr]
        raise BackendError("slow down", kind="rate_limit")
    return Response(content=[TextBlock(text="héllo"),
                             ToolUseBlock(id="t1", name="get_weather", input={"city": "Paris"})],
                    stop_reason="tool_use")


@pytest.fixture()
def endpoint(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    app = create_app(ScriptedBackend(_answer), aws_credentials={"AKIDGOOD": "good-secret"})
    with ServerThread(app) as server:
        monkeypatch.setenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", server.url)
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDGOOD")
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "good-secret")
        monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
        monkeypatch.delenv("AWS_BEARER_TOKEN_BEDROCK", raising=False)
        monkeypatch.delenv("AWS_PROFILE", raising=False)
        yield server.url


def _request(text: str = "weather?") -> Request:
    return Request.model_validate({"max_tokens": 50, "messages": [{"role": "user", "content": text}],
                                   "tools": [{"name": "get_weather", "input_schema": {
                                       "type": "object", "properties": {"city": {"type": "string"}}}}]})


def test_async_calls_are_signed_http_and_match_boto3s(endpoint: str) -> None:
    backend = BedrockBackend(MODEL, max_retries=0)
    sync = backend.complete(_request())  # boto3

    async def main() -> tuple[Response, list[Any]]:
        whole = await backend.acomplete(_request())
        events = [e async for e in backend.astream(_request())]
        await backend.aclose()
        return whole, events

    whole, events = anyio.run(main)
    assert backend._http is None and backend._session is not None  # it went over HTTP
    assert whole.content == sync.content and whole.stop_reason == "tool_use"
    assert whole.model == MODEL
    assert isinstance(events[-1], MessageStop)
    assert accumulate(events).content == sync.content


def test_a_bad_signature_and_an_upstream_error_keep_their_kinds(
        endpoint: str, monkeypatch: pytest.MonkeyPatch) -> None:
    async def call(text: str, stream: bool) -> Any:
        backend = BedrockBackend(MODEL, max_retries=0)
        try:
            if stream:
                return [e async for e in backend.astream(_request(text))]
            return await backend.acomplete(_request(text))
        finally:
            await backend.aclose()

    for stream in (False, True):
        with pytest.raises(BackendError) as caught:
            anyio.run(call, "fail", stream)
        assert caught.value.kind == "rate_limit" and "slow down" in caught.value.message
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wrong-secret")
    for stream in (False, True):
        with pytest.raises(BackendError) as caught:
            anyio.run(call, "hi", stream)
        assert caught.value.kind == "authentication"
        assert "InvalidSignatureException" in caught.value.message


def test_a_cut_event_stream_is_an_error_never_an_answer(endpoint: str) -> None:
    backend = BedrockBackend(MODEL, max_retries=0)

    async def main() -> None:
        http = await anyio.to_thread.run_sync(backend._async_http)
        assert http is not None
        frames = [{"messageStart": {"role": "assistant"}},
                  {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "cut"}}}]

        async def payloads(_: Any) -> Any:
            yield frames

        http._apayload_batches = payloads  # type: ignore[method-assign]
        with pytest.raises(BackendError):
            [e async for e in http.astream(_request())]
        assert http._payload_of({":message-type": "event", ":event-type": "metadata"},
                                b'{"usage": {}}') == {"metadata": {"usage": {}}}
        with pytest.raises(BackendError) as caught:
            http._payload_of({":message-type": "exception",
                              ":exception-type": "throttlingException"},
                             json.dumps({"message": "busy"}).encode())
        assert caught.value.kind == "rate_limit"
        await backend.aclose()

    anyio.run(main)


def test_a_given_client_keeps_boto3s_path() -> None:
    client = boto3.client("bedrock-runtime", region_name="us-east-1",
                          aws_access_key_id="a", aws_secret_access_key="b")
    backend = BedrockBackend(MODEL, client=client)
    with Stubber(client) as stub:
        stub.add_response("converse", {
            "output": {"message": {"role": "assistant", "content": [{"text": "stubbed"}]}},
            "stopReason": "end_turn", "usage": {"inputTokens": 1, "outputTokens": 1,
                                                "totalTokens": 2}, "metrics": {"latencyMs": 1}})
        response = anyio.run(backend.acomplete, _request())
    assert response.content[0].text == "stubbed"  # type: ignore[union-attr]
    assert backend._http is None
