"""Each model family's own tool format, without a model: the family found from its published
chat template (tests/fixtures/chat_templates), the conversation rendered by that template with
the tools (as llama-cpp-python's Jinja2 formatter renders it, the one the local backend
uses), the grammar agreeing with how the template writes a call, and the parser reading back
every sentence the grammar allows."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tooluse.codecs.legacy import CallItem, ParseProblem, TextItem
from tooluse.grammar.ir import sample
from tooluse.grammar.matcher import Matcher
from tooluse.messages import (
    Message,
    Request,
    TextBlock,
    ToolChoice,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
)
from tooluse.prompting.formats import (
    FAMILIES,
    HarmonyFormat,
    HermesFormat,
    Llama3Format,
    MistralFormat,
    NativeFormat,
    choose,
    detect,
)
from tooluse.prompting.formats.mistral import nine_char_id

TEMPLATES = Path(__file__).parent.parent / "fixtures" / "chat_templates"
FAMILY_OF = {
    "qwen2.5-instruct.jinja": HermesFormat,
    "qwen3-4b-thinking-2507.jinja": HermesFormat,
    "llama-3.1-instruct.jinja": Llama3Format,
    "mistral-7b-instruct-v0.3.jinja": MistralFormat,
    "openai-gpt-oss-120b.jinja": HarmonyFormat,
}
#: SmolLM2-135M-Instruct's template (the bundled model's, as its GGUF carries it): no tools.
SMOLLM2 = ("{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
           "{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by "
           "Hugging Face<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n' + "
           "message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}"
           "{{ '<|im_start|>assistant\n' }}{% endif %}")

WEATHER = ToolSpec(name="get_weather", description="Gets the weather in a city.",
                   input_schema={"type": "object",
                                 "properties": {"city": {"type": "string"},
                                                "unit": {"type": "string",
                                                         "enum": ["c", "f"]}},
                                 "required": ["city"]})
TIME = ToolSpec(name="get_time", description="The time in a time zone.",
                input_schema={"type": "object", "properties": {
                    "zone": {"type": "string"}, "hours": {"type": "integer"},
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "exact": {"type": "boolean"}}, "required": ["zone"]})
EMPTY = ToolSpec(name="ping", description="No arguments.", input_schema={"type": "object"})


def _template(name: str) -> str:
    return (TEMPLATES / name).read_text(encoding="utf-8")


def _render(template: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> str:
    pytest.importorskip("llama_cpp")
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    formatter = Jinja2ChatFormatter(template=template, eos_token="</s>", bos_token="<s>",
                                    add_generation_prompt=True)
    return str(formatter(messages=messages, tools=tools).prompt)


@pytest.mark.parametrize("name", sorted(FAMILY_OF))
def test_each_published_template_is_its_family(name: str) -> None:
    template = _template(name)
    found = detect(template)
    assert isinstance(found, FAMILY_OF[name])
    assert isinstance(choose("auto", template), FAMILY_OF[name])
    assert isinstance(choose("native", template), FAMILY_OF[name])
    assert choose("xml", template) is None


def test_the_bundled_models_template_renders_no_tools_so_auto_is_xml() -> None:
    assert detect(SMOLLM2) is None
    assert choose("auto", SMOLLM2) is None
    with pytest.raises(ValueError, match="renders no tools"):
        choose("native", SMOLLM2)
    # A family named forces its format, whatever the template.
    assert isinstance(choose("mistral", SMOLLM2), MistralFormat)
    assert isinstance(choose("harmony", SMOLLM2), HarmonyFormat)
    with pytest.raises(ValueError, match="tool_format must be"):
        choose("gemma", SMOLLM2)


def _conversation() -> Request:
    """A tool loop in the neutral model: a question, two parallel calls, their results (one
    failed), a text answer, a follow-up."""
    first = ToolUseBlock(id="toolu_01A", name="get_weather", input={"city": "Paris"})
    second = ToolUseBlock(id="toolu_01B", name="get_time", input={"zone": "Europe/Paris"})
    return Request(
        system="Be brief.",
        tools=[WEATHER, TIME],
        messages=[
            Message(role="user", content=[TextBlock(text="Weather and time in Paris?")]),
            Message(role="assistant", content=[first, second]),
            Message(role="user", content=[
                ToolResultBlock(tool_use_id="toolu_01A", content="18 C, sunny"),
                ToolResultBlock(tool_use_id="toolu_01B", content="no such zone", is_error=True),
            ]),
            Message(role="assistant", content=[TextBlock(text="18 C and sunny.")]),
            Message(role="user", content=[TextBlock(text="And in Oslo?")]),
        ])


@pytest.mark.parametrize("name", sorted(FAMILY_OF))
def test_a_whole_tool_loop_renders_in_the_families_template(name: str) -> None:
    """The conversation, with parallel calls and a failed result, goes through the real
    template (which raises on what it cannot render: Mistral's nine-character ids, Llama's
    one call per message) and comes out in the family's own words."""
    fmt = FAMILY_OF[name]()
    request = _conversation()
    prompt = fmt.build(request)
    text = _render(_template(name), prompt.messages, prompt.tools)
    assert "Weather and time in Paris?" in text and "And in Oslo?" in text
    assert "18 C, sunny" in text and "Error: no such zone" in text
    assert "get_weather" in text and "Gets the weather in a city." in text
    if not isinstance(fmt, HarmonyFormat):
        assert '"get_weather"' in text
    if isinstance(fmt, HarmonyFormat):
        # The system prompt is the developer message's instructions, the tools a
        # TypeScript namespace; each call its own message, followed by its own result
        # (the template names a result after the last call rendered).
        assert "<|start|>developer<|message|># Instructions\n\nBe brief." in text
        assert "namespace functions {" in text and "type get_weather = (_: {" in text
        assert ('<|start|>assistant to=functions.get_weather<|channel|>commentary json'
                '<|message|>{"city": "Paris"}<|call|>'
                '<|start|>functions.get_weather to=assistant<|channel|>commentary'
                '<|message|>"18 C, sunny"<|end|>'
                '<|start|>assistant to=functions.get_time<|channel|>commentary json'
                '<|message|>{"zone": "Europe/Paris"}<|call|>'
                '<|start|>functions.get_time to=assistant<|channel|>commentary'
                '<|message|>"Error: no such zone"<|end|>') in text
        assert "<|start|>assistant<|channel|>final<|message|>18 C and sunny.<|end|>" in text
        assert text.endswith("<|start|>user<|message|>And in Oslo?<|end|><|start|>assistant")
    elif isinstance(fmt, HermesFormat):
        assert ('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n'
                '</tool_call>') in text
        assert "<tool_response>\n18 C, sunny\n</tool_response>" in text
    elif isinstance(fmt, Llama3Format):
        assert '{"name": "get_weather", "parameters": {"city": "Paris"}}' in text
        assert '{"name": "get_time", "parameters": {"zone": "Europe/Paris"}}' in text
        # The template writes a result with tojson (a string is iterable to Jinja).
        assert '<|start_header_id|>ipython<|end_header_id|>\n\n"18 C, sunny"' in text
    else:
        ids = nine_char_id("toolu_01A"), nine_char_id("toolu_01B")
        assert all(len(i) == 9 and i.isalnum() for i in ids) and ids[0] != ids[1]
        assert f'[TOOL_CALLS] [{{"name": "get_weather", "arguments": {{"city": "Paris"}}, "id": "{ids[0]}"}}' in text
        assert f'[TOOL_RESULTS] {{"content": 18 C, sunny, "call_id": "{ids[0]}"}}' in text
        assert "[AVAILABLE_TOOLS]" in text


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_the_grammar_allows_a_call_as_the_template_writes_it(family: str) -> None:
    """What the template renders for an earlier call is what the grammar lets the model
    write: the model is held to the format it was trained on, not a near variant."""
    fmt = FAMILIES[family]()
    name = next(n for n, f in FAMILY_OF.items() if f is type(fmt))
    call = ToolUseBlock(id="abcdefghi", name="get_weather", input={"city": "Paris"})
    request = Request(tools=[WEATHER], messages=[
        Message(role="user", content=[TextBlock(text="Weather in Paris?")]),
        Message(role="assistant", content=[call]),
        Message(role="user", content=[ToolResultBlock(tool_use_id="abcdefghi", content="ok")])])
    prompt = fmt.build(request)
    text = _render(_template(name), prompt.messages, prompt.tools)
    written = {
        "hermes": '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n'
                  '</tool_call>',
        "llama3": '{"name": "get_weather", "parameters": {"city": "Paris"}}',
        "mistral": '[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Paris"}',
        # The recipient in the role part of the header, as the template writes it.
        "harmony": ' to=functions.get_weather<|channel|>commentary json<|message|>'
                   '{"city": "Paris"}<|call|>',
    }[family]
    assert written in text
    grammar = fmt.grammar([WEATHER], ToolChoice(type="auto"), None)
    matcher = Matcher(grammar.root)
    whole = written if family != "mistral" else written + "}]"
    if family == "harmony":
        # The model writes the recipient after the channel, as harmony's docs show it:
        # the grammar holds it to that form, and the parser reads both.
        parser = fmt.parser([WEATHER])
        items = parser.feed(written) + parser.close()
        assert [(i.block.name, i.block.input) for i in items if isinstance(i, CallItem)] == \
            [("get_weather", {"city": "Paris"})] and len(items) == 1
        whole = ('<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>'
                 '{"city": "Paris"}<|call|>')
    state = matcher.advance(matcher.initial, whole.encode())
    assert state and matcher.accepts(state)


def _chunks(text: str, rng: random.Random) -> list[str]:
    out, i = [], 0
    while i < len(text):
        n = rng.randint(1, 9)
        out.append(text[i:i + n])
        i += n
    return out


@pytest.mark.parametrize("family", sorted(FAMILIES))
@pytest.mark.parametrize("choice", ["auto", "any", "tool", "none"])
def test_every_sentence_of_the_grammar_parses_into_valid_calls(family: str, choice: str) -> None:
    """Sampled answers of the grammar, fed to the parser in random chunks: every call is
    one of the tools with input valid against its schema, nothing is a problem, and text
    never holds the call marker."""
    fmt: NativeFormat = FAMILIES[family]()
    tools = [WEATHER, TIME, EMPTY]
    tc = ToolChoice(type=choice, name="get_time" if choice == "tool" else None)  # type: ignore[arg-type]
    grammar = fmt.grammar(tools, tc, None)
    schemas = {t.name: t.input_schema for t in tools}
    rng = random.Random(f"{family}-{choice}")
    calls_seen = 0
    for _ in range(60):
        answer = grammar.prefill + sample(grammar.root, rng, max_repeat=3)
        parser = fmt.parser(tools)
        items = [item for chunk in _chunks(answer, rng) for item in parser.feed(chunk)]
        items += parser.close()
        assert not [i for i in items if isinstance(i, ParseProblem)], (answer, items)
        for item in items:
            if isinstance(item, CallItem):
                calls_seen += 1
                jsonschema.validate(item.block.input, schemas[item.block.name])
                if choice == "tool":
                    assert item.block.name == "get_time"
            elif isinstance(item, TextItem):
                marker = fmt.format_stops()
                assert not any(m in item.text for m in marker), (answer, items)
        if choice in ("any", "tool"):
            assert any(isinstance(i, CallItem) for i in items), answer
        if choice == "none":
            assert not any(isinstance(i, CallItem) for i in items), answer
    if choice != "none":
        assert calls_seen


def test_a_single_call_only_under_disable_parallel_tool_use() -> None:
    for family in FAMILIES.values():
        fmt = family()
        grammar = fmt.grammar([WEATHER], ToolChoice(type="any", disable_parallel_tool_use=True),
                              None)
        matcher = Matcher(grammar.root)
        one = grammar.prefill + fmt.style.after_name("get_weather") + '{"city": "A"}' \
            + fmt.style.args_tail() + fmt.style.call_close
        rest = one[len(grammar.prefill):] + fmt.style.block_close
        assert matcher.accepts(matcher.advance(matcher.initial, rest.encode()))
        two = rest[:len(rest) - len(fmt.style.block_close)] + fmt.style.between \
            + fmt.style.header("get_weather")
        assert not matcher.advance(matcher.initial, two.encode())


def test_the_parser_keeps_what_is_not_a_call_and_names_an_unknown_tool_early() -> None:
    fmt = HermesFormat()
    parser = fmt.parser([WEATHER])
    items = parser.feed('Let me look.\n<tool_call>\n{"name": "get_wether", "argu')
    assert parser.call_failing and "get_wether" in parser.call_failing
    items += parser.feed('ments": {"city": "Paris"}}\n</tool_call>') + parser.close()
    assert isinstance(items[0], TextItem) and items[0].text == "Let me look."
    problem = next(i for i in items if isinstance(i, ParseProblem))
    assert "unknown tool 'get_wether'" in problem.message and "get_wether" in problem.raw
    # A call cut by the token limit is a problem holding its text, not a call.
    parser = MistralFormat().parser([WEATHER])
    items = parser.feed('[TOOL_CALLS] [{"name": "get_weather", "arguments": {"ci') \
        + parser.close()
    assert len(items) == 1 and isinstance(items[0], ParseProblem)
    assert "not closed at end of input" in items[0].message
    assert items[0].raw.endswith('{"ci')
    # Llama: prose that starts otherwise than with an object is text, whole.
    parser = Llama3Format().parser([WEATHER])
    text = 'It is {"sunny"} today.'
    assert [i.text for i in parser.feed(text) + parser.close()
            if isinstance(i, TextItem)] == [text]


def test_tool_choice_none_keeps_the_tools_for_the_template_and_stops_at_the_marker() -> None:
    request = Request(tools=[WEATHER], tool_choice=ToolChoice(type="none"),
                      messages=[Message(role="user", content=[TextBlock(text="Hi")])])
    prompt = HermesFormat().build(request)
    assert prompt.tools and prompt.tools[0]["function"]["name"] == "get_weather"
    assert "<tool_call>" in prompt.stops and prompt.prefill == ""
    assert prompt.grammar is not None
    matcher = Matcher(prompt.grammar.root)
    assert not matcher.advance(matcher.initial, b"<")
    assert not HermesFormat().build(request, tools_under_none=False).tools


def test_forced_prefills_open_the_call_in_the_family_words() -> None:
    request = Request(tools=[WEATHER], tool_choice=ToolChoice(type="tool", name="get_weather"),
                      messages=[Message(role="user", content=[TextBlock(text="Hi")])])
    assert HermesFormat().build(request).prefill == \
        '<tool_call>\n{"name": "get_weather", "arguments": '
    assert MistralFormat().build(request).prefill == \
        '[TOOL_CALLS] [{"name": "get_weather", "arguments": '
    assert Llama3Format().build(request).prefill == '{"name": "get_weather", "parameters": '
    assert HarmonyFormat().build(request).prefill == \
        "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"
    # Without a grammar the prefill is the same opening.
    assert Llama3Format().build(request, grammar=False).prefill == \
        '{"name": "get_weather", "parameters": '
    any_call = request.model_copy(update={"tool_choice": ToolChoice(type="any")})
    assert json.loads(HermesFormat().build(any_call).prefill.split("\n", 1)[1] + 'x"}') == \
        {"name": "x"}


def test_harmony_thinking_of_the_current_tool_loop_renders_as_its_analysis() -> None:
    """gpt-oss's template keeps the analysis of a call that no final answer follows yet
    (the tool loop in progress), read from the ``thinking`` field, and drops it once a final
    answer came."""
    from tooluse.messages import ThinkingBlock

    call = ToolUseBlock(id="c1", name="get_weather", input={"city": "Paris"})
    loop = [Message(role="user", content=[TextBlock(text="Weather in Paris?")]),
            Message(role="assistant", content=[ThinkingBlock(text="I need the tool."), call]),
            Message(role="user", content=[ToolResultBlock(tool_use_id="c1", content="sun")])]
    fmt = HarmonyFormat()
    template = _template("openai-gpt-oss-120b.jinja")
    prompt = fmt.build(Request(tools=[WEATHER], messages=loop))
    text = _render(template, prompt.messages, prompt.tools)
    assert ("<|start|>assistant<|channel|>analysis<|message|>I need the tool.<|end|>"
            "<|start|>assistant to=functions.get_weather") in text
    done = [*loop, Message(role="assistant", content=[TextBlock(text="Sunny.")]),
            Message(role="user", content=[TextBlock(text="Thanks")])]
    prompt = fmt.build(Request(tools=[WEATHER], messages=done))
    text = _render(template, prompt.messages, prompt.tools)
    assert "I need the tool." not in text and "<|channel|>final<|message|>Sunny.<|end|>" in text


def test_harmony_reasoning_effort_reaches_the_templates_system_message() -> None:
    from tooluse.messages import Reasoning

    pytest.importorskip("llama_cpp")
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    fmt = HarmonyFormat()
    request = _conversation().model_copy(update={"reasoning": Reasoning(effort="high")})
    prompt = fmt.build(request)
    options = fmt.template_options(request)
    formatter = Jinja2ChatFormatter(template=_template("openai-gpt-oss-120b.jinja"),
                                    eos_token="</s>", bos_token="<s>",
                                    add_generation_prompt=True)
    text = str(formatter(messages=prompt.messages, tools=options["tools"],
                         **options["template_kwargs"]).prompt)
    assert "Reasoning: high\n" in text
    assert "Reasoning: medium" in _render(_template("openai-gpt-oss-120b.jinja"),
                                          prompt.messages, prompt.tools)
