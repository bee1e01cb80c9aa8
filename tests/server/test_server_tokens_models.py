"""count_tokens, the models endpoints, and a prompt over the context: answered before the
first event as each API's own 400, also for streams. A text backend that counts words
stands in for the local model (the slow tests do the same with the real one)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

import anthropic
import boto3
import httpx2
import openai
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from tooluse.backends.anthropic import AnthropicBackend
from tooluse.backends.scripted import ScriptedBackend
from tooluse.prompting import PromptToolsBackend
from tooluse.prompting.text_model import TextEnd, TextMessage
from tooluse.server import ServerThread, create_app
from tooluse.server.apis.info import estimate_tokens


class WordModel:
    """A text 'model' whose tokens are words, with a small context; answers 'fine'."""

    model = "words"

    def __init__(self, context: int = 60) -> None:
        self.context = context
        self.generated = 0

    def prompt_tokens(self, messages: Sequence[TextMessage], prefill: str = "") -> int:
        return sum(len(m["content"].split()) for m in messages) + len(prefill.split())

    def context_length(self) -> int:
        return self.context

    def generate_text(self, messages: Sequence[TextMessage], **options: Any) -> Iterator[str | TextEnd]:
        self.generated += 1
        yield "fine"
        yield TextEnd(reason="end", input_tokens=self.prompt_tokens(messages), output_tokens=1)


@pytest.fixture()
def words() -> Iterator[tuple[ServerThread, WordModel]]:
    model = WordModel()
    with ServerThread(create_app(PromptToolsBackend(model, grammar=False))) as srv:
        yield srv, model


LONG = "word " * 200
SHORT = "three little words"


def test_count_tokens_is_exact_on_a_text_backend(words: Any) -> None:
    srv, model = words
    client = anthropic.Anthropic(base_url=srv.url, api_key="k", max_retries=0)
    count = client.messages.count_tokens(model="m", messages=[{"role": "user", "content": SHORT}])
    assert count.input_tokens == 3  # the rendered prompt: the user's three words
    with_system = client.messages.count_tokens(model="m", system="be brief",
                                               messages=[{"role": "user", "content": SHORT}])
    assert with_system.input_tokens == 5
    raw = httpx2.post(srv.url + "/v1/messages/count_tokens",
                      json={"model": "m", "messages": [{"role": "user", "content": SHORT}]})
    assert raw.headers["x-tooluse-token-count"] == "exact"
    assert model.generated == 0  # counting generates nothing


def test_count_tokens_is_an_estimate_elsewhere_and_says_so() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "x" * 400}]}
    with ServerThread(create_app(ScriptedBackend(lambda r: "ok"))) as srv:
        raw = httpx2.post(srv.url + "/v1/messages/count_tokens", json=body)
        client = anthropic.Anthropic(base_url=srv.url, api_key="k", max_retries=0)
        count = client.messages.count_tokens(model="m", messages=body["messages"])  # type: ignore[arg-type]
    assert raw.status_code == 200 and raw.headers["x-tooluse-token-count"] == "estimate"
    assert count.input_tokens == raw.json()["input_tokens"] == estimate_tokens(body)
    assert 100 <= count.input_tokens <= 120


def test_count_tokens_is_forwarded_to_an_anthropic_upstream() -> None:
    seen: list[tuple[str, dict[str, Any]]] = []

    def handle(request: httpx2.Request) -> httpx2.Response:
        seen.append((request.url.path, json.loads(request.content)))
        return httpx2.Response(200, json={"input_tokens": 42})

    backend = AnthropicBackend("m", base_url="http://upstream.invalid", api_key="k", max_retries=0,
                               transport=httpx2.MockTransport(handle))
    with ServerThread(create_app(backend)) as srv:
        client = anthropic.Anthropic(base_url=srv.url, api_key="k", max_retries=0)
        count = client.messages.count_tokens(model="claude-x", messages=[{"role": "user", "content": "hi"}])
    assert count.input_tokens == 42
    assert seen[0][0] == "/v1/messages/count_tokens"
    assert seen[0][1]["model"] == "claude-x" and "max_tokens" not in seen[0][1]


def test_count_tokens_validates_like_messages(words: Any) -> None:
    srv, _ = words
    bad = httpx2.post(srv.url + "/v1/messages/count_tokens", json={"model": "m", "messages": []})
    assert bad.status_code == 400 and bad.json()["error"]["type"] == "invalid_request_error"
    bad = httpx2.post(srv.url + "/v1/messages/count_tokens",
                      json={"model": "m", "stream": True, "messages": [{"role": "user", "content": "x"}]})
    assert bad.status_code == 400 and bad.json()["error"]["message"].startswith("stream:")


def test_models_are_readable_by_both_sdks() -> None:
    backend = ScriptedBackend(lambda r: "ok", model="the-model")
    with ServerThread(create_app(backend, api_keys=["k"])) as srv:
        a = anthropic.Anthropic(base_url=srv.url, api_key="k", max_retries=0)
        listed = list(a.models.list())
        assert [m.id for m in listed] == ["the-model"] and listed[0].type == "model"
        assert a.models.retrieve("claude-anything").id == "claude-anything"
        o = openai.OpenAI(base_url=srv.url + "/v1", api_key="k", max_retries=0)
        assert [m.id for m in o.models.list()] == ["the-model"]
        assert o.models.retrieve("gpt-anything").owned_by == "tooluse"
        with pytest.raises(openai.AuthenticationError):
            openai.OpenAI(base_url=srv.url + "/v1", api_key="wrong", max_retries=0).models.list()
        with pytest.raises(anthropic.AuthenticationError):
            anthropic.Anthropic(base_url=srv.url, api_key="wrong", max_retries=0).models.list()


# -- a prompt over the context ------------------------------------------------------------------

EXPECTED = "prompt is too long: 200 tokens > 60 maximum"


def test_messages_over_the_context_is_a_400_also_when_streaming(words: Any) -> None:
    srv, model = words
    client = anthropic.Anthropic(base_url=srv.url, api_key="k", max_retries=0)
    with pytest.raises(anthropic.BadRequestError) as info:
        client.messages.create(model="m", max_tokens=10, messages=[{"role": "user", "content": LONG}])
    assert info.value.status_code == 400 and EXPECTED in info.value.message
    assert info.value.body["error"]["type"] == "invalid_request_error"  # type: ignore[index]
    with pytest.raises(anthropic.BadRequestError) as info, client.messages.stream(
        model="m", max_tokens=10, messages=[{"role": "user", "content": LONG}]
    ) as stream:
        stream.get_final_message()
    assert info.value.status_code == 400 and EXPECTED in info.value.message
    raw = httpx2.post(srv.url + "/v1/messages", json={
        "model": "m", "max_tokens": 10, "stream": True, "messages": [{"role": "user", "content": LONG}]})
    assert raw.status_code == 400 and "event:" not in raw.text  # an HTTP error, no stream
    assert model.generated == 0
    ok = client.messages.create(model="m", max_tokens=10, messages=[{"role": "user", "content": SHORT}])
    assert ok.content[0].text == "fine"  # type: ignore[union-attr]


def test_chat_over_the_context_is_context_length_exceeded(words: Any) -> None:
    srv, _ = words
    client = openai.OpenAI(base_url=srv.url + "/v1", api_key="k", max_retries=0)
    for stream in (False, True):
        with pytest.raises(openai.BadRequestError) as info:
            result = client.chat.completions.create(
                model="m", stream=stream, messages=[{"role": "user", "content": LONG}])
            list(result) if stream else None  # type: ignore[call-overload]
        assert info.value.status_code == 400 and info.value.code == "context_length_exceeded"
        assert EXPECTED in info.value.message


def test_converse_over_the_context_is_a_validation_exception(words: Any) -> None:
    srv, _ = words
    client = boto3.client(
        "bedrock-runtime", region_name="us-east-1", endpoint_url=srv.url,
        aws_access_key_id="AKID", aws_secret_access_key="x",
        config=Config(retries={"total_max_attempts": 1, "mode": "standard"}, read_timeout=20))
    messages = [{"role": "user", "content": [{"text": LONG}]}]
    for call in (client.converse, client.converse_stream):
        with pytest.raises(ClientError) as info:
            call(modelId="m", messages=messages)
        error = info.value.response["Error"]
        assert error["Code"] == "ValidationException" and error["Message"] == EXPECTED
        assert info.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
