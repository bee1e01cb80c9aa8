"""Property tests: generated valid input always validates (and reaches the function); the
name mapping always yields valid, unique, reversible names."""

from __future__ import annotations

from typing import Any, Literal, Optional

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from tooluse.errors import ToolInputError
from tooluse.tools import Tool, ToolSet, is_valid_name, map_name, normalize_schema


class Line(BaseModel):
    sku: str = Field(min_length=1)
    qty: int = Field(ge=1, le=99)
    price: float | None = None


class Where(TypedDict):
    city: str
    zip: int


def place_order(
    lines: list[Line],
    where: Where,
    mode: Literal["fast", "cheap"] = "cheap",
    note: Optional[str] = None,  # noqa: UP045
    gift: bool = False,
    meta: dict[str, int] | None = None,
) -> dict[str, Any]:
    """Place an order."""
    assert all(isinstance(line, Line) for line in lines)
    return {"n": len(lines), "mode": mode}


ORDER_TOOL = Tool.from_function(place_order)

BFCL_LIKE = Tool.from_schema(
    "geo.route",
    "d",
    normalize_schema(
        {
            "type": "dict",
            "properties": {
                "start": {"type": "tuple", "items": {"type": "float"}},
                "stops": {"type": "array", "items": {"type": "dict", "properties": {"name": {"type": "string"}}, "required": ["name"]}},
                "mode": {"type": "string", "enum": ["car", "bike"]},
                "extra": {"type": "any"},
            },
            "required": ["start", "mode"],
        }
    ),
    map_name=True,
)

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(data=st.data())
def test_generated_valid_input_validates_and_calls(data: st.DataObject) -> None:
    value = data.draw(from_schema(ORDER_TOOL.input_schema))
    assert ORDER_TOOL.validate(value) == value
    # What the schema allows, the function's own types accept too (no pydantic surprise).
    result = ORDER_TOOL.call(value)
    assert result["n"] == len(value["lines"])


@SETTINGS
@given(data=st.data())
def test_generated_valid_input_validates_bfcl_like(data: st.DataObject) -> None:
    value = data.draw(from_schema(BFCL_LIKE.input_schema))
    assert BFCL_LIKE.validate(value) == value


@SETTINGS
@given(data=st.data())
def test_removing_a_required_parameter_is_reported_by_name(data: st.DataObject) -> None:
    value = data.draw(from_schema(ORDER_TOOL.input_schema))
    key = data.draw(st.sampled_from(ORDER_TOOL.input_schema["required"]))
    del value[key]
    with pytest.raises(ToolInputError) as info:
        ORDER_TOOL.validate(value)
    assert f"missing required parameter '{key}'" in info.value.problems


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(min_size=0, max_size=90), min_size=1, max_size=6, unique=True))
def test_mapped_names_valid_unique_reversible(names: list[str]) -> None:
    schema = {"type": "object", "properties": {}}
    tools = ToolSet([{"name": n, "input_schema": schema} for n in names], map_names=True)
    assert len(set(tools.names)) == len(names)
    assert all(is_valid_name(w) for w in tools.names)
    assert [tools.original_name(w) for w in tools.names] == names
    again = ToolSet([{"name": n, "input_schema": schema} for n in names], map_names=True)
    assert again.names == tools.names
    for n in names:
        assert is_valid_name(map_name(n))
