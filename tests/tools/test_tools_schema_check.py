"""Schema checks at definition time, BFCL normalisation, pydantic schema tidying."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from tooluse.errors import ToolDefinitionError
from tooluse.tools import Tool, check_schema, normalize_schema, tidy_schema


def rejected(schema: Any, name: str = "my_tool") -> str:
    with pytest.raises(ToolDefinitionError) as info:
        Tool.from_schema(name, "d", schema)
    assert info.value.tool == name
    message = str(info.value)
    assert f"tool {name!r}" in message
    return message


def test_top_level_array_rejected() -> None:
    message = rejected({"type": "array", "items": {"type": "string"}})
    assert "top level must be {'type': 'object'}" in message and "'array'" in message


def test_missing_top_level_type_rejected() -> None:
    assert "got 'no type'" in rejected({"properties": {"a": {"type": "string"}}})


def test_invalid_json_schema_rejected_with_location() -> None:
    message = rejected({"type": "object", "properties": {"a": {"type": "strnig"}}})
    assert "not valid JSON Schema (draft 2020-12)" in message
    assert "properties/a/type" in message
    message = rejected({"type": "object", "required": "a"})
    assert "not valid JSON Schema" in message and "required" in message


@pytest.mark.parametrize("combinator", ["anyOf", "oneOf", "allOf"])
def test_top_level_combinators_rejected(combinator: str) -> None:
    schema = {
        "type": "object",
        combinator: [{"required": ["a"]}, {"required": ["b"]}],
    }
    message = rejected(schema)
    assert combinator in message and "top level" in message


def test_nested_combinators_are_fine() -> None:
    Tool.from_schema(
        "t", "d", {"type": "object", "properties": {"v": {"anyOf": [{"type": "string"}, {"type": "integer"}]}}}
    )


def test_not_a_mapping_rejected() -> None:
    assert "must be a JSON object" in rejected([{"type": "object"}])


def test_bfcl_types_rejected_without_normalize_and_hint_given() -> None:
    message = rejected({"type": "dict", "properties": {"x": {"type": "float"}}})
    assert "normalize=True" in message
    message = rejected({"type": "object", "properties": {"x": {"type": "float"}}})
    assert "normalize=True" in message


BFCL_SCHEMA: dict[str, Any] = {
    "type": "dict",
    "properties": {
        "point": {"type": "tuple", "items": {"type": "float"}, "description": "(lat, lon)"},
        "value": {"type": "any", "description": "anything"},
        "options": {
            "type": "dict",
            "properties": {
                "depth": {"type": "integer"},
                "weights": {"type": "array", "items": {"type": "dict", "properties": {"w": {"type": "float"}}}},
            },
            "required": ["depth"],
        },
        "metrics": {"type": "array", "items": {"type": "string"}, "enum": ["trust", "view"]},
        "limit": {"type": "integer", "optional": "true"},
        "flag": {"type": "boolean", "optional": True, "default": "false"},
    },
    "required": ["point", "limit"],
}


def test_normalize_bfcl_schema_rules() -> None:
    original = copy.deepcopy(BFCL_SCHEMA)
    n = normalize_schema(BFCL_SCHEMA)
    assert BFCL_SCHEMA == original  # input untouched
    Draft202012Validator.check_schema(n)
    assert n["type"] == "object"
    p = n["properties"]
    assert p["point"] == {"type": "array", "items": {"type": "number"}, "description": "(lat, lon)"}
    assert p["value"] == {"description": "anything"}
    assert p["options"]["type"] == "object"
    assert p["options"]["properties"]["weights"]["items"]["type"] == "object"
    assert p["options"]["properties"]["weights"]["items"]["properties"]["w"]["type"] == "number"
    assert p["metrics"] == {"type": "array", "items": {"type": "string", "enum": ["trust", "view"]}}
    assert "optional" not in p["limit"] and "optional" not in p["flag"]
    assert n["required"] == ["point"]  # "limit" said optional


def test_normalized_tool_accepts_what_bfcl_means() -> None:
    t = Tool.from_schema("geo.distance", "d", BFCL_SCHEMA, normalize=True, map_name=True)
    assert t.name == "geo_distance" and t.original_name == "geo.distance"
    t.validate({"point": [1, 2.5], "value": {"any": "thing"}, "options": {"depth": 2}, "metrics": ["view"]})
    with pytest.raises(Exception) as info:
        t.validate({"point": ["x"], "metrics": ["nope"], "options": {}})
    text = str(info.value)
    assert "'point[0]' must be a number" in text
    assert "'metrics[0]' must be one of ['trust', 'view']" in text
    assert "missing required parameter 'options.depth'" in text


def test_normalize_does_not_hide_real_errors() -> None:
    with pytest.raises(ToolDefinitionError, match="not valid JSON Schema"):
        Tool.from_schema("t", "d", {"type": "dict", "properties": {"a": {"type": "strnig"}}}, normalize=True)
    with pytest.raises(ToolDefinitionError, match="top level"):
        Tool.from_schema("t", "d", {"type": "tuple", "items": {"type": "float"}}, normalize=True)


def test_normalize_type_lists_and_combinators() -> None:
    n = normalize_schema(
        {"type": "dict", "properties": {"a": {"type": ["float", "null"]}, "b": {"anyOf": [{"type": "dict"}, {"type": "str"}]}}}
    )
    assert n["properties"]["a"]["type"] == ["number", "null"]
    assert n["properties"]["b"]["anyOf"] == [{"type": "object"}, {"type": "string"}]


def test_check_schema_returns_copy_and_accepts_good_schema() -> None:
    s = {"type": "object", "properties": {}}
    assert check_schema(s) == s and check_schema(s) is not s


def test_tidy_inlines_refs_strips_titles_keeps_title_property() -> None:
    raw = {
        "$defs": {"Inner": {"title": "Inner", "type": "object", "properties": {"title": {"title": "Title", "type": "string"}}}},
        "title": "Outer",
        "type": "object",
        "properties": {
            "inner": {"$ref": "#/$defs/Inner", "description": "Field's own words."},
            "n": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None, "title": "N"},
            "d": {"type": "object", "default": {"title": "kept: a default value, not a keyword"}},
        },
    }
    t = tidy_schema(raw)
    assert "$defs" not in t and "title" not in t
    assert t["properties"]["inner"] == {
        "type": "object",
        "properties": {"title": {"type": "string"}},
        "description": "Field's own words.",
    }
    assert t["properties"]["n"] == {"type": ["integer", "null"], "default": None}
    assert t["properties"]["d"]["default"] == {"title": "kept: a default value, not a keyword"}


@pytest.mark.parametrize(
    ("param", "kept"),
    [
        # BFCL's live categories: numbers and booleans listed as strings, answered as strings
        ({"type": "integer", "enum": ["1", "2", "3"]}, False),
        ({"type": "boolean", "enum": ["True", "False", "dontcare"]}, False),
        ({"type": "number", "enum": [1, 2.5, "any"]}, False),
        # an enum its type accepts keeps the type
        ({"type": "integer", "enum": [1, 2, 3]}, True),
        ({"type": "string", "enum": ["a", "b"]}, True),
        ({"type": "integer", "enum": [1.0, 2]}, True),
    ],
)
def test_normalize_enum_its_type_refuses(param: dict[str, Any], kept: bool) -> None:
    schema = {"type": "dict", "properties": {"n": param}, "required": ["n"]}
    n = normalize_schema(schema)["properties"]["n"]
    assert n["enum"] == param["enum"]
    assert ("type" in n) is kept
    tool = Tool.from_schema("t", "d", schema, normalize=True)
    for member in param["enum"]:
        tool.validate({"n": member})  # every listed value is a valid call


def test_enum_its_type_refuses_is_left_alone_without_normalize() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer", "enum": ["1", "2"]}}}
    assert Tool.from_schema("t", "d", schema).input_schema["properties"]["n"]["type"] == "integer"
