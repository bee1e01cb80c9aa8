"""fan_out: one call per item of a list the user wrote, and no call where there is no list."""

from __future__ import annotations

from typing import Any

import pytest

from tooluse.presets.en_bfcl import EnBfcl
from tooluse.presets.en_bfcl.fan_out import fan_out
from tooluse.language.spans import candidate_values
from tooluse.language.lists import list_around, lists_in

NUMBER = {"type": "object", "properties": {"number": {"type": "integer"}},
          "required": ["number"]}
PLAY = {"type": "object", "properties": {"artist": {"type": "string"},
                                         "duration": {"type": "integer"}}}


def _all_valid(name: str, arguments: dict[str, Any]) -> bool:
    return True


def _fan(calls: list[tuple[str, dict[str, Any]]], question: str,
         schemas: dict[str, Any], limit: int = 8) -> list[tuple[str, dict[str, Any]]]:
    return fan_out(calls, question, schemas, limit=limit, valid=_all_valid)


@pytest.mark.parametrize(("question", "value", "items"), [
    ("Find the factorial of 5,10 and 15.", 5, ["5", "10", "15"]),
    ("Find the factorial of 5, 10, and 15.", 10, ["5", "10", "15"]),
    ("Play Taylor Swift and Maroon 5 on Spotify.", "Maroon 5", ["Taylor Swift", "Maroon 5"]),
    ("Weather in 'Paris' or 'Rome' today", "Rome", ["Paris", "Rome"]),
    ("resistivity of copper and aluminum", "copper", ["copper", "aluminum"]),
    ("Play 20 minutes and 15 minutes of music", 20, ["20", "15"]),
    ("prices in Berlin and Madrid's stores", "Berlin", ["Berlin", "Madrid"]),
    # a capitalised word before lowercase ones, where the value is so written
    ("genes in Homo sapiens and Pan troglodytes?", "Pan troglodytes",
     ["Homo sapiens", "Pan troglodytes"]),
    # dates in digits, year first (BFCL parallel_178)
    ("prices on the dates 2022-01-01 and 2022-02-01?", "2022-01-01",
     ["2022-01-01", "2022-02-01"]),
    ("on 2020/12/25, 2021/1/1 or 2021/01/15", "2021/1/1",
     ["2020/12/25", "2021/1/1", "2021/01/15"]),
])
def test_list_around_finds_the_list_a_value_stands_in(question: str, value: Any,
                                                      items: list[str]) -> None:
    found = list_around(question, value)
    assert found is not None
    assert [item.text for item in found[0]] == items
    assert items[found[1]].lower() == str(value).lower()


@pytest.mark.parametrize(("question", "value"), [
    ("Sum the multiples of 3 between 1 and 1000.", 1),  # a range
    ("Triangle with a base of 10 units and height of 5 units", 10),  # other parameters
    ("Hotels in San Francisco, California", "San Francisco"),  # no final and/or
    ("the price of General Motors today", "General Motors"),  # no list at all
    ("factorial of 7", 8),  # not in the question
    ("from 2022-01-01 to 2022-02-01", "2022-01-01"),  # a span of time, not two dates
])
def test_list_around_finds_no_list(question: str, value: Any) -> None:
    assert list_around(question, value) is None


def test_fan_out_adds_one_call_per_item_left_out() -> None:
    added = _fan([("math.factorial", {"number": 5})], "Find the factorial of 5,10 and 15.",
                 {"math.factorial": NUMBER})
    assert added == [("math.factorial", {"number": 10}), ("math.factorial", {"number": 15})]


def test_fan_out_keeps_the_calls_the_model_wrote() -> None:
    calls = [("math.factorial", {"number": 5}), ("math.factorial", {"number": 15})]
    added = _fan(calls, "Find the factorial of 5,10 and 15.", {"math.factorial": NUMBER})
    assert added == [("math.factorial", {"number": 10})]


def test_respectively_pairs_the_lists_in_step() -> None:
    question = ("Play songs from the artists Taylor Swift and Maroon 5, with a play time of "
                "20 minutes and 15 minutes respectively, on Spotify.")
    added = _fan([("spotify.play", {"artist": "Taylor Swift", "duration": 20})], question,
                 {"spotify.play": PLAY})
    assert added == [("spotify.play", {"artist": "Maroon 5", "duration": 15})]


def test_without_respectively_every_combination() -> None:
    question = "Find the winning percentage of Lakers and Bulls in NBA seasons 2018 and 2020."
    schema = {"type": "object", "properties": {"team": {"type": "string"},
                                               "season": {"type": "integer"}}}
    added = _fan([("win", {"team": "Lakers", "season": 2018})], question, {"win": schema})
    assert sorted(map(str, added)) == sorted(map(str, [
        ("win", {"team": "Lakers", "season": 2020}), ("win", {"team": "Bulls", "season": 2018}),
        ("win", {"team": "Bulls", "season": 2020})]))


def test_no_fan_out_when_the_items_are_the_calls_other_values() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"},
                                               "b": {"type": "integer"}}}
    assert _fan([("gcd", {"a": 96, "b": 128})], "The GCD of 96 and 128", {"gcd": schema}) == []


def test_no_fan_out_for_an_item_named_like_a_parameter() -> None:
    schema = {"type": "object", "properties": {"base": {"type": "integer"},
                                               "height": {"type": "integer"},
                                               "unit": {"type": "string"}}}
    calls = [("area", {"base": 10, "height": 5, "unit": "units"})]
    question = "Find the area of a triangle with a base of 10 units and height of 5 units."
    assert _fan(calls, question, {"area": schema}) == []


def test_no_fan_out_between_two_places() -> None:
    schema = {"type": "object", "properties": {"origin": {"type": "string"},
                                               "destination": {"type": "string"}}}
    calls = [("distance", {"origin": "New York City", "destination": "Washington"})]
    assert _fan(calls, "The distance between New York City and Boston", {"distance": schema}) \
        == []


def test_array_values_are_not_fanned_out() -> None:
    schema = {"type": "object", "properties": {"companies": {"type": "array"}}}
    assert _fan([("prices", {"companies": ["Microsoft"]})], "Prices of Microsoft and Google",
                {"prices": schema}) == []


def test_the_limit_and_the_validator_bound_what_is_added() -> None:
    question = "Find the factorial of 5, 10, 15 and 20."
    calls = [("math.factorial", {"number": 5})]
    assert len(_fan(calls, question, {"math.factorial": NUMBER}, limit=3)) == 2
    added = fan_out(calls, question, {"math.factorial": NUMBER}, limit=8,
                    valid=lambda name, arguments: arguments["number"] != 15)
    assert added == [("math.factorial", {"number": 10}), ("math.factorial", {"number": 20})]


def test_lists_in_gives_each_list_once_with_its_longest_items() -> None:
    text = ("Find the travel time from San Francisco to Los Angeles with stops at Santa "
            "Barbara and Monterey, for 'Age', 'Income' and 'Education'.")
    assert lists_in(text, candidate_values(text, limit=99)) == [
        ["Santa Barbara", "Monterey"], ["Age", "Income", "Education"]]


def test_the_prompt_backend_adds_the_calls_and_skips_what_it_cannot_check() -> None:
    from tooluse.messages import Message, Request, TextBlock, ToolChoice, ToolSpec
    from tooluse.prompting import PromptToolsBackend
    from tooluse.prompting.text_model import TextEnd

    class Scripted:
        """A text model that writes one factorial call."""

        model = "scripted"

        def generate_text(self, messages: Any, **options: Any) -> Any:
            yield ("<function_calls>\n<invoke>\n<tool_name>factorial</tool_name>\n"
                   "<parameters>\n<number>5</number>\n</parameters>\n</invoke>\n")
            yield TextEnd(reason="stop", stop_sequence="</function_calls>")

    def ask(schema: dict[str, Any]) -> list[Any]:
        backend = PromptToolsBackend(Scripted(), grammar=False,  # type: ignore[arg-type]
                                     assist=EnBfcl(only=("fan_out",)))
        response = backend.complete(Request(
            messages=[Message(role="user", content=[TextBlock(
                text="Find the factorial of 5, 10 and 15.")])],
            tools=[ToolSpec(name="factorial", input_schema=schema)],
            tool_choice=ToolChoice(type="auto"), max_tokens=64))
        assert response.stop_reason == "tool_use"
        sources.append([(b.source, b.origin.rule if b.origin else None)
                        for b in response.tool_uses])
        return [b.input for b in response.tool_uses]

    sources: list[list[tuple[str, str | None]]] = []
    assert ask(NUMBER) == [{"number": 5}, {"number": 10}, {"number": 15}]
    # The model wrote the first call; the two others are the rule's, and say so.
    assert sources[-1] == [("model", None), ("added", "fan_out"), ("added", "fan_out")]
    # Schemas jsonschema cannot apply: the model's call stays, nothing unchecked is added.
    for odd in ({"type": "object", "properties": {
                    "number": {"type": "integer", "not": {"type": "dict"}}}},
                {"type": "object", "properties": {"number": {"type": "integer"}},
                 "allOf": [{"$ref": "#/nowhere"}]}):
        assert ask(odd) == [{"number": 5}]


def test_places_written_with_their_region_are_items_of_a_list() -> None:
    from tooluse.presets.en_bfcl.fan_out import list_around

    question = ("Find vegan restaurants in Los Angeles, CA open until 22:00, and then do "
                "the same for San Francisco, CA and Seattle, WA.")
    items, index = list_around(question, "San Francisco, CA") or ([], -1)
    assert [i.text for i in items] == ["San Francisco, CA", "Seattle, WA"] and index == 0
    assert list_around(question, "Los Angeles, CA") is None  # stands alone
    shops = "A music shop in San Francisco, California, and Chicago, Illinois."
    assert [i.text for i in list_around(shops, "San Francisco, California")[0]] == [
        "San Francisco, California", "Chicago, Illinois"]
    assert list_around("What is the weather in Paris, France?", "Paris, France") is None


def test_two_lists_of_names_and_dates_give_every_combination() -> None:
    """"Microsoft and Apple ... on the dates 2022-01-01 and 2022-02-01": four calls."""
    schema = {"type": "object", "properties": {"company": {"type": "string"},
                                               "date": {"type": "string"}}}
    question = ("What were the closing stock prices for Microsoft and Apple on NASDAQ on the "
                "dates 2022-01-01 and 2022-02-01?")
    added = _fan([("price", {"company": "Microsoft", "date": "2022-01-01"})], question,
                 {"price": schema})
    assert sorted((a["company"], a["date"]) for _, a in added) == [
        ("Apple", "2022-01-01"), ("Apple", "2022-02-01"), ("Microsoft", "2022-02-01")]
