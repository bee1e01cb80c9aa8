"""The local backend reports the prompt tokens it reused from its cache as cache reads:
through the gateway a Messages client sees them as ``cache_read_input_tokens`` (the rest as
``input_tokens``), a Chat client as ``prompt_tokens_details.cached_tokens`` of its whole
``prompt_tokens``. On the bundled model (slow); the neutral arithmetic on a fake text
backend (fast)."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest

from tooluse.codecs import anthropic, openai
from tooluse.messages import Message, Request
from tooluse.prompting.tool_use import PromptToolsBackend
from tooluse.prompting.text_model import TextEnd
from tooluse.server import ServerThread, create_app
from tooluse.stream import accumulate


class _Text:
    """A text backend that reused ``cached`` of its ``prompt`` tokens."""

    model = "fake"

    def __init__(self, prompt: int, cached: int) -> None:
        self.prompt, self.cached = prompt, cached

    def generate_text(self, messages: Any, **options: Any) -> Any:
        yield "Hello."
        yield TextEnd(reason="end", input_tokens=self.prompt, output_tokens=2,
                      cached_tokens=self.cached)


def test_reused_prompt_tokens_are_cache_reads() -> None:
    backend = PromptToolsBackend(_Text(prompt=300, cached=280))
    response = accumulate(backend.stream(Request(messages=[Message(role="user", content="hi")])))
    usage = response.usage
    assert (usage.input_tokens, usage.cache_read_input_tokens, usage.output_tokens) == (20, 280, 2)
    assert anthropic.encode_response(response)["usage"] == {
        "input_tokens": 20, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 280,
        "output_tokens": 2}
    assert openai.encode_response(response, created=1)["usage"] == {
        "prompt_tokens": 300, "completion_tokens": 2, "total_tokens": 302,
        "prompt_tokens_details": {"cached_tokens": 280}}


def test_nothing_reused_reads_as_before() -> None:
    response = PromptToolsBackend(_Text(prompt=300, cached=0)).complete(
        Request(messages=[Message(role="user", content="hi")]))
    assert anthropic.encode_response(response)["usage"] == {"input_tokens": 300, "output_tokens": 2}


@pytest.mark.slow
def test_the_bundled_model_reports_its_prompt_cache_through_the_gateway() -> None:
    pytest.importorskip("llama_cpp")
    from tooluse.backends.local import LocalBackend
    from tooluse.errors import BackendError

    try:
        local = LocalBackend(n_threads=2)
    except BackendError as exc:
        pytest.skip(str(exc))
    system = "You are a terse assistant. Answer in one short sentence. " * 8
    with ServerThread(create_app(local)) as srv, httpx2.Client(timeout=300) as http:
        def ask(path: str, body: dict[str, Any]) -> dict[str, Any]:
            reply = http.post(srv.url + path, json=body, headers={"x-api-key": "k"})
            assert reply.status_code == 200, reply.text
            data: dict[str, Any] = reply.json()
            return data

        def whole(usage: dict[str, Any]) -> int:
            return int(usage["input_tokens"]) + int(usage.get("cache_read_input_tokens", 0))

        body = {"max_tokens": 8, "system": system, "model": "local",
                "messages": [{"role": "user", "content": "Hi."}]}
        first = ask("/v1/messages", body)["usage"]
        second = ask("/v1/messages", body)["usage"]
        # the same prompt again: all of it but the last tokens is read back from the cache
        assert whole(second) == whole(first) > 60
        assert second["cache_read_input_tokens"] >= whole(first) - 8
        assert second["input_tokens"] == whole(first) - second["cache_read_input_tokens"]
        chat = ask("/v1/chat/completions", {"model": "local", "max_tokens": 8, "messages": [
            {"role": "system", "content": system}, {"role": "user", "content": "Hi."}]})["usage"]
        assert chat["prompt_tokens"] == whole(first)
        assert chat["prompt_tokens_details"]["cached_tokens"] >= whole(first) - 8


def test_a_streamed_answer_tells_the_cache_reads_at_its_end() -> None:
    """A text backend knows its usage only when the text ends: the Messages stream says it
    in ``message_delta``, and the anthropic SDK's final message holds it."""
    import anthropic as sdk

    app = create_app(PromptToolsBackend(_Text(prompt=300, cached=280)))
    with ServerThread(app) as srv:
        client = sdk.Anthropic(base_url=srv.url, api_key="k", max_retries=0)
        with client.messages.stream(model="fake", max_tokens=16,
                                    messages=[{"role": "user", "content": "hi"}]) as stream:
            final = stream.get_final_message()
    assert (final.usage.input_tokens, final.usage.cache_read_input_tokens) == (20, 280)
