"""Errors name the field of the API the client called: ``/v1/responses`` names ``input``
where Chat names ``messages`` (a prompt over the context), ``text.format`` where Messages
names ``output_config.format`` (structured output a backend cannot guarantee), before a
stream starts and inside one; Converse's messages name Converse's fields. And the Responses
``input_image`` with an empty ``image_url`` is the 400 Chat answers for the same."""

from __future__ import annotations

import json
from collections.abc import Iterator

import boto3
import botocore.config
import httpx2
import openai
import pytest

from tooluse.backend import Backend
from tooluse.backends.scripted import ScriptedBackend
from tooluse.errors import BackendError
from tooluse.messages import Request, Response, TextBlock
from tooluse.server import ServerThread, create_app
from tooluse.stream import BlockStart, MessageStart, StreamEvent, TextDelta

TOO_LONG = "prompt is too long: 9000 tokens > 8192 maximum"


def _over_the_context(request: Request) -> Response:
    raise BackendError(TOO_LONG, kind="context_length")


class LateOverflow(Backend):
    """A backend whose stream starts, then finds the prompt over its context."""

    name = "late"

    def stream(self, request: Request) -> Iterator[StreamEvent]:
        yield MessageStart(id="x", model="m")
        yield BlockStart(index=0, block=TextBlock(text=""))
        yield TextDelta(index=0, text="partial")
        raise BackendError(TOO_LONG, kind="context_length")


@pytest.fixture()
def overflow() -> Iterator[ServerThread]:
    with ServerThread(create_app(ScriptedBackend(_over_the_context))) as srv:
        yield srv


@pytest.fixture()
def scripted() -> Iterator[ServerThread]:
    with ServerThread(create_app(ScriptedBackend(lambda r: "ok"))) as srv:
        yield srv


def _openai(url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=url + "/v1", api_key="k", max_retries=0)


@pytest.mark.parametrize("stream", [False, True])
def test_responses_names_input_for_a_prompt_over_the_context(overflow: ServerThread,
                                                             stream: bool) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        _openai(overflow.url).responses.create(model="m", input="hi", stream=stream)
    error = caught.value.body
    assert isinstance(error, dict)
    assert (error["param"], error["code"]) == ("input", "context_length_exceeded")


def test_chat_still_names_messages(overflow: ServerThread) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        _openai(overflow.url).chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}])
    assert isinstance(caught.value.body, dict) and caught.value.body["param"] == "messages"


def test_an_overflow_inside_a_responses_stream_names_input() -> None:
    with ServerThread(create_app(LateOverflow())) as srv:
        events = list(_openai(srv.url).responses.create(model="m", input="x", stream=True))
    error, failed = events[-2:]
    assert error.type == "error" and failed.type == "response.failed"
    assert (error.param, error.code) == ("input", "context_length_exceeded")
    assert failed.response.error is not None
    assert failed.response.error.code == "context_length_exceeded"


def test_structured_output_refusals_name_the_apis_own_field(scripted: ServerThread) -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    answer = httpx2.post(scripted.url + "/v1/responses", timeout=20, json={
        "model": "m", "input": "hi",
        "text": {"format": {"type": "json_schema", "name": "x", "schema": schema}}})
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error["param"] == "text.format" and error["message"].startswith("text.format: ")
    answer = httpx2.post(scripted.url + "/v1/messages", timeout=20, json={
        "model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}],
        "output_config": {"format": {"type": "json_schema", "schema": schema}}})
    assert answer.status_code == 400
    assert answer.json()["error"]["message"].startswith("output_config.format: ")


def test_converse_errors_name_converse_fields(overflow: ServerThread) -> None:
    client = boto3.client(
        "bedrock-runtime", region_name="us-east-1", endpoint_url=overflow.url,
        aws_access_key_id="AKID", aws_secret_access_key="secret",
        config=botocore.config.Config(retries={"max_attempts": 0}))
    with pytest.raises(client.exceptions.ValidationException) as caught:
        client.converse(modelId="m", messages=[{"role": "user", "content": [{"text": "hi"}]}])
    assert caught.value.response["Error"]["Message"] == TOO_LONG
    with pytest.raises(client.exceptions.ValidationException) as caught:
        client.converse(modelId="m", messages=[{"role": "user", "content": [{"text": ""}]}])
    message = caught.value.response["Error"]["Message"]
    assert message.startswith("messages.0.content.0.text: ")
    # structured output is not carried on Converse yet: refused, naming Converse's field
    schema = json.dumps({"type": "object", "properties": {"a": {"type": "string"}}})
    with pytest.raises(client.exceptions.ValidationException) as caught:
        client.converse(modelId="m", messages=[{"role": "user", "content": [{"text": "hi"}]}],
                        outputConfig={"textFormat": {"type": "json_schema", "structure": {
                            "jsonSchema": {"schema": schema, "name": "a"}}}})
    assert caught.value.response["Error"]["Message"].startswith("outputConfig: ")


def test_responses_refuses_an_empty_image_url_as_chat_does(scripted: ServerThread) -> None:
    responses = httpx2.post(scripted.url + "/v1/responses", timeout=20, json={
        "model": "m", "input": [{"role": "user", "content": [
            {"type": "input_text", "text": "what is this?"},
            {"type": "input_image", "image_url": ""}]}]})
    chat = httpx2.post(scripted.url + "/v1/chat/completions", timeout=20, json={
        "model": "m", "messages": [{"role": "user", "content": [
            {"type": "text", "text": "what is this?"},
            {"type": "image_url", "image_url": {"url": ""}}]}]})
    assert responses.status_code == chat.status_code == 400
    assert responses.json()["error"]["param"] == "input.[0].content.[1].image_url"
    assert chat.json()["error"]["param"] == "messages.[0].content.[1].image_url.url"
    assert json.dumps(responses.json()).count("at least 1 character") == 1
