"""Schemas and descriptions read from Python functions: every annotation kind, every
docstring style."""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Any, Literal, Optional

import pytest
from jsonschema import Draft202012Validator
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from tooluse.errors import ToolDefinitionError
from tooluse.tools import Tool, tool


def props(t: Tool) -> dict[str, Any]:
    return t.input_schema["properties"]


# --------------------------------------------------------------------------- annotations


def test_scalar_types_and_required() -> None:
    def f(s: str, i: int, x: float, b: bool, n: None = None) -> None:
        """Scalars."""

    t = Tool.from_function(f)
    p = props(t)
    assert p["s"]["type"] == "string"
    assert p["i"]["type"] == "integer"
    assert p["x"]["type"] == "number"
    assert p["b"]["type"] == "boolean"
    assert p["n"]["type"] == "null"
    assert t.input_schema["type"] == "object"
    assert sorted(t.input_schema["required"]) == ["b", "i", "s", "x"]
    assert t.input_schema["additionalProperties"] is False


def test_optional_and_union_none_both_spellings() -> None:
    def f(a: Optional[int] = None, b: str | None = None) -> None:  # noqa: UP045
        """x"""

    p = props(Tool.from_function(f))
    assert p["a"]["type"] == ["integer", "null"]
    assert p["b"]["type"] == ["string", "null"]
    assert p["a"]["default"] is None


def test_required_optional_without_default_stays_required() -> None:
    def f(a: Optional[int]) -> None:  # noqa: UP045
        """x"""

    t = Tool.from_function(f)
    assert t.input_schema["required"] == ["a"]
    t.validate({"a": None})


def test_literal_becomes_enum_and_enum_class() -> None:
    class Color(str, Enum):
        RED = "red"
        BLUE = "blue"

    def f(unit: Literal["celsius", "fahrenheit"], color: Color = Color.RED) -> None:
        """x"""

    t = Tool.from_function(f)
    assert props(t)["unit"]["enum"] == ["celsius", "fahrenheit"]
    assert props(t)["color"]["enum"] == ["red", "blue"]
    assert "$ref" not in str(t.input_schema) and "$defs" not in t.input_schema


def test_list_dict_and_nested_generics() -> None:
    def f(tags: list[str], counts: dict[str, int], matrix: list[list[float]], raw: dict) -> None:
        """x"""

    p = props(Tool.from_function(f))
    assert p["tags"] == {"type": "array", "items": {"type": "string"}}
    assert p["counts"] == {"type": "object", "additionalProperties": {"type": "integer"}}
    assert p["matrix"]["items"] == {"type": "array", "items": {"type": "number"}}
    assert p["raw"]["type"] == "object"


def test_typeddict_parameter() -> None:
    class Address(TypedDict):
        street: str
        zip: int

    def f(address: Address) -> None:
        """x"""

    a = props(Tool.from_function(f))["address"]
    assert a["type"] == "object"
    assert a["properties"] == {"street": {"type": "string"}, "zip": {"type": "integer"}}
    assert sorted(a["required"]) == ["street", "zip"]


class Item(BaseModel):
    """A line of an order."""

    name: str
    price: float = Field(description="Unit price in euros.", ge=0)


def test_pydantic_model_parameter_inlined_with_field_descriptions() -> None:
    def order(items: list[Item], gift: Item | None = None) -> None:
        """Order things."""

    t = Tool.from_function(order)
    items = props(t)["items"]["items"]
    assert items["properties"]["price"] == {
        "type": "number",
        "minimum": 0,
        "description": "Unit price in euros.",
    }
    assert "title" not in items and "title" not in items["properties"]["name"]
    assert "$defs" not in t.input_schema
    Draft202012Validator.check_schema(t.input_schema)


def test_recursive_model_keeps_valid_defs() -> None:
    class Node(BaseModel):
        value: int
        children: list[Node] = []

    Node.model_rebuild()

    def walk(tree: Node) -> int:
        """Sum a tree."""
        return tree.value + sum(walk(c) for c in tree.children)

    t = Tool.from_function(walk)
    assert "$defs" in t.input_schema
    assert t.call({"tree": {"value": 1, "children": [{"value": 2}, {"value": 3}]}}) == 6
    with pytest.raises(Exception) as info:
        t.validate({"tree": {"value": 1, "children": [{"value": "x"}]}})
    assert "'tree.children[0].value' must be an integer" in str(info.value)


def test_annotated_string_and_field_descriptions() -> None:
    def f(
        a: Annotated[str, "The first thing."],
        b: Annotated[int, Field(description="The second thing.", ge=1)] = 1,
        c: int = Field(3, description="The third thing."),
    ) -> None:
        """x

        Args:
            a: docstring loses to Annotated.
            b: docstring loses to Field.
        """

    p = props(Tool.from_function(f))
    assert p["a"]["description"] == "The first thing."
    assert p["b"]["description"] == "The second thing." and p["b"]["minimum"] == 1
    assert p["c"]["description"] == "The third thing." and p["c"]["default"] == 3


def test_defaults_are_not_required() -> None:
    def f(a: int, b: int = 2, c: list[int] | None = None) -> None:
        """x"""

    t = Tool.from_function(f)
    assert t.input_schema["required"] == ["a"]
    assert props(t)["b"]["default"] == 2


def test_kwargs_allows_extra_parameters() -> None:
    def f(a: int, **extra: Any) -> dict[str, Any]:
        """x"""
        return {"a": a, **extra}

    t = Tool.from_function(f)
    assert "additionalProperties" not in t.input_schema
    assert t.call({"a": 1, "z": "zz"}) == {"a": 1, "z": "zz"}


def test_unsupported_signatures_are_named() -> None:
    def star(*args: int) -> None:
        """x"""

    def posonly(a: int, /) -> None:
        """x"""

    class Opaque:
        pass

    def opaque(o: Opaque) -> None:
        """x"""

    for f, word in ((star, "*args"), (posonly, "positional-only"), (opaque, "no JSON Schema")):
        with pytest.raises(ToolDefinitionError) as info:
            Tool.from_function(f)
        assert f.__name__ in str(info.value) and word in str(info.value)


def test_method_and_callable_object() -> None:
    class Calc:
        def add(self, a: int, b: int) -> int:
            """Add two numbers."""
            return a + b

        def __call__(self, x: int) -> int:
            """Square."""
            return x * x

    t = Tool.from_function(Calc().add)
    assert set(props(t)) == {"a", "b"} and t.call({"a": 2, "b": 3}) == 5
    sq = Tool.from_function(Calc(), name="square")
    assert sq.description == "Square." and sq.call({"x": 4}) == 16


# --------------------------------------------------------------------------- docstrings


GOOGLE = '''Get the current weather in a given location.

Returns the temperature and conditions. Use it only for current weather,
not for forecasts.

Args:
    location (str): The city and state,
        e.g. San Francisco, CA.
    unit: The temperature unit.

Returns:
    dict: the weather report.

Raises:
    ValueError: for an unknown place.
'''

NUMPY = '''Get the current weather in a given location.

Returns the temperature and conditions. Use it only for current weather,
not for forecasts.

Parameters
----------
location : str
    The city and state,
    e.g. San Francisco, CA.
unit : str, optional
    The temperature unit.

Returns
-------
dict
    the weather report.
'''

REST = '''Get the current weather in a given location.

Returns the temperature and conditions. Use it only for current weather,
not for forecasts.

:param location: The city and state,
    e.g. San Francisco, CA.
:type location: str
:param unit: The temperature unit.
:returns: the weather report.
:rtype: dict
'''


@pytest.mark.parametrize("doc", [GOOGLE, NUMPY, REST], ids=["google", "numpy", "rest"])
def test_docstring_styles(doc: str) -> None:
    def get_weather(location: str, unit: str = "celsius") -> dict[str, Any]:
        return {}

    get_weather.__doc__ = doc
    t = Tool.from_function(get_weather)
    assert t.description == (
        "Get the current weather in a given location.\n\n"
        "Returns the temperature and conditions. Use it only for current weather,\n"
        "not for forecasts."
    )
    for word in ("Args", "Parameters", ":param", "Returns:", "weather report"):
        assert word not in t.description
    assert props(t)["location"]["description"] == "The city and state, e.g. San Francisco, CA."
    assert props(t)["unit"]["description"] == "The temperature unit."


def test_no_docstring_and_explicit_overrides() -> None:
    def f(a: int) -> None:
        pass

    t = Tool.from_function(f)
    assert t.description == "" and "description" not in props(t)["a"]
    t2 = Tool.from_function(f, name="renamed", description="Says why.")
    assert (t2.name, t2.description) == ("renamed", "Says why.")


def test_decorator_both_forms_and_still_callable() -> None:
    @tool
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    @tool(name="mul", description="Multiply two integers.")
    def multiply(a: int, b: int) -> int:
        return a * b

    assert isinstance(add, Tool) and add(2, 3) == 5 and add.call({"a": 1, "b": 1}) == 2
    assert multiply.name == "mul" and multiply.description == "Multiply two integers."
    assert multiply.spec.name == "mul" and multiply.spec.input_schema["required"] == ["a", "b"]


def test_async_function_schema_and_flag() -> None:
    async def fetch(url: str, retries: int = 3) -> str:
        """Fetch a page.

        Args:
            url: Absolute URL.
        """
        return url

    t = Tool.from_function(fetch)
    assert t.is_async
    assert props(t)["url"]["description"] == "Absolute URL."
    assert t.input_schema["required"] == ["url"]


def test_function_schema_is_valid_2020_12_everywhere() -> None:
    def f(
        a: Literal[1, 2],
        b: list[Item],
        c: dict[str, list[int]],
        d: tuple[int, str],
        e: Optional[Item] = None,  # noqa: UP045
    ) -> None:
        """x"""

    t = Tool.from_function(f)
    Draft202012Validator.check_schema(t.input_schema)
    assert props(t)["d"]["prefixItems"] == [{"type": "integer"}, {"type": "string"}]
    t.validate({"a": 1, "b": [], "c": {"k": [1]}, "d": [1, "x"]})


def test_parameter_names_that_clash_with_pydantic_and_field_defaults() -> None:
    def f(
        copy: bool,
        json: str = "x",
        _private: int = 0,
        model_config: int = 1,
        limit: int = Field(3, description="At most this many.", ge=1),
        ids: list[int] = Field(default_factory=list),  # noqa: B008
    ) -> dict[str, Any]:
        """x"""
        return {"copy": copy, "json": json, "_private": _private, "model_config": model_config,
                "limit": limit, "ids": ids}

    t = Tool.from_function(f)
    assert list(props(t)) == ["copy", "json", "_private", "model_config", "limit", "ids"]
    assert props(t)["limit"] == {"type": "integer", "default": 3, "minimum": 1, "description": "At most this many."}
    # Left-out Field(...) defaults reach the function as values, not as FieldInfo objects.
    assert t.call({"copy": True, "_private": 5, "model_config": 7}) == {
        "copy": True, "json": "x", "_private": 5, "model_config": 7, "limit": 3, "ids": []
    }
    with pytest.raises(Exception, match="unexpected parameter 'p0'"):
        t.validate({"copy": True, "p0": True})  # internal field names are not accepted
