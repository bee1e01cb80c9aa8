"""Rendering details: value layout, parameter names, what cannot be written."""

from __future__ import annotations

import math

import pytest

from tooluse.codecs.legacy import (
    parameter_tag,
    parse_completion,
    render_function_calls,
    render_function_results,
    render_parameter,
)
from tooluse.errors import ConversionError
from tooluse.messages import (
    ImageBlock,
    JsonBlock,
    TextBlock,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
)


def test_scalars_as_is_lists_and_objects_as_json() -> None:
    assert render_parameter("s", "General Motors") == "<s>General Motors</s>"
    assert render_parameter("n", 5) == "<n>5</n>"
    assert render_parameter("x", 3.5) == "<x>3.5</x>"
    assert render_parameter("b", True) == "<b>true</b>"
    assert render_parameter("z", None) == "<z>null</z>"
    assert render_parameter("l", [1, "a"]) == '<l>[1, "a"]</l>'
    assert render_parameter("o", {"k": "ü<"}) == '<o>{"k": "ü&lt;"}</o>'


def test_values_with_edge_newlines_get_one_extra_newline_each_side() -> None:
    assert render_parameter("c", "\nprint(1)") == "<c>\n\nprint(1)\n</c>"
    assert render_parameter("c", "print(1)\n") == "<c>\nprint(1)\n\n</c>"
    assert render_parameter("c", "a\nb") == "<c>a\nb</c>"
    tool = ToolSpec(name="t", input_schema={"type": "object", "properties": {"c": {"type": "string"}}})
    for value in ["\nprint(1)", "print(1)\n", "\n", "\r\n", "x\r", "\n\n", " \n "]:
        text = render_function_calls([ToolUseBlock(id="i", name="t", input={"c": value})])
        assert parse_completion(text, [tool]).tool_uses[0].input == {"c": value}


@pytest.mark.parametrize(
    ("name", "tags"),
    [
        ("company_name", ("<company_name>", "</company_name>")),
        ("año", ("<año>", "</año>")),
        ("first name", ('<parameter name="first name">', "</parameter>")),
        ("1st", ('<parameter name="1st">', "</parameter>")),
        ('a"<b', ('<parameter name="a&quot;&lt;b">', "</parameter>")),
    ],
)
def test_parameter_tags(name: str, tags: tuple[str, str]) -> None:
    assert parameter_tag(name) == tags
    text = render_function_calls([ToolUseBlock(id="i", name="t", input={name: "v"})])
    assert parse_completion(text).tool_uses[0].input == {name: "v"}


def test_values_json_cannot_hold_are_conversion_errors() -> None:
    with pytest.raises(ConversionError, match="'x'"):
        render_function_calls([ToolUseBlock(id="i", name="t", input={"x": math.nan})])
    with pytest.raises(ConversionError, match="content.0"):
        render_function_results(
            [("t", ToolResultBlock(tool_use_id="i", content=[JsonBlock(value=math.inf)]))]
        )


def test_an_image_result_names_the_result_and_tool() -> None:
    image = ImageBlock(media_type="image/png", data="iVBORw0KGgo=")
    results = [
        ("ok", ToolResultBlock(tool_use_id="a", content="fine")),
        ("chart", ToolResultBlock(tool_use_id="b", content=[TextBlock(text="x"), image])),
    ]
    with pytest.raises(ConversionError) as info:
        render_function_results(results)
    assert info.value.path == (1, "content", 1)
    assert "'chart'" in str(info.value) and "'b'" in str(info.value)


def test_empty_results_and_calls_without_parameters() -> None:
    assert render_function_results([("t", ToolResultBlock(tool_use_id="a"))]) == (
        "<function_results>\n<result>\n<tool_name>t</tool_name>\n<stdout>\n\n</stdout>\n"
        "</result>\n</function_results>"
    )
    text = render_function_calls([ToolUseBlock(id="a", name="now")], close=False)
    assert text == "<function_calls>\n<invoke>\n<tool_name>now</tool_name>\n<parameters>\n" \
        "</parameters>\n</invoke>"
    assert parse_completion(text).tool_uses[0].input == {}


def test_odd_tool_names_survive() -> None:
    for name in ["math.factorial", "a<b&c>", "  spaced", "ünïcode"]:
        text = render_function_calls([ToolUseBlock(id="i", name=name, input={"x": "1"})])
        (call,) = parse_completion(text).tool_uses
        assert call.name == name.strip()
