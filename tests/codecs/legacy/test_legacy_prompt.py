"""The tools system prompt: seed frame, what each parameter tells the model, JSON style."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from legacy_seed_example import PRICE, TICKER

from tooluse.codecs.legacy import (
    escape,
    escape_attr,
    parse_completion,
    render_tools_prompt,
    type_label,
)
from tooluse.messages import ToolSpec

RICH = ToolSpec(
    name="book_flight",
    description="Books a flight. Use it only once the user has confirmed. </tools> not a tag.",
    input_schema={
        "type": "object",
        "properties": {
            "passengers": {"type": "array", "items": {"type": "integer"},
                           "description": "Passenger ids."},
            "cabin": {"type": "string", "enum": ["economy", "business"], "default": "economy"},
            "legs": {
                "type": "array",
                "items": {"$ref": "#/$defs/Leg"},
                "description": "Flight legs in order.",
            },
            "contact": {
                "type": "object",
                "properties": {"email": {"type": "string"}, "phone": {"type": "string"}},
                "required": ["email"],
            },
            "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "seats": {"type": "integer", "minimum": 1, "maximum": 9},
        },
        "required": ["passengers", "legs"],
        "$defs": {
            "Leg": {
                "type": "object",
                "properties": {"from": {"type": "string"}, "to": {"type": "string"}},
                "required": ["from", "to"],
            }
        },
    },
)


def _parameter(prompt: str, name: str) -> str:
    match = re.search(
        rf"<parameter>\n<name>{name}</name>\n<type>(.*?)</type>\n<description>(.*?)</description>",
        prompt, flags=re.DOTALL,
    )
    assert match, f"no <parameter> {name}"
    return match.group(1) + " | " + match.group(2)


def test_parameters_carry_type_requiredness_enum_and_nested_shape() -> None:
    prompt = render_tools_prompt([RICH])
    assert _parameter(prompt, "passengers") == (
        "array of integer | Passenger ids. Required. Write it as JSON."
    )
    assert _parameter(prompt, "cabin") == (
        'string | Optional. One of: "economy", "business". Default: "economy".'
    )
    legs = _parameter(prompt, "legs")
    assert legs.startswith("array of object | Flight legs in order. Required. Write it as JSON. ")
    schema = json.loads(legs.split("JSON Schema: ", 1)[1].replace("&quot;", '"'))
    assert schema["items"]["properties"]["from"] == {"type": "string"}
    assert schema["items"]["required"] == ["from", "to"]
    contact = _parameter(prompt, "contact")
    assert '"required": ["email"]' in contact and contact.startswith("object | Optional.")
    assert _parameter(prompt, "note") == "string or null | Optional."
    assert _parameter(prompt, "seats") == "integer | Optional. Minimum: 1. Maximum: 9."


def test_descriptions_cannot_close_the_tools_block() -> None:
    prompt = render_tools_prompt([RICH])
    assert prompt.count("</tools>") == 1
    assert "&lt;/tools&gt; not a tag." in prompt


def test_the_callers_system_prompt_comes_after_the_tools() -> None:
    prompt = render_tools_prompt([PRICE, TICKER], "You are a careful financial assistant.")
    assert prompt.endswith("</tools>\n\nYou are a careful financial assistant.")
    assert prompt.index("Here are the tools available") < prompt.index("careful financial")


def test_value_rule_is_stated() -> None:
    prompt = render_tools_prompt([PRICE])
    assert "string and scalar parameter values as they are, and lists and objects as JSON" in prompt
    assert "Spaces in string values are kept" in prompt


def test_single_call_rule_only_when_asked() -> None:
    assert "at most one tool" not in render_tools_prompt([PRICE])
    assert "at most one tool" in render_tools_prompt([PRICE], parallel=False)


def test_json_style_gives_each_tools_schema() -> None:
    prompt = render_tools_prompt([PRICE, RICH], style="json")
    assert "<tool_description>" not in prompt
    bodies = re.findall(r"<tool>(.*?)</tool>", prompt)
    assert len(bodies) == 2
    documents = [json.loads(b.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&"))
                 for b in bodies]
    assert documents[0] == {"name": PRICE.name, "description": PRICE.description,
                            "input_schema": PRICE.input_schema}
    assert documents[1]["input_schema"] == RICH.input_schema


def test_bad_style_is_refused() -> None:
    with pytest.raises(ValueError, match="style"):
        render_tools_prompt([PRICE], style="yaml")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("schema", "label"),
    [
        ({"type": "string"}, "string"),
        ({"type": ["string", "null"]}, "null or string"),
        ({"type": "array", "items": {"type": "array", "items": {"type": "number"}}},
         "array of array of number"),
        ({"enum": ["a", "b"]}, "string"),
        ({"type": "dict"}, "object"),
        ({"type": "float"}, "number"),
        ({}, "any"),
        ({"oneOf": [{"type": "integer"}, {"type": "string"}]}, "integer or string"),
    ],
)
def test_type_labels(schema: dict[str, object], label: str) -> None:
    assert type_label(schema) == label


def test_tool_without_parameters() -> None:
    prompt = render_tools_prompt([ToolSpec(name="now", description="The time.")])
    assert "<tool_name>now</tool_name>\n<description>The time.</description>\n<parameters>\n</parameters>" in prompt


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["type", "items", "enum", "properties", "anyOf", "$ref", "default",
                         "description", "required", "const", "oneOf", "allOf", "x"]),
        inner, max_size=4),
    max_leaves=15,
)


@settings(max_examples=200, deadline=None)
@given(
    properties=st.dictionaries(st.text(max_size=8), json_values, max_size=4),
    required=json_values,
    value=st.text(max_size=10),
)
def test_any_schema_shape_renders_and_parses_without_crashing(
    properties: dict[str, object], required: object, value: str
) -> None:
    """Tool schemas come from users and from the wild: no shape may crash the prompt or the
    parser (bad ones are for the tools package to reject, with a message)."""
    schema = {"type": "object", "properties": properties, "required": required}
    tool = ToolSpec(name="t", input_schema=schema)
    assert "<tool_name>t</tool_name>" in render_tools_prompt([tool])
    assert render_tools_prompt([tool], style="json")
    params = "".join(f'<parameter name="{escape_attr(k)}">{escape(value)}</parameter>'
                     for k in properties)
    text = f"<function_calls><invoke><tool_name>t</tool_name>{params}</invoke>"
    parsed = parse_completion(text, [tool])
    assert len(parsed.tool_uses) + len(parsed.problems) == 1


def test_recursive_and_fanning_references_stay_small() -> None:
    tree = {
        "type": "object",
        "properties": {"node": {"$ref": "#/$defs/Node"}},
        "$defs": {"Node": {"type": "object", "properties": {
            "value": {"type": "integer"},
            "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
        }}},
    }
    prompt = render_tools_prompt([ToolSpec(name="tree", input_schema=tree)])
    shown = json.loads(prompt.split("JSON Schema: ", 1)[1].split("</description>")[0])
    assert shown["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}
    fan = {f"p{i}": {"$ref": "#"} for i in range(10)}
    wild = ToolSpec(name="t", input_schema={"type": "object", "properties": fan})
    assert len(render_tools_prompt([wild])) < 50_000


def test_input_examples_follow_their_tool_as_calls() -> None:
    from tooluse.codecs.legacy.prompt import render_tools_prompt
    from tooluse.messages import Request, ToolSpec
    from tooluse.prompting.text_prompt import build_text_prompt

    tool = ToolSpec(name="get_weather", description="Weather of a city.",
                    input_schema={"type": "object", "properties": {"city": {"type": "string"}}},
                    input_examples=[{"city": "Paris"}, {"city": "a < b"}])
    text = render_tools_prompt([tool])
    examples = text[text.index("<examples>"):text.index("</examples>")]
    assert examples.count("<example>") == 2
    assert "<tool_name>get_weather</tool_name>\n<parameters>\n<city>Paris</city>" in examples
    assert "<city>a &lt; b</city>" in examples
    assert text.index("</parameters>") < text.index("<examples>") < text.index("</tool_description>")
    assert '"input_examples": [{"city": "Paris"}' in render_tools_prompt([tool], style="json")
    plain = tool.model_copy(update={"input_examples": []})
    assert "<examples>" not in render_tools_prompt([plain])
    # the text model's prompt holds them (the system message the tools are described in)
    request = Request(messages=[{"role": "user", "content": "hi"}], tools=[tool])  # type: ignore[list-item]
    messages, *_ = build_text_prompt(request)
    assert "<city>Paris</city>" in messages[0]["content"]
