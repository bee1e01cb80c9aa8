"""Each family's own tool format on a real model: the bundled SmolLM2-135M run under each
family's published chat template (tests/fixtures/chat_templates). These are format-level
tests: the prompt renders with the tools, forced and auto calls come back parsed and
streamed, a tool loop sends results back through the template's tool role, thinking works
under Qwen3's template, through the library and through the gateway. They say nothing of
the quality a model of the family would get: no such weights are here (docs/local.md)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tooluse.messages import Message, Reasoning, Request, TextBlock, ToolChoice, ToolSpec
from tooluse.stream import (
    BlockStart,
    BlockStop,
    MessageDelta,
    StreamEvent,
    ThinkingDelta,
    ToolInputDelta,
    accumulate,
)

pytestmark = pytest.mark.slow

TEMPLATES = Path(__file__).parent.parent / "fixtures" / "chat_templates"
FAMILIES = {
    "qwen2.5-instruct.jinja": "HermesFormat",
    "qwen3-4b-thinking-2507.jinja": "HermesFormat",
    "llama-3.1-instruct.jinja": "Llama3Format",
    "mistral-7b-instruct-v0.3.jinja": "MistralFormat",
    "openai-gpt-oss-120b.jinja": "HarmonyFormat",
}
WEATHER = ToolSpec(
    name="get_weather", description="Gets the current weather in a city.",
    input_schema={"type": "object", "properties": {
        "city": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"]}},
        "required": ["city"]})


def _backend(template: str | None = None, **options: Any) -> Any:
    pytest.importorskip("llama_cpp")
    from tooluse.backends.local import LocalBackend
    from tooluse.errors import BackendError

    if template is not None:
        options["chat_template"] = (TEMPLATES / template).read_text(encoding="utf-8")
    try:
        return LocalBackend(**options)
    except BackendError as exc:
        if exc.kind in ("not_found", "unavailable"):
            pytest.skip(str(exc))
        raise


def _ask(choice: ToolChoice, text: str = "What is the weather in Paris?",
         **fields: Any) -> Request:
    fields.setdefault("max_tokens", 96)
    return Request(messages=[Message(role="user", content=[TextBlock(text=text)])],
                   tools=[WEATHER], tool_choice=choice, **fields)


def _check_stream(events: list[StreamEvent]) -> None:
    """Every block is opened, then its deltas, then closed; a call's input is one JSON
    object as its block's deltas."""
    open_blocks: set[int] = set()
    for event in events:
        if isinstance(event, BlockStart):
            assert event.index not in open_blocks
            open_blocks.add(event.index)
        elif isinstance(event, ToolInputDelta):
            assert event.index in open_blocks
        elif isinstance(event, BlockStop):
            open_blocks.remove(event.index)
    assert not open_blocks


@pytest.fixture(scope="module", params=sorted(FAMILIES))
def family(request: pytest.FixtureRequest) -> Iterator[tuple[str, Any]]:
    backend = _backend(request.param)
    yield request.param, backend


def test_the_template_picks_the_family_format(family: tuple[str, Any]) -> None:
    name, backend = family
    assert type(backend.tool_format).__name__ == FAMILIES[name]
    request = _ask(ToolChoice(type="auto"))
    messages, prefill, _, _ = backend._prompt(request)
    prompt = backend.text_model.render(messages, prefill,
                                       tools=backend._template_tools(request)["tools"])
    # The tools are described by the family's own template, not the XML system prompt.
    assert "Gets the current weather in a city." in prompt
    assert "<function_calls>" not in prompt and "<tool_description>" not in prompt


@pytest.mark.parametrize("choice", [ToolChoice(type="tool", name="get_weather"),
                                    ToolChoice(type="any")], ids=["tool", "any"])
def test_forced_calls_parse_and_stream(family: tuple[str, Any], choice: ToolChoice) -> None:
    _, backend = family
    events = list(backend.stream(_ask(choice)))
    _check_stream(events)
    message = accumulate(events)
    calls = message.tool_uses
    assert message.stop_reason == "tool_use"
    assert calls and calls[0].name == "get_weather"
    assert isinstance(calls[0].input.get("city"), str) and calls[0].input["city"]
    assert set(calls[0].input) <= {"city", "unit"}


def test_auto_answers_are_a_parsed_call_or_plain_text(family: tuple[str, Any]) -> None:
    """Under auto the model chooses: whatever it chose comes back whole, a call parsed or
    text holding no half-written call."""
    _, backend = family
    events = list(backend.stream(_ask(ToolChoice(type="auto"))))
    _check_stream(events)
    message = accumulate(events)
    marker = backend.tool_format.format_stops()
    text = message.text()
    assert not any(m in text for m in marker)
    if message.tool_uses:
        assert message.stop_reason == "tool_use"
        assert message.tool_uses[0].input.get("city")
    else:
        assert text.strip() and message.stop_reason in ("end_turn", "max_tokens")


@pytest.mark.parametrize("template", ["qwen2.5-instruct.jinja", "llama-3.1-instruct.jinja",
                                      "mistral-7b-instruct-v0.3.jinja"])
def test_the_call_threshold_reads_the_familys_opener(template: str) -> None:
    """Under auto, the call threshold weighs the family's own opening (``<tool_call>``,
    Llama's ``{``, Mistral's ``[TOOL_CALLS]``), not the XML ``<``: at a threshold no
    model's probability of opening a call falls under, the bundled model calls, in the
    family's format, and the call parses. (Whether the model would call at the default
    threshold is its own choice, and no test's.)"""
    backend = _backend(template, auto_call_threshold=1e-12)
    events = list(backend.stream(_ask(ToolChoice(type="auto"))))
    _check_stream(events)
    message = accumulate(events)
    assert [c.name for c in message.tool_uses][:1] == ["get_weather"]
    assert isinstance(message.tool_uses[0].input.get("city"), str)
    assert message.stop_reason == "tool_use"


def test_none_is_text_only(family: tuple[str, Any]) -> None:
    _, backend = family
    message = accumulate(backend.stream(_ask(ToolChoice(type="none"), max_tokens=24)))
    assert not message.tool_uses and message.text().strip()


def test_a_tool_loop_sends_results_through_the_templates_tool_role(
        family: tuple[str, Any]) -> None:
    """The runner's loop on a native format: a forced call, its result back in the
    template's own tool turn, then the answer."""
    from tooluse import Runner
    from tooluse.tools import Tool

    name, backend = family
    seen: list[str] = []

    def get_weather(city: str, unit: str = "c") -> str:
        """Gets the current weather in a city."""
        seen.append(city)
        return f"18 degrees and sunny in {city}"

    runner = Runner(backend, [Tool.from_function(get_weather)], max_tokens=48,
                    tool_choice=["get_weather", "none"])
    result = runner.run("What is the weather in Paris?")
    assert seen and isinstance(seen[0], str)
    assert result.text.strip()
    # The second turn's prompt carried the result in the family's tool turn.
    request = Request(messages=result.messages[:-1], tools=[WEATHER],
                      tool_choice=ToolChoice(type="none"))
    messages, prefill, _, _ = backend._prompt(request)
    prompt = backend.text_model.render(messages, prefill,
                                       tools=backend._template_tools(request)["tools"])
    assert "18 degrees and sunny" in prompt
    turn_of = {"HermesFormat": "<tool_response>", "Llama3Format": "ipython",
               "MistralFormat": "[TOOL_RESULTS]",
               "HarmonyFormat": "<|start|>functions.get_weather to=assistant"}[FAMILIES[name]]
    assert turn_of in prompt


def test_thinking_under_qwen3s_template_then_a_call() -> None:
    backend = _backend("qwen3-4b-thinking-2507.jinja")
    assert backend.think_tags
    events = list(backend.stream(_ask(ToolChoice(type="any"),
                                      reasoning=Reasoning(budget_tokens=16), max_tokens=160)))
    _check_stream(events)
    assert any(isinstance(e, ThinkingDelta) for e in events)
    message = accumulate(events)
    assert message.tool_uses and message.tool_uses[0].name == "get_weather"
    stop = next(e for e in events if isinstance(e, MessageDelta))
    assert stop.stop_reason == "tool_use"


def test_reasoning_under_gpt_oss_template_is_its_analysis_message_then_a_call() -> None:
    """gpt-oss reasons on the ``analysis`` channel, whatever ``think_tags`` says (its
    template mentions no ``<think>``): a request asking for reasoning gets a bounded
    analysis message in the grammar, streamed as thinking, then the call."""
    backend = _backend("openai-gpt-oss-120b.jinja")
    assert not backend.think_tags
    events = list(backend.stream(_ask(ToolChoice(type="any"),
                                      reasoning=Reasoning(budget_tokens=16), max_tokens=160)))
    _check_stream(events)
    assert any(isinstance(e, ThinkingDelta) for e in events)
    message = accumulate(events)
    assert message.content[0].type == "thinking"
    assert "<|" not in message.content[0].joined_text  # type: ignore[union-attr]
    assert message.tool_uses and message.tool_uses[0].name == "get_weather"
    assert message.stop_reason == "tool_use"


def test_mistrals_marker_is_the_models_own_token_when_it_has_one() -> None:
    """``[TOOL_CALLS]`` is plain text to SmolLM2's tokenizer (no such token): the marker
    stays text there, and the pieces are unchanged."""
    backend = _backend("mistral-7b-instruct-v0.3.jinja")
    loaded = backend.loaded
    assert loaded.pieces_with(("[TOOL_CALLS]",)) == loaded.pieces()
    # ``<|im_end|>`` is one of SmolLM2's control tokens: named as a special, it stands for
    # its text (what a Mistral model's ``[TOOL_CALLS]`` token gets).
    token = loaded.llm.tokenize(b"<|im_end|>", add_bos=False, special=True)
    assert len(token) == 1 and loaded.pieces()[token[0]] == b""
    assert loaded.pieces_with(("<|im_end|>",))[token[0]] == b"<|im_end|>"


def test_gpt_oss_reasoning_effort_is_rendered_and_counted() -> None:
    """The request's reasoning effort reaches gpt-oss's template (``Reasoning: high`` in its
    system message), and the prompt's count is that prompt's; a request without tools
    still reads the answer's harmony framing."""
    backend = _backend("openai-gpt-oss-120b.jinja")
    request = _ask(ToolChoice(type="auto"), reasoning=Reasoning(effort="high"))
    messages, prefill, _, _ = backend._prompt(request)
    options = backend._template_tools(request)
    prompt = backend.text_model.render(messages, prefill, tools=options["tools"],
                                       template_kwargs=options["template_kwargs"])
    assert "Reasoning: high" in prompt
    assert backend.count_tokens(request) == len(backend.text_model.tokenize(prompt))
    bare = Request(messages=request.messages, max_tokens=16)
    events = list(backend.stream(bare))
    _check_stream(events)
    assert not accumulate(events).tool_uses


def test_a_forced_special_mark_is_fed_as_the_models_own_token() -> None:
    """Text the grammar forces that holds one of the family's specials (harmony's
    `` <|constrain|>json<|message|>`` after a tool's name, its ``<|call|>``) is fed as the
    model's own special token, as the model would write it, not spelled out in characters.
    SmolLM2's ``<|im_end|>`` stands in for gpt-oss's marks (no gpt-oss weights here)."""
    backend = _backend("openai-gpt-oss-120b.jinja")
    loaded, text = backend.loaded, backend.text_model
    mark = ("<|im_end|>",)
    token = loaded.llm.tokenize(b"<|im_end|>", add_bos=False, special=True)[0]
    forced = b'{"city": "Paris"}<|im_end|>'
    ids = text._forced_tokens(forced, loaded.pieces_with(mark), mark)
    assert ids[-1] == token and b"".join(loaded.pieces_with(mark)[t] for t in ids) == forced
    # Not a special of the family: spelled out, as before.
    ids = text._forced_tokens(forced, loaded.pieces_with(mark))
    assert token not in ids


def test_the_bundled_model_stays_xml_by_default() -> None:
    from tooluse.errors import BackendError

    backend = _backend()
    assert backend.tool_format is None  # its template renders no tools
    assert backend.text_model.no_repeat  # the XML path's techniques are on
    with pytest.raises(BackendError, match="renders no tools"):
        _backend(tool_format="native")
    forced = _backend(tool_format="hermes")
    message = accumulate(forced.stream(_ask(ToolChoice(type="tool", name="get_weather"))))
    assert message.tool_uses and message.tool_uses[0].input.get("city")


def test_through_the_gateway_with_the_anthropic_sdk() -> None:
    anthropic = pytest.importorskip("anthropic")
    from tooluse.server import ServerThread, create_app

    backend = _backend("qwen2.5-instruct.jinja")
    tools = [{"name": "get_weather", "description": "Gets the current weather in a city.",
              "input_schema": WEATHER.input_schema}]
    with ServerThread(create_app(backend, close_backend=False)) as server:
        client = anthropic.Anthropic(base_url=server.url, api_key="k", max_retries=0,
                                     timeout=300)
        msg = client.messages.create(
            model="local", max_tokens=96, tools=tools,
            tool_choice={"type": "tool", "name": "get_weather"},
            messages=[{"role": "user", "content": "What is the weather in Paris?"}])
        assert msg.stop_reason == "tool_use"
        call = next(b for b in msg.content if b.type == "tool_use")
        assert call.name == "get_weather" and isinstance(call.input["city"], str)
        # A streamed call: input_json events whose partial JSON joins to its input (under
        # auto the model's choice is its own: tests/prompting/test_native_answers.py
        # streams a scripted auto call through the gateway).
        with client.messages.stream(
                model="local", max_tokens=96, tools=tools, tool_choice={"type": "any"},
                messages=[{"role": "user", "content": "What is the weather in Paris?"}]) as s:
            events = list(s)
            final = s.get_final_message()
        partial = "".join(e.partial_json for e in events if e.type == "input_json")
        assert final.stop_reason == "tool_use"
        calls = [b for b in final.content if b.type == "tool_use"]
        assert [b.name for b in calls] == ["get_weather"]
        assert json.loads(partial) == calls[0].input
        # The result goes back through the template's tool role, and the model answers.
        answer = client.messages.create(
            model="local", max_tokens=32, tools=tools, tool_choice={"type": "none"},
            messages=[
                {"role": "user", "content": "What is the weather in Paris?"},
                {"role": "assistant", "content": [
                    {"type": "tool_use", "id": call.id, "name": "get_weather",
                     "input": call.input}]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": call.id,
                     "content": "18 degrees and sunny"}]}])
        assert answer.stop_reason in ("end_turn", "max_tokens")
        assert any(b.type == "text" and b.text.strip() for b in answer.content)
