"""Numbers written in words, as ordinals or with a scale: found, offered as values, counted
as given, written whole."""

from __future__ import annotations

from typing import Any

import pytest

from tooluse.presets.en_bfcl.choices import keep_given_optionals
from tooluse.presets.en_bfcl.spoken import compounding, implied, scaled
from tooluse.language.spans import candidate_values
from tooluse.language.numbers import counts, scaled_numbers, spoken_numbers
from tooluse.language.words import times_given


def test_words_and_ordinals_are_numbers() -> None:
    assert spoken_numbers("Find ten major events in the 16th century") == [10, 16]
    assert spoken_numbers("the top THREE plants, a dozen eggs") == [3, 12]
    # "twenty one" is two numbers, not 21; words inside other words are none.
    assert spoken_numbers("twenty one") == [20, 1]
    assert spoken_numbers("someone, often, tentative, 3rdparty") == []


def test_an_ordinal_by_a_month_is_a_date() -> None:
    question = ("Book a single room for two nights at the Hilton Hotel in Chicago, starting "
                "from 10th December 2022, or from April 4th.")
    assert spoken_numbers(question) == [2]
    assert spoken_numbers("the 2nd, 3rd and 4th floors") == [2, 3, 4]


def test_a_spoken_number_is_offered_where_a_number_is_due() -> None:
    spans = candidate_values("Book a room for two nights from 10th December 2022.")
    assert "2" in spans and "2022" in spans
    assert spans.index("2") < spans.index("December")
    assert "16" in candidate_values("What happened in the 16th century?")


def test_a_number_in_words_gives_the_parameter_it_counts() -> None:
    assert counts("the next three days, two charges of 5C") == [(3, ("days",)),
                                                                (2, ("charges", "of"))]
    assert counts("Find three personality traits") == [(3, ("personality", "traits"))]
    question = "Find air quality index in San Jose for next three days."
    assert times_given(3, "the 3rd day") == 1  # an ordinal's digits are written
    assert times_given(3, question) == 0  # a word is no digit...
    schema = {"type": "object", "properties": {
        "location": {"type": "string"}, "days": {"type": "integer"},
        "hours": {"type": "integer"}}, "required": ["location"]}
    kept, dropped = keep_given_optionals({"location": "San Jose", "days": 3, "hours": 3},
                                         schema, question)
    # ...but it gives the parameter whose name it counts, and no other.
    assert kept == {"location": "San Jose", "days": 3} and dropped == ["hours"]
    force = {"type": "object", "properties": {
        "charge1": {"type": "number"}, "medium_permittivity": {"type": "number"}},
        "required": ["charge1"]}
    kept, _ = keep_given_optionals({"charge1": 5, "medium_permittivity": 2}, force,
                                   "The force between two charges of 5C and 7C.")
    assert kept == {"charge1": 5}


def test_a_number_with_a_scale_is_the_whole_number() -> None:
    assert scaled_numbers("a population of 213 million and 8.5 million square kilometers") \
        == [(213.0, 213_000_000), (8.5, 8_500_000)]
    assert scaled_numbers("revenues of $1M in 2019, $1.2M in 2020, €5k, £2bn, 3 thousands") \
        == [(1.0, 1_000_000), (1.2, 1_200_000), (5.0, 5_000), (2.0, 2_000_000_000),
            (3.0, 3_000)]
    # Abbreviations without a currency sign are units: metres, kelvin.
    assert scaled_numbers("a 10 m drop at 300K, 4m long") == []
    question = ("What's the quarterly dividend per share of a company with 100 million "
                "outstanding shares and total dividend payout of 50 million USD?")
    assert "50000000" in candidate_values(question)
    assert times_given(50_000_000, question) == 1 and times_given(50, question) == 1


SHARES = {"type": "object", "properties": {
    "total_payout": {"type": "integer", "description": "The total dividends paid, in USD"},
    "outstanding_shares": {"type": "integer"},
    "revenue": {"type": "number", "description": "Revenue in millions of USD"},
    "year": {"type": "integer"}}}


def test_a_number_written_only_with_a_scale_is_written_whole() -> None:
    question = "100 million outstanding shares, a payout of 50 million USD, revenue 7 million"
    assert scaled({"total_payout": 50, "outstanding_shares": 100, "revenue": 7}, SHARES,
                  question) == {"total_payout": 50_000_000,
                                "outstanding_shares": 100_000_000, "revenue": 7}
    # The digits also written alone, or scaled two ways: left as the model wrote them.
    assert scaled({"outstanding_shares": 100}, SHARES, "100 million shares, 100 buyers") \
        == {"outstanding_shares": 100}
    assert scaled({"outstanding_shares": 2}, SHARES, "2 million shares, 2 billion USD") \
        == {"outstanding_shares": 2}
    # A fraction with its scale is a whole number; without a schema nothing changes.
    assert scaled({"outstanding_shares": 1.5}, SHARES, "$1.5k")["outstanding_shares"] == 1500
    assert scaled({"x": 1}, None, "1 million") == {"x": 1}
    # An integer parameter given a scaled fraction's integer part: the whole number.
    area = "the population is 213 million and the land area is 8.5 million square km"
    assert scaled({"outstanding_shares": 8}, SHARES, area) == {"outstanding_shares": 8_500_000}
    # ... not a number parameter (8 is no cut 8.5 there), nor an integer written alone.
    amount = {"type": "object", "properties": {"amount": {"type": "number"}}}
    assert scaled({"amount": 8}, amount, "sales of 8.5 million") == {"amount": 8}
    assert scaled({"amount": 8.5}, amount, "sales of 8.5 million") == {"amount": 8_500_000}
    assert scaled({"outstanding_shares": 8}, SHARES, "8 shops sold 8.5 million shares") == {
        "outstanding_shares": 8}


def _interest(key: str, description: str) -> dict[str, Any]:
    return {"type": "object", "required": ["principal", "rate"], "properties": {
        "principal": {"type": "integer"}, "rate": {"type": "number"},
        "time": {"type": "integer", "description": "The number of time periods."},
        key: {"type": "integer", "description": description}}}


def test_the_times_a_year_interest_is_compounded_are_written() -> None:
    # BFCL simple_python_153: the model wrote n: 5 (the years).
    schema = _interest("n", "The number of times that interest is compounded per unit time.")
    question = ("Calculate the compounded interest on an initial deposit of $5000 at an "
                "annual interest rate of 3% for 5 years, compounded quarterly.")
    written = {"principal": 5000, "rate": 0.03, "time": 5, "n": 5}
    assert compounding(written, schema, question) == {**written, "n": 4}
    # simple_python_133: left out, added.
    schema = _interest("compounding_periods_per_year", "The number of times that interest "
                       "is compounded per year. Default is 1 (annually).")
    question = ("Predict the future value of a $5000 investment with an annual interest rate "
                "of 5% in 3 years with monthly compounding.")
    assert compounding({"principal": 5000, "rate": 0.05}, schema, question) == {
        "principal": 5000, "rate": 0.05, "compounding_periods_per_year": 12}


def test_compounding_left_alone() -> None:
    schema = _interest("n", "The number of times that interest is compounded per year.")
    written = {"principal": 5000, "rate": 0.03, "n": 1}
    # The word is not next to "compound": it says how often something else happens.
    assert compounding(written, schema,
                       "I save monthly into my account; the interest compounds at 3%") == written
    # Two such words: two calls' values, not this call's to choose.
    assert compounding(written, schema, "compounded monthly, and then compounded quarterly") \
        == written
    # No parameter that counts compoundings (the years are no such count).
    years = {"type": "object", "properties": {"time": {
        "type": "integer", "description": "The number of time periods the money is invested."}}}
    assert compounding({"time": 5}, years, "for 5 years, compounded quarterly") == {"time": 5}


FALL = {"type": "object", "required": ["initial_velocity", "height"], "properties": {
    "initial_velocity": {"type": "integer", "description": "The initial velocity."},
    "height": {"type": "integer"}, "gravity": {"type": "number"}}}
HOURS = {"type": "object", "properties": {"location": {"type": "string"}, "operating_hours": {
    "type": "integer", "description": "Latest closing time. This is in 24 hour format."}}}
FORECAST = {"type": "object", "required": ["location", "months"], "properties": {
    "location": {"type": "string"},
    "months": {"type": "integer", "description": "Number of future months for the prediction."}}}
RELEASES = {"type": "object", "properties": {"location": {"type": "string"}, "timeframe": {
    "type": "integer", "description": "The number of days for which releases are required."}}}
GROWTH = {"type": "object", "properties": {"species": {"type": "string"}, "duration": {
    "type": "integer", "description": "The time period to assess, in years."}}}


@pytest.mark.parametrize(("arguments", "schema", "question", "written"), [
    ({"initial_velocity": 100, "height": 100}, FALL,
     "Calculate the final speed of an object dropped from 100 m without air resistance.",
     {"initial_velocity": 0, "height": 100}),
    ({"initial_velocity": 5, "height": 20}, FALL, "It started from rest and fell 20 m.",
     {"initial_velocity": 0, "height": 20}),
    ({"location": "New York, NY", "operating_hours": 11}, HOURS,
     "Find an all vegan restaurant in New York that opens until at least 11 PM.",
     {"location": "New York, NY", "operating_hours": 23}),
    # A period named by its unit alone, counted in the parameter's unit.
    ({"location": "New York", "months": 12}, FORECAST,
     "Predict the house prices for the next month in New York.",
     {"location": "New York", "months": 1}),
    ({"location": "LA", "timeframe": 120}, RELEASES,
     "Fetch me the list of IMAX movie releases in theaters near LA for the next week.",
     {"location": "LA", "timeframe": 7}),
    ({"species": "Deer", "duration": 1000}, GROWTH,
     "Assess the growth of deer in Washington over the past decade.",
     {"species": "Deer", "duration": 10}),
])
def test_a_number_the_question_implies_is_written(arguments: dict[str, Any],
                                                  schema: dict[str, Any], question: str,
                                                  written: dict[str, Any]) -> None:
    assert implied(arguments, schema, question) == written


@pytest.mark.parametrize(("arguments", "schema", "question"), [
    # The question gives the initial speed itself.
    ({"initial_velocity": 5, "height": 20}, FALL,
     "An object is dropped from 20 m with an initial speed of 5 m/s."),
    # No word of rest, or no initial velocity parameter to write.
    ({"initial_velocity": 5, "height": 20}, FALL, "A ball thrown at 5 m/s from 20 m."),
    ({"height": 20, "gravity": 9.8}, FALL, "An object dropped from 20 m."),
    # A morning hour, two times, or a parameter that says nothing of 24 hours.
    ({"operating_hours": 11}, HOURS, "open until at least 11 AM"),
    ({"operating_hours": 11}, HOURS, "open from 9 AM until at least 11 PM"),
    ({"operating_hours": 11}, {"type": "object", "properties": {"operating_hours": {
        "type": "integer", "description": "Latest closing hour."}}}, "open until 11 PM"),
    # A number the question writes, a period with a number or two periods, a year of the
    # calendar (no count), or a unit the parameter does not count in.
    ({"location": "LA", "timeframe": 10}, RELEASES, "releases in LA over the next week, 10 of them"),
    ({"location": "LA", "timeframe": 10}, RELEASES, "releases in LA for the next 3 days"),
    ({"location": "LA", "timeframe": 10}, RELEASES, "releases next week and the past month"),
    ({"year": 2020}, {"type": "object", "properties": {"year": {"type": "integer"}}},
     "the crime rate of last year"),
    ({"location": "LA", "timeframe": 10}, {"type": "object", "properties": {"timeframe": {
        "type": "integer", "description": "How far ahead to look."}}}, "releases next week"),
])
def test_nothing_is_implied_where_the_question_does_not_say_it(
        arguments: dict[str, Any], schema: dict[str, Any], question: str) -> None:
    assert implied(arguments, schema, question) == arguments
