"""The tool-call grammar: its GBNF text, llama.cpp accepting it, and the guarantee that
everything it allows parses and validates (checked on every BFCL function)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tooluse.codecs.legacy import parse_completion
from tooluse.messages import ToolChoice, ToolSpec
from tooluse.prompting import Matcher, sample_grammar, tool_call_grammar
from tooluse.grammar.tool_calls import GrammarLimits
from tooluse.tools import normalize_schema

WEATHER = ToolSpec(
    name="get_weather",
    description="Current weather of a city.",
    input_schema={
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            "days": {"type": "integer", "minimum": 0},
            "detailed": {"type": "boolean"},
        },
        "required": ["city"],
    },
)
ORDER = ToolSpec(
    name="place_order",
    description="Order items.",
    input_schema={
        "type": "object",
        "properties": {
            "items": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
            "address": {
                "type": "object",
                "properties": {"street": {"type": "string"}, "zip": {"type": "integer"}},
                "required": ["zip"],
            },
            "price": {"type": "number"},
            "notes": {},
        },
        "required": ["address", "items"],
    },
)


def _calls_body(grammar: Any, sentence: str) -> str:
    full = grammar.prefill + sentence
    return full.removesuffix("</function_calls>")


def _check(tools: list[ToolSpec], grammar: Any, sentence: str) -> list[Any]:
    parsed = parse_completion(_calls_body(grammar, sentence), tools)
    assert not parsed.problems, (parsed.problems, sentence)
    specs = {t.name: t for t in tools}
    for call in parsed.tool_uses:
        jsonschema.validate(call.input, specs[call.name].input_schema)
    return parsed.tool_uses


def test_gbnf_lists_tools_as_alternatives_and_required_parameters_first() -> None:
    gbnf = tool_call_grammar([WEATHER, ORDER], ToolChoice(type="any")).gbnf
    call_rule = next(line for line in gbnf.splitlines() if line.startswith("call ::="))
    assert '"get_weather</tool_name>\\n<parameters>\\n"' in call_rule
    assert '"place_order</tool_name>\\n<parameters>\\n"' in call_rule and " | " in call_rule
    order = next(line for line in gbnf.splitlines() if line.startswith("args-place-order"))
    # required parameters come first and are not optional; the optional ones may be left out
    assert order.index("<address>") < order.index("<items>") < order.index("<price>")
    assert '("<price>" number "</price>\\n")?' in order
    weather = next(line for line in gbnf.splitlines() if line.startswith("args-get-weather"))
    assert '("celsius" | "fahrenheit")' in weather
    assert "<days>\" digits" in weather  # minimum 0: no sign allowed


def test_prefill_and_root_follow_the_tool_choice() -> None:
    auto = tool_call_grammar([WEATHER], ToolChoice(type="auto"))
    assert auto.prefill == "" and "text" in auto.gbnf.splitlines()[0]
    forced = tool_call_grammar([WEATHER], ToolChoice(type="any"))
    assert forced.prefill == "<function_calls>\n<invoke>\n<tool_name>"
    named = tool_call_grammar([WEATHER, ORDER], ToolChoice(type="tool", name="place_order"))
    assert named.prefill.endswith("<tool_name>place_order</tool_name>\n<parameters>\n")
    assert "get_weather" not in named.gbnf
    none = tool_call_grammar([WEATHER], ToolChoice(type="none"))
    assert "function_calls" not in none.gbnf
    with pytest.raises(ValueError, match="not among the tools"):
        tool_call_grammar([WEATHER], ToolChoice(type="tool", name="nope"))


def test_single_call_when_parallel_disabled() -> None:
    g = tool_call_grammar([WEATHER], ToolChoice(type="any", disable_parallel_tool_use=True))
    m = Matcher(g.root)
    one = "get_weather</tool_name>\n<parameters>\n<city>Paris</city>\n</parameters>\n</invoke>"
    assert m.matches((one + "\n</function_calls>").encode())
    two = one + "\n<invoke>\n<tool_name>" + one + "\n</function_calls>"
    assert not m.matches(two.encode())
    parallel = Matcher(tool_call_grammar([WEATHER], ToolChoice(type="any")).root)
    assert parallel.matches(two.encode())


def test_grammar_is_cached_per_tool_set_and_choice() -> None:
    a = tool_call_grammar([WEATHER, ORDER], ToolChoice(type="any"))
    b = tool_call_grammar([WEATHER, ORDER], ToolChoice(type="any"))
    c = tool_call_grammar([WEATHER, ORDER], ToolChoice(type="auto"))
    assert a is b and a is not c


def test_matcher_rejects_what_would_not_parse_or_validate() -> None:
    g = tool_call_grammar([WEATHER], ToolChoice(type="any"))
    m = Matcher(g.root)
    head = "get_weather</tool_name>\n<parameters>\n"
    tail = "</parameters>\n</invoke>\n</function_calls>"
    assert m.matches((head + "<city>Paris &lt;3</city>\n" + tail).encode())
    assert not m.matches((head + "<city>a<b</city>\n" + tail).encode())  # raw '<'
    assert not m.matches((head + tail).encode())  # required city missing
    assert not m.matches((head + "<city>Paris</city>\n<unit>kelvin</unit>\n" + tail).encode())
    assert not m.matches((head + "<city>Paris</city>\n<days>-1</days>\n" + tail).encode())
    assert not m.matches(("get_wetter</tool_name>\n<parameters>\n<city>P</city>\n" + tail)
                         .encode())
    assert not m.matches((head + "<city> Paris</city>\n" + tail).encode())  # leading space


def test_forced_text_is_the_tag_text_the_grammar_fixes() -> None:
    g = tool_call_grammar([WEATHER, ORDER], ToolChoice(type="any"))
    m = Matcher(g.root)
    state = m.advance(m.initial, b"get_w")
    forced, state = m.forced(state)
    assert forced == b"eather</tool_name>\n<parameters>\n<city>"
    state = m.advance(state, b"Paris<")
    forced, _ = m.forced(state)
    assert forced == b"/city>\n<"  # then: an optional parameter or /parameters>


def test_auto_allows_text_or_calls_but_text_never_holds_a_tag() -> None:
    g = tool_call_grammar([WEATHER], ToolChoice(type="auto"))
    m = Matcher(g.root)
    assert m.matches(b"It is sunny.")
    assert m.matches(b"Let me check.<function_calls>\n<invoke>\n<tool_name>get_weather"
                     b"</tool_name>\n<parameters>\n<city>Oslo</city>\n</parameters>\n"
                     b"</invoke>\n</function_calls>")
    assert not m.matches(b"It is <b>sunny</b>.")
    assert not m.matches(b"\nleading blank line")


def test_bounds_keep_values_finite() -> None:
    limits = GrammarLimits(max_string=5, max_items=2)
    g = tool_call_grammar([ORDER], ToolChoice(type="any"), limits)
    m = Matcher(g.root)
    head = "place_order</tool_name>\n<parameters>\n<address>{\"zip\": 1}</address>\n"
    tail = "</parameters>\n</invoke>\n</function_calls>"
    assert m.matches((head + '<items>["a", "b"]</items>\n' + tail).encode())
    assert not m.matches((head + '<items>["a", "b", "c"]</items>\n' + tail).encode())
    assert not m.matches((head + '<items>["abcdef"]</items>\n' + tail).encode())


@pytest.mark.parametrize("choice", ["auto", "any"])
def test_every_sampled_call_parses_and_validates_on_representative_tools(choice: str) -> None:
    rng = random.Random(7)
    tools = [WEATHER, ORDER]
    g = tool_call_grammar(tools, ToolChoice(type=choice))
    m = Matcher(g.root)
    seen_calls = 0
    for _ in range(300):
        sentence = sample_grammar(g.root, rng)
        assert m.matches(sentence.encode())
        seen_calls += len(_check(tools, g, sentence))
    assert seen_calls > 100


def _bfcl_tools(line: str) -> list[ToolSpec]:
    case = json.loads(line)
    return [
        ToolSpec(name=f["name"].replace(".", "_"), description=f.get("description", ""),
                 input_schema=normalize_schema(f["parameters"]))
        for f in case["function"]
    ]


@pytest.mark.parametrize("category", ["simple_python", "multiple", "parallel",
                                      "parallel_multiple", "live_simple"])
def test_bfcl_functions_every_sampled_call_parses_and_validates(bfcl_dir: Path,
                                                                category: str) -> None:
    rng = random.Random(category)
    path = bfcl_dir / f"BFCL_v4_{category}.json"
    lines = path.read_text(encoding="utf-8").splitlines()
    checked = 0
    for line in lines:
        tools = _bfcl_tools(line)
        g = tool_call_grammar(tools, ToolChoice(type="any"))
        m = Matcher(g.root)
        for _ in range(2):
            sentence = sample_grammar(g.root, rng, max_repeat=3)
            assert m.matches(sentence.encode())
            checked += len(_check(tools, g, sentence))
    assert checked >= len(lines)


def test_bfcl_grammars_compile_in_llama_cpp(bfcl_dir: Path) -> None:
    llama_cpp = pytest.importorskip("llama_cpp")
    from tooluse.llama.model import default_model_path

    try:
        path = default_model_path()
    except Exception as exc:  # not installed: nothing to compile against
        pytest.skip(str(exc))
    vocab = llama_cpp.Llama(model_path=str(path), vocab_only=True, verbose=False)
    compiled = 0
    for category in ("simple_python", "multiple", "parallel_multiple", "live_simple"):
        for line in (bfcl_dir / f"BFCL_v4_{category}.json").read_text().splitlines():
            tools = _bfcl_tools(line)
            for choice in ("auto", "any"):
                gbnf = tool_call_grammar(tools, ToolChoice(type=choice)).gbnf
                sampler = llama_cpp.llama_sampler_init_grammar(
                    vocab._model.vocab, gbnf.encode("utf-8"), b"root")
                assert sampler, gbnf
                llama_cpp.llama_sampler_free(sampler)
                compiled += 1
    assert compiled > 1000
