"""Gateway behind gateway: the HTTP backends (anthropic, openai, bedrock) pointed at a
gateway over the scripted model, served again by a second gateway and called with each SDK.
Shows the server works with the real remote backends, streaming included, and that an
upstream error comes out as the calling API's native error."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anthropic
import boto3
import openai
import pytest
from botocore.config import Config

from tooluse.backend import Backend
from tooluse.backends.anthropic import AnthropicBackend
from tooluse.backends.bedrock import BedrockBackend
from tooluse.backends.openai import OpenAIBackend
from tooluse.backends.scripted import ScriptedBackend
from tooluse.server import ServerThread, create_app

# a real client: a 4xx the policy does not explain fails the test (recording.py)
pytestmark = pytest.mark.client


@pytest.fixture(scope="module")
def inner(scripted_model_fn: Any) -> Iterator[ServerThread]:
    scripted_model = scripted_model_fn

    def script(request: Any) -> Any:
        if "fail" in request.messages[-1].text():
            from tooluse.errors import BackendError

            raise BackendError("inner says slow down", kind="rate_limit")
        return scripted_model(request)

    app = create_app(ScriptedBackend(script), api_keys=["inner-key"], aws_credentials={"AKID": "x"})
    with ServerThread(app) as srv:
        yield srv


def backends(url: str) -> dict[str, Backend]:
    return {
        "anthropic": AnthropicBackend("upstream-model", base_url=url, api_key="inner-key", max_retries=0),
        "openai": OpenAIBackend("upstream-model", base_url=url + "/v1", api_key="inner-key", max_retries=0),
        "bedrock": BedrockBackend("upstream-model", client=boto3.client(
            "bedrock-runtime", region_name="us-east-1", endpoint_url=url,
            aws_access_key_id="AKID", aws_secret_access_key="x",
            config=Config(retries={"total_max_attempts": 1}))),
    }


@pytest.mark.provokes_4xx(429, "slow down")
@pytest.mark.parametrize("upstream", ["anthropic", "openai", "bedrock"])
def test_messages_sdk_through_each_remote_backend(inner: ServerThread, upstream: str, tools: list[dict[str, Any]]) -> None:
    with ServerThread(create_app(backends(inner.url)[upstream])) as outer:
        client = anthropic.Anthropic(base_url=outer.url, api_key="x", max_retries=0, timeout=30)
        msg = client.messages.create(model="upstream-model", max_tokens=50, tools=tools,
                                     tool_choice={"type": "any"},
                                     messages=[{"role": "user", "content": "Nairobi"}])
        (call,) = [b for b in msg.content if b.type == "tool_use"]
        assert (call.name, call.input) == ("get_weather", {"location": "Nairobi", "days": 7})
        with client.messages.stream(model="upstream-model", max_tokens=50, tools=tools,
                                    tool_choice={"type": "tool", "name": "get_time"},
                                    messages=[{"role": "user", "content": "Asia/Tokyo"}]) as stream:
            final = stream.get_final_message()
        (call,) = [b for b in final.content if b.type == "tool_use"]
        assert (call.name, call.input) == ("get_time", {"timezone": "Asia/Tokyo"})
        with pytest.raises(anthropic.RateLimitError):
            client.messages.create(model="upstream-model", max_tokens=5,
                                   messages=[{"role": "user", "content": "please fail"}])


@pytest.mark.parametrize("upstream", ["anthropic", "bedrock"])
def test_openai_streaming_through_remote_backend(inner: ServerThread, upstream: str, tools: list[dict[str, Any]]) -> None:
    fns = [{"type": "function", "function": {"name": t["name"], "description": t["description"],
                                             "parameters": t["input_schema"]}} for t in tools]
    with ServerThread(create_app(backends(inner.url)[upstream])) as outer:
        client = openai.OpenAI(base_url=outer.url + "/v1", api_key="x", max_retries=0, timeout=30)
        args = ""
        for chunk in client.chat.completions.create(model="upstream-model", messages=[{"role": "user", "content": "Lagos"}],
                                                    tools=fns, tool_choice="required", stream=True):  # type: ignore[arg-type]
            for choice in chunk.choices:
                for tc in choice.delta.tool_calls or []:
                    args += tc.function.arguments or "" if tc.function else ""
        assert json.loads(args) == {"location": "Lagos", "days": 5}


@pytest.mark.provokes_4xx(429, "slow down")
def test_converse_stream_through_anthropic_backend(inner: ServerThread, tools: list[dict[str, Any]]) -> None:
    with ServerThread(create_app(backends(inner.url)["anthropic"])) as outer:
        client = boto3.client("bedrock-runtime", region_name="us-east-1", endpoint_url=outer.url,
                              aws_access_key_id="AKID", aws_secret_access_key="x",
                              config=Config(retries={"total_max_attempts": 1}))
        config = {"tools": [{"toolSpec": {"name": t["name"], "description": t["description"],
                                          "inputSchema": {"json": t["input_schema"]}}} for t in tools]}
        events = list(client.converse_stream(modelId="upstream-model", toolConfig=config,
                                             messages=[{"role": "user", "content": [{"text": "Cairo"}]}])["stream"])
        pieces = "".join(e["contentBlockDelta"]["delta"]["toolUse"]["input"] for e in events
                         if "contentBlockDelta" in e and "toolUse" in e["contentBlockDelta"]["delta"])
        assert json.loads(pieces) == {"location": "Cairo", "days": 5}
        from botocore.exceptions import ClientError

        with pytest.raises(ClientError) as info:
            client.converse(modelId="upstream-model", messages=[{"role": "user", "content": [{"text": "fail"}]}])
        assert info.value.response["Error"]["Code"] == "ThrottlingException"
