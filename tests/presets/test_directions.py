"""from_to: a "from" and a "to" value in the question's order."""

from __future__ import annotations

from typing import Any

import pytest

from tooluse.messages import Message, Request, TextBlock, ToolSpec, ToolUseBlock
from tooluse.presets.en_bfcl.call_edits import call_adjuster
from tooluse.presets.en_bfcl.directions import from_to


def _schema(start: str, end: str, kind: str = "string") -> dict[str, Any]:
    return {"type": "object", "properties": {start: {"type": kind}, end: {"type": kind},
                                             "note": {"type": "string"}}}


@pytest.mark.parametrize(("start", "end", "question", "got", "want"), [
    ("_from", "to", "Book a flight from Seattle to Boston with American Airlines",
     ("Boston", "Seattle"), ("Seattle", "Boston")),
    ("from_currency", "to_currency", "Convert 100 EUR into USD please", ("USD", "EUR"),
     ("EUR", "USD")),
    ("start_location", "end_location", "the traffic from my home in San Francisco to my "
     "office in Palo Alto", ("Palo Alto", "San Francisco"), ("San Francisco", "Palo Alto")),
    ("origin", "destination", "Trains from paris to ROME tomorrow", ("Rome", "Paris"),
     ("Paris", "Rome")),
])
def test_values_written_the_other_way_round_are_swapped(
        start: str, end: str, question: str, got: tuple[str, str],
        want: tuple[str, str]) -> None:
    arguments = {start: got[0], end: got[1], "note": "x"}
    assert from_to(arguments, _schema(start, end), question) == \
        {start: want[0], end: want[1], "note": "x"}


def test_numbers_are_swapped_too() -> None:
    schema = _schema("start_x", "end_x", "number")
    assert from_to({"start_x": 2, "end_x": 1.0}, schema, "Integrate x^2 from 1 to 2") == \
        {"start_x": 1.0, "end_x": 2}


@pytest.mark.parametrize(("question", "got"), [
    # Already in order.
    ("Book a flight from Seattle to Boston", ("Seattle", "Boston")),
    # Both orders written: which is meant is not clear.
    ("From Seattle to Boston, then Boston to Seattle", ("Boston", "Seattle")),
    # One value only "from" something, never "X to Y" in one phrase.
    ("The traffic from San Francisco to my office in Palo Alto, then from Palo Alto to "
     "Los Angeles", ("San Francisco", "Palo Alto")),
    # A value the question does not write.
    ("Book a flight from Seattle to Boston", ("Chicago", "Seattle")),
    # One value in both.
    ("Book a flight from Seattle to Seattle", ("Seattle", "Seattle")),
])
def test_values_stay(question: str, got: tuple[str, str]) -> None:
    arguments = {"_from": got[0], "to": got[1]}
    assert from_to(arguments, _schema("_from", "to"), question) == arguments


def test_a_call_with_two_starts_or_ends_stays() -> None:
    schema = {"type": "object", "properties": {
        "from_city": {"type": "string"}, "start_date": {"type": "string"},
        "to_city": {"type": "string"}}}
    arguments = {"from_city": "Boston", "start_date": "May", "to_city": "Seattle"}
    assert from_to(arguments, schema, "from Seattle to Boston in May") == arguments


def test_the_call_adjuster_swaps_only_with_directions_on() -> None:
    tool = ToolSpec(name="flight_book", input_schema={
        "type": "object", "required": ["_from", "to"], "properties": {
            "_from": {"type": "string"}, "to": {"type": "string"}}})
    request = Request(model="m", max_tokens=64, tools=[tool], messages=[Message(
        role="user", content=[TextBlock(text="Book a flight from Seattle to Boston.")])])
    block = ToolUseBlock(id="toolu_1", name="flight_book",
                         input={"_from": "Boston", "to": "Seattle"})
    swapped, _ = call_adjuster(request, False, False, directions=True)(block)
    assert swapped.input == {"_from": "Seattle", "to": "Boston"}
    same, _ = call_adjuster(request, False, False)(block)
    assert same.input == block.input
