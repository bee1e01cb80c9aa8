"""Calling tools: sync and async functions from sync and async code, pydantic-model
parameters, schema-only tools, from_model tools and .parse()."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from pydantic import BaseModel, Field, field_validator

from tooluse.errors import ToolDefinitionError, ToolInputError
from tooluse.messages import ToolSpec
from tooluse.tools import Tool


class Point(BaseModel):
    x: float
    y: float


class Summary(BaseModel):
    """Record a summary of the text.

    Use it to give the answer as structured data.

    Attributes:
        title: A short title.
        keywords: The key words.
    """

    title: str
    keywords: list[str] = Field(default_factory=list)
    score: float = Field(0.0, description="How positive the text is.", ge=-1, le=1)

    @field_validator("title")
    @classmethod
    def _no_shouting(cls, value: str) -> str:
        if value.isupper():
            raise ValueError("the title must not be all capitals")
        return value


def test_sync_call_passes_keywords_and_returns_as_is() -> None:
    seen: dict[str, Any] = {}

    def book(city: str, nights: int = 1, extras: list[str] | None = None) -> object:
        """Book."""
        seen.update(city=city, nights=nights, extras=extras)
        return seen  # any object comes back unchanged

    t = Tool.from_function(book)
    assert not t.is_async
    assert t.call({"city": "Rome"}) is seen
    assert seen == {"city": "Rome", "nights": 1, "extras": None}


def test_call_validates_first_and_never_calls_with_bad_input() -> None:
    calls: list[int] = []

    def f(n: int) -> int:
        """x"""
        calls.append(n)
        return n

    t = Tool.from_function(f)
    with pytest.raises(ToolInputError) as info:
        t.call({"n": "5"})
    assert info.value.problems == ["'n' must be an integer, got string '5'"]
    assert calls == []


def test_function_exceptions_propagate_unchanged() -> None:
    def f() -> None:
        """x"""
        raise LookupError("no such ticker")

    with pytest.raises(LookupError, match="no such ticker"):
        Tool.from_function(f).call({})


def test_model_parameter_is_built_from_dict() -> None:
    def distance(a: Point, b: Point) -> float:
        """Distance."""
        assert isinstance(a, Point) and isinstance(b, Point)
        return float(((a.x - b.x) ** 2 + (a.y - b.y) ** 2) ** 0.5)

    t = Tool.from_function(distance)
    assert t.call({"a": {"x": 0, "y": 0}, "b": {"x": 3, "y": 4}}) == 5.0


def test_async_function_called_synchronously() -> None:
    async def slow_double(x: int) -> int:
        """x"""
        await asyncio.sleep(0)
        return 2 * x

    t = Tool.from_function(slow_double)
    assert t.is_async and t.call({"x": 21}) == 42


def test_async_function_called_synchronously_inside_running_loop() -> None:
    async def double(x: int) -> int:
        """x"""
        await asyncio.sleep(0)
        return 2 * x

    t = Tool.from_function(double)

    async def main() -> int:
        return t.call({"x": 4})  # sync call from async code must not deadlock

    assert asyncio.run(main()) == 8


def test_acall_async_and_sync_in_worker_thread() -> None:
    main_thread = threading.get_ident()

    def sync_f(x: int) -> int:
        """x"""
        assert threading.get_ident() != main_thread  # did not block the loop's thread
        return x + 1

    async def async_f(x: int) -> int:
        """x"""
        return x + 2

    s, a = Tool.from_function(sync_f), Tool.from_function(async_f)

    async def main() -> tuple[int, int]:
        return await s.acall({"x": 1}), await a.acall({"x": 1})

    assert asyncio.run(main()) == (2, 3)


def test_acall_validates() -> None:
    async def f(x: int) -> int:
        """x"""
        return x

    with pytest.raises(ToolInputError, match="missing required parameter 'x'"):
        asyncio.run(Tool.from_function(f).acall({}))


def test_async_callable_object() -> None:
    class Fetcher:
        async def __call__(self, url: str) -> str:
            """Fetch."""
            return url.upper()

    t = Tool.from_function(Fetcher(), name="fetch")
    assert t.is_async and t.call({"url": "x"}) == "X"


def test_schema_only_tool_call_raises_clear_error() -> None:
    t = Tool.from_schema("record_summary", "Record.", {"type": "object", "properties": {"s": {"type": "string"}}})
    assert t.function is None
    with pytest.raises(ToolDefinitionError) as info:
        t.call({"s": "x"})
    assert "'record_summary'" in str(info.value) and "no function" in str(info.value)
    with pytest.raises(ToolDefinitionError, match="no function"):
        asyncio.run(t.acall({"s": "x"}))
    assert t.parse({"s": "x"}) == {"s": "x"}


def test_from_model_schema_description_and_parse() -> None:
    t = Tool.from_model(Summary)
    assert t.name == "Summary" and t.function is None
    assert t.description == "Record a summary of the text.\n\nUse it to give the answer as structured data."
    p = t.input_schema["properties"]
    assert p["title"] == {"type": "string", "description": "A short title."}
    assert p["score"]["description"] == "How positive the text is."
    assert "description" not in t.input_schema and "title" not in t.input_schema
    got = t.parse({"title": "Calm", "keywords": ["a"]})
    assert isinstance(got, Summary) and got.keywords == ["a"]
    with pytest.raises(ToolInputError) as info:
        t.parse({"keywords": "a", "score": 3})
    assert info.value.problems == [
        "'keywords' must be an array, got string 'a'",
        "'score' must be at most 1, got 3",
        "missing required parameter 'title'",
    ]
    with pytest.raises(ToolInputError, match="'title': Value error, the title must not be all capitals"):
        t.parse({"title": "LOUD"})


def test_from_model_with_name_description_and_function() -> None:
    t = Tool.from_model(
        Summary, name="record_summary", description="Say it.", function=lambda s: s.title.lower()
    )
    assert (t.name, t.description, t.model) == ("record_summary", "Say it.", Summary)
    assert t.call({"title": "Hello"}) == "hello"
    with pytest.raises(ToolDefinitionError, match="pydantic model class"):
        Tool.from_model(dict)  # type: ignore[arg-type]


def test_spec() -> None:
    def f(a: int) -> int:
        """Does a thing."""
        return a

    spec = Tool.from_function(f).spec
    assert isinstance(spec, ToolSpec)
    assert spec.name == "f" and spec.description == "Does a thing."
    assert spec.input_schema["properties"] == {"a": {"type": "integer"}}
    t = Tool.from_spec(spec, function=f)
    assert t.call({"a": 3}) == 3


def test_from_schema_function_gets_keywords() -> None:
    t = Tool.from_schema(
        "get_stock_price",
        "Price.",
        {"type": "object", "properties": {"symbol": {"type": "string"}}, "required": ["symbol"]},
        function=lambda symbol: {"GM": 38.5}[symbol],
    )
    assert t.call({"symbol": "GM"}) == 38.5


def test_partial_of_async_function() -> None:
    import functools

    async def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    t = Tool.from_function(functools.partial(add, b=10))
    assert (t.name, t.description, t.is_async) == ("add", "Add two integers.", True)
    assert t.input_schema["required"] == ["a"]
    assert t.call({"a": 1}) == 11


def test_date_parameter_checked_and_converted() -> None:
    import datetime

    def days_until(when: datetime.date) -> int:
        """Days from 2024-01-01."""
        assert isinstance(when, datetime.date)
        return (when - datetime.date(2024, 1, 1)).days

    t = Tool.from_function(days_until)
    assert t.input_schema["properties"]["when"] == {"type": "string", "format": "date"}
    assert t.call({"when": "2024-01-31"}) == 30
    with pytest.raises(ToolInputError, match="'when' must be a valid date, got '2024-13-40'"):
        t.call({"when": "2024-13-40"})
