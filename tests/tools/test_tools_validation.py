"""Validation messages a model can act on, every problem at once, and the validator cache."""

from __future__ import annotations

from typing import Any

import pytest

from tooluse.errors import ToolInputError
from tooluse.tools import Tool, compile_validator, input_path
from tooluse.tools import validation as validation_module

WEATHER = {
    "type": "object",
    "properties": {
        "location": {"type": "string"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        "count": {"type": "integer", "minimum": 1, "maximum": 10},
    },
    "required": ["location"],
    "additionalProperties": False,
}

ORDER = {
    "type": "object",
    "properties": {
        "items": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "properties": {"name": {"type": "string", "minLength": 1}, "price": {"type": "number"}},
                "required": ["name", "price"],
                "additionalProperties": False,
            },
        },
        "code": {"type": "string", "pattern": "^[A-Z]{3}$"},
        "when": {"type": "string", "format": "date"},
        "tags": {"type": "array", "uniqueItems": True, "maxItems": 2},
        "choice": {"anyOf": [{"type": "integer"}, {"const": "auto"}]},
    },
    "required": ["items"],
}


def problems(schema: dict[str, Any], value: Any, name: str = "t") -> list[str]:
    tool = Tool.from_schema(name, "d", schema)
    with pytest.raises(ToolInputError) as info:
        tool.validate(value)
    assert info.value.tool == name
    return info.value.problems


def test_the_issue_examples_all_at_once() -> None:
    got = problems(WEATHER, {"unit": "kelvin", "count": "5", "foo": 1})
    assert "missing required parameter 'location'" in got
    assert "'unit' must be one of ['celsius', 'fahrenheit'], got 'kelvin'" in got
    assert "'count' must be an integer, got string '5'" in got
    assert "unexpected parameter 'foo'" in got
    assert len(got) == 4


def test_nested_paths() -> None:
    value = {
        "items": [
            {"name": "a", "price": 1},
            {"name": "b", "price": 2},
            {"name": "", "price": "3", "colour": "red"},
            {"price": 4},
        ]
    }
    got = problems(ORDER, value)
    assert got == [  # ordered by the path each problem names
        "unexpected parameter 'items[2].colour'",
        "'items[2].name' must be at least 1 characters long, got 0",
        "'items[2].price' must be a number, got string '3'",
        "missing required parameter 'items[3].name'",
    ]


def test_other_keywords_are_worded() -> None:
    got = problems(
        ORDER,
        {"items": [], "code": "abcd", "when": "31/12/2024", "tags": [1, 1, 2], "choice": "x"},
    )
    assert "'items' must have at least 1 items, got 0" in got
    assert "'code' must match the pattern '^[A-Z]{3}$', got 'abcd'" in got
    assert "'when' must be a valid date, got '31/12/2024'" in got
    assert "'tags' must not contain duplicate items" in got
    assert "'tags' must have at most 2 items, got 3" in got
    assert "'choice' must be an integer or 'auto', got string 'x'" in got
    assert problems(WEATHER, {"location": "x", "count": 0}) == ["'count' must be at least 1, got 0"]


def test_input_that_is_not_an_object() -> None:
    assert problems(WEATHER, ["Paris"]) == ["the input must be an object, got an array"]
    assert problems(WEATHER, None) == ["the input must be an object, got null"]


def test_type_words_for_nulls_booleans_and_long_values() -> None:
    schema = {"type": "object", "properties": {"b": {"type": "boolean"}, "s": {"type": "string"}}}
    got = problems(schema, {"b": "true", "s": None})
    assert "'b' must be a boolean, got string 'true'" in got
    assert "'s' must be a string, got null" in got
    long = problems({"type": "object", "properties": {"n": {"type": "integer"}}}, {"n": "x" * 500})[0]
    assert len(long) < 120 and long.endswith("...")


def test_error_string_names_tool_and_lists_everything() -> None:
    tool = Tool.from_schema("get_weather", "d", WEATHER)
    with pytest.raises(ToolInputError) as info:
        tool.validate({"unit": "kelvin"})
    text = str(info.value)
    assert text.startswith("invalid input for tool 'get_weather': ")
    assert "missing required parameter 'location'" in text and "'unit' must be one of" in text


def test_valid_input_returned_as_dict() -> None:
    tool = Tool.from_schema("get_weather", "d", WEATHER)
    assert tool.validate({"location": "Paris", "unit": "celsius"}) == {"location": "Paris", "unit": "celsius"}


def test_input_path() -> None:
    assert input_path(["items", 2, "price"]) == "items[2].price"
    assert input_path([0, "a"]) == "[0].a"
    assert input_path([]) == ""


def test_validator_compiled_once_per_distinct_schema() -> None:
    validation_module.clear_cache()
    a = compile_validator({"type": "object", "properties": {"x": {"type": "integer"}}})
    b = compile_validator({"properties": {"x": {"type": "integer"}}, "type": "object"})  # key order
    c = compile_validator({"type": "object", "properties": {"x": {"type": "string"}}})
    assert a is b and a is not c
    t1 = Tool.from_schema("one", "d", WEATHER)
    t2 = Tool.from_schema("two", "other words", dict(WEATHER))
    assert t1._validator is t2._validator


def test_validator_cache_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    validation_module.clear_cache()
    monkeypatch.setattr(validation_module, "_CACHE_SIZE", 3)
    for i in range(5):
        compile_validator({"type": "object", "maxProperties": i})
    assert len(validation_module._cache) == 3


def test_problems_ordered_by_index_numerically() -> None:
    schema = {"type": "object", "properties": {"xs": {"type": "array", "items": {"type": "integer"}}}}
    value = {"xs": [0] * 12}
    value["xs"][10] = "a"
    value["xs"][2] = "b"
    assert problems(schema, value) == [
        "'xs[2]' must be an integer, got string 'b'",
        "'xs[10]' must be an integer, got string 'a'",
    ]
