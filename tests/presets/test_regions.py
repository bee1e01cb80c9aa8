"""regions: a city written with its state where the parameter asks for "City, State"."""

from __future__ import annotations

from typing import Any

import pytest

from tooluse.messages import Message, Request, TextBlock, ToolSpec, ToolUseBlock
from tooluse.presets.en_bfcl.call_edits import call_adjuster
from tooluse.presets.en_bfcl.regions import asks_for_state, with_region


def _location(description: str) -> dict[str, Any]:
    return {"type": "object", "properties": {
        "location": {"type": "string", "description": description},
        "unit": {"type": "string"}}}


@pytest.mark.parametrize(("description", "form"), [
    ("The city and state, e.g. San Francisco, CA", "code"),
    ("The location, for instance Boston, MA.", "code"),
    ("City and state of the store.", "code"),
    ("Location in the format City, State.", "code"),
    ("The city, e.g. Denver, Colorado", "name"),
    ("The city, e.g. London, UK", None),  # not a US state
    ("The city name, e.g. Paris.", None),
])
def test_asks_for_state_reads_the_description(description: str, form: str | None) -> None:
    assert asks_for_state({"type": "string", "description": description}) == form
    assert asks_for_state({"type": "integer", "description": description}) is None


def test_with_region_completes_a_known_city_only() -> None:
    schema = _location("The city and state, e.g. San Francisco, CA")
    assert with_region({"location": "Boston", "unit": "F"}, schema) == {
        "location": "Boston, MA", "unit": "F"}
    assert with_region({"location": "Boston, MA"}, schema) == {"location": "Boston, MA"}
    assert with_region({"location": "Springfield"}, schema) == {"location": "Springfield"}
    assert with_region({"location": "Lyon"}, schema) == {"location": "Lyon"}
    spelled = _location("The city, e.g. Denver, Colorado")
    assert with_region({"location": "Seattle"}, spelled) == {"location": "Seattle, Washington"}
    plain = _location("The city name.")
    assert with_region({"location": "Boston"}, plain) == {"location": "Boston"}


def test_with_region_writes_the_place_whole_as_the_question_writes_it() -> None:
    schema = _location("The location, in the format of 'City, State (abbr)'.")
    ask = "What is the temperature going to be in Bangkok, Thailand. I prefer fahrenheit."
    assert with_region({"location": "Bangkok"}, schema, ask) == {
        "location": "Bangkok, Thailand"}
    # The region alone, in any script.
    assert with_region({"location": "MG"}, schema, "Qual a temperatura em Divinópolis, MG?") \
        == {"location": "Divinópolis, MG"}
    # "City, Country" asked in so many words; a trailing comma ends the place.
    country = _location("The location, in the format of 'City, Country'.")
    assert with_region({"location": "India"}, country, "in Hyderabad, India, in Celsius") \
        == {"location": "Hyderabad, India"}
    # A parameter that asks for a city alone, or a value the question does not place.
    plain = _location("The city name.")
    assert with_region({"location": "Bangkok"}, plain, ask) == {"location": "Bangkok"}
    assert with_region({"location": "Lyon"}, schema, ask) == {"location": "Lyon"}
    # Not a piece of a longer address ("12 Elm Street, Springfield, IL, USA").
    assert with_region({"location": "Springfield"}, schema,
                       "from 12 Elm Street, Springfield, IL, USA") == {
        "location": "Springfield"}


def test_the_call_adjuster_completes_the_city_when_asked() -> None:
    tool = ToolSpec(name="weather", description="Weather.",
                    input_schema=_location("The city and state, e.g. San Francisco, CA"))
    request = Request(messages=[Message(role="user", content=[
        TextBlock(text="weather today in Boston in fahrenheit?")])], tools=[tool])
    block = ToolUseBlock(id="t1", name="weather", input={"location": "Boston"})
    on = call_adjuster(request, optional=False, percent=False, regions=True)
    off = call_adjuster(request, optional=False, percent=False)
    assert on(block)[0].input == {"location": "Boston, MA"}
    assert off(block)[0].input == {"location": "Boston"}


def test_a_world_city_takes_its_country_where_city_country_is_asked() -> None:
    schema = {"type": "object", "properties": {"location": {
        "type": "string", "description": "The location, in the format of 'City, State "
        "(abbr)', such as 'San Francisco, CA' if State for the city exists. 'City, Country' "
        "if State for the city doesn't exist."}}}
    assert with_region({"location": "Tel Aviv"}, schema) == {"location": "Tel Aviv, Israel"}
    assert with_region({"location": "moscow"}, schema) == {"location": "moscow, Russia"}
    # A US city still takes its state; a city of neither table is left alone.
    assert with_region({"location": "Boston"}, schema) == {"location": "Boston, MA"}
    assert with_region({"location": "Lang Son"}, schema) == {"location": "Lang Son"}
    # Only where the country is asked for in so many words.
    plain = {"type": "object", "properties": {"location": {
        "type": "string", "description": "The city and state, e.g. San Francisco, CA"}}}
    assert with_region({"location": "Tel Aviv"}, plain) == {"location": "Tel Aviv"}


def test_known_places_are_the_tables_cities_states_and_countries() -> None:
    from tooluse.presets.en_bfcl.regions import known_place

    for place in ("Boston", "san francisco", "California", "London", "China", "USA"):
        assert known_place(place), place
    for other in ("Sushi", "The Thinker", "Boston Celtics", "rental agreement", ""):
        assert not known_place(other), other


def test_tool_naming_marks_place_parameters_only_when_asked() -> None:
    from tooluse.presets.en_bfcl.choices import tool_naming

    spec = ToolSpec(name="get_restaurant", input_schema={
        "type": "object", "required": ["cuisine", "location"], "properties": {
            "cuisine": {"type": "string"}, "location": {"type": "string"},
            "departureCity": {"type": "string"}, "condition": {"type": "string"}}})
    plain = tool_naming(spec)
    assert plain.places == frozenset() and not plain.distinct
    assert "restaurant" in plain.words and plain.required == {"cuisine", "location"}
    distinct = tool_naming(spec, names=False, distinct=True)
    assert distinct.places == {"location", "departureCity"} and distinct.distinct
    assert distinct.words == frozenset()
