"""Booleans the question asks for (tooluse.presets.en_bfcl.flags)."""

from __future__ import annotations

from tooluse.presets.en_bfcl.flags import asked_flags

SCHEMA = {"type": "object", "properties": {
    "location": {"type": "string"}, "include_human_impact": {"type": "boolean"},
    "avoid_tolls": {"type": "boolean"}, "full_text": {"type": "boolean"},
    "verbose": {"type": "boolean"}}}


def test_a_boolean_the_question_speaks_of_is_true() -> None:
    question = "Predict the forest growth in Yellowstone for 5 years including human impact."
    assert asked_flags({"location": "Yellowstone", "include_human_impact": False}, SCHEMA,
                       question) == {"location": "Yellowstone", "include_human_impact": True}
    # Any form of the word: "avoided" for avoid_tolls.
    assert asked_flags({"avoid_tolls": False}, SCHEMA,
                       "The fastest route with toll roads avoided.") == {"avoid_tolls": True}


def test_a_negation_right_before_makes_it_false() -> None:
    question = "Find the court case 123456 in Texas. Don't return full text"
    assert asked_flags({"full_text": True}, SCHEMA, question) == {"full_text": False}
    assert asked_flags({"include_human_impact": True}, SCHEMA,
                       "Forest growth without the human impact") == {
        "include_human_impact": False}
    # A "no" far from the word is not its negation ("Case No 28473 ... their history").
    assert asked_flags({"include_human_impact": False}, SCHEMA,
                       "Case No 28473 and 64725 with the human impact") == {
        "include_human_impact": True}


def test_a_boolean_the_question_does_not_speak_of_is_left_alone() -> None:
    args = {"location": "Paris", "verbose": False, "full_text": True}
    assert asked_flags(args, SCHEMA, "Weather in Paris") == args
    assert asked_flags(args, {"type": "object"}, "verbose full text") == args
    assert asked_flags(args, None, "verbose") == args
