"""literal_lists: a list the question writes out is given whole to the array parameter
holding a part of it, or nothing."""

from __future__ import annotations

from typing import Any

import pytest

from tooluse.presets.en_bfcl.literal_lists import lists_in, literal_lists


def schema(**items: str) -> dict[str, Any]:
    return {"type": "object", "properties": {
        name: {"type": "array", "items": {"type": kind}} if kind != "number_"
        else {"type": "number"} for name, kind in items.items()}}


@pytest.mark.parametrize(("question", "lists"), [
    ("Sort this list of names in ascending order: ['Sam', 'Alice', 'Jack']",
     [["Sam", "Alice", "Jack"]]),
    ("a 2x2 contingency table [ [10, 20], [30, 40] ]", [[[10, 20], [30, 40]]]),
    ('The JSON ["a", "b"] and the tuple list [(1, 2), (3, 4)]',
     [["a", "b"], [[1, 2], [3, 4]]]),
    ("the following data: 85, 90, 88, 92, 86, 89, 91 and set bin range to 5.",
     [[85, 90, 88, 92, 86, 89, 91]]),
    ("Dataset A includes 12, 15, 18.5 and 20. Dataset B is [12, 15, 18.5, 20].",
     [[12, 15, 18.5, 20]]),  # the same list written twice is one list
    # Two numbers are no list; "10,000" is one number; a bracketed name is no literal.
    ("Between 5, 10 years for $10,000, $20,000 and [Name].", []),
])
def test_the_lists_a_question_writes(question: str, lists: list[Any]) -> None:
    assert lists_in(question) == lists


@pytest.mark.parametrize(("arguments", "spec", "question", "written"), [
    ({"elements": [], "order": "asc"}, schema(elements="string"),
     "Sort this list of names in ascending order: ['Sam', 'Alice', 'Jack']",
     {"elements": ["Sam", "Alice", "Jack"]}),
    # The first item lost.
    ({"cash_flows": [10000, 15000, 20000, 25000, 30000], "discount_rate": 0.08},
     schema(cash_flows="integer", discount_rate="number_"),
     "the NPV of a series of cash flows: [-50000, 10000, 15000, 20000, 25000, 30000] "
     "discounted at 8% annually?",
     {"cash_flows": [-50000, 10000, 15000, 20000, 25000, 30000]}),
    # The last item repeated until the grammar stopped it.
    ({"data": [85, 90, 88, 92, 86, 89, 91, 91, 91, 91], "bins": 5},
     schema(data="integer", bins="number_"),
     "Create a histogram with the following data: 85, 90, 88, 92, 86, 89, 91 and set bin "
     "range to 5.", {"data": [85, 90, 88, 92, 86, 89, 91]}),
    # Empty beside a list another parameter holds: the other list.
    ({"data": [2.5, 3.6], "categories": []},
     schema(data="number", categories="string"),
     "Normalize [2.5, 3.6], and one-hot encode ['red', 'blue', 'green'].",
     {"categories": ["red", "blue", "green"]}),
])
def test_a_list_is_given_whole(arguments: dict[str, Any], spec: dict[str, Any],
                               question: str, written: dict[str, Any]) -> None:
    assert literal_lists(arguments, spec, question) == {**arguments, **written}


@pytest.mark.parametrize(("arguments", "question"), [
    # Two lists the call holds neither of: which one is meant is not known.
    ({"numbers": []}, "The averages of [1, 2, 3] and of [4, 5, 6]."),
    # A part of two lists.
    ({"numbers": [2, 3]}, "The averages of [1, 2, 3] and of [2, 3, 4]."),
    # More items than the list that are no repeat of its last: another list's items.
    ({"numbers": [1, 2, 3, 7]}, "The averages of [1, 2, 3] and of [7, 8, 9]."),
    # The list as written, or items the question does not write in that order.
    ({"numbers": [1, 2, 3]}, "The average of [1, 2, 3]."),
    ({"numbers": [3, 1]}, "The average of [1, 2, 3]."),
    # No list at all.
    ({"numbers": []}, "The average of my numbers."),
])
def test_nothing_is_changed_where_the_question_does_not_say_which(
        arguments: dict[str, Any], question: str) -> None:
    assert literal_lists(arguments, schema(numbers="integer"), question) == arguments


def test_other_parameters_and_schemas_are_left_alone() -> None:
    question = "The average of [1, 2, 3]."
    assert literal_lists({"numbers": 2}, {"type": "object", "properties": {
        "numbers": {"type": "integer"}}}, question) == {"numbers": 2}
    assert literal_lists({"numbers": []}, {"type": "object"}, question) == {"numbers": []}
    assert literal_lists({"numbers": []}, None, question) == {"numbers": []}
