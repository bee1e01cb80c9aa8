"""pair_in_order: a tool's calls whose values cross the question's order are paired again
in that order, and nothing else is touched."""

from __future__ import annotations

from typing import Any

import pytest

from tooluse.messages import Message, Request, ToolSpec, ToolUseBlock
from tooluse.presets.en_bfcl.call_edits import paired_in_order
from tooluse.presets.en_bfcl.pairing import in_order

Calls = list[tuple[str, dict[str, Any]]]
TEMPS = ("What is the average temperature in New York for the past 7 days in Fahrenheit and "
         "how does it compare to the average temperature in Los Angeles in Celsius?")


def test_crossed_values_are_paired_in_the_questions_order() -> None:
    calls: Calls = [("temp", {"location": "New York", "days": 7, "unit": "Celsius"}),
                    ("temp", {"location": "Los Angeles", "days": 7, "unit": "Fahrenheit"})]
    assert in_order(calls, TEMPS) == [
        ("temp", {"location": "New York", "days": 7, "unit": "Fahrenheit"}),
        ("temp", {"location": "Los Angeles", "days": 7, "unit": "Celsius"})]


def test_three_calls_and_numbers() -> None:
    question = "Save the game at stage 7 in easy mode, stage 3 in hard mode and stage 5 in " \
               "expert mode."
    calls: Calls = [("save", {"stage": 3, "mode": "easy"}), ("save", {"stage": 7, "mode": "hard"}),
                    ("save", {"stage": 5, "mode": "expert"})]
    # Each call keeps its first varying value (the stage) and takes the mode paired with it.
    assert in_order(calls, question) == [
        ("save", {"stage": 3, "mode": "hard"}), ("save", {"stage": 7, "mode": "easy"}),
        ("save", {"stage": 5, "mode": "expert"})]


def test_other_tools_calls_keep_their_places() -> None:
    calls: Calls = [("temp", {"location": "New York", "unit": "Celsius"}),
                    ("news", {"topic": "weather"}),
                    ("temp", {"location": "Los Angeles", "unit": "Fahrenheit"})]
    assert in_order(calls, TEMPS) == [
        ("temp", {"location": "New York", "unit": "Fahrenheit"}), ("news", {"topic": "weather"}),
        ("temp", {"location": "Los Angeles", "unit": "Celsius"})]


@pytest.mark.parametrize(("calls", "question"), [
    # already in order
    ([("temp", {"location": "New York", "unit": "Fahrenheit"}),
      ("temp", {"location": "Los Angeles", "unit": "Celsius"})], TEMPS),
    # a value written twice says nothing of order
    ([("route", {"start": "Berlin", "end": "Rome"}), ("route", {"start": "Paris", "end": "Paris"})],
     "Routes from Paris to Rome and from Berlin to Paris"),
    # calls sharing a value: a list's combinations, not a crossing
    ([("temp", {"location": "New York", "unit": "Celsius"}),
      ("temp", {"location": "New York", "unit": "Fahrenheit"}),
      ("temp", {"location": "Los Angeles", "unit": "Celsius"})], TEMPS),
    # a value the question does not write
    ([("temp", {"location": "New York", "unit": "Kelvin"}),
      ("temp", {"location": "Los Angeles", "unit": "Fahrenheit"})], TEMPS),
    # calls with different parameters
    ([("temp", {"location": "New York", "unit": "Celsius"}),
      ("temp", {"location": "Los Angeles", "unit": "Fahrenheit", "days": 7})], TEMPS),
    # one parameter varies: nothing to cross
    ([("temp", {"location": "Los Angeles", "days": 7}),
      ("temp", {"location": "New York", "days": 7})], TEMPS),
])
def test_nothing_changes_without_a_crossing(calls: Calls, question: str) -> None:
    assert in_order(calls, question) == calls


def _blocks(tool: ToolSpec, pairs: list[tuple[str, str]]) -> list[ToolUseBlock]:
    return [ToolUseBlock(id=f"toolu_{i}", name=tool.name,
                         input={"location": city, "unit": unit})
            for i, (city, unit) in enumerate(pairs)]


def test_paired_blocks_keep_their_ids_and_are_validated() -> None:
    free = ToolSpec(name="temp", input_schema={"type": "object", "properties": {
        "location": {"type": "string"}, "unit": {"type": "string"}}})
    # A schema the paired calls break: New York only in Celsius.
    strict = free.model_copy(update={"input_schema": {**free.input_schema, "allOf": [{
        "if": {"properties": {"location": {"const": "New York"}}},
        "then": {"properties": {"unit": {"const": "Celsius"}}}}]}})
    crossed = [("New York", "Celsius"), ("Los Angeles", "Fahrenheit")]
    for tool, expected in ((free, [("New York", "Fahrenheit"), ("Los Angeles", "Celsius")]),
                           (strict, crossed)):
        request = Request(messages=[Message(role="user", content=TEMPS)], tools=[tool])
        paired = paired_in_order(request, _blocks(tool, crossed))
        assert [(b.input["location"], b.input["unit"]) for b in paired] == expected
        assert [b.id for b in paired] == ["toolu_0", "toolu_1"]
