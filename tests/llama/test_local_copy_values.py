"""``copy_values`` on the real default model: a value the question gives is copied where
the model alone invents one, and every call still validates."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from tooluse.messages import Message, Request, TextBlock, ToolChoice, ToolSpec

pytestmark = pytest.mark.slow

HOUSE = ToolSpec(name="predict_house_price", description="Predict the price of a house.",
                 input_schema={"type": "object", "properties": {
                     "bedrooms": {"type": "integer", "description": "Number of bedrooms."},
                     "bathrooms": {"type": "integer", "description": "Number of bathrooms."},
                     "area": {"type": "integer", "description": "Area in square feet."},
                     "location": {"type": "string", "description": "City of the house."}},
                     "required": ["bedrooms", "bathrooms", "area", "location"]})
QUESTION = ("Predict the price of a house in San Francisco with 3 bedrooms, 2 bathrooms "
            "and area of 1800 square feet.")


def call(copy: bool) -> tuple[dict[str, Any], Any]:
    pytest.importorskip("llama_cpp")
    from tooluse.backends.local import LocalBackend
    from tooluse.errors import BackendError

    try:
        backend = LocalBackend(n_threads=2, copy_values=copy, decide=False, score_tools=False,
                               optional_from_conversation=False, max_tools=0,
                               no_repeat=False, more_calls=False, fan_out=False)
    except BackendError as exc:
        pytest.skip(str(exc))
    response = backend.complete(Request(
        messages=[Message(role="user", content=[TextBlock(text=QUESTION)])], tools=[HOUSE],
        tool_choice=ToolChoice(type="any"), max_tokens=96))
    assert len(response.tool_uses) == 1
    arguments = dict(response.tool_uses[0].input)
    jsonschema.validate(arguments, HOUSE.input_schema)
    return arguments, backend.text_model.last_end


def test_numbers_of_the_question_are_copied_not_invented() -> None:
    alone, _ = call(copy=False)
    # The model alone invents the counts (it writes 100 bedrooms and 200 bathrooms)...
    assert (alone["bedrooms"], alone["bathrooms"]) != (3, 2)
    copied, end = call(copy=True)
    # ...and with copy_values takes the ones the question gives.
    assert (copied["bedrooms"], copied["bathrooms"]) == (3, 2)
    assert copied["area"] == 1800 and copied["location"] == "San Francisco"
    assert end.timings["copied_values"] >= 1


STOCKS = ToolSpec(name="get_stock_prices", description="Stock prices of companies.",
                  input_schema={"type": "object", "properties": {
                      "companies": {"type": "array", "items": {"type": "string"},
                                    "description": "The companies."},
                      "duration": {"type": "string", "description": "How far back."}},
                      "required": ["companies", "duration"]})
PLAY = ToolSpec(name="spotify_play", description="Play specific tracks from a given artist "
                "for a specific time duration.",
                input_schema={"type": "object", "properties": {
                    "artist": {"type": "string",
                               "description": "The artist whose songs you want to play."},
                    "duration": {"type": "integer", "description": "The duration for which "
                                 "the songs should be played, in minutes."}},
                    "required": ["artist", "duration"]})


def _backend(**options: Any) -> Any:
    pytest.importorskip("llama_cpp")
    from tooluse.backends.local import LocalBackend
    from tooluse.errors import BackendError

    try:
        return LocalBackend(n_threads=2, prompt_cache=False, **options)
    except BackendError as exc:
        pytest.skip(str(exc))


def _calls(backend: Any, question: str, tool: ToolSpec) -> list[dict[str, Any]]:
    response = backend.complete(Request(
        messages=[Message(role="user", content=[TextBlock(text=question)])], tools=[tool],
        tool_choice=ToolChoice(type="any"), max_tokens=128))
    for block in response.tool_uses:
        jsonschema.validate(dict(block.input), tool.input_schema)
    return [dict(block.input) for block in response.tool_uses]


def test_an_array_takes_the_list_the_question_writes() -> None:
    question = "Retrieve stock prices of Microsoft and Google for the last 2 weeks."
    # The model alone writes an empty list of companies...
    (alone,) = _calls(_backend(copy_values=False), question, STOCKS)
    assert alone["companies"] == []
    # ...with copy_values the list the question gives is offered whole, and taken.
    (copied,) = _calls(_backend(copy_values=True), question, STOCKS)
    assert copied["companies"] == ["Microsoft", "Google"]


def test_fan_out_writes_one_call_per_item_of_the_list() -> None:
    question = ("Play songs from the artists Taylor Swift and Maroon 5, with a play time of "
                "20 minutes and 15 minutes respectively, on Spotify.")  # BFCL parallel_0
    alone = _calls(_backend(fan_out=False), question, PLAY)
    assert alone == [{"artist": "Taylor Swift", "duration": 20}]  # the model stops there
    fanned = _calls(_backend(fan_out=True), question, PLAY)
    assert fanned == [{"artist": "Taylor Swift", "duration": 20},
                      {"artist": "Maroon 5", "duration": 15}]


PARK = ToolSpec(name="nature_park_find_nearby", description="Locate nearby nature parks.",
                input_schema={"type": "object", "properties": {
                    "location": {"type": "string", "description": "The city and state, "
                                 "e.g. Boston, MA."},
                    "features": {"type": "array", "description": "Preferred features.",
                                 "items": {"type": "string", "enum": [
                                     "Camping", "Scenic View", "Trails", "Picnic Areas"]}}},
                    "required": ["location", "features"]})  # BFCL multiple_62's tool
WEATHER = ToolSpec(name="get_current_weather", description="The current weather.",
                   input_schema={"type": "object", "properties": {
                       "location": {"type": "string", "description": "The location, in the "
                                    "format of 'City, State (abbr)' or 'City, Country'."}},
                       "required": ["location"]})  # BFCL live_simple_8-3-4's tool


def test_an_array_of_enum_members_takes_the_ones_the_question_names() -> None:
    question = ("Find me the closest nature park that allows camping and has scenic views "
                "in Boston, MA.")
    (alone,) = _calls(_backend(copy_values=False), question, PARK)
    assert sorted(alone["features"]) != ["Camping", "Scenic View"]
    (copied,) = _calls(_backend(copy_values=True), question, PARK)
    assert sorted(copied["features"]) == ["Camping", "Scenic View"]
    # The place is copied with its region (offered whole, "Boston, MA").
    assert copied["location"] == "Boston, MA"


def test_a_place_keeps_the_region_the_question_writes() -> None:
    question = "I want to know weather conditions? I'm at London, UK in fahr"
    (alone,) = _calls(_backend(copy_values=False, city_state=False), question, WEATHER)
    assert alone["location"] == "London"
    # Either technique writes the place whole: copy_values offers it as a span...
    (copied,) = _calls(_backend(copy_values=True, city_state=False), question, WEATHER)
    assert copied["location"] == "London, UK"
    # ...and city_state completes the model's "London" as the question writes it.
    (completed,) = _calls(_backend(copy_values=False, city_state=True), question, WEATHER)
    assert completed["location"] == "London, UK"
