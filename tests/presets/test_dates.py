"""dates: dates read as users write them, written as the parameter asks."""

from __future__ import annotations

from typing import Any

import pytest

from tooluse.messages import Message, Request, TextBlock, ToolSpec, ToolUseBlock
from tooluse.presets.en_bfcl.call_edits import call_adjuster
from tooluse.presets.en_bfcl.dates import date_format, dated, dates_in, moments, times_in


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
    ("The date of the trip.", None),
    # With a time.
    ("in ISO-8601 format (e.g., 'YYYY-MM-DDTHH:MM:SSZ')", "%Y-%m-%dT%H:%M:%SZ"),
    ("in the format of 'YYYY-MM-DD HH:mm:ss'.", "%Y-%m-%d %H:%M:%S"),
    ("The departure time in the format of 'dd/mm/yyyy HH:MM'.", "%d/%m/%Y %H:%M"),
    ("in ISO-8601 format, such as '2023-04-15T13:45:00Z'.", "%Y-%m-%dT%H:%M:%SZ"),
    ("ISO-8601 format (e.g., 'YYYY-MM-DDTHH:MM:SSZ'). Timezone is not included and should "
     "be specified separately.", "%Y-%m-%dT%H:%M:%S"),
    # Not written as this writes it: twelve hours, fractions, an offset.
    ("in the format 'YYYY-MM-DD HH:MM AM'", None),
    ("in the format 'YYYY-MM-DDTHH:MM:SS.sss'", None),
    ("in the format 'YYYY-MM-DDTHH:MM:SS+hh:mm'", None),
    ("in the format 'YYYY-MM-DD HH'", None),
    # An example is a format only where the description names ISO.
    ("The day, such as '2023-04-15'.", None),
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
    assert dated({"departure_time": "Paris"}, flight, question) == {"departure_time": "Paris"}


@pytest.mark.parametrize(("text", "times"), [
    ("at 16:00 - 18:00", ["16:00:00", "18:00:00"]),
    ("to next Thursday at 4:30 PM?", ["16:30:00"]),
    ("at 8pm London time, or 9 a.m.", ["20:00:00", "09:00:00"]),
    ("on the 12th of March 2023 at 3 in the afternoon", ["15:00:00"]),
    ("at 11 at night, or at noon, or 12 am", ["23:00:00", "12:00:00", "00:00:00"]),
    ("2021-04-15T13:45:00Z", ["13:45:00"]),
    ("a score of 4.5 stars, 3 amps, version 3.1.0, 16:00 pm", []),
])
def test_times_in_reads_times_of_day(text: str, times: list[str]) -> None:
    assert [t.isoformat() for _, _, t in times_in(text)] == times


@pytest.mark.parametrize(("text", "asked"), [
    # Counted from the day the text says today is, the weekday as the user names it.
    ("available tomorrow, today is 20230929", ["2023-09-30"]),
    ("the upcoming Wednesday, today is Monday April 25th 2023?", ["2023-04-27"]),
    ("on the upcoming Saturday? Today is Tuesday April 25th 2023", ["2023-04-29"]),
    ("to next Thursday at 4:30 PM? Today is monday 2022-10-20", ["2022-10-30 16:30:00"]),
    ("for today, yesterday, and the day before yesterday? Today is May 5, 2023",
     ["2023-05-05", "2023-05-04", "2023-05-03"]),
    ("in 3 days or last Friday; today is Wednesday, 2024-01-10", ["2024-01-13", "2024-01-05"]),
    # Today's date alone is the date asked for.
    ("What is on? Today is May 5, 2023", ["2023-05-05"]),
    # Without today's date, no day is counted.
    ("available tomorrow at 9am", []),
    # A time goes with the date it follows or comes before, or with the only date.
    ("to November 1, 2023 at 4pm London time", ["2023-11-01 16:00:00"]),
    ("at 5 pm on the 3rd of May 2023", ["2023-05-03 17:00:00"]),
    ("book a table for 7:30pm, for 4 people, on June 1, 2023", ["2023-06-01 19:30:00"]),
    ("on June 1, 2023 or June 2, 2023 at 9am", ["2023-06-01", "2023-06-02 09:00:00"]),
])
def test_moments_are_the_dates_asked_for_with_their_times(text: str,
                                                          asked: list[str]) -> None:
    assert [str(m.date) + (f" {m.time}" if m.time else "") for m in moments(text)] == asked


FLIGHT = {"type": "object", "required": ["departure_time"], "properties": {
    "departure_time": {"type": "string", "description": "In the format of 'dd/mm/yyyy HH:MM'."},
    "return_time": {"type": "string", "description": "In the format of 'dd/mm/yyyy HH:MM'."}}}
EVENT = {"type": "object", "properties": {"new_datetime": {
    "type": "string", "description": "In ISO-8601 format, such as '2023-04-15T13:45:00Z'."}}}


@pytest.mark.parametrize(("schema", "value", "question", "written"), [
    # A date without the time its format asks for takes the question's time for it.
    (FLIGHT, "20/06/2022", "A flight on the 20th of June 2022 at 5 in the afternoon?",
     "20/06/2022 17:00"),
    # A time alone, where the question gives one date a time.
    (FLIGHT, "3:00", "Departing on the 12th of March 2023 at 3 in the afternoon.",
     "12/03/2023 15:00"),
    (EVENT, "4pm", "Move it to November 1, 2023 at 4pm", "2023-11-01T16:00:00Z"),
    # A piece of the one date the question writes.
    (WEATHER, "15th", "Weather on the 15th of March, 2024?", "2024-03-15"),
    # Today's date copied, or "today" itself, where the question asks for another day.
    (WEATHER, "2023-04-25", "Rain on the upcoming Wednesday? Today is Monday April 25th 2023",
     "2023-04-27"),
    (WEATHER, "today", "Rain tomorrow? today is 20230929", "2023-09-30"),
    (EVENT, "2022-10-20", "Move it to next Thursday at 4:30 PM? Today is monday 2022-10-20",
     "2022-10-30T16:30:00Z"),
    # Already as asked: kept, with the question's time where it gives one.
    (EVENT, "2021-04-15T13:45:00Z", "Move it to the 15th of April 2021 at 1:45 pm, UTC",
     "2021-04-15T13:45:00Z"),
    (EVENT, "2021-04-15T00:00:00Z", "Move it to the 15th of April 2021 at 1:45 pm, UTC",
     "2021-04-15T13:45:00Z"),
    # A date-time format where the question gives no time: the value stays.
    (FLIGHT, "20/06/2022", "A flight on the 20th of June 2022?", "20/06/2022"),
    # A time alone where the question gives no date that time: the value stays.
    (FLIGHT, "3:00", "A flight at 3 in the afternoon on the 12th or 13th of March.", "3:00"),
])
def test_dated_writes_a_date_and_time_from_what_the_question_says(
        schema: dict[str, Any], value: str, question: str, written: str) -> None:
    key = next(k for k in schema["properties"] if k != "city")
    other = {"city": "Oslo"} if schema is WEATHER else {}
    assert dated({**other, key: value}, schema, question) == {**other, key: written}


def test_a_missing_date_time_is_added_only_with_its_time() -> None:
    optional = {"type": "object", "properties": {
        "city": {"type": "string"}, **{k: v for k, v in FLIGHT["properties"].items()
                                       if k == "return_time"}}}
    with_time = "Back from Rome on June 3, 2023 at 9am"
    assert dated({"city": "Rome"}, optional, with_time) == {
        "city": "Rome", "return_time": "03/06/2023 09:00"}
    assert dated({"city": "Rome"}, optional, "Back from Rome on June 3, 2023") == {
        "city": "Rome"}


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
