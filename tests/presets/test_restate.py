"""restatements: one call per clause that restates the model's call with other values, and
none where the question asks for one call."""

from __future__ import annotations

from typing import Any

import pytest

from tooluse.messages import ToolSpec
from tooluse.presets.en_bfcl.fan_out import fan_out
from tooluse.presets.en_bfcl.focus import owned_spans
from tooluse.presets.en_bfcl.restate import restatements

Call = tuple[str, dict[str, Any]]


def _obj(**props: str) -> dict[str, Any]:
    return {"type": "object", "properties": {k: {"type": t} for k, t in props.items()}}


def _restate(call: Call, question: str, schema: dict[str, Any], *,
             valid: bool = True, limit: int = 8) -> list[Call]:
    return restatements([call], question, {call[0]: schema}, limit=limit,
                        valid=lambda name, arguments: valid)


BMI = _obj(height="number", weight="number")


def test_a_clause_with_other_values_in_the_same_places_is_another_call() -> None:
    question = ("What is the BMI of a man who is 6 feet tall and weighs 80 kg, and also of "
                "a woman who is 5.6 feet tall and weighs 60 kg?")
    added = _restate(("bmi", {"height": 6, "weight": 80}), question, BMI)
    assert added == [("bmi", {"height": 5.6, "weight": 60})]


def test_a_clause_giving_one_value_again_keeps_the_others() -> None:
    question = ("Compute the induced voltage for a field of 3 tesla over an area of 4 square "
                "meters changing in 2 seconds, then repeat it for a change in 8 seconds.")
    schema = _obj(field="number", area="number", seconds="number")
    added = _restate(("emf", {"field": 3, "area": 4, "seconds": 2}), question, schema)
    assert added == [("emf", {"field": 3, "area": 4, "seconds": 8})]


def test_names_follow_the_word_before_them() -> None:
    question = ("Book a train from Lyon to Geneva on Friday and another train from Geneva "
                "to Milan.")
    schema = _obj(origin="string", destination="string")
    added = _restate(("train", {"origin": "Lyon", "destination": "Geneva"}), question, schema)
    assert added == [("train", {"origin": "Geneva", "destination": "Milan"})]


def test_values_with_nothing_around_them_go_by_position() -> None:
    question = "Find the hypotenuse for legs 6 and 8, 9 and 40."
    schema = _obj(a="integer", b="integer")
    added = _restate(("hyp", {"a": 6, "b": 8}), question, schema)
    assert added == [("hyp", {"a": 9, "b": 40})]


def test_a_lone_name_joins_the_call_its_clause_makes() -> None:
    question = ("List the people convicted of fraud in Boston in 2019 and those convicted "
                "of the same in Denver in 2017.")
    schema = _obj(crime="string", city="string", year="integer")
    call = ("convictions", {"crime": "fraud", "city": "Boston", "year": 2019})
    assert _restate(call, question, schema) == [
        ("convictions", {"crime": "fraud", "city": "Denver", "year": 2017})]


def test_the_same_value_written_again_belongs_to_its_clause() -> None:
    question = "Give me the exchange rates for EUR to JPY and EUR to CHF."
    schema = _obj(base="string", target="string")
    added = _restate(("rate", {"base": "EUR", "target": "JPY"}), question, schema)
    assert added == [("rate", {"base": "EUR", "target": "CHF"})]


def test_lowercase_values_only_where_the_question_says_again() -> None:
    question = ("Train a tree with gini criterion and depth of 4, and another with entropy "
                "criterion and depth of 7.")
    schema = _obj(criterion="string", depth="integer")
    added = _restate(("tree", {"criterion": "gini", "depth": 4}), question, schema)
    assert added == [("tree", {"criterion": "entropy", "depth": 7})]


def test_a_rate_written_as_a_percentage_stays_a_fraction() -> None:
    question = ("What will $3000 grow to at an annual rate of 6% over 4 years? And $9000 "
                "at an annual rate of 3% over 12 years?")
    schema = _obj(principal="number", rate="number", years="integer")
    call = ("grow", {"principal": 3000, "rate": 0.06, "years": 4})
    assert _restate(call, question, schema) == [
        ("grow", {"principal": 9000, "rate": 0.03, "years": 12})]


def test_a_quoted_value_is_not_a_name_as_well() -> None:
    question = ('Search lawsuits against "Initech" in the county of "Travis" in Texas, then '
                'do the same for "Globex" in the county of "Harris".')
    schema = _obj(entity="string", county="string", state="string")
    call = ("lawsuits", {"entity": "Initech", "county": "Travis", "state": "Texas"})
    assert _restate(call, question, schema) == [
        ("lawsuits", {"entity": "Globex", "county": "Harris", "state": "Texas"})]


def test_two_words_in_a_row_for_one_parameter_are_one_value() -> None:
    question = ("Find jazz events in Denver for the next 14 days, and then the same for "
                "classical music events in Austin for the next 7 days.")
    schema = _obj(genre="string", city="string", days="integer")
    call = ("events", {"genre": "jazz", "city": "Denver", "days": 14})
    assert _restate(call, question, schema) == [
        ("events", {"genre": "classical music", "city": "Austin", "days": 7})]


@pytest.mark.parametrize(("call", "question"), [
    # Other values of the question that are not another call.
    (("density", {"allele": 0.4, "genotype": "BB"}),
     "What is the frequency of the BB genotype when the frequency of allele B is 0.4?"),
    (("velocity", {"acceleration": 3, "distance": 150}),
     "Final velocity of a cart starting from rest, accelerating at 3 m/s^2 over 150 meters?"),
    (("cases", {"year": 2021, "crime": "Burglary", "place": "Austin, Texas"}),
     "Retrieve cases from 2021 about burglary crimes in Austin, Texas"),
    (("ranking", {"team": "Brazil", "year": 2019}),
     "What was the FIFA ranking of Brazil's women team in 2019?"),
    (("hotel", {"city": "Rome", "chain": "Hilton", "guests": 2}),
     "Is a Hilton in Rome free for 2 guests from 2024 June 3rd to June 9th?"),
    (("museum", {"name": "National Gallery of Art", "day": "Sunday"}),
     "When does the National Gallery of Art open on Sunday?"),
    (("play", {"artist": "Adele", "minutes": 20}), "Play Adele for 20 minutes on Spotify."),
])
def test_no_call_where_the_question_asks_for_one(call: Call, question: str) -> None:
    schema = {"type": "object", "properties": {
        k: {"type": "number" if isinstance(v, (int, float)) else "string"}
        for k, v in call[1].items()}}
    assert fan_out([call], question, {"growth": schema}, limit=8,
                   valid=lambda name, arguments: True) == []


def test_a_new_call_must_validate_and_stay_within_the_limit() -> None:
    question = ("What is the BMI of a man who is 6 feet tall and weighs 80 kg, and also of "
                "a woman who is 5.6 feet tall and weighs 60 kg?")
    call = ("bmi", {"height": 6, "weight": 80})
    assert _restate(call, question, BMI, valid=False) == []
    assert _restate(call, question, BMI, limit=1) == []


def test_a_call_already_written_is_not_added_again() -> None:
    question = ("What is the BMI of a man who is 6 feet tall and weighs 80 kg, and also of "
                "a woman who is 5.6 feet tall and weighs 60 kg?")
    calls: list[Call] = [("bmi", {"height": 6, "weight": 80}),
                         ("bmi", {"height": 5.6, "weight": 60})]
    assert restatements(calls, question, {"bmi": BMI}, limit=8,
                        valid=lambda name, arguments: True) == []


def _spec(name: str, description: str, schema: dict[str, Any]) -> ToolSpec:
    return ToolSpec(name=name, description=description, input_schema=schema)


def test_calls_of_several_tools_are_restated_each_from_its_own_clauses() -> None:
    # "Also ... 7 seconds" is the distance tool's clause, not another velocity call.
    question = ("A cart accelerates at 3 m/s^2 from rest for 5 seconds: what is its final "
                "velocity? Also, how far does it go in 7 seconds?")
    velocity = _obj(acceleration="number", time="number")
    calls: list[Call] = [("velocity", {"acceleration": 3, "time": 5}),
                         ("distance", {"acceleration": 3, "time": 7})]
    schemas = {"velocity": velocity, "distance": velocity}
    parts = owned_spans(question, [_spec("velocity", "The final velocity.", velocity),
                                   _spec("distance", "How far it goes.", velocity)])
    assert set(parts) == {"velocity", "distance"}
    for given in (None, parts):
        assert restatements(calls, question, schemas, limit=8, parts=given,
                            valid=lambda name, arguments: True) == []
    assert restatements(calls[:1], question, {"velocity": velocity}, limit=8,
                        valid=lambda name, arguments: True) == [
        ("velocity", {"acceleration": 3, "time": 7})]


STOCKS = _obj(company="string", days="integer", model="string")
WEATHER = _obj(location="string", days="integer")
FORECASTS = [_spec("stock_forecast", "Predict a company's stock price.", STOCKS),
             _spec("weather_forecast", "The weather forecast for a location.", WEATHER)]


def test_a_tool_called_once_where_its_clauses_ask_twice_is_called_again() -> None:
    question = ("Can you tell me what the stock price prediction for Apple Inc. is for the "
                "next 30 days using the ARIMA model, and then provide the stock forecast for "
                "Microsoft Corporation for the next 45 days using the LSTM model? After that, "
                "could you provide the weather forecast for New York City for the next 7 days, "
                "and then give the weather forecast for Los Angeles for the next 14 days?")
    calls: list[Call] = [
        ("stock_forecast", {"company": "Apple Inc.", "days": 30, "model": "ARIMA"}),
        ("weather_forecast", {"location": "New York City", "days": 7})]
    parts = owned_spans(question, FORECASTS)
    added = restatements(calls, question, {"stock_forecast": STOCKS, "weather_forecast": WEATHER},
                         limit=8, parts=parts, valid=lambda name, arguments: True)
    assert added == [
        ("stock_forecast", {"company": "Microsoft Corporation", "days": 45, "model": "LSTM"}),
        ("weather_forecast", {"location": "Los Angeles", "days": 14})]
    # Within the limit, counting every tool's calls.
    assert restatements(calls, question, {"stock_forecast": STOCKS, "weather_forecast": WEATHER},
                        limit=3, parts=parts, valid=lambda name, arguments: True) == added[:1]


def test_a_tool_owning_no_clause_is_not_restated() -> None:
    question = ("Can you tell me what the stock price prediction for Apple Inc. is for the "
                "next 30 days using the ARIMA model, and then for Microsoft Corporation for "
                "the next 45 days using the LSTM model?")
    calls: list[Call] = [
        ("stock_forecast", {"company": "Apple Inc.", "days": 30, "model": "ARIMA"}),
        ("weather_forecast", {"location": "Apple Inc.", "days": 30})]
    schemas = {"stock_forecast": STOCKS, "weather_forecast": WEATHER}
    whole = [(0, len(question))]
    assert restatements(calls, question, schemas, limit=8, valid=lambda name, arguments: True,
                        parts={"weather_forecast": [(0, 10)]}) == []
    assert restatements(calls, question, schemas, limit=8, valid=lambda name, arguments: True,
                        parts={"stock_forecast": whole, "weather_forecast": [(0, 10)]}) == [
        ("stock_forecast", {"company": "Microsoft Corporation", "days": 45, "model": "LSTM"})]


def test_lists_in_step_are_left_to_fan_out() -> None:
    question = ("Play songs from the artists Taylor Swift and Maroon 5, with a play time of "
                "20 minutes and 15 minutes respectively, on Spotify.")
    schema = _obj(artist="string", duration="integer")
    assert _restate(("play", {"artist": "Taylor Swift", "duration": 20}), question,
                    schema) == []


def test_a_name_is_not_restated_into_a_second_place_of_one_call() -> None:
    question = ("Book a flight from San Francisco to Tokyo on May 3rd 2022 and another flight "
                "from Tokyo to Sydney on May 18th 2022.")
    schema = _obj(departure_city="string", destination_city="string", date="string")
    calls: list[Call] = [
        ("book_flight", {"departure_city": "San Francisco", "destination_city": "Tokyo",
                         "date": "May 3rd 2022"}),
        ("book_flight", {"departure_city": "Tokyo", "destination_city": "Sydney",
                         "date": "May 18th 2022"})]
    # (Tokyo to Tokyo, the second "Tokyo" taken for the first call's departure, is no call.)
    assert restatements(calls, question, {"book_flight": schema}, limit=8,
                        valid=lambda name, arguments: True) == []


def test_a_rate_is_no_restatement_of_a_count() -> None:
    question = "What is the simple interest on $5000 for 5 years? Also for 4%."
    schema = _obj(principal="number", years="integer")
    assert _restate(("simple_interest", {"principal": 5000, "years": 5}), question,
                    schema) == []


def test_numbers_written_joined_to_their_unit_are_values() -> None:
    question = ("What is the total circumference of four circles, where the first circle has a "
                "radius of 5cm, the second circle has a radius of 10cm, the third circle has a "
                "radius of 15cm, and the fourth circle has a radius of 20cm?")
    added = _restate(("circumference", {"radius": 5}), question, _obj(radius="integer"))
    assert added == [("circumference", {"radius": r}) for r in (10, 15, 20)]
    # A scale is no unit: "$1.2M" is not 1.2 metres, so no list "2019 and $1.2M" is read.
    question = "The growth rate for 'Tech Inc' with revenues of $1M in 2019 and $1.2M in 2020?"
    schema = _obj(company="string", year1="integer", revenue1="integer", year2="integer",
                  revenue2="integer")
    call = ("growth", {"company": "Tech Inc", "year1": 2019, "revenue1": 1000000,
                       "year2": 2020, "revenue2": 1200000})
    assert fan_out([call], question, {"growth": schema}, limit=8,
                   valid=lambda name, arguments: True) == []


def test_a_word_is_written_in_the_case_the_model_wrote_its_own() -> None:
    """The model wrote "shortest" as the enum's `Shortest`: the clause's "scenic" is the
    enum's `Scenic`, not a value the schema refuses (BFCL parallel_190)."""
    schema = {"type": "object", "properties": {
        "start_location": {"type": "string"}, "end_location": {"type": "string"},
        "route_preference": {"type": "string", "enum": ["Shortest", "Scenic"]}}}
    question = ("What is the shortest driving distance from New York City to Los Angeles, "
                "and then from Los Angeles to Miami, considering both the shortest and "
                "scenic route preferences?")
    call = ("route", {"start_location": "New York City", "end_location": "Los Angeles",
                      "route_preference": "Shortest"})
    added = restatements([call], question, {"route": schema}, limit=8,
                         valid=lambda name, args: args["route_preference"] in ("Shortest",
                                                                              "Scenic"))
    assert added == [("route", {"start_location": "Los Angeles", "end_location": "Miami",
                                "route_preference": "Scenic"})]


@pytest.mark.parametrize(("like", "written", "text", "expected"), [
    ("Shortest", "shortest", "scenic", "Scenic"),
    ("USD", "usd", "cad", "CAD"),
    ("jazz", "Jazz", "Rock", "rock"),
    ("New York", "new york", "los angeles", "Los Angeles"),
])
def test_case_follows_the_model(like: str, written: str, text: str, expected: str) -> None:
    from tooluse.presets.en_bfcl.restate import _as_value, _Value
    assert _as_value(_Value(0, len(text), text, "word"), like,
                     _Value(0, len(written), written, "word")) == expected


def test_a_time_written_in_two_parameters_restates_the_other_times() -> None:
    """"at 3:15 ... at 8:20 and 11:50": the model wrote 3 and 15 in two parameters; each
    other time gives its hour and minutes (a time's minutes are no number of their own
    elsewhere; BFCL parallel_145)."""
    question = ("What is the angle between the hour and minute hands of a clock at 3:15, "
                "rounded to 2 decimal places, and how does this compare to the angle at "
                "8:20 and 11:50, both also rounded to 2 decimal places?")
    schema = _obj(hours="integer", minutes="integer", round_to="integer")
    added = _restate(("clock", {"hours": 3, "minutes": 15, "round_to": 2}), question, schema)
    assert added == [("clock", {"hours": 8, "minutes": 20, "round_to": 2}),
                     ("clock", {"hours": 11, "minutes": 50, "round_to": 2})]
    # one parameter holding the hour alone: the times' minutes stay out of it
    added = _restate(("clock", {"hours": 3, "round_to": 2}), question,
                     _obj(hours="integer", round_to="integer"))
    assert all(a["hours"] in (8, 11) for _, a in added)
