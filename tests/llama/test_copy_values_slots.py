"""``score_enums``: the values a grammar slot allows, enumerated when they are few."""

from __future__ import annotations

from typing import Any

from tooluse.llama.copy_values import _finite_values
from tooluse.messages import ToolChoice, ToolSpec
from tooluse.grammar.tool_calls import tool_call_grammar

TOOL = ToolSpec(name="wash", description="Starts the washer.", input_schema={
    "type": "object", "properties": {
        "mode": {"type": "string", "enum": ["eco", "eco plus", "세탁"]},
        "dry": {"type": "boolean"}, "note": {"type": "string"},
        "minutes": {"type": "integer"}},
    "required": ["mode", "dry", "note", "minutes"]})


def slot(name: str) -> tuple[Any, Any]:
    """The matcher and its state right after ``<name`` (the prefill names the tool)."""
    matcher = tool_call_grammar([TOOL], ToolChoice(type="any"), first="wash").matcher
    state = matcher.initial
    values = {"mode": "eco", "dry": "true", "note": "hi", "minutes": "5"}
    for key, value in values.items():
        if key == name:
            return matcher, matcher.advance(state, f"<{key}".encode())
        state = matcher.advance(state, f"<{key}>{value}</{key}>\n".encode())
    raise AssertionError(name)


def test_enum_members_and_booleans_are_listed_whole() -> None:
    matcher, state = slot("mode")
    assert state
    assert sorted(_finite_values(matcher, state, b">") or []) == sorted(
        [b">eco", b">eco plus", ">세탁".encode()])
    matcher, state = slot("dry")
    assert sorted(_finite_values(matcher, state, b">") or []) == [b">false", b">true"]


def test_free_strings_and_numbers_are_not_enumerated() -> None:
    for name in ("note", "minutes"):
        matcher, state = slot(name)
        assert state
        assert _finite_values(matcher, state, b">") is None


def test_stand_ins_are_not_values() -> None:
    from tooluse.llama.copy_values import _stand_in

    # A type's name is never a value; a bare number is one only where the name says so.
    assert _stand_in(b"string", b"type", words=True)
    assert _stand_in(b"Integer", b"count", words=False)
    assert _stand_in(b"16", b"food_name", words=True)
    assert _stand_in(b"$200", b"base_currency", words=True)
    assert not _stand_in(b"28473", b"case_number", words=True)
    assert not _stand_in(b"546382", b"patientId", words=True)
    assert not _stand_in(b"2021", b"season", words=True)
    # Where only a number fits (an integer), a number is the value.
    assert not _stand_in(b"16", b"food_name", words=False)
    assert not _stand_in(b"chai tea", b"food_name", words=True)


def test_a_value_repeats_when_the_call_holds_it_as_often_as_the_question_writes_it() -> None:
    from tooluse.llama.copy_values import _repeats

    call = b"<invoke>\n<tool_name>get_sculpture_value</tool_name>\n<parameters>\n" \
           b"<sculpture>The Thinker</sculpture>\n"
    once = "What is the value of the sculpture 'The Thinker' by Rodin?"
    assert _repeats(b"The Thinker", call, once)
    # Written twice by the question, it may fill two parameters.
    assert not _repeats(b"The Thinker", call, f"{once} I mean The Thinker.")
    # Not yet in the call, or never written by the question (the model's own value).
    assert not _repeats(b"Rodin", call, once)
    assert not _repeats(b"bronze", call + b"<material>bronze</material>\n", once)
    # Numbers as numbers: "1,000" is 1000.
    numbers = b"<invoke>\n<parameters>\n<start>1000</start>\n"
    assert _repeats(b"1000", numbers, "from 1,000 onwards")
    assert not _repeats(b"1000", numbers, "from 1,000 to 1000")
