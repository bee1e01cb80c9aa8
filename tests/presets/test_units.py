"""stated_units: a unit parameter gets the unit the question writes, not a default."""

from __future__ import annotations

from typing import Any

from tooluse.messages import Message, Request, ToolSpec, ToolUseBlock
from tooluse.presets.en_bfcl.call_edits import call_adjuster
from tooluse.presets.en_bfcl.units import question_unit, stated_units

CIRCLE: dict[str, Any] = {"type": "object", "required": ["radius"], "properties": {
    "radius": {"type": "integer"},
    "unit": {"type": "string", "description": "The unit of the radius. Default is 'cm'."}}}


def test_the_unit_written_after_the_calls_number() -> None:
    question = "What is the circumference of a circle with a radius of 4 inches?"
    assert stated_units({"radius": 4, "unit": "cm"}, CIRCLE, question) == {"unit": "inches"}
    # As the question writes it, joined to the number or not.
    assert stated_units({"radius": 5, "unit": "cm"}, CIRCLE,
                        "the first circle has a radius of 5m, the second 10m") == {"unit": "m"}
    # The unit of this call's number, where the question writes two.
    question = "one circle with a radius of 5 meters and another of 10 feet"
    assert stated_units({"radius": 10, "unit": "cm"}, CIRCLE, question) == {"unit": "feet"}
    assert stated_units({"radius": 5, "unit": "cm"}, CIRCLE, question) == {"unit": "meters"}


def test_the_unit_the_answer_is_asked_in() -> None:
    schema = {"type": "object", "properties": {
        "distance": {"type": "integer"}, "time": {"type": "integer"},
        "to_unit": {"type": "string"}}}
    question = "A car traveled 500 meters in 25 seconds: its speed in km/h?"
    assert stated_units({"distance": 500, "time": 25, "to_unit": "m/s"}, schema,
                        question) == {"to_unit": "km/h"}
    # An enum's member, as the enum writes it.
    weather = {"type": "object", "properties": {
        "location": {"type": "string"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}}
    assert stated_units({"location": "Mariposa, CA", "unit": "celsius"}, weather,
                        "The weather in Mariposa, CA? The temperature in Fahrenheit.") == {
        "unit": "fahrenheit"}
    # The unit given is not the one asked for.
    convert = {"type": "object", "properties": {
        "value": {"type": "number"}, "from_unit": {"type": "string"},
        "to_unit": {"type": "string"}}}
    assert stated_units({"value": 2, "from_unit": "cup", "to_unit": "ml"}, convert,
                        "How many teaspoons are 2 tablespoons in ml?") == {
        "from_unit": "tablespoons"}


def test_where_the_question_writes_both_the_parameter_tells_which() -> None:
    question = ("A triangle has a base of 12 meters and a height of 15 meters: its area in "
                "square meters?")
    arguments = {"base": 12, "height": 15, "unit": "cm"}

    def schema(description: str) -> dict[str, Any]:
        return {"type": "object", "properties": {
            "base": {"type": "integer"}, "height": {"type": "integer"},
            "unit": {"type": "string", "description": description}}}

    assert stated_units(arguments, schema("The unit of measure used."), question) == {
        "unit": "meters"}
    assert stated_units(arguments, schema("The desired unit of the result."), question) == {
        "unit": "square meters"}
    assert stated_units(arguments, schema("The measurement unit for the area."),
                        question) == {}


def test_the_models_unit_stays_where_the_question_states_it() -> None:
    # Up to a plural, or written joined to the number: stated all the same.
    schema = {"type": "object", "properties": {"start": {"type": "string"},
                                               "units": {"type": "string"}}}
    assert stated_units({"start": "Boston", "units": "miles"}, schema,
                        "From Boston to Washington, D.C. in mile?") == {"units": "miles"}
    assert stated_units({"radius": 5, "unit": "cm"}, CIRCLE, "radii of 5cm and 10cm") == {
        "unit": "cm"}


def test_nothing_is_done_without_one_unit_the_question_writes() -> None:
    for question, arguments in [
            ("a radius of 5 cm", {"radius": 5, "unit": "cm"}),  # the model's, written
            ("a radius of 5", {"radius": 5, "unit": "cm"}),  # no unit
            ("a radius of 5 in the garden", {"radius": 5, "unit": "cm"}),  # "in" is no unit
            ("a radius of 5 m", {"radius": 5, "unit": "cm"}),  # one letter apart
            ("5 meters or 5 feet", {"radius": 5, "unit": "cm"}),  # two units
            ("a radius of 5 apples", {"radius": 5, "unit": "cm"})]:  # no unit either
        assert stated_units(arguments, CIRCLE, question) == {}, question
    # Parameters that are no unit; an enum without the unit.
    schema = {"type": "object", "properties": {
        "radius": {"type": "integer"}, "label": {"type": "string"},
        "unit": {"type": "string", "enum": ["cm", "mm"]}}}
    assert stated_units({"radius": 5, "label": "cm", "unit": "mm"}, schema,
                        "a radius of 5 inches") == {}
    assert stated_units({"unit": "cm"}, None, "5 inches") == {}
    assert question_unit("in Celsius or in Fahrenheit", set()) is None


def test_the_call_edit_keeps_the_unit_the_optional_filter_would_leave_out() -> None:
    tool = ToolSpec(name="geometry.circumference", description="Circumference.",
                    input_schema=CIRCLE)
    request = Request(messages=[Message(role="user",
                                        content="Circles of radius 5m and 10m?")],
                      tools=[tool])
    block = ToolUseBlock(id="toolu_1", name=tool.name, input={"radius": 10, "unit": "cm"})
    on = call_adjuster(request, optional=True, percent=False, units=True)
    edited, dropped = on(block)
    assert (edited.input, dropped) == ({"radius": 10, "unit": "m"}, 0)
    assert edited.origin is not None and [
        (c.parameter, c.before, c.after, c.rule) for c in edited.origin.changes] == [
        ("unit", "cm", "m", "stated_units")]
    # Without it the model's "cm", which the question does not write, is left out.
    off = call_adjuster(request, optional=True, percent=False)
    assert off(block)[0].input == {"radius": 10}
    # The model's unit, which the question writes only joined to a number, is kept.
    request = request.model_copy(update={"messages": [Message(
        role="user", content="Circles of radius 5cm and 10cm?")]})
    assert call_adjuster(request, optional=True, percent=False,
                         units=True)(block)[0].input == {"radius": 10, "unit": "cm"}
    # A unit the schema refuses is not written.
    narrow = {**CIRCLE, "properties": {**CIRCLE["properties"], "unit": {
        "type": "string", "maxLength": 1}}}
    request = request.model_copy(update={"tools": [tool.model_copy(
        update={"input_schema": narrow})], "messages": [Message(
            role="user", content="A circle of radius 10 meters?")]})
    block = block.model_copy(update={"input": {"radius": 10, "unit": "c"}})
    assert call_adjuster(request, optional=False, percent=False,
                         units=True)(block)[0].input == {"radius": 10, "unit": "c"}
