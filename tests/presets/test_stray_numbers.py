"""stray_numbers: a number the call took from inside another value, from an exponent or
with a zero lost gives way to the question's one unused number."""

from __future__ import annotations

from typing import Any

import pytest

from tooluse.presets.en_bfcl.stray_numbers import stray_numbers


def schema(**types: str) -> dict[str, Any]:
    return {"type": "object",
            "properties": {name: {"type": kind} for name, kind in types.items()}}


DERIVATIVE = schema(function="string", value="number", function_variable="string")
VELOCITY = schema(initial_velocity="number", acceleration="number", time="number")
HOTEL = schema(hotel_name="string", start_date="string", nights="integer")
EQUITY = schema(net_income="integer", shareholder_equity="integer", dividends_paid="integer")


@pytest.mark.parametrize(("arguments", "spec", "question", "written"), [
    # A coefficient of the function the call holds is not the point.
    ({"function": "2x^2", "value": 2, "function_variable": "x"}, DERIVATIVE,
     "Calculate the derivative of the function 2x^2 at x = 1.", {"value": 1}),
    # An exponent is not the duration.
    ({"initial_velocity": 0, "acceleration": 9.8, "time": 2}, VELOCITY,
     "Calculate the final velocity of an object, knowing that it started from rest, "
     "accelerated at a rate of 9.8 m/s^2 for a duration of 5 seconds.", {"time": 5}),
    # The year of the date the call holds is not the number of nights; "two" is.
    ({"hotel_name": "Hilton Hotel", "start_date": "10th December 2022", "nights": 2022},
     HOTEL, "Book a single room for two nights at the Hilton Hotel in Chicago, starting "
     "from 10th December 2022.", {"nights": 2}),
    # A zero lost from a long number.
    ({"net_income": 2000000, "shareholder_equity": 1000000, "dividends_paid": 200000},
     EQUITY, "Calculate the company's return on equity given its net income of $2,000,000,"
     " shareholder's equity of $10,000,000, and dividends paid of $200,000.",
     {"shareholder_equity": 10000000}),
    # A signed number keeps its sign.
    ({"function": "x^3", "value": 3}, DERIVATIVE,
     "The derivative of x^3 at x = -2", {"value": -2}),
])
def test_a_stray_number_gives_way_to_the_unused_one(
        arguments: dict[str, Any], spec: dict[str, Any], question: str,
        written: dict[str, Any]) -> None:
    assert stray_numbers(arguments, spec, question) == {**arguments, **written}


@pytest.mark.parametrize(("arguments", "spec", "question"), [
    # The question writes the 2 free as well.
    ({"function": "2x^2", "value": 2}, DERIVATIVE,
     "The derivative of 2x^2 at x = 2."),
    # Two numbers unused: which one is meant is not known.
    ({"function": "2x^2", "value": 2}, DERIVATIVE,
     "The derivative of 2x^2 at x = 1 and at x = 3."),
    # No number is unused: the percentage is held as a fraction, the scaled one whole.
    ({"function": "x^2", "value": 2, "rate": 0.05, "amount": 1200000},
     {"type": "object", "properties": {
         "function": {"type": "string"}, "value": {"type": "number"},
         "rate": {"type": "number"}, "amount": {"type": "integer"}}},
     "Take x^2 at a rate of 5% on $1.2M."),
    # Two parameters stray: which one the unused number is for is not known.
    ({"function": "2x^3", "value": 2, "function_variable": "x", "other": 3},
     {"type": "object", "properties": {
         "function": {"type": "string"}, "value": {"type": "number"},
         "function_variable": {"type": "string"}, "other": {"type": "number"}}},
     "The derivative of 2x^3 at x = 1."),
    # A number not written at all that is no lost zero: the model worked it out.
    ({"height": 70, "weight": 150},
     schema(height="integer", weight="integer"),
     "A person of 150lbs and 5ft 10in."),
    # Small numbers: 5 and 50 are different quantities, not a zero lost.
    ({"count": 50, "size": 7}, schema(count="integer", size="integer"),
     "Give me 5 items of size 7."),
    # A number glued to a name is bound, but the parameter is not stray where the
    # question writes its value free.
    ({"building": "B1004", "floor": 4}, schema(building="string", floor="integer"),
     "The building B1004, floor 4."),
    # Booleans and enum parameters are left alone.
    ({"function": "2x^2", "value": 2, "exact": True},
     {"type": "object", "properties": {
         "function": {"type": "string"}, "value": {"type": "number", "enum": [1, 2]},
         "exact": {"type": "boolean"}}},
     "The derivative of 2x^2 at x = 1."),
])
def test_nothing_is_changed_where_the_question_does_not_say_which(
        arguments: dict[str, Any], spec: dict[str, Any], question: str) -> None:
    assert stray_numbers(arguments, spec, question) == arguments


def test_a_schema_without_properties_is_left_alone() -> None:
    assert stray_numbers({"value": 2}, {"type": "object"}, "2x^2 at x = 1") == {"value": 2}
    assert stray_numbers({"value": 2}, None, "2x^2 at x = 1") == {"value": 2}
