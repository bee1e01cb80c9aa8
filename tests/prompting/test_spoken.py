"""Numbers written in words or as ordinals: found, offered as values, counted as given."""

from __future__ import annotations

from tooluse.prompting.choices import keep_given_optionals, times_given
from tooluse.prompting.copy_values import candidate_values
from tooluse.prompting.spoken import counts, spoken_numbers


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
