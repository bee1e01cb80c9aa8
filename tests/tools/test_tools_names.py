"""The name rule, its error messages, and the opt-in mapping through ToolSet."""

from __future__ import annotations

import re

import pytest

from tooluse.errors import ToolDefinitionError
from tooluse.tools import Tool, ToolSet, check_name, map_name, map_names

RULE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}}
LONG = "very_long_tool_name_" + "x" * 60  # 80 characters


def schema_tool(name: str, **kw: object) -> Tool:
    return Tool.from_schema(name, "d", SCHEMA, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("math.factorial", "'.'"),
        ("", "empty"),
        (LONG, "80 characters"),
        ("hello world!", "' ', '!'"),
        ("café", "'é'"),
    ],
)
def test_invalid_names_rejected_with_tool_named(name: str, why: str) -> None:
    with pytest.raises(ToolDefinitionError) as info:
        schema_tool(name)
    message = str(info.value)
    assert repr(name) in message and why in message and "map_names=True" in message
    assert info.value.tool == name


def test_valid_names_pass_unchanged() -> None:
    for name in ("a", "get-weather_2", "X" * 64):
        assert check_name(name) == name
        assert map_name(name) == name
        assert schema_tool(name).name == name


def test_function_name_rule_applies_to_functions_too() -> None:
    def f(n: int) -> int:
        """x"""
        return n

    with pytest.raises(ToolDefinitionError, match="'math.f'"):
        Tool.from_function(f, name="math.f")


def test_map_name_examples_are_deterministic() -> None:
    assert map_name("math.factorial") == "math_factorial"
    assert map_name("a b/c") == "a_b_c"
    long = map_name(LONG)
    assert len(long) == 64 and RULE.match(long)
    assert long == map_name(LONG)  # stable across calls (hash of the original, not a counter)
    other = map_name(LONG[:-1] + "y")  # same 64-char prefix, different original
    assert other != long and other[:55] == long[:55]


def test_toolset_without_mapping_rejects_duplicates_by_name() -> None:
    with pytest.raises(ToolDefinitionError) as info:
        ToolSet([schema_tool("search"), schema_tool("lookup"), schema_tool("search")])
    assert "'search'" in str(info.value) and "duplicate" in str(info.value)
    assert "'lookup'" not in str(info.value)


def test_toolset_without_mapping_rejects_invalid_names() -> None:
    with pytest.raises(ToolDefinitionError, match="math.factorial"):
        ToolSet([{"name": "math.factorial", "input_schema": SCHEMA}])


def test_toolset_mapping_and_mapping_back() -> None:
    tools = [
        schema_tool("math.factorial", map_name=True),
        {"name": LONG, "description": "long", "input_schema": SCHEMA},
        schema_tool("plain"),
    ]
    ts = ToolSet(tools, map_names=True)
    assert ts.names == ["math_factorial", map_name(LONG), "plain"]
    assert all(RULE.match(n) for n in ts.names)
    assert ts.original_name("math_factorial") == "math.factorial"
    assert ts.original_name(map_name(LONG)) == LONG
    assert ts.original_name("plain") == "plain"
    t = ts.get("math_factorial")
    assert t is not None and t.original_name == "math.factorial" and t.name == "math_factorial"
    assert ts.get("math.factorial") is None
    assert ts.wire_name("math.factorial") == "math_factorial"
    assert [s.name for s in ts.specs] == ts.names


def test_duplicates_after_mapping_get_suffixes_and_map_back() -> None:
    names = ["math.factorial", "math/factorial", "math_factorial", "math factorial"]
    ts = ToolSet([{"name": n, "input_schema": SCHEMA} for n in names], map_names=True)
    # The name that was already valid keeps itself; mapped ones are suffixed in order.
    assert ts.names == ["math_factorial_2", "math_factorial_3", "math_factorial", "math_factorial_4"]
    assert [ts.original_name(w) for w in ts.names] == names
    assert len(set(ts.names)) == 4
    again = ToolSet([{"name": n, "input_schema": SCHEMA} for n in names], map_names=True)
    assert again.names == ts.names  # deterministic


def test_long_names_colliding_after_truncation() -> None:
    a = "a" * 80
    ts = ToolSet([{"name": a, "input_schema": SCHEMA}, {"name": map_name(a), "input_schema": SCHEMA}],
                 map_names=True)
    assert len(set(ts.names)) == 2 and all(RULE.match(n) and len(n) <= 64 for n in ts.names)
    assert ts.original_name(ts.names[0]) == a


def test_exact_duplicates_are_an_error_even_with_mapping() -> None:
    with pytest.raises(ToolDefinitionError, match="'math.f'"):
        ToolSet([{"name": "math.f", "input_schema": SCHEMA}] * 2, map_names=True)


def test_map_names_unit() -> None:
    assert map_names(["a.b", "a_b", "a-b"]) == ["a_b_2", "a_b", "a-b"]
    with pytest.raises(ToolDefinitionError):
        map_names(["x", "x"])


def test_toolset_accepts_functions_and_models() -> None:
    from pydantic import BaseModel

    class Summary(BaseModel):
        """A summary."""

        text: str

    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    ts = ToolSet([add, Summary])
    assert ts.names == ["add", "Summary"]
    assert ts["add"].call({"a": 1, "b": 2}) == 3
    with pytest.raises(KeyError):
        ts["nope"]
