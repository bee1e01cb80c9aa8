"""Optional parameters left out whose option the question names
(tooluse.presets.en_bfcl.named_options)."""

from __future__ import annotations

from typing import Any

import pytest

from tooluse.presets.en_bfcl.named_options import named_options


def _schema(required: list[str], **props: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": required}


QUADRATIC = _schema(
    ["a", "b", "c"], a={"type": "integer"}, b={"type": "integer"}, c={"type": "integer"},
    root_type={"type": "string", "description": "The type of roots to return: 'real' for "
               "real roots, 'all' for both real and complex roots. Default value is 'real'."})
FLIGHT = _schema(
    ["departure_location", "destination_location"],
    departure_location={"type": "string"}, destination_location={"type": "string"},
    direct_flight={"type": "boolean", "description": "Only direct flights. Default false."},
    refundable={"type": "boolean"})
GAME = _schema(["game_name"], game_name={"type": "string"}, condition={
    "type": "string", "enum": ["New", "Like New", "Used", "Fair", "Poor"],
    "description": "The condition of the game. Default is 'Used'."})
EXPORTS = _schema(["botId"], botId={"type": "string"}, filterName={
    "type": "string", "description": "Possible values are 'Bot', 'BotLocale', or "
    "'CustomVocabulary'."})
RESCHEDULE = _schema(["identifier"], identifier={"type": "string"}, timezone={
    "type": "string", "enum": ["UTC", "Asia/Tokyo", "America/New_York", "Europe/London"],
    "default": "UTC", "description": "The Olson timezone identifier, such as 'Asia/Tokyo'."})
REPORT = _schema(["crime"], crime={"type": "string"}, detail_level={
    "type": "string", "enum": ["basic", "detailed"],
    "description": "How detailed of a report to return. Optional, default is 'basic'."})


@pytest.mark.parametrize(("arguments", "schema", "question", "tool", "added"), [
    # A quoted option of the description, written as a word of the question.
    ({"a": 3, "b": -11, "c": -4}, QUADRATIC,
     "Find all the roots of a quadratic equation given coefficients a = 3, b = -11, c = -4.",
     "solve_quadratic", {"root_type": "all"}),
    # A boolean whose name's word the question says.
    ({"departure_location": "San Francisco", "destination_location": "London"}, FLIGHT,
     "Book a direct flight from San Francisco to London", "flight.book",
     {"direct_flight": True}),
    # ... false with a negation right before it.
    ({"departure_location": "Paris", "destination_location": "Rome"}, FLIGHT,
     "A flight from Paris to Rome, not refundable", "flight_book", {"refundable": False}),
    # An enum member, the longer one of two the question writes ("like new" holds "new").
    ({"game_name": "Super Mario Bros."}, GAME,
     "Find the value of a vintage Super Mario Bros. game from 1985 like new.",
     "game_valuation", {"condition": "Like New"}),
    # Any form of the word: "in detail" for "detailed".
    ({"crime": "theft"}, REPORT,
     "Find out the possible punishments for the crime of theft in California in detail.",
     "crime_statute_lookup", {"detail_level": "detailed"}),
    # An option written as a path, by its last part: "London time" is Europe/London.
    ({"identifier": "Bob-123"}, RESCHEDULE,
     "Reschedule event 'Bob-123' to November 1, 2023 at 4pm London time", "reschedule",
     {"timezone": "Europe/London"}),
])
def test_an_option_the_question_names_is_added(arguments: dict[str, Any],
                                               schema: dict[str, Any], question: str,
                                               tool: str, added: dict[str, Any]) -> None:
    assert named_options(arguments, schema, question, tool) == {**arguments, **added}


@pytest.mark.parametrize(("arguments", "schema", "question", "tool"), [
    # "flight" is the tool's own word: it says nothing of direct_flight.
    ({"departure_location": "SF", "destination_location": "London"}, FLIGHT,
     "Book a flight from SF to London", "flight.book"),
    # "bot" is another parameter's word (botId), not the option 'Bot'.
    ({"botId": "my-bot-id"}, EXPORTS,
     "Retrieve the list of exports for my bot 'my-bot-id'", "list_exports"),
    # The default: leaving the parameter out says the same.
    ({"a": 1, "b": 2, "c": 1}, QUADRATIC, "Find the real roots of x^2 + 2x + 1",
     "solve_quadratic"),
    ({"crime": "theft"}, REPORT, "A basic report on theft", "crime_statute_lookup"),
    # Two options the question writes: which one is not said.
    ({"game_name": "Zelda"}, GAME, "Is a used Zelda worth more than a new one?",
     "game_valuation"),
    # A path's last part is no option's whole name when another option is written too.
    ({"identifier": "x"}, RESCHEDULE, "Move x from Tokyo time to London time", "reschedule"),
    # No option written at all.
    ({"game_name": "Zelda"}, GAME, "What is Zelda worth?", "game_valuation"),
])
def test_nothing_is_added_where_the_question_does_not_name_one_option(
        arguments: dict[str, Any], schema: dict[str, Any], question: str,
        tool: str) -> None:
    assert named_options(arguments, schema, question, tool) == arguments


def test_a_parameter_the_call_has_or_a_required_one_is_left_alone() -> None:
    # The model's own value stays (asked_flags and the other edits read it).
    arguments = {"departure_location": "SF", "destination_location": "London",
                 "direct_flight": False}
    assert named_options(arguments, FLIGHT, "a direct flight from SF to London",
                         "flight.book") == arguments
    required = _schema(["mode"], mode={"type": "string", "enum": ["fast", "slow"]})
    assert named_options({}, required, "the fast mode", "run") == {}
    # No schema to read.
    assert named_options({"x": 1}, None, "all", "t") == {"x": 1}
    assert named_options({"x": 1}, {"type": "object"}, "all", "t") == {"x": 1}
