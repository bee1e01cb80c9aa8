"""The prompt-based OpenAI-compatible backend against httpx2.MockTransport: the request body
(prefill modes, grammar fields, stops), reading the stream (finish reasons, usage, stop
strings, echoed prefills), errors and retries, and PromptToolsBackend on top of it."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anyio
import httpx2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tooluse.backends.openai_prompt import (
    OpenAIChatTextBackend,
    OpenAIPromptBackend,
    from_spec,
)
from tooluse.backends.options import RetryPolicy
from tooluse.errors import BackendError
from tooluse.messages import Message, Request, TextBlock, ToolChoice, ToolSpec, ToolUseBlock
from tooluse.prompting import PromptToolsBackend, TextBackend, TextEnd, tool_call_grammar
from tooluse.stream import accumulate

URL = "http://127.0.0.1:9/v1"
FAST = RetryPolicy(max_retries=2, initial_delay=0.001, max_delay=0.002)
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
WEATHER = ToolSpec(name="get_weather", description="Current weather in a city.",
                   input_schema=SCHEMA)
MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]


def chunk(content: str | None = None, finish: str | None = None, **extra: Any) -> dict[str, Any]:
    delta = {} if content is None else {"content": content}
    choice: dict[str, Any] = {"index": 0, "delta": delta, "finish_reason": finish}
    choice.update(extra)
    return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [choice]}


def sse(*payloads: dict[str, Any] | str, done: bool = True) -> bytes:
    lines = [f"data: {p if isinstance(p, str) else json.dumps(p)}\n\n" for p in payloads]
    if done:
        lines.append("data: [DONE]\n\n")
    return "".join(lines).encode()


def text_chunks(*pieces: str, finish: str = "stop", **extra: Any) -> bytes:
    role = {"id": "chatcmpl-1", "choices": [{"index": 0, "delta": {"role": "assistant"}}]}
    return sse(role, *[chunk(p) for p in pieces], chunk(None, finish, **extra))


class Server:
    """A MockTransport that records request bodies and answers from a script."""

    def __init__(self, *answers: httpx2.Response | bytes | Callable[[dict[str, Any]], Any]):
        self.answers = list(answers)
        self.bodies: list[dict[str, Any]] = []
        self.headers: list[httpx2.Headers] = []
        self.transport = httpx2.MockTransport(self.handle)

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        assert request.url.path == "/v1/chat/completions"
        body = json.loads(request.content)
        self.bodies.append(body)
        self.headers.append(request.headers)
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        if callable(answer):
            answer = answer(body)
        if isinstance(answer, bytes):
            return httpx2.Response(200, headers={"content-type": "text/event-stream"},
                                   content=answer)
        return answer

    def text(self, **options: Any) -> OpenAIChatTextBackend:
        options.setdefault("retry", FAST)
        return OpenAIChatTextBackend(options.pop("model", "m"), base_url=URL,
                                     transport=self.transport, **options)

    def prompt(self, **options: Any) -> OpenAIPromptBackend:
        options.setdefault("retry", FAST)
        return OpenAIPromptBackend(options.pop("model", "m"), base_url=URL,
                                   transport=self.transport, **options)


def run(backend: OpenAIChatTextBackend, **kw: Any) -> tuple[str, TextEnd]:
    kw.setdefault("messages", MESSAGES)
    items = list(backend.generate_text(**kw))
    end = items[-1]
    assert isinstance(end, TextEnd)
    assert all(isinstance(i, str) for i in items[:-1])
    return "".join(items[:-1]), end  # type: ignore[arg-type]


def weather_request(choice: str = "any", **kw: Any) -> Request:
    return Request(
        model="m",
        max_tokens=50,
        messages=[Message(role="user", content="Weather in Paris?")],
        tools=[WEATHER],
        tool_choice=ToolChoice(type=choice, name="get_weather" if choice == "tool" else None),
        **kw,
    )


# -- the request ------------------------------------------------------------------------------


def test_is_a_text_backend_and_body_has_the_generation_settings() -> None:
    server = Server(text_chunks("Hello"))
    backend = server.text(api_key="sk-test", extra_body={"repeat_penalty": 1.1})
    assert isinstance(backend, TextBackend)
    text, end = run(backend, stop=["</function_calls>", ""], max_tokens=33, temperature=0.2,
                    top_p=0.9, top_k=20)
    assert text == "Hello" and end.reason == "end"
    body = server.bodies[0]
    assert body == {
        "model": "m",
        "messages": MESSAGES,
        "stream": True,
        "stream_options": {"include_usage": True},
        "max_tokens": 33,
        "temperature": 0.2,
        "top_p": 0.9,
        "top_k": 20,
        "stop": ["</function_calls>"],
        "repeat_penalty": 1.1,
    }
    assert server.headers[0]["authorization"] == "Bearer sk-test"


def test_optional_fields_are_left_out() -> None:
    server = Server(text_chunks("x"))
    run(server.text(model=None, stream_usage=False, api_key=""))
    body = server.bodies[0]
    assert "model" not in body and "top_p" not in body and "top_k" not in body
    assert "stop" not in body and "stream_options" not in body
    assert "authorization" not in server.headers[0]


@pytest.mark.parametrize(
    ("mode", "last", "flags"),
    [
        ("assistant", {"role": "assistant", "content": "<tool_name>"}, {}),
        ("continue_final_message", {"role": "assistant", "content": "<tool_name>"},
         {"continue_final_message": True, "add_generation_prompt": False}),
        ("none", MESSAGES[-1], {}),
    ],
)
def test_prefill_modes(mode: str, last: dict[str, str], flags: dict[str, Any]) -> None:
    server = Server(text_chunks("get_weather"))
    run(server.text(prefill=mode), prefill="<tool_name>")
    body = server.bodies[0]
    assert body["messages"][-1] == last
    assert {k: body[k] for k in ("continue_final_message", "add_generation_prompt")
            if k in body} == flags


def test_no_prefill_sends_no_assistant_message() -> None:
    server = Server(text_chunks("x"))
    run(server.text(prefill="continue_final_message"))
    assert server.bodies[0]["messages"] == MESSAGES
    assert "continue_final_message" not in server.bodies[0]


@pytest.mark.parametrize(
    ("field", "where"),
    [("grammar", ("grammar",)), ("guided_grammar", ("guided_grammar",)),
     ("structured_outputs.grammar", ("structured_outputs", "grammar"))],
)
def test_grammar_goes_in_the_configured_field(field: str, where: tuple[str, ...]) -> None:
    grammar = tool_call_grammar([WEATHER], ToolChoice(type="any"))
    server = Server(text_chunks("x"))
    run(server.text(grammar_field=field, extra_body={"structured_outputs": {"backend": "x"}}),
        grammar=grammar, prefill=grammar.prefill)
    value: Any = server.bodies[0]
    for key in where:
        value = value[key]
    assert value == grammar.gbnf and "get_weather" in value
    if field.startswith("structured_outputs"):
        assert server.bodies[0]["structured_outputs"]["backend"] == "x"


def test_grammar_without_a_field_is_not_implemented() -> None:
    server = Server(text_chunks("x"))
    grammar = tool_call_grammar([WEATHER], ToolChoice(type="any"))
    with pytest.raises(NotImplementedError, match="grammar_field"):
        server.text().generate_text(MESSAGES, grammar=grammar)
    assert server.bodies == []


@pytest.mark.parametrize("bad", ["", "1x", "a..b", "a b"])
def test_bad_grammar_field_is_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="grammar_field"):
        OpenAIChatTextBackend("m", base_url=URL, grammar_field=bad)


def test_bad_prefill_mode_and_message_are_refused() -> None:
    with pytest.raises(ValueError, match="prefill"):
        OpenAIChatTextBackend("m", base_url=URL, prefill="maybe")  # type: ignore[arg-type]
    server = Server(text_chunks("x"))
    with pytest.raises(BackendError, match=r"messages\.0") as info:
        server.text().generate_text([{"role": "tool", "content": "x"}])
    assert info.value.kind == "invalid_request"


# -- reading the stream -----------------------------------------------------------------------


def test_finish_reasons_and_usage() -> None:
    usage = {"id": "c", "choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": 3,
                                                  "prompt_tokens_details": {"cached_tokens": 8}}}
    server = Server(sse(chunk("a"), chunk("b", "length"), usage))
    text, end = run(server.text())
    assert text == "ab"
    assert (end.reason, end.input_tokens, end.output_tokens, end.cached_tokens) == \
        ("length", 12, 3, 8)
    assert end.timings["total_s"] >= end.timings["first_chunk_s"] >= 0


def test_vllm_stop_reason_names_the_stop_string() -> None:
    server = Server(text_chunks("The end", finish="stop", stop_reason="END"))
    text, end = run(server.text(), stop=["END", "</function_calls>"])
    assert text == "The end" and (end.reason, end.stop_sequence) == ("stop", "END")


def test_plain_stop_without_a_named_string_is_an_end_of_turn() -> None:
    server = Server(text_chunks("done"))
    _, end = run(server.text(), stop=["END"])
    assert (end.reason, end.stop_sequence) == ("end", None)


def test_stop_string_left_in_the_text_is_cut_here() -> None:
    # A server that ignores "stop" (or returns the matched string): cut at the first stop,
    # even when it arrives split over chunks, and stop reading.
    server = Server(text_chunks("a call</func", "tion_calls> and more", finish="length"))
    text, end = run(server.text(), stop=["</function_calls>"])
    assert text == "a call"
    assert (end.reason, end.stop_sequence) == ("stop", "</function_calls>")


def test_held_back_stop_prefix_is_released_at_the_end() -> None:
    server = Server(text_chunks("a </", finish="stop", stop_reason="X"))
    text, end = run(server.text(), stop=["</function_calls>", "X"])
    assert text == "a </" and end.stop_sequence == "X"


def test_json_answer_to_a_stream_request() -> None:
    document = {"id": "c", "object": "chat.completion",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": "whole"},
                             "finish_reason": "length"}],
                "usage": {"prompt_tokens": 5, "completion_tokens": 1}}
    server = Server(httpx2.Response(200, json=document))
    text, end = run(server.text())
    assert text == "whole" and end.reason == "length" and end.input_tokens == 5


def test_malformed_json_answer_is_a_clear_api_error() -> None:
    server = Server(httpx2.Response(200, headers={"content-type": "application/json"},
                                    content=b"{not json at all"))
    with pytest.raises(BackendError, match="malformed JSON: '{not json at all'") as info:
        run(server.text())
    assert info.value.kind == "api"


def test_reasoning_text_is_not_part_of_the_continuation() -> None:
    server = Server(sse({"choices": [{"index": 0, "delta": {"reasoning_content": "hmm"}}]},
                        chunk("answer"), chunk(None, "stop")))
    assert run(server.text())[0] == "answer"


@pytest.mark.parametrize("answer", [
    # Ollama's (and vLLM >= 0.11's) field, and reasoning beside content in one delta.
    sse(chunk(None, None, delta={"reasoning": "hmm"}),
        chunk(None, None, delta={"reasoning_content": "more", "content": "ans"}),
        chunk("wer"), chunk(None, "stop")),
    # A server that answers one document: its message's reasoning is not the text either.
    httpx2.Response(200, json={"choices": [{"index": 0, "finish_reason": "stop", "message": {
        "role": "assistant", "reasoning_content": "hmm", "reasoning": "hmm", "content": "answer"}}]}),
])
def test_no_reasoning_field_reaches_the_continuation(answer: Any) -> None:
    assert run(Server(answer).text())[0] == "answer"


def test_a_reasoning_server_behind_openai_prompt_gives_the_call_only() -> None:
    # A reasoning model's thinking (reasoning_content) must not be read as text
    # before or inside the call block.
    server = Server(sse(chunk(None, None, delta={"reasoning_content": "<function_calls> no"}),
                        chunk("<function_calls>\n<invoke>\n<tool_name>get_weather</tool_name>\n"
                              "<parameters>\n<city>Paris</city>\n</parameters>\n</invoke>\n"),
                        chunk(None, "stop")))
    response = server.prompt(grammar=False).complete(weather_request("auto"))
    assert response.content == [ToolUseBlock(id=response.content[0].id, name="get_weather",  # type: ignore[union-attr]
                                             input={"city": "Paris"})]


@pytest.mark.parametrize("body, missing", [
    (sse(chunk("hi"), chunk(None, "stop"), done=False), "[DONE]"),  # cut after the finish
    (sse(chunk("hi"), done=True), "finish_reason"),  # a [DONE] with no finish before it
    (sse(chunk("hi"), done=False), "[DONE]"),  # the connection simply closed
])
def test_a_stream_without_its_end_is_an_error_not_a_normal_end(body: bytes, missing: str) -> None:
    # A cut stream must never read as a complete answer.
    server = Server(body)
    with pytest.raises(BackendError, match="incomplete") as info:
        run(server.text())
    assert info.value.kind == "api" and missing in str(info.value)


def test_stopping_early_closes_the_response_and_keeps_last_end() -> None:
    closed: list[bool] = []

    class Body(httpx2.SyncByteStream):
        def __iter__(self):  # type: ignore[no-untyped-def]
            yield sse(chunk("one"), done=False)
            yield sse(chunk("two"), done=False)

        def close(self) -> None:
            closed.append(True)

    server = Server(httpx2.Response(200, headers={"content-type": "text/event-stream"},
                                    stream=Body()))
    backend = server.text()
    chunks = backend.generate_text(MESSAGES)
    assert next(chunks) == "one"
    chunks.close()  # type: ignore[attr-defined]
    assert closed and backend.last_end is not None


# -- the prefill written again by the model -----------------------------------------------------

PREFILL = "<function_calls>\n<invoke>\n<tool_name>"


def test_echoed_prefill_is_removed() -> None:
    # A server that opens a new assistant turn instead of continuing: the model often
    # starts by writing the prefill again.
    server = Server(text_chunks("\n<function_calls>\n<inv", "oke>\n<tool_name>get_weather"))
    assert run(server.text(), prefill=PREFILL)[0] == "get_weather"


def test_true_continuation_is_untouched() -> None:
    server = Server(text_chunks("<", "function_results>"))
    assert run(server.text(), prefill="Answer:")[0] == "<function_results>"
    server = Server(text_chunks(" 42"))
    assert run(server.text(), prefill="The answer is")[0] == " 42"


def test_none_mode_finds_the_prefill_the_model_wrote_itself() -> None:
    server = Server(text_chunks("Sure. <function_calls><invoke>", " <tool_name>get_weather</"))
    assert run(server.text(prefill="none"), prefill=PREFILL)[0] == "get_weather</"


def test_none_mode_passes_everything_on_when_the_model_never_writes_it() -> None:
    server = Server(text_chunks("It is ", "sunny."))
    assert run(server.text(prefill="none"), prefill=PREFILL)[0] == "It is sunny."


def test_none_mode_with_grammar_does_not_search() -> None:
    grammar = tool_call_grammar([WEATHER], ToolChoice(type="any"))
    server = Server(text_chunks("get_weather</tool_name>"))
    text, _ = run(server.text(prefill="none", grammar_field="grammar"),
                  prefill=grammar.prefill, grammar=grammar)
    assert text == "get_weather</tool_name>"
    assert server.bodies[0]["messages"] == MESSAGES


# -- errors -----------------------------------------------------------------------------------


def test_openai_error_body_maps_to_its_kind() -> None:
    error = {"error": {"message": "Unrecognized request argument: grammar",
                       "type": "invalid_request_error", "code": None}}
    server = Server(httpx2.Response(400, json=error))
    with pytest.raises(BackendError, match="Unrecognized request argument") as info:
        run(server.text())
    assert info.value.kind == "invalid_request" and info.value.status == 400
    assert len(server.bodies) == 1  # not retried


@pytest.mark.parametrize(
    ("status", "body", "kind"),
    [(404, {"error": "model 'x' not found"}, "not_found"),  # Ollama's shape
     (400, {"object": "error", "message": "bad", "code": 400}, "invalid_request"),  # vLLM's
     (401, "no key", "authentication")],
)
def test_other_error_shapes(status: int, body: Any, kind: str) -> None:
    answer = (httpx2.Response(status, json=body) if not isinstance(body, str)
              else httpx2.Response(status, text=body))
    with pytest.raises(BackendError) as info:
        run(Server(answer).text())
    assert info.value.kind == kind and info.value.status == status


def test_rate_limit_is_retried_then_succeeds() -> None:
    server = Server(httpx2.Response(429, headers={"retry-after-ms": "1"},
                                    json={"error": {"message": "slow down", "type": "x"}}),
                    text_chunks("ok"))
    backend = server.text()
    assert run(backend)[0] == "ok"
    assert len(server.bodies) == 2 and backend.retry_delays == [0.001]


def test_unreachable_server_is_unavailable() -> None:
    def refuse(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("connection refused", request=request)

    backend = OpenAIChatTextBackend("m", base_url=URL, transport=httpx2.MockTransport(refuse),
                                    max_retries=0)
    with pytest.raises(BackendError, match="cannot reach") as info:
        run(backend)
    assert info.value.kind == "unavailable"


def test_error_inside_the_stream() -> None:
    server = Server(sse(chunk("par"), {"error": {"message": "out of memory", "type": "server_error"}}))
    chunks = server.text().generate_text(MESSAGES)
    assert next(chunks) == "par"
    with pytest.raises(BackendError, match="out of memory"):
        list(chunks)


@pytest.mark.parametrize("bad", ["{not json", "[1, 2]",
                                 json.dumps({"choices": [{"index": 0, "delta": {"content": 5}}]}),
                                 json.dumps({"choices": "x"})])
def test_malformed_chunks_are_api_errors(bad: str) -> None:
    with pytest.raises(BackendError) as info:
        run(Server(sse(bad)).text())
    assert info.value.kind == "api"


# -- prompt-based tool use on top -------------------------------------------------------------


def test_forced_call_without_grammar_becomes_a_tool_use_block() -> None:
    server = Server(text_chunks("get_weather</tool_name>\n<parameters>\n<city>Par", "is</city>\n"
                                "</parameters>\n</invoke>\n"))
    backend = server.prompt()
    assert isinstance(backend, PromptToolsBackend) and backend.grammar is False
    response = accumulate(backend.stream(weather_request()))
    assert response.stop_reason == "tool_use"
    [block] = response.content
    assert isinstance(block, ToolUseBlock)
    assert (block.name, block.input) == ("get_weather", {"city": "Paris"})
    body = server.bodies[0]
    assert body["messages"][0]["role"] == "system" and "get_weather" in body["messages"][0]["content"]
    assert body["messages"][-1] == {"role": "assistant", "content": PREFILL}
    assert "</function_calls>" in body["stop"] and "grammar" not in body


def test_forced_call_with_grammar_sends_the_tool_grammar() -> None:
    request = weather_request("tool")
    grammar = tool_call_grammar(request.tools, request.tool_choice)
    server = Server(text_chunks("<city>Paris</city>\n</parameters>\n</invoke>\n"))
    backend = server.prompt(grammar_field="grammar")
    assert backend.grammar is True
    response = accumulate(backend.stream(request))
    assert [b.input for b in response.content if isinstance(b, ToolUseBlock)] == [{"city": "Paris"}]
    body = server.bodies[0]
    assert body["grammar"] == grammar.gbnf
    assert body["messages"][-1] == {"role": "assistant", "content": grammar.prefill}


def test_text_answer_and_user_stop_sequence() -> None:
    server = Server(text_chunks("It is sunny", finish="stop", stop_reason="###"))
    response = accumulate(server.prompt().stream(weather_request("auto",
                                                                 stop_sequences=["###"])))
    assert response.content == [TextBlock(text="It is sunny")]
    assert (response.stop_reason, response.stop_sequence) == ("stop_sequence", "###")


def test_async_and_usage_through_the_prompt_backend() -> None:
    usage = {"choices": [], "usage": {"prompt_tokens": 70, "completion_tokens": 9}}
    server = Server(sse(chunk("Sunny."), chunk(None, "stop"), usage))
    response = anyio.run(server.prompt().acomplete, weather_request("auto"))
    assert response.content == [TextBlock(text="Sunny.")]
    assert (response.usage.input_tokens, response.usage.output_tokens) == (70, 9)


def test_grammar_true_needs_a_field() -> None:
    with pytest.raises(ValueError, match="grammar_field"):
        OpenAIPromptBackend("m", base_url=URL, grammar=True)
    assert OpenAIPromptBackend("m", base_url=URL, grammar_field="grammar",
                               grammar=False).grammar is False


def test_from_spec() -> None:
    backend = from_spec("http://127.0.0.1:8000/v1#qwen", grammar_field="grammar",
                        prefill="continue_final_message", max_tokens="64", timeout="5",
                        stream_usage="false", style="json")
    text = backend.text_model
    assert (text.base_url, text.model, text.grammar_field, text.prefill_mode) == \
        ("http://127.0.0.1:8000/v1", "qwen", "grammar", "continue_final_message")
    assert (backend.grammar, backend.max_tokens, backend.style, text.timeout,
            text.stream_usage) == (True, 64, "json", 5.0, False)
    assert backend.name == "openai-prompt" and backend.model == "qwen"
    off = from_spec("http://127.0.0.1:8000/v1", grammar_field="none")
    assert off.grammar is False and off.text_model.model is None
    named = from_spec("llama3", base_url="http://127.0.0.1:1/v1", grammar="no")
    assert named.text_model.model == "llama3" and named.grammar is False
    with pytest.raises(ValueError, match="grammar"):
        from_spec("http://x/v1#m", grammar="maybe")


def test_tool_loop_with_the_runner_sends_results_as_text() -> None:
    from tooluse.runner import Runner
    from tooluse.tools import Tool

    def get_weather(city: str) -> str:
        """Current weather in a city.

        Args:
            city: The city name.
        """
        return f"Sunny in {city}"

    def answer(body: dict[str, Any]) -> bytes:
        last = body["messages"][-1]
        if last["role"] == "assistant":  # the forced first turn, prefilled
            return text_chunks("get_weather</tool_name>\n<parameters>\n<city>Oslo</city>\n"
                               "</parameters>\n</invoke>\n")
        assert "<function_results>" in last["content"] and "Sunny in Oslo" in last["content"]
        return text_chunks("It is sunny in Oslo.")

    server = Server(answer)
    runner = Runner(server.prompt(), [Tool.from_function(get_weather)], tool_choice="any")
    result = runner.run("Weather in Oslo?")
    assert result.text == "It is sunny in Oslo."
    assert len(server.bodies) == 2
    history = server.bodies[1]["messages"]
    assert history[-2]["role"] == "assistant" and "<city>Oslo</city>" in history[-2]["content"]


def test_spec_string_once_the_entry_point_is_registered() -> None:
    from tooluse.backends.registry import available_backends, load_backend

    if "openai-prompt" not in available_backends():
        pytest.skip("entry point openai-prompt = tooluse.backends.openai_prompt:from_spec "
                    "not in pyproject.toml yet")
    backend = load_backend("openai-prompt:http://127.0.0.1:8000/v1#m", grammar_field="grammar")
    assert isinstance(backend, OpenAIPromptBackend) and backend.grammar is True


def test_from_spec_reads_options_from_the_url_query() -> None:
    backend = from_spec("http://127.0.0.1:8000/v1?grammar_field=grammar&prefill=none"
                        "&api-version=2&max_tokens=99#m", prefill="assistant")
    text = backend.text_model
    assert text.base_url == "http://127.0.0.1:8000/v1?api-version=2"
    assert (text.grammar_field, text.prefill_mode, backend.max_tokens, backend.grammar) == \
        ("grammar", "assistant", 99, True)  # a keyword option wins over the query
    assert text.endpoint == "http://127.0.0.1:8000/v1/chat/completions?api-version=2"
    assert from_spec("http://127.0.0.1:8000/v1/?x=1").text_model.endpoint == \
        "http://127.0.0.1:8000/v1/chat/completions?x=1"


def test_error_messages_name_this_backend() -> None:
    server = Server(httpx2.Response(503, json={"error": "loading model"}))
    with pytest.raises(BackendError) as info:
        run(server.text(max_retries=0))
    assert str(info.value) == "openai-prompt: HTTP 503: loading model"
    assert info.value.kind == "unavailable"


# -- chunking never changes the result -------------------------------------------------------

_PIECES = ["<function_calls>", "\n", "<invoke>", "<tool_name>", "get_weather", "</tool_name>",
           "Sure. ", "###", "</function_calls>", " ", "Paris", "é", "</", "<"]


@settings(max_examples=150, deadline=None)
@given(
    pieces=st.lists(st.sampled_from(_PIECES), max_size=12),
    cuts=st.lists(st.integers(min_value=1, max_value=7), min_size=1, max_size=30),
    mode=st.sampled_from(["assistant", "continue_final_message", "none"]),
    prefill=st.sampled_from(["", PREFILL, "The answer is"]),
    finish=st.sampled_from(["stop", "length"]),
)
def test_any_chunking_gives_the_same_text_and_end(pieces: list[str], cuts: list[int], mode: str,
                                                  prefill: str, finish: str) -> None:
    text = "".join(pieces)
    chunks: list[str] = []
    at = 0
    for i in range(len(text)):
        if at >= len(text):
            break
        size = cuts[i % len(cuts)]
        chunks.append(text[at:at + size])
        at += size
    stops = ["</function_calls>", "###"]
    whole = run(Server(text_chunks(text, finish=finish)).text(prefill=mode),
                prefill=prefill, stop=stops)
    split = run(Server(text_chunks(*chunks, finish=finish)).text(prefill=mode),
                prefill=prefill, stop=stops)
    assert split[0] == whole[0]
    assert (split[1].reason, split[1].stop_sequence) == (whole[1].reason, whole[1].stop_sequence)
    # Nothing after a stop string, and nothing lost before it when no prefill is searched.
    assert not any(s in whole[0] for s in stops)
    if not prefill.strip():
        cut = min([text.find(s) for s in stops if s in text] or [len(text)])
        assert whole[0] == text[:cut]
