"""each_option: a call for each of a parameter's options the question lists side by side,
and none where the options are not a list (a conversion's two sides, examples, a mention)."""

from __future__ import annotations

from typing import Any

import pytest

from tooluse.presets.en_bfcl.each_option import named_in_list, option_calls

SORT = {"type": "object", "properties": {
    "list": {"type": "array", "items": {"type": "integer"}},
    "order": {"type": "string", "enum": ["ascending", "descending"]}}}
RAIN = {"type": "object", "properties": {
    "location": {"type": "string"},
    "time_frame": {"type": "string", "enum": ["six_months", "year", "five_years"]}}}
GENOTYPE = {"type": "object", "properties": {
    "allele_frequency": {"type": "number"},
    "genotype": {"type": "string", "enum": ["AA", "Aa", "aa"]}}}
ROUTE = {"type": "object", "properties": {
    "start": {"type": "string"}, "end": {"type": "string"},
    "route_preference": {"type": "string", "enum": ["Shortest", "Scenic"]}}}
CONVERT = {"type": "object", "properties": {
    "value": {"type": "number"},
    "from_unit": {"type": "string", "enum": ["celsius", "fahrenheit", "kelvin"]},
    "to_unit": {"type": "string", "enum": ["celsius", "fahrenheit", "kelvin"]}}}
STOCKS = {"type": "object", "properties": {
    "company": {"type": "string"},
    "duration": {"type": "string",
                 "description": "Time duration, e.g., '1 week', '2 weeks', '1 month'."}}}
CLOCK = {"type": "object", "properties": {
    "city": {"type": "string"},
    "format": {"type": "string", "description": "Either '12h' or '24h'."}}}


def _calls(call: tuple[str, dict[str, Any]], question: str, schema: dict[str, Any],
           limit: int = 8) -> list[tuple[str, dict[str, Any]]]:
    return option_calls([call], question, {call[0]: schema}, limit=limit,
                        valid=lambda name, arguments: True)


@pytest.mark.parametrize(("options", "question", "listed"), [
    (["ascending", "descending"], "Sort them in both ascending and descending order.",
     ["ascending", "descending"]),
    # phrases, stemmed: "months" is "six_months"'s "months"; "year" is not "five years"'
    (["six_months", "year", "five_years"],
     "Rain in the Amazon for the last six months, the last year, and the last five years?",
     ["six_months", "year", "five_years"]),
    # options differing only in case are read as written
    (["AA", "Aa", "aa"], ("the frequency of the homozygous dominant genotype (AA), "
                          "heterozygous genotype (Aa), and homozygous recessive genotype (aa)"),
     ["AA", "Aa", "aa"]),
    # the list, not the first mention far before it
    (["Shortest", "Scenic"], ("What is the shortest distance from New York to Miami, "
                              "considering both the shortest and scenic route preferences?"),
     ["Shortest", "Scenic"]),
    (["12h", "24h"], "The time in Paris in 24h or 12h format", ["24h", "12h"]),
    # an option written as a path is looked for by its last part
    (["Europe/London", "Europe/Paris"], "The time in London and Paris", ["Europe/London",
                                                                         "Europe/Paris"]),
])
def test_options_listed_side_by_side_are_found(options: list[str], question: str,
                                               listed: list[str]) -> None:
    assert named_in_list(options, question) == listed


@pytest.mark.parametrize(("options", "question"), [
    # a conversion's two sides are one call
    (["celsius", "fahrenheit", "kelvin"], "Convert 30 degrees celsius to fahrenheit."),
    (["celsius", "fahrenheit", "kelvin"], "Is 300 kelvin warmer than 30 celsius?"),
    # one option, said twice
    (["ascending", "descending"], "Sort it ascending, then show it ascending again."),
    # far apart, no list
    (["ascending", "descending"], ("Sort the first list in ascending order please, and for "
                                   "the big second one that I sent yesterday use descending.")),
    # side by side but not joined as a list
    (["Shortest", "Scenic"], "The shortest scenic route"),
])
def test_options_not_listed_are_not_found(options: list[str], question: str) -> None:
    assert named_in_list(options, question) == []


def test_each_further_option_gets_the_call_once() -> None:
    added = _calls(("sort", {"list": [3, 1], "order": "ascending"}),
                   "Sort [3, 1] in both ascending and descending order.", SORT)
    assert added == [("sort", {"list": [3, 1], "order": "descending"})]


def test_the_option_the_call_holds_is_matched_up_to_case_and_kept() -> None:
    added = _calls(("route", {"start": "NYC", "end": "LA", "route_preference": "Shortest"}),
                   "From NYC to LA, considering both the shortest and scenic routes.", ROUTE)
    assert added == [("route", {"start": "NYC", "end": "LA", "route_preference": "Scenic"})]


def test_options_differing_only_in_case_keep_their_case() -> None:
    question = ("Frequency of genotypes AA, Aa and aa when the dominant allele's frequency "
                "is 0.7?")
    added = _calls(("genotype", {"allele_frequency": 0.7, "genotype": "AA"}), question,
                   GENOTYPE)
    assert [a["genotype"] for _, a in added] == ["Aa", "aa"]


def test_no_call_where_the_call_holds_no_listed_option() -> None:
    question = "Rain in the Amazon for the last six months and the last five years?"
    assert _calls(("rain", {"location": "Amazon", "time_frame": "year"}), question,
                  RAIN) == []


def test_examples_a_description_quotes_are_not_every_option() -> None:
    question = "Stock prices of Apple over 1 week and 2 weeks respectively"
    assert _calls(("stocks", {"company": "Apple", "duration": "1 week"}), question,
                  STOCKS) == []


def test_options_a_description_quotes_are_listed_too() -> None:
    added = _calls(("clock", {"city": "Paris", "format": "24h"}),
                   "The time in Paris in 24h and 12h format", CLOCK)
    assert added == [("clock", {"city": "Paris", "format": "12h"})]


def test_added_calls_respect_the_limit_and_the_validator() -> None:
    question = "Rain for the last six months, the last year, and the last five years?"
    call = ("rain", {"location": "Amazon", "time_frame": "year"})
    assert len(_calls(call, question, RAIN, limit=2)) == 1
    refused = option_calls([call], question, {"rain": RAIN}, limit=8,
                           valid=lambda name, arguments: arguments["time_frame"] != "six_months")
    assert refused == [("rain", {"location": "Amazon", "time_frame": "five_years"})]
