"""dates: dates read as users write them, written as the parameter asks."""

from __future__ import annotations

from typing import Any

import pytest

from tooluse.messages import Message, Request, TextBlock, ToolSpec, ToolUseBlock
from tooluse.prompting.call_edits import call_adjuster
from tooluse.prompting.dates import date_format, dated, dates_in


@pytest.mark.parametrize(("text", "dates"), [
    ("the forecast for Oslo on April 11th, 2023?", ["2023-04-11"]),
    ("on the 2nd of march 2023", ["2023-03-02"]),
    ("this weekend, Jun.20,2023.", ["2023-06-20"]),
    ("tomorrow, June01 2023", ["2023-06-01"]),
    ("from 2023 April 4th to April 8th", ["2023-04-04", "2023-04-08"]),
    ("from July 10, 2022 to July 20, 2022", ["2022-07-10", "2022-07-20"]),
    ("starting from 15th October,2023", ["2023-10-15"]),
    ("leaving 16/03/2024 or 2024-03-18", ["2024-03-16", "2024-03-18"]),
    ("on 03/04/2024", []),  # March or April: no telling
    ("in May 2020 for 3 days", []),  # no day
    ("on April 31st, 2023", []),  # no such day
    ("on the 8th of May", []),  # no year anywhere
    # First in the text, a month and day takes the year of the dated one after it.
    ("from April 3rd to April 5th 2023", ["2023-04-03", "2023-04-05"]),
])
def test_dates_in_reads_dates_as_users_write_them(text: str, dates: list[str]) -> None:
    assert [d.isoformat() for _, _, d in dates_in(text)] == dates


@pytest.mark.parametrize(("description", "fmt"), [
    ("The date, in the format of 'YYYY-MM-DD'.", "%Y-%m-%d"),
    ("Start date. The format is MM-DD-YYYY.", "%m-%d-%Y"),
    ("in the format of MM-DD-YYY.", "%m-%d-%Y"),  # a typo seen in the wild
    ("The date (month-day-year) you want", "%m-%d-%Y"),
    ("in the format 'dd/mm/yyyy', such as '15/03/2024'", "%d/%m/%Y"),
    ("in ISO-8601 format (e.g., 'YYYY-MM-DDTHH:MM:SSZ')", None),  # a date and time
    ("The date of the trip.", None),
])
def test_date_format_reads_the_format_a_description_asks_for(description: str,
                                                             fmt: str | None) -> None:
    assert date_format({"type": "string", "description": description}) == fmt


WEATHER = {"type": "object", "required": ["city"], "properties": {
    "city": {"type": "string"},
    "date": {"type": "string", "description": "The date, in the format of 'YYYY-MM-DD'."}}}


def test_dated_writes_the_date_as_asked_and_fills_a_left_out_one() -> None:
    question = "What's the weather in Pacifica on April 11th, 2023?"
    assert dated({"city": "Pacifica", "date": "April 11th, 2023"}, WEATHER, question) == {
        "city": "Pacifica", "date": "2023-04-11"}
    assert dated({"city": "Pacifica"}, WEATHER, question) == {
        "city": "Pacifica", "date": "2023-04-11"}
    # No date in the question, or two: nothing is added.
    assert dated({"city": "Pacifica"}, WEATHER, "Weather in Pacifica?") == {"city": "Pacifica"}
    two = "Weather in Pacifica on April 11th, 2023 or April 12th, 2023?"
    assert dated({"city": "Pacifica"}, WEATHER, two) == {"city": "Pacifica"}
    # A value that is not a date is left as written.
    assert dated({"city": "Pacifica", "date": "today"}, WEATHER, question)["date"] == "today"
    # A schema's own "format": "date" asks for ISO.
    iso: dict[str, Any] = {"type": "object", "properties": {
        "day": {"type": "string", "format": "date"}}}
    assert dated({"day": "the 2nd of march 2023"}, iso, "") == {"day": "2023-03-02"}


def test_a_date_written_without_its_year_takes_the_questions() -> None:
    schema = {"type": "object", "properties": {
        "start": {"type": "string", "description": "Start, in the format of 'YYYY-MM-DD'."},
        "end": {"type": "string", "description": "End, in the format of 'YYYY-MM-DD'."}}}
    question = "The weather in Paris, France from April 3rd to April 5th 2023."
    assert dated({"start": "April 3rd", "end": "April 5th"}, schema, question) == {
        "start": "2023-04-03", "end": "2023-04-05"}
    # A month and day the question does not date is left as written.
    assert dated({"start": "May 1"}, schema, question) == {"start": "May 1"}


def test_a_date_parameter_holding_something_else_keeps_the_date_from_others() -> None:
    flight = {"type": "object", "properties": {
        "departure_time": {"type": "string", "description": "Format dd/mm/yyyy."},
        "return_time": {"type": "string", "description": "Format dd/mm/yyyy."}}}
    question = "A flight from Paris on the 12th of March 2023 at 3 in the afternoon?"
    assert dated({"departure_time": "3:00"}, flight, question) == {"departure_time": "3:00"}


def test_a_date_the_question_does_not_write_is_the_one_it_writes() -> None:
    flight = {"type": "object", "properties": {
        "departure_date": {"type": "string", "description": "The departure date in the "
                           "format of 'dd/mm/yyyy', such as '15/03/2024'."},
        "return_date": {"type": "string", "description": "Format dd/mm/yyyy."}}}
    question = "I need a flight from JFK on the 16th of March 2024, around 14:00."
    # The description's example copied: the question's one date instead.
    assert dated({"departure_date": "15/03/2024"}, flight, question) == {
        "departure_date": "16/03/2024"}
    # With two dates written, or none, which one was meant is not told.
    two = "A flight on the 16th of March 2024, back on the 20th of March 2024."
    assert dated({"departure_date": "15/03/2024"}, flight, two) == {
        "departure_date": "15/03/2024"}
    assert dated({"departure_date": "15/03/2024"}, flight, "A flight tomorrow.") == {
        "departure_date": "15/03/2024"}
    # The other date written held by the other parameter: nothing left to give.
    assert dated({"departure_date": "15/03/2024", "return_date": "16/03/2024"}, flight,
                 question) == {"departure_date": "15/03/2024", "return_date": "16/03/2024"}


def test_the_call_adjuster_writes_dates_only_when_the_call_still_validates() -> None:
    strict = {**WEATHER, "properties": {**WEATHER["properties"], "date": {
        **WEATHER["properties"]["date"], "pattern": "^[A-Z]"}}}
    question = Message(role="user", content=[TextBlock(
        text="What's the weather in Oslo on the 2nd of march 2023?")])
    for schema, expected in ((WEATHER, "2023-03-02"), (strict, "March 2 2023")):
        request = Request(messages=[question], tools=[
            ToolSpec(name="weather", description="Weather.", input_schema=schema)])
        adjust = call_adjuster(request, optional=False, percent=False, dates=True)
        block = ToolUseBlock(id="t1", name="weather",
                             input={"city": "Oslo", "date": "March 2 2023"})
        assert adjust(block)[0].input["date"] == expected
