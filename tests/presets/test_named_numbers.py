"""Numbers the question gives a parameter by its name (``named_numbers``)."""

from __future__ import annotations

from typing import Any

import pytest

from tooluse.messages import Message, Request, ToolSpec, ToolUseBlock
from tooluse.presets.en_bfcl.call_edits import call_adjuster
from tooluse.presets.en_bfcl.named_numbers import named_numbers


def numeric(*names: str, kind: str = "integer", **others: Any) -> dict[str, Any]:
    return {"type": "object", "required": list(names),
            "properties": {**{n: {"type": kind} for n in names}, **others}}


@pytest.mark.parametrize(("schema", "question", "written", "placed"), [
    # BFCL simple_python_43: the number after "a current of" is the current's.
    (numeric("current", "distance"), "Calculate the magnetic field strength 10 meters away "
     "from a long wire carrying a current of 20 Amperes.",
     {"current": 10, "distance": 20}, {"current": 20, "distance": 10}),
    # simple_python_223: two labelled numbers; the third parameter takes what is left.
    (numeric("total", "extroverts", "introverts"), "Find social behaviors and patterns in a "
     "group size of 50 with extroverted members being 15 and introverted members being 35.",
     {"total": 15, "extroverts": 35, "introverts": 50},
     {"total": 50, "extroverts": 15, "introverts": 35}),
    # multiple_31: "width of 7 units and length of 10 units".
    (numeric("width", "length"), "What is the area and perimeter of a rectangle with width "
     "of 7 units and length of 10 units?", {"width": 10, "length": 7},
     {"width": 7, "length": 10}),
    # multiple_159: "covers" names coverage_rate, the word a beginning of the name's.
    (numeric("coverage_rate", "length", "height"), "Calculate the total quantity of paint "
     "needed to cover a wall of 30 feet by 12 feet using a specific brand that covers 400 "
     "square feet per gallon.", {"coverage_rate": 12, "length": 30, "height": 400},
     {"coverage_rate": 400, "length": 30, "height": 12}),
    # simple_python_234: an ordinal before the parameter's word, for a number the model made up.
    (numeric("century", region={"type": "string"}), "Find important Wars in European "
     "history during the 19th century.", {"century": 1871, "region": "Western"},
     {"century": 19, "region": "Western"}),
    # The word right after the number names it.
    (numeric("days", "limit"), "Show 3 results for the next 5 days",
     {"days": 3, "limit": 5}, {"days": 5, "limit": 3}),
])
def test_a_number_labelled_by_a_parameters_name_goes_there(
        schema: dict[str, Any], question: str, written: dict[str, Any],
        placed: dict[str, Any]) -> None:
    assert named_numbers(written, schema, question) == placed


@pytest.mark.parametrize(("schema", "question", "written"), [
    # "for" makes 10 another quantity than the acceleration (parallel_multiple_62).
    (numeric("acceleration", "time"), "It accelerates at a rate of 2 m/s^2 and keeps this "
     "acceleration for 10 seconds.", {"acceleration": 2, "time": 10}),
    # A word right after a number is that number's label, not the next one's (multiple_21).
    (numeric("frequency", "duration"), "I want to generate a sound of 440Hz frequency for 5 "
     "seconds.", {"frequency": 440, "duration": 5}),
    # "per time period" is no time (simple_python_131).
    (numeric("time", "n", principal={"type": "number"}), "a principal of 10000, and the "
     "number of times interest applied per time period is 4 and the time the money is "
     "invested for 10 years", {"principal": 10000, "time": 10, "n": 4}),
    # Parameters' words in a list, numbers after them "respectively" (simple_python_10).
    (numeric("base", "height"), "the lengths of its base and height as 6cm and 10cm.",
     {"base": 6, "height": 10}),
    # More numbers than the tool's numeric parameters: a question for several calls
    # (parallel_19).
    (numeric("loan_amount", "loan_term"), "a loan amount of 400000 with a loan term of 15 "
     "years, 20 years and 30 years", {"loan_amount": 400000, "loan_term": 20}),
    # A percentage and a number with a scale are written otherwise (0.03, 213000000).
    (numeric("rate", "years", kind="number"), "at a rate of 3% for 5 years",
     {"rate": 0.03, "years": 5}),
    (numeric("population", "year"), "a population of 213 million in 2022",
     {"population": 213000000, "year": 2022}),
    # A word two parameters share labels neither.
    (numeric("start_year", "end_year"), "from year 1990 until year 2000",
     {"start_year": 2000, "end_year": 1990}),
    # A number the question does not write may be the parameter's, worked out (not an
    # ordinal's place).
    (numeric("height", "weight"), "height of 5 feet 10 inches, weight of 150",
     {"height": 70, "weight": 150}),
])
def test_a_number_stays(schema: dict[str, Any], question: str,
                        written: dict[str, Any]) -> None:
    assert named_numbers(written, schema, question) == written


def test_an_integer_parameter_takes_no_fraction_and_booleans_are_no_numbers() -> None:
    schema = numeric("count", "flag", other={"type": "number"})
    schema["properties"]["flag"] = {"type": "boolean"}
    assert named_numbers({"count": 2, "other": 2.5}, schema, "2 and a count of 2.5") \
        == {"count": 2, "other": 2.5}
    assert named_numbers({"flag": True}, schema, "flag 1") == {"flag": True}


def test_the_call_edit_is_on_by_its_flag_and_kept_only_if_the_call_validates() -> None:
    schema = numeric("current", "distance")
    schema["properties"]["current"]["maximum"] = 15
    tool = ToolSpec(name="calculate_magnetic_field", description="Magnetic field strength.",
                    input_schema=schema)
    question = "10 meters away from a wire carrying a current of 20 Amperes"
    request = Request(messages=[Message(role="user", content=question)], tools=[tool])
    block = ToolUseBlock(id="toolu_1", name=tool.name, input={"current": 10, "distance": 20})
    off = call_adjuster(request, optional=False, percent=False)
    assert off(block)[0].input == {"current": 10, "distance": 20}
    on = call_adjuster(request, optional=False, percent=False, named_numbers=True)
    # A current of 20 is over this schema's maximum: the edit is not kept.
    assert on(block)[0].input == {"current": 10, "distance": 20}
    del schema["properties"]["current"]["maximum"]
    tool = tool.model_copy(update={"input_schema": schema})
    on = call_adjuster(request.model_copy(update={"tools": [tool]}), optional=False,
                       percent=False, named_numbers=True)
    assert on(block)[0].input == {"current": 20, "distance": 10}
