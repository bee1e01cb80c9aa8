"""written_names: a value the question does not write, replaced by the name it does."""

from __future__ import annotations

from typing import Any

from tooluse.messages import Message, Request, ToolSpec, ToolUseBlock
from tooluse.presets.en_bfcl.call_edits import call_adjuster
from tooluse.presets.en_bfcl.written_names import written_names


def schema(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props}


S = {"type": "string"}
N = {"type": "integer"}
RANKING = schema(team=S, league=S, county=S)


def test_a_name_ending_in_the_parameters_name() -> None:
    question = "What is the ranking of Manchester United in Premier League?"
    assert written_names({"team": "Manchester United", "league": "Manchester City"}, RANKING,
                         question) == {"team": "Manchester United", "league": "Premier League"}
    # Words that start a sentence or ask are no part of the name; plurals count.
    assert written_names({"county": "CA"}, RANKING,
                         "Look up case CA123456 in San Diego County.") == {
        "county": "San Diego County"}
    assert written_names({"league": "NBA"}, RANKING, "The Premier Leagues start soon.") == {
        "league": "Premier Leagues"}


def test_names_are_left_where_there_is_doubt_or_the_question_writes_the_value() -> None:
    # Written in the question (case aside): the model's.
    assert written_names({"league": "premier league"}, RANKING,
                         "Is Arsenal top of the Premier League?") == {"league": "premier league"}
    # Two names end in the parameter's name.
    two = "Compare the Premier League and the Scottish League."
    assert written_names({"league": "La Liga"}, RANKING, two) == {"league": "La Liga"}
    # A lowercase "league" names nothing; nor does a parameter named by a general word.
    assert written_names({"league": "NBA"}, RANKING, "the best league in Spain") == {
        "league": "NBA"}
    assert written_names({"customer_name": "Bob"}, schema(customer_name=S),
                         "Call John Name now") == {"customer_name": "Bob"}
    # Another parameter holds the name already.
    assert written_names({"team": "Premier League", "league": "EPL"}, RANKING,
                         "the top of Premier League") == {"team": "Premier League",
                                                          "league": "EPL"}
    # Enum and formatted parameters are not free.
    enum = schema(league={"type": "string", "enum": ["EPL", "MLS"]})
    assert written_names({"league": "EPL"}, enum, "in Premier League") == {"league": "EPL"}


def test_a_misspelt_name() -> None:
    team = schema(team_name=S, include_stats={"type": "boolean"})
    question = "Get me the details of the last game played by Liverpool F.C."
    assert written_names({"team_name": "Liverly", "include_stats": True}, team, question) == {
        "team_name": "Liverpool", "include_stats": True}
    # An ending added or cut is the same word: "Germany" for "German history" stays.
    country = schema(country=S)
    assert written_names({"country": "Germany"}, country,
                         "War events in German history") == {"country": "Germany"}
    assert written_names({"country": "Tiger"}, country, "How many Tigers live here?") == {
        "country": "Tiger"}
    # Lowercase words are no names; fewer than four letters shared are no misspelling;
    # two candidates leave it.
    assert written_names({"country": "Cardiology"}, country, "a cardiologist nearby") == {
        "country": "Cardiology"}
    assert written_names({"country": "Livia"}, country, "Lisbon") == {"country": "Livia"}
    assert written_names({"country": "Liverly"}, country, "Liverpool or Livermore") == {
        "country": "Liverly"}


def test_a_value_with_another_written_on_is_the_part_before_it() -> None:
    ride = schema(source=S, destination=S)
    question = "Find a ride from New York to Philadelphia"
    assert written_names({"source": "New York to Philadelphia", "destination": "Philadelphia"},
                         ride, question) == {"source": "New York",
                                             "destination": "Philadelphia"}
    air = schema(location=S, date=S, country=S)
    assert written_names({"location": "London 2022/08/16", "date": "2022/08/16"}, air,
                         "the air quality in London 2022/08/16") == {
        "location": "London", "date": "2022/08/16"}
    assert written_names({"location": "Sydney, Australia", "country": "Australia"}, air,
                         "the time in Sydney, Australia") == {
        "location": "Sydney", "country": "Australia"}
    # Names joined by a space stay whole ("Manchester United" beside "Manchester" is a
    # name), as does a city with its state where the description asks for one.
    team = schema(team_name=S, location=S)
    assert written_names({"team_name": "Manchester United", "location": "United"}, team,
                         "the games of Manchester United") == {
        "team_name": "Manchester United", "location": "United"}
    city = schema(city={"type": "string", "description": "The city, e.g. Boston, MA"},
                  state=S)
    assert written_names({"city": "Austin, TX", "state": "TX"}, city, "in Austin, TX") == {
        "city": "Austin, TX", "state": "TX"}


def test_a_kind_given_a_count_takes_the_word_before_the_thing() -> None:
    room = schema(hotel_name=S, room_type=S, num_nights=N)
    question = "I would like to book a single room for two nights at The Plaza hotel."
    call = {"hotel_name": "The Plaza", "room_type": "two", "num_nights": 2}
    assert written_names(call, room, question) == {**call, "room_type": "single"}
    # Not where no other parameter holds the count, nor for a parameter of no kind.
    assert written_names({"room_type": "two"}, room, question) == {"room_type": "two"}
    other = schema(room_label=S, num_nights=N)
    assert written_names({"room_label": "two", "num_nights": 2}, other, question) == {
        "room_label": "two", "num_nights": 2}
    # Two words before "room" leave it.
    both = "a single room or a double room for two nights"
    assert written_names(call, room, both) == call


def test_no_properties_no_change() -> None:
    assert written_names({"a": "b"}, {"type": "object"}, "Premier League") == {"a": "b"}
    assert written_names({"a": "b"}, None, "Premier League") == {"a": "b"}


def test_in_the_pipeline_the_kind_is_read_after_the_count_is_mended() -> None:
    # BFCL multiple_190: the model writes the date's year as the nights; stray_numbers
    # mends it to 2 before written_names reads "single" off the count.
    hotel = {"type": "object", "required": ["hotel_name", "room_type", "start_date", "nights"],
             "properties": {"hotel_name": S, "room_type": S, "start_date": S, "nights": N}}
    tool = ToolSpec(name="book_hotel", description="Book a hotel room.", input_schema=hotel)
    question = ("Book a single room for two nights at the Hilton Hotel in Chicago, starting "
                "from 10th December 2022.")
    request = Request(messages=[Message(role="user", content=question)], tools=[tool])
    block = ToolUseBlock(id="toolu_1", name="book_hotel", input={
        "hotel_name": "Hilton Hotel", "room_type": "two", "start_date": "10th December 2022",
        "nights": 2022})
    adjust = call_adjuster(request, optional=False, percent=False, stray=True, names=True)
    assert adjust(block)[0].input == {**block.input, "room_type": "single", "nights": 2}


def test_an_optional_part_of_a_value_written_whole_is_left_out() -> None:
    # BFCL multiple_183: whole_phrases writes the recipe whole after the optional parameters
    # were checked; the meal time "Beef" is then only a piece of it.
    recipe = {"type": "object", "required": ["website", "recipe"], "properties": {
        "website": S, "recipe": S, "optional_meal_time": S}}
    tool = ToolSpec(name="recipe_info", description="Calories of a recipe.", input_schema=recipe)
    question = "How many calories in the Beef Lasagna Recipe from Foodnetwork.com?"
    request = Request(messages=[Message(role="user", content=question)], tools=[tool])
    block = ToolUseBlock(id="toolu_1", name="recipe_info", input={
        "website": "Foodnetwork.com", "recipe": "Lasagna", "optional_meal_time": "Beef"})
    adjust = call_adjuster(request, optional=True, percent=False, phrases=True)
    call, dropped = adjust(block)
    assert call.input == {"website": "Foodnetwork.com", "recipe": "Beef Lasagna Recipe"}
    assert dropped == 1
    # Without the edit that grows it, "Beef" is a value of its own.
    assert call_adjuster(request, optional=True, percent=False)(block)[0] is block
