"""The decisions taken around the real default model (presets/en_bfcl/choices.py), each on its
own: tool retrieval, the call-or-answer decision, the tool scored by its whole name,
optional parameters only when the conversation gives them, parallel calls that differ.
Every call still validates."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from tooluse.messages import Message, Request, Response, ToolChoice, ToolSpec

pytestmark = pytest.mark.slow


def spec(name: str, description: str, required: dict[str, Any],
         optional: dict[str, Any] | None = None) -> ToolSpec:
    return ToolSpec(name=name, description=description, input_schema={
        "type": "object", "properties": {**required, **(optional or {})},
        "required": list(required)})


WEATHER = spec("get_weather", "Gets the current weather in a city.",
               {"city": {"type": "string", "description": "The city, e.g. Paris."}},
               {"unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                "days": {"type": "integer", "description": "Forecast days."}})
STOCK = spec("get_stock_price", "Gets the latest stock price of a company by its ticker.",
             {"ticker": {"type": "string", "description": "Ticker symbol, e.g. AAPL."}})
OTHERS = [
    spec("send_email", "Sends an email to a recipient.", {"to": {"type": "string"}}),
    spec("translate_text", "Translates a text into another language.",
         {"text": {"type": "string"}}),
    spec("book_flight", "Books a flight between two airports.", {"origin": {"type": "string"}}),
    spec("play_music", "Plays a song by an artist.", {"song": {"type": "string"}}),
    spec("set_alarm", "Sets an alarm clock.", {"time": {"type": "string"}}),
]


@pytest.fixture(scope="module")
def make() -> Any:
    pytest.importorskip("llama_cpp")
    from tooluse.backends.local import LocalBackend
    from tooluse.errors import BackendError

    def build(**options: Any) -> Any:
        base: dict[str, Any] = {"decide": False, "score_tools": False, "rank_tools": False,
                                "plan_tools": False, "percent_fractions": False,
                                "optional_from_conversation": False, "max_tools": 0,
                                "no_repeat": False, "more_calls": False,
                                "copy_values": False, "score_enums": False, "fan_out": False,
                                "restate": False, "date_formats": False, "city_state": False,
                                "prerequisite_tools": False, "asked_flags": False,
                                "focus_values": False, "whole_phrases": False,
                                "names_not_values": False, "scaled_numbers": False,
                                "described_codes": False, "enum_values": False,
                                "stated_units": False, "calls_as_planned": False,
                                "named_options": False, "after_names": False,
                                "named_numbers": False, "compounding": False,
                                "implied_numbers": False, "stray_numbers": False,
                                "literal_lists": False, "written_names": False,
                                "currency_codes": False}
        try:
            return LocalBackend(n_threads=2, **{**base, **options})
        except BackendError as exc:
            pytest.skip(str(exc))

    return build


def ask(backend: Any, question: str, tools: list[ToolSpec], choice: str = "auto",
        max_tokens: int = 96) -> Response:
    response: Response = backend.complete(Request(
        messages=[Message(role="user", content=question)], tools=tools,
        tool_choice=ToolChoice(type=choice), max_tokens=max_tokens))
    for call in response.tool_uses:
        schema = next(t for t in tools if t.name == call.name).input_schema
        jsonschema.validate(call.input, schema)
    return response


def test_retrieval_keeps_the_relevant_tool_and_names_the_left_out(make: Any) -> None:
    pytest.importorskip("bm25s")
    backend = make(max_tools=3)
    response = ask(backend, "What is the stock price of Apple (ticker AAPL)?",
                   [*OTHERS, STOCK, WEATHER], "any")
    assert len(backend.last_left_out) == 4 and "get_stock_price" not in backend.last_left_out
    assert [c.name for c in response.tool_uses][:1] == ["get_stock_price"]


def test_call_or_answer_decision(make: Any) -> None:
    backend = make(decide=True)
    # (the rule weighs the model's likelihood of a call block and the question's words
    # found in the tool: "current weather ... city" matches get_weather's own words)
    called = ask(backend, "Get the current weather in the city of Paris.", [WEATHER])
    assert [c.name for c in called.tool_uses] == ["get_weather"]
    answered = ask(backend, "Write a short poem about friendship.", [STOCK])
    assert not answered.tool_uses and answered.text().strip()
    assert backend.last_end.timings["call_decided"] == 0.0


def test_tool_scored_by_its_whole_name(make: Any) -> None:
    backend = make(score_tools=True)
    response = ask(backend, "How much is one share of Tesla, ticker TSLA, worth today?",
                   [WEATHER, STOCK], "any")
    assert response.tool_uses[0].name == "get_stock_price"


ELECTRIC = spec("electric_field_calculate", "Calculate the electric field based on the "
                "amount of charge and distance from the charge",
                {"Q": {"type": "number", "description": "The amount of charge in coulombs."},
                 "r": {"type": "number", "description": "The distance from the charge in "
                       "meters."}})
MAGNETIC = spec("magnetic_field_calculate", "Calculate the magnetic field based on the current "
                "flowing and the radial distance using Ampere's law",
                {"I": {"type": "integer", "description": "The electric current flowing in "
                       "Amperes."},
                 "r": {"type": "number", "description": "The radial distance from the line "
                       "of current in meters."}})
FORCE = spec("electric_force_calculate", "Calculate the electric force between two charges "
             "at a distance", {"Q1": {"type": "number"}, "Q2": {"type": "number"},
                               "r": {"type": "number"}})


def test_tool_ranked_by_the_question_words_it_covers(make: Any) -> None:
    # BFCL multiple_41: the model alone names the first tool offered.
    question = ("Calculate the magnetic field at point P using Ampere's law where current I "
                "is 10 Amperes and r is 0.01 meter.")
    tools = [ELECTRIC, MAGNETIC, FORCE]
    alone = ask(make(), question, tools, "any")
    assert alone.tool_uses[0].name == "electric_field_calculate"
    ranked = ask(make(rank_tools=True), question, tools, "any")
    assert ranked.tool_uses[0].name == "magnetic_field_calculate"


def _stats(name: str, what: str) -> ToolSpec:
    return spec(f"statistics_{name}", f"This function {what}.",
                {"data": {"type": "array", "items": {"type": "integer"},
                          "description": "The list of data points."}})


def test_further_tools_the_question_asks_for_are_called(make: Any) -> None:
    # BFCL parallel_multiple_20: three statistics of the same data, three tools.
    question = ("Determine the median and variance for the following data points 3,4,5,2,8,5. "
                "Also determine the mode for these points.")
    tools = [_stats("variance", "calculates the variance of a given set of numbers"),
             _stats("median", "returns the median of the data set provided"),
             _stats("mode", "determines the mode of a list of numbers")]
    alone = ask(make(rank_tools=True), question, tools, "any", max_tokens=160)
    assert len({c.name for c in alone.tool_uses}) < 3
    planned = ask(make(rank_tools=True, plan_tools=True), question, tools, "any",
                  max_tokens=160)
    # Each tool once, in any order (the first is the one whose words the question says most:
    # "determine" and "mode" are the mode tool's).
    assert sorted(c.name for c in planned.tool_uses) == sorted(t.name for t in tools)
    assert all(c.input == {"data": [3, 4, 5, 2, 8, 5]} for c in planned.tool_uses)


INTEREST = spec("calculate_compound_interest", "Calculate compound interest for an initial "
                "principal amount.",
                {"principal": {"type": "integer", "description": "The principal amount."},
                 "rate": {"type": "number", "description": "The annual interest rate."},
                 "time": {"type": "integer", "description": "The time in years."}})


def test_a_rate_given_as_a_percentage_is_written_as_a_fraction(make: Any) -> None:
    question = ("Calculate the compound interest for an initial principal amount of $10000, "
                "with an annual interest rate of 5% for 10 years.")  # BFCL simple_python_131
    (alone,) = ask(make(copy_values=True), question, [INTEREST], "any").tool_uses
    assert alone.input["rate"] == 5
    (fixed,) = ask(make(copy_values=True, percent_fractions=True), question, [INTEREST],
                   "any").tool_uses
    assert fixed.input["rate"] == 0.05 and fixed.input["time"] == 10


def test_the_demo_chains_under_auto_with_prerequisite_tools(make: Any) -> None:
    import io

    from tooluse.cli.demo import DEMO_QUESTION, run_demo

    out = io.StringIO()
    backend = make(decide=True, rank_tools=True, copy_values=True, prerequisite_tools=True,
                   none_reminder="default")
    assert run_demo(backend, question=DEMO_QUESTION, tool_choice="auto", out=out) == 0
    text = out.getvalue()
    # The lookup first, then the price with the symbol it returned, then the answer.
    assert text.index('get_ticker_symbol(company_name="General Motors")') \
        < text.index('get_current_stock_price(symbol="GM")')
    assert "Final answer: The current stock price of General Motors is 38.50" in text
    assert "Note: the final answer does not state" not in text


def test_optional_parameter_only_when_given_and_value_copied(make: Any) -> None:
    backend = make(optional_from_conversation=True)
    plain = ask(backend, "What's the weather in Lisbon?", [WEATHER], "any")
    assert plain.tool_uses[0].input == {"city": "Lisbon"}
    given = ask(backend, "What's the weather in Lisbon in fahrenheit?", [WEATHER], "any")
    assert given.tool_uses[0].input["city"] == "Lisbon"
    assert given.tool_uses[0].input.get("unit") in (None, "fahrenheit")


PLAY = spec("spotify_play", "Play specific tracks from a given artist for a specific time "
            "duration.", {"artist": {"type": "string", "description": "The artist."},
                          "duration": {"type": "integer", "description": "Minutes."}})


def test_parallel_calls_differ_and_follow_the_request(make: Any) -> None:
    # Without the guard the model stops after the first call (or repeats it); with it, a
    # repeat is rolled back and a further call is kept for the new values of the question.
    question = "Play songs from the artists Taylor Swift and Maroon 5, with a play time of " \
        "20 minutes and 15 minutes respectively, on Spotify."
    plain = ask(make(), question, [PLAY], "any")
    guarded_backend = make(no_repeat=True, more_calls=True)
    guarded = ask(guarded_backend, question, [PLAY], "any")
    calls = [c.input for c in guarded.tool_uses]
    assert len(calls) == len({str(c) for c in calls}) == 2, calls
    assert {c["artist"] for c in calls} == {"Taylor Swift", "Maroon 5"}
    assert len(plain.tool_uses) < 2


BMI = spec("calculate_bmi", "Calculate the body mass index of a person.",
           {"height": {"type": "number", "description": "Height in feet."},
            "weight": {"type": "number", "description": "Weight in kilograms."}})


def test_a_clause_restating_the_call_with_other_values_is_another_call(make: Any) -> None:
    question = ("What is the BMI of a man who is 6 feet tall and weighs 80 kg, and also of a "
                "woman who is 5.5 feet tall and weighs 60 kg?")
    (alone,) = ask(make(copy_values=True), question, [BMI], "any").tool_uses
    assert alone.input == {"height": 6, "weight": 80}
    restated = ask(make(copy_values=True, restate=True), question, [BMI], "any")
    assert [c.input for c in restated.tool_uses] == [{"height": 6, "weight": 80},
                                                      {"height": 5.5, "weight": 60}]


FORECAST = spec("get_forecast", "Gets the weather forecast of a city for a day.",
                {"city": {"type": "string", "description": "The name of the city."}},
                {"date": {"type": "string", "description": "The day of the forecast, in the "
                          "format of 'YYYY-MM-DD'. If not provided, today is used."}})


def test_a_date_is_written_in_the_format_the_parameter_asks_for(make: Any) -> None:
    question = "Can you tell me the forecast for Pacifica on April 11th, 2023?"
    (alone,) = ask(make(copy_values=True, optional_from_conversation=True), question,
                   [FORECAST], "any").tool_uses
    assert alone.input.get("date") != "2023-04-11"
    (dated,) = ask(make(copy_values=True, optional_from_conversation=True, date_formats=True),
                   question, [FORECAST], "any").tool_uses
    assert dated.input == {"city": "Pacifica", "date": "2023-04-11"}


TRIANGLE = spec("calculate_triangle_area", "Calculate the area of a triangle given its base "
                "and height.",
                {"base": {"type": "integer", "description": "The base of the triangle."},
                 "height": {"type": "integer", "description": "The height of the triangle."}},
                {"unit": {"type": "string", "description": "The unit of measure (defaults "
                          "to 'units' if not specified)"}})


def test_an_optional_parameter_does_not_take_a_value_another_one_took(make: Any) -> None:
    question = "Find the area of a triangle with a base of 10 units and height of 5 units."
    (alone,) = ask(make(), question, [TRIANGLE], "any").tool_uses
    assert alone.input == {"base": 10, "height": 5, "unit": "10"}
    (kept,) = ask(make(optional_from_conversation=True), question, [TRIANGLE],
                  "any").tool_uses
    assert kept.input == {"base": 10, "height": 5}


FOREST = spec("forest_growth_forecast", "Predicts the forest growth over the next N years "
              "based on current trends.",
              {"location": {"type": "string", "description": "The location where you want to "
                            "predict forest growth."},
               "years": {"type": "integer", "description": "The number of years for the "
                         "forecast."}},
              {"include_human_impact": {"type": "boolean", "description": "Whether or not to "
                                        "include the impact of human activities in the "
                                        "forecast. If not provided, defaults to false."}})


def test_a_boolean_the_question_asks_for_is_true(make: Any) -> None:
    question = ("Predict the growth of forest in Yellowstone National Park for the next 5 "
                "years including human impact.")
    (alone,) = ask(make(copy_values=True), question, [FOREST], "any").tool_uses
    assert alone.input.get("include_human_impact") is False
    (asked,) = ask(make(copy_values=True, asked_flags=True), question, [FOREST],
                   "any").tool_uses
    assert asked.input == {"location": "Yellowstone National Park", "years": 5,
                           "include_human_impact": True}


MARGIN = spec("financial_ratio.net_profit_margin", "Calculate the net profit margin given "
              "the net income and total revenue.",
              {"net_income": {"type": "integer", "description": "The net income."},
               "total_revenue": {"type": "integer", "description": "The total revenue."}})
DEBT = spec("financial_ratio.debt_ratio", "Calculate the debt ratio given the total "
            "liabilities and total assets.",
            {"total_liabilities": {"type": "integer", "description": "The total liabilities."},
             "total_assets": {"type": "integer", "description": "The total assets."}})


def test_each_tool_takes_its_values_from_its_own_clause(make: Any) -> None:
    question = ("Calculate the net profit margin of Company XYZ given that the net income is "
                "$20,000 and total revenue is $100,000. Also calculate the debt ratio of the "
                "same company if the total liabilities are $10,000 and total assets are "
                "$30,000.")
    planned = {"copy_values": True, "rank_tools": True, "plan_tools": True}
    alone = ask(make(**planned), question, [MARGIN, DEBT], "any", max_tokens=160)
    # The model takes the revenue of the first clause for the liabilities of the second.
    assert {c.name: c.input for c in alone.tool_uses}["financial_ratio.debt_ratio"] == {
        "total_liabilities": 100000, "total_assets": 30000}
    focused = ask(make(**planned, focus_values=True), question, [MARGIN, DEBT], "any",
                  max_tokens=160)
    assert {c.name: c.input for c in focused.tool_uses} == {
        "financial_ratio.net_profit_margin": {"net_income": 20000, "total_revenue": 100000},
        "financial_ratio.debt_ratio": {"total_liabilities": 10000, "total_assets": 30000}}


FOOD = spec("log_food", "Logs a food item with a portion size to a meal.",
            {"food_name": {"type": "string", "description": "The name of the food to log."},
             "portion_amount": {"type": "number", "description": "The amount of the portion."},
             "meal_name": {"type": "string", "description": "The meal: breakfast, lunch, "
                           "dinner or snack."}})


def test_a_bare_number_is_no_name(make: Any) -> None:
    question = "Could you record that I drank 16 ounces of chai tea as a snack?"
    (call,) = ask(make(copy_values=True), question, [FOOD], "any").tool_uses
    assert call.input["portion_amount"] == 16
    assert call.input["food_name"] != "16" and call.input["meal_name"] != "16"


GUITAR = spec("guitar_price_find", "Retrieve the price of a specific used guitar model based "
              "on its condition and location.",
              {"model": {"type": "string", "description": "The model of the guitar."},
               "condition": {"type": "string", "enum": ["Poor", "Good", "Excellent"],
                             "description": "The condition of the guitar."},
               "location": {"type": "string",
                            "description": "The location where the guitar is being sold."}})


def test_a_name_the_model_cuts_short_is_written_whole(make: Any) -> None:
    question = ("Find the price of a used Gibson Les Paul guitar in excellent condition in "
                "the Chicago area.")
    without, with_it = without_and_with("whole_phrases")
    (alone,) = ask(without, question, [GUITAR], "any").tool_uses
    assert alone.input["model"] == "Gibson"
    (whole,) = ask(with_it, question, [GUITAR], "any").tool_uses
    assert whole.input == {**alone.input, "model": "Gibson Les Paul"}
    # The edit is the rule's, and the call says so.
    assert whole.source == "edited" and whole.origin is not None and any(
        c.parameter == "model" and c.before == "Gibson" and c.rule == "whole_phrases"
        for c in whole.origin.changes)


TICKETS = spec("concert_booking_book_ticket", "Book concert tickets for a specific artist in a "
               "specified city.",
               {"artist": {"type": "string", "description": "The artist you want to book "
                           "tickets for."},
                "city": {"type": "string", "description": "The city where the concert is."}},
               {"num_tickets": {"type": "integer",
                                "description": "Number of tickets required. Default is 1."}})


def test_a_count_written_in_words_is_copied_and_kept(make: Any) -> None:
    question = "Get me two tickets for next Eminem concert in New York City."
    (call,) = ask(make(copy_values=True, optional_from_conversation=True), question,
                  [TICKETS], "any").tool_uses
    assert call.input == {"artist": "Eminem", "city": "New York City", "num_tickets": 2}


TODO = spec("todo_manager_handle_action", "Handle action on a todo list.",
            {"type": {"type": "string", "enum": ["add", "delete", "update", "complete"],
                      "description": "The action to take."},
             "content": {"type": "string", "description": "The content of the todo item."}})


def test_a_value_that_only_names_the_tool_is_no_value(make: Any) -> None:
    question = "add todo with content go to sleep at 9 pm"
    (alone,) = ask(make(copy_values=True), question, [TODO], "any").tool_uses
    assert alone.input["content"] in ("todo", "content")
    (named,) = ask(make(copy_values=True, names_not_values=True), question, [TODO],
                   "any").tool_uses
    assert named.input["content"] not in ("todo", "content", "add todo")
    assert named.input["content"] in question


RANDOM_FOREST = spec(
    "random_forest_train", "Train a Random Forest Model on given data",
    {"n_estimators": {"type": "integer", "description": "The number of trees."},
     "max_depth": {"type": "integer", "description": "The maximum depth of the tree."},
     "data": {"type": "string", "description": "The training data for the model."}})


def test_an_identifier_the_user_writes_is_a_value_though_it_names_the_tool(make: Any) -> None:
    question = ('You are given a dataset "data_random_forest" in the form of a dataframe. '
                "Train a Random Forest Model on it with 100 trees and a maximum depth of 10.")
    (call,) = ask(make(copy_values=True, names_not_values=True), question, [RANDOM_FOREST],
                  "any").tool_uses
    assert call.input == {"n_estimators": 100, "max_depth": 10, "data": "data_random_forest"}


DIVIDEND = spec("finance_calculate_quarterly_dividend_per_share",
                "Calculate quarterly dividend per share for a company given total dividend "
                "payout and outstanding shares",
                {"total_payout": {"type": "integer",
                                  "description": "The total amount of dividends paid out in USD"},
                 "outstanding_shares": {"type": "integer",
                                        "description": "Total number of outstanding shares"}})


def test_a_number_written_with_a_scale_is_written_whole(make: Any) -> None:
    question = ("What's the quarterly dividend per share of a company with 100 million "
                "outstanding shares and total dividend payout of 50 million USD?")
    whole = {"total_payout": 50_000_000, "outstanding_shares": 100_000_000}
    (alone,) = ask(make(copy_values=True), question, [DIVIDEND], "any").tool_uses
    assert alone.input != whole
    (call,) = ask(make(copy_values=True, scaled_numbers=True), question, [DIVIDEND],
                  "any").tool_uses
    assert call.input == whole


HOUSEKEEPING = spec(
    "get_service_providers", "Find service providers by service type and province.",
    {"service_id": {"type": "integer", "description": (
        "Unique identifier for the service type. For example, 1 represents cleaning "
        "service, 2 for ironing service, and 3 for a comprehensive cleaning service.")}},
    {"province_id": {"type": "integer", "description": (
        "Unique identifier for the province. For example, 1 corresponds to Bangkok, 2 to "
        "Chiang Mai, and 3 to Chonburi.")},
     "rating": {"type": "number", "description": "The minimum average review score."}})


def test_the_code_a_description_lists_is_written(make: Any) -> None:
    question = ("Help find a housekeeper who provides ironing services in Chonburi Province, "
                "with a review score of 4.5 stars or more.")
    (alone,) = ask(make(copy_values=True, optional_from_conversation=True), question,
                   [HOUSEKEEPING], "any").tool_uses
    assert (alone.input.get("service_id"), alone.input.get("province_id")) != (2, 3)
    (call,) = ask(make(copy_values=True, optional_from_conversation=True,
                       described_codes=True), question, [HOUSEKEEPING], "any").tool_uses
    assert call.input["service_id"] == 2 and call.input["province_id"] == 3


TRANSLATE = spec("translate_text", "Translate a text from one language to another.",
                 {"text": {"type": "string", "description": "The text to translate."},
                  "from_lang": {"type": "string", "description": "The language of the text."},
                  "to_lang": {"type": "string", "description": "The language to translate "
                              "into."}})
CLOCK = spec("get_current_time", "Get the current time in a city.",
             {"location": {"type": "string", "description": "The city."}})


def without_and_with(option: str) -> tuple[Any, Any]:
    """Two backends with the ``en-bfcl`` preset: its rule ``option`` off, then on."""
    pytest.importorskip("llama_cpp")
    from tooluse.backends.local import LocalBackend
    from tooluse.errors import BackendError

    try:
        return (LocalBackend(n_threads=2, preset="en-bfcl", **{option: False}),
                LocalBackend(n_threads=2, preset="en-bfcl", **{option: True}))
    except BackendError as exc:
        pytest.skip(str(exc))


def test_a_tool_whose_own_clause_asks_again_is_called_again_beside_others() -> None:
    question = ("Translate the phrase 'Hello World' from English to Spanish and translate "
                "'Goodbye' from French to English. In addition to that get current time in "
                "'Los Angeles' and 'London'.")
    plain, restated = ([(c.name, c.input) for c in ask(b, question, [TRANSLATE, CLOCK])
                        .tool_uses] for b in without_and_with("restate"))
    goodbye = ("translate_text", {"text": "Goodbye", "from_lang": "French", "to_lang": "English"})
    assert goodbye not in plain
    assert restated == [*plain, goodbye]
    assert ("translate_text", {"text": "Hello World", "from_lang": "English",
                               "to_lang": "Spanish"}) in plain


NEWS = spec("get_news", "Fetches the latest news on a topic.",
            {"topic": {"type": "string", "description": "The subject of the news."},
             "quantity": {"type": "integer", "description": "Number of articles."}},
            {"region": {"type": "string", "description": "The region, e.g. Europe."}})


def test_words_the_model_joins_by_underscores_are_written_apart_and_listed() -> None:
    question = ('Can you fetch the latest news on the topic of "Climate Change" and '
                '"Artificial Intelligence", each with 5 articles, and specifically for the '
                'region "Europe"?')
    plain, written = without_and_with("whole_phrases")
    (joined,) = ask(plain, question, [NEWS]).tool_uses
    assert joined.input["topic"] == "climate_change"
    # Written as the question writes it, the topic is an item of the question's list.
    topics = [c.input["topic"] for c in ask(written, question, [NEWS]).tool_uses]
    assert topics == ["Climate Change", "Artificial Intelligence"]


MOVIES = spec("Movies_3_FindMovies", "Retrieves a list of movies based on the director, genre, "
              "and cast specified by the user.", {}, {
                  "directed_by": {"type": "string", "description": "Director of the movie. "
                                  "Use 'dontcare' if the director is not a specific search "
                                  "criterion.", "default": "dontcare"},
                  "genre": {"type": "string", "description": "Genre of the movie.",
                            "enum": ["Offbeat", "Fantasy", "Thriller", "Comedy", "Drama",
                                     "Action", "dontcare"], "default": "dontcare"},
                  "cast": {"type": "string", "description": "Names of leading actors or "
                           "actresses in the movie.", "default": "dontcare"}})


def test_a_value_naming_another_parameters_enum_member_goes_there(make: Any) -> None:
    question = ("My friend and I want to go see a movie but we can't find one we like. We "
                "really want to see a Drama.")
    (alone,) = ask(make(copy_values=True, optional_from_conversation=True), question,
                   [MOVIES], "any").tool_uses
    assert alone.input.get("genre") != "Drama" and "Drama" in alone.input.values()
    (call,) = ask(make(copy_values=True, optional_from_conversation=True, enum_values=True),
                  question, [MOVIES], "any").tool_uses
    assert call.input == {"genre": "Drama"}


CIRCUMFERENCE = spec("calculate_circumference", "Calculates the circumference of a circle "
                     "with a given radius.",
                     {"radius": {"type": "integer", "description": "The radius of the circle "
                                 "in the unit given."}},
                     {"unit": {"type": "string", "description": "The unit of measurement for "
                               "the radius. Default is 'cm'."}})


def test_a_unit_parameter_gets_the_unit_the_question_writes() -> None:
    question = "What is the circumference of a circle with a radius of 4 inches?"
    plain, stated = without_and_with("stated_units")
    # The model copies the description's default, which the optional filter then drops.
    (guessed,) = ask(plain, question, [CIRCUMFERENCE]).tool_uses
    assert guessed.input == {"radius": 4}
    (call,) = ask(stated, question, [CIRCUMFERENCE]).tool_uses
    assert call.input == {"radius": 4, "unit": "inches"}


FUTURE_VALUE = spec("finance_calculate_future_value", "Calculate the future value of an "
                    "investment given an initial investment, annual rate of return, and a "
                    "time frame.",
                    {"initial_investment": {"type": "integer", "description": "The initial "
                                            "investment amount."},
                     "rate_of_return": {"type": "number", "description": "The annual rate of "
                                        "return."},
                     "years": {"type": "integer", "description": "The time frame of the "
                               "investment in years."}},
                    {"contribution": {"type": "integer", "description": "Optional: Additional "
                                      "regular contributions. Default is 0."}})
PAINT = spec("mix_paint_color", "Combine two primary paint colors and adjust the resulting "
             "color's lightness level.",
             {"color1": {"type": "string", "description": "The first primary color to be "
                         "mixed."},
              "color2": {"type": "string", "description": "The second primary color to be "
                         "mixed."}},
             {"lightness": {"type": "integer", "description": "The desired lightness level of "
                            "the resulting color in percentage. The default level is set to "
                            "50%."}})
HISTOGRAM = spec("create_histogram", "Create a histogram based on provided data.",
                 {"data": {"type": "array", "items": {"type": "number"},
                           "description": "The data for which histogram needs to be plotted."},
                  "bins": {"type": "integer", "description": "The number of equal-width bins "
                           "in the range. Default is 10."}})


def test_calls_of_several_tools_stop_where_the_plan_does() -> None:
    question = ("Calculate the future value of an investment with an annual rate of return "
                "of 8%, an initial investment of $20000, and a time frame of 5 years.")
    tools = [PAINT, FUTURE_VALUE, HISTOGRAM]
    free, planned = ([c.name for c in ask(b, question, tools, max_tokens=256).tool_uses]
                     for b in without_and_with("calls_as_planned"))
    # Left to go on, the model calls a tool the question does not ask for.
    assert free[0] == "finance_calculate_future_value" and "create_histogram" in free[1:]
    assert planned == ["finance_calculate_future_value"]


SCULPTURE = spec("get_sculpture_value", "Retrieve the current market value of a particular "
                 "sculpture by a specific artist.",
                 {"sculpture": {"type": "string", "description": "The name of the sculpture."},
                  "artist": {"type": "string", "description": "The name of the artist who "
                             "created the sculpture."}})
CRIMES = spec("law_crimes.search", "Locate individuals based on their crime conviction and "
              "location.",
              {"crime": {"type": "string", "description": "Type of crime to search."},
               "location": {"type": "string", "description": "City or state where the crime "
                            "was committed."},
               "year": {"type": "integer", "description": "The year when the crime was "
                        "committed."}})


def test_a_value_fills_one_parameter_and_a_place_the_place_parameter() -> None:
    plain, distinct = without_and_with("distinct_values")
    question = "What is the value of the sculpture 'The Thinker' by Rodin?"
    (twice,) = ask(plain, question, [SCULPTURE]).tool_uses
    assert twice.input == {"sculpture": "The Thinker", "artist": "The Thinker"}
    (once,) = ask(distinct, question, [SCULPTURE]).tool_uses
    assert once.input == {"sculpture": "The Thinker", "artist": "Rodin"}
    question = ("Show me all individuals who were convicted for money laundering from San "
                "Francisco in 2019 and ones convicted for the same in Texas in 2018")
    placed, = {c.input["crime"] for c in ask(plain, question, [CRIMES], max_tokens=160)
               .tool_uses} - {"money laundering"}
    assert placed == "San Francisco"
    crimes = {c.input["crime"] for c in ask(distinct, question, [CRIMES], max_tokens=160)
              .tool_uses}
    assert crimes == {"money laundering"}


QUADRATIC = spec("solve_quadratic", "Find the roots of a quadratic equation. Returns both "
                 "roots.",
                 {"a": {"type": "integer", "description": "Coefficient of x^2."},
                  "b": {"type": "integer", "description": "Coefficient of x."},
                  "c": {"type": "integer", "description": "Constant term."}},
                 {"root_type": {"type": "string", "description": "The type of roots to "
                                "return: 'real' for real roots, 'all' for both real and "
                                "complex roots. Default value is 'real'."}})
FLIGHT = spec("flight.book", "Book a direct flight for a specific date and time from "
              "departure location to destination location.",
              {"departure_location": {"type": "string", "description": "The location you "
                                      "are departing from."},
               "destination_location": {"type": "string", "description": "The location you "
                                        "are flying to."},
               "date": {"type": "string", "description": "The date of the flight. Accepts "
                        "standard date format e.g., 2022-04-28."}},
              {"time": {"type": "string", "description": "Preferred time of flight. Default "
                        "is 'morning'."},
               "direct_flight": {"type": "boolean", "description": "If set to true, only "
                                 "direct flights will be searched. Default is false."}})


def test_an_optional_parameter_whose_option_the_question_names_is_written() -> None:
    plain, named = without_and_with("named_options")
    question = "Find all the roots of a quadratic equation given coefficients a = 3, b = -11, " \
               "and c = -4."
    (left_out,) = ask(plain, question, [QUADRATIC]).tool_uses
    assert left_out.input == {"a": 3, "b": -11, "c": -4}
    (call,) = ask(named, question, [QUADRATIC]).tool_uses
    assert call.input == {"a": 3, "b": -11, "c": -4, "root_type": "all"}
    question = "Book a direct flight from San Francisco to London for 2022-04-27 afternoon"
    (left_out,) = ask(plain, question, [FLIGHT]).tool_uses
    assert "direct_flight" not in left_out.input
    (call,) = ask(named, question, [FLIGHT]).tool_uses
    assert call.input == {**left_out.input, "direct_flight": True}


def test_a_name_written_after_a_parameters_name_goes_there() -> None:
    plain, placed = without_and_with("after_names")
    question = "I'm in the mood for a good laugh. Find a comedy movie directed by Edgar Wright?"
    (first,) = ask(plain, question, [MOVIES]).tool_uses
    assert first.input.get("cast") == "Edgar Wright"
    assert "directed_by" not in first.input
    (call,) = ask(placed, question, [MOVIES]).tool_uses
    assert call.input.get("directed_by") == "Edgar Wright"
    assert "cast" not in call.input


MAGNETIC_FIELD = spec(
    "calculate_magnetic_field_strength", "Calculate the magnetic field strength at a point a "
    "certain distance away from a long wire carrying a current.",
    {"current": {"type": "integer", "description": "The current flowing through the wire in "
                 "Amperes."},
     "distance": {"type": "integer", "description": "The perpendicular distance from the wire "
                  "to the point where the magnetic field is being calculated."}},
    {"permeability": {"type": "number", "description": "The permeability of the medium. "
                      "Default is 12.57e-7 (Vacuum Permeability)."}})


def test_a_number_labelled_by_a_parameters_name_goes_there() -> None:
    plain, placed = without_and_with("named_numbers")
    question = ("Calculate the magnetic field strength 10 meters away from a long wire "
                "carrying a current of 20 Amperes.")
    (first,) = ask(plain, question, [MAGNETIC_FIELD]).tool_uses
    assert first.input == {"current": 10, "distance": 20}
    (call,) = ask(placed, question, [MAGNETIC_FIELD]).tool_uses
    assert call.input == {"current": 20, "distance": 10}


COMMAND = spec("cmd_controller_execute", "Executes a specified command in the Windows "
               "operating system using the os.system() function.",
               {"command": {"type": "string", "description": "The command line instruction "
                            "to be passed to os.system() for execution, formatted as a "
                            "Windows command prompt statement."}},
               {"unit": {"type": "string", "description": "The unit of measurement for the "
                         "command execution time, such as 'seconds' or 'milliseconds'",
                         "enum": ["seconds", "milliseconds"], "default": "N/A"}})
SERVICE_ID = spec("get_service_id", "Retrieve the unique identifier for a specific service "
                  "type, such as cleaning or ironing services.",
                  {"service_id": {"type": "integer", "enum": [1, 2], "description": (
                      "The unique identifier of the service. For example, '1' represents "
                      "cleaning service, and '2' represents ironing service.")}})


def test_the_command_line_the_question_says_to_use_is_written_whole() -> None:
    plain, whole = without_and_with("whole_phrases")
    question = "check whether the docker is installed using docker --version"
    (first,) = ask(plain, question, [COMMAND]).tool_uses
    assert first.input == {"command": "docker"}
    (call,) = ask(whole, question, [COMMAND]).tool_uses
    assert call.input == {"command": "docker --version"}


def test_the_code_an_enums_description_gives_is_written() -> None:
    plain, coded = without_and_with("described_codes")
    question = "Help find a housekeeper who provides ironing services."
    (first,) = ask(plain, question, [SERVICE_ID]).tool_uses
    assert first.input == {"service_id": 1}
    (call,) = ask(coded, question, [SERVICE_ID]).tool_uses
    assert call.input == {"service_id": 2}


COMPOUNDED = spec(
    "calculate_compounded_interest", "Calculate the compounded interest for a given initial "
    "deposit, interest rate, time and number of times the interest is compounded per unit "
    "time.",
    {"principal": {"type": "integer", "description": "The initial amount of money that is "
                   "being invested or loaned."},
     "rate": {"type": "number", "description": "The annual interest rate."},
     "time": {"type": "integer", "description": "The number of time periods the money is "
              "invested or loaned for."},
     "n": {"type": "integer", "description": "The number of times that interest is compounded "
           "per unit time."}})


def test_the_times_a_year_interest_is_compounded_are_written() -> None:
    plain, counted = without_and_with("compounding")
    question = ("Calculate the compounded interest on an initial deposit of $5000 at an annual "
                "interest rate of 3% for 5 years, compounded quarterly.")
    (first,) = ask(plain, question, [COMPOUNDED]).tool_uses
    assert first.input == {"principal": 5000, "rate": 0.03, "time": 5, "n": 5}
    (call,) = ask(counted, question, [COMPOUNDED]).tool_uses
    assert call.input == {"principal": 5000, "rate": 0.03, "time": 5, "n": 4}


BOOK_FLIGHT = spec(
    "book_flight", "Books a flight based on the provided departure location and time. "
    "Optionally, a return time can be specified for a round-trip flight.",
    {"departure_location": {"type": "string", "description": "The departure location in the "
                            "format of 'City, State', such as 'Los Angeles, CA'."},
     "departure_time": {"type": "string", "description": "The departure time in the format "
                        "of 'dd/mm/yyyy HH:MM', representing the local time of the "
                        "departure location."}},
    {"return_time": {"type": "string", "description": "The return time in the format of "
                     "'dd/mm/yyyy HH:MM', representing the local time of the departure "
                     "location. If not specified, a one-way ticket is booked."}})


def test_a_date_and_time_are_written_in_the_format_the_parameter_asks_for() -> None:
    plain, dated = without_and_with("date_formats")
    question = ("Can you book a flight for me departing from Paris, France, on the 12th of "
                "March 2023 at 3 in the afternoon?")
    (first,) = ask(plain, question, [BOOK_FLIGHT]).tool_uses
    assert first.input["departure_time"] == "3:00"
    (call,) = ask(dated, question, [BOOK_FLIGHT]).tool_uses
    assert call.input == {"departure_location": "Paris, France",
                          "departure_time": "12/03/2023 15:00"}


FINAL_SPEED = spec(
    "calculate_final_speed", "Calculate the final speed of an object dropped from a certain "
    "height without air resistance.",
    {"initial_velocity": {"type": "integer", "description": "The initial velocity of the "
                          "object."},
     "height": {"type": "integer", "description": "The height from which the object is "
                "dropped."}},
    {"gravity": {"type": "number", "description": "The gravitational acceleration. Default is "
                 "9.8 m/s^2."}})


def test_an_object_dropped_starts_at_an_initial_velocity_of_0() -> None:
    plain, implied = without_and_with("implied_numbers")
    question = "Calculate the final speed of an object dropped from 100 m without air resistance."
    (first,) = ask(plain, question, [FINAL_SPEED]).tool_uses
    assert first.input == {"initial_velocity": 100, "height": 100}
    (call,) = ask(implied, question, [FINAL_SPEED]).tool_uses
    assert call.input == {"initial_velocity": 0, "height": 100}


HOUSE_PRICES = spec(
    "house_price_forecast", "Predict the house prices for a specific location and time frame.",
    {"location": {"type": "string", "description": "The city that you want to get the house "
                  "price prediction for."},
     "months": {"type": "integer", "description": "Number of future months for the "
                "prediction."}})


def test_the_next_month_is_one_month() -> None:
    plain, implied = without_and_with("implied_numbers")
    question = "Predict the house prices for the next month in New York."
    (first,) = ask(plain, question, [HOUSE_PRICES]).tool_uses
    assert first.input == {"location": "New York", "months": 12}
    (call,) = ask(implied, question, [HOUSE_PRICES]).tool_uses
    assert call.input == {"location": "New York", "months": 1}


DERIVATIVE = spec(
    "calculus_derivative", "Compute the derivative of a function at a specific value.",
    {"function": {"type": "string", "description": "The function to calculate the derivative "
                  "of."},
     "value": {"type": "integer", "description": "The value where the derivative needs to be "
               "calculated at."}},
    {"function_variable": {"type": "string", "description": "The variable present in the "
                           "function, for instance x or y, etc. Default is 'x'."}})


def test_a_number_inside_the_function_is_not_the_point() -> None:
    plain, stray = without_and_with("stray_numbers")
    question = "Calculate the derivative of the function 2x^2 at x = 1."
    (first,) = ask(plain, question, [DERIVATIVE]).tool_uses
    assert first.input["value"] == 2
    (call,) = ask(stray, question, [DERIVATIVE]).tool_uses
    assert call.input["function"] == "2x^2" and call.input["value"] == 1


SORT_LIST = spec(
    "sort_list", "Sort the elements of a list in ascending or descending order",
    {"elements": {"type": "array", "items": {"type": "string"},
                  "description": "The list of elements to sort."}},
    {"order": {"type": "string", "description": "The order in which to sort the elements. "
               "This can be 'asc' for ascending order, or 'desc' for descending order."}})


def test_a_list_the_question_writes_out_is_given_whole() -> None:
    plain, lists = without_and_with("literal_lists")
    question = "Sort this list of names in ascending order: ['Sam', 'Alice', 'Jack']"
    (first,) = ask(plain, question, [SORT_LIST]).tool_uses
    assert first.input["elements"] == []
    (call,) = ask(lists, question, [SORT_LIST]).tool_uses
    assert call.input["elements"] == ["Sam", "Alice", "Jack"]


SPORTS_RANKING = spec(
    "sports_ranking", "Fetch the ranking of a specific sports team in a specific league",
    {"team": {"type": "string", "description": "The name of the team."},
     "league": {"type": "string", "description": "The name of the league."}},
    {"season": {"type": "integer", "description": "Optional parameter to specify the season, "
                "default is the current season '2023' if not specified."}})
BOOK_ROOM = spec(
    "book_room", "Book a room in a specified hotel.",
    {"hotel_name": {"type": "string", "description": "The name of the hotel."},
     "room_type": {"type": "string", "description": "The type of room to be booked."},
     "num_nights": {"type": "integer", "description": "The number of nights to book the room "
                    "for."}})


def test_a_value_the_question_does_not_write_gives_way_to_the_name_it_does() -> None:
    plain, names = without_and_with("written_names")
    question = "What is the ranking of Manchester United in Premier League?"
    (first,) = ask(plain, question, [SPORTS_RANKING]).tool_uses
    assert first.input == {"team": "Manchester United", "league": "Manchester City"}
    (call,) = ask(names, question, [SPORTS_RANKING]).tool_uses
    assert call.input == {"team": "Manchester United", "league": "Premier League"}
    question = "I would like to book a single room for two nights at The Plaza hotel."
    (first,) = ask(plain, question, [BOOK_ROOM]).tool_uses
    assert first.input["room_type"] == "two" and first.input["num_nights"] == 2
    (call,) = ask(names, question, [BOOK_ROOM]).tool_uses
    assert call.input["room_type"] == "single" and call.input["num_nights"] == 2


CONVERT = spec(
    "currency_conversion_convert", "Convert a value from one currency to another.",
    {"amount": {"type": "integer", "description": "The amount to be converted."},
     "from_currency": {"type": "string", "description": "The currency to convert from."},
     "to_currency": {"type": "string", "description": "The currency to convert to."}})


def test_currencies_the_question_names_are_given_their_codes() -> None:
    plain, codes = without_and_with("currency_codes")
    question = "Convert 150 Euros to Canadian dollars."
    (first,) = ask(plain, question, [CONVERT]).tool_uses
    assert first.input == {"amount": 150, "from_currency": "EUR", "to_currency": "CAN"}
    (call,) = ask(codes, question, [CONVERT]).tool_uses
    assert call.input == {"amount": 150, "from_currency": "EUR", "to_currency": "CAD"}


VEGAN = spec("vegan_restaurant_find_nearby", "Locate nearby vegan restaurants.",
             {"location": {"type": "string",
                           "description": "The city and state, e.g. Los Angeles, CA."}},
             {"operating_hours": {"type": "integer", "description": "Open until this hour "
                                  "(24 hour format), e.g. 22."}})


def test_the_same_asked_again_gets_a_further_call_and_its_list_the_rest() -> None:
    question = ("Can you help me find vegan restaurants in Los Angeles, CA that are open "
                "until at least 22:00, and then do the same for San Francisco, CA and "
                "Seattle, WA?")
    plain, asked = ([c.input.get("location") for c in ask(b, question, [VEGAN],
                                                            max_tokens=128).tool_uses]
                    for b in without_and_with("asked_more"))
    assert plain == ["Los Angeles, CA"]
    # The reopened block's call names the first place of the list; fan_out adds the other.
    assert asked == ["Los Angeles, CA", "San Francisco, CA", "Seattle, WA"]


SORT = spec("array_sort", "Sorts a list of numbers.",
            {"list": {"type": "array", "items": {"type": "integer"},
                      "description": "The list of numbers to sort."},
             "order": {"type": "string", "enum": ["ascending", "descending"],
                       "description": "Order of sorting."}})
RAIN = spec("precipitation_stats", "Get precipitation statistics for a location over a "
            "time frame.",
            {"location": {"type": "string",
                          "description": "The name of the location, e.g., 'Amazon rainforest'."},
             "time_frame": {"type": "string", "enum": ["six_months", "year", "five_years"],
                            "description": "The time period."}})


@pytest.mark.parametrize(("question", "tool", "key", "options"), [
    ("Sort the list [5, 2, 9, 1] in both ascending and descending order.", SORT, "order",
     ["ascending", "descending"]),
    ("What are the precipitation statistics for the Amazon rainforest for the last six "
     "months, the last year, and the last five years?", RAIN, "time_frame",
     ["six_months", "year", "five_years"]),
])
def test_each_option_the_question_lists_gets_its_call(question: str, tool: ToolSpec,
                                                      key: str, options: list[str]) -> None:
    plain, each = ([c.input for c in ask(b, question, [tool], max_tokens=128).tool_uses]
                   for b in without_and_with("each_option"))
    assert len(plain) == 1 and plain[0][key] in options
    # The model's call first, then the same call with each other listed option.
    assert each[0] == plain[0]
    assert sorted(c[key] for c in each) == sorted(options)
    assert all({k: v for k, v in c.items() if k != key} ==
               {k: v for k, v in plain[0].items() if k != key} for c in each)


TEMPERATURE = spec("average_temperature", "Retrieves the average temperature for a specific "
                   "location over the defined timeframe.",
                   {"location": {"type": "string", "description": "The city to get the "
                                 "average temperature for. It should format as city name "
                                 "such as Boston."},
                    "days": {"type": "integer", "description": "The number of days to get "
                             "the average temperature for."},
                    "temp_unit": {"type": "string", "description": "The temperature unit "
                                  "('Celsius' or 'Fahrenheit'). Default is 'Fahrenheit'."}})


def test_crossed_values_are_paired_as_the_question_pairs_them() -> None:
    question = ("What is the average temperature in New York for the past 7 days in "
                "Fahrenheit and how does it compare to the average temperature in Los Angeles "
                "for the same period in Celsius?")
    plain, paired = ([(c.input["location"], c.input.get("temp_unit"))
                      for c in ask(b, question, [TEMPERATURE], max_tokens=200).tool_uses]
                     for b in without_and_with("pair_in_order"))
    # The model crosses the units; paired, each city has the unit written after it.
    assert plain == [("New York", "Celsius"), ("Los Angeles", "Fahrenheit")]
    assert paired == [("New York", "Fahrenheit"), ("Los Angeles", "Celsius")]


INTERVAL = spec("confidence_interval_calculate", "Calculate the confidence interval for a mean.",
                {"sample_std_dev": {"type": "integer", "description": "The standard deviation "
                                    "of the sample."},
                 "sample_size": {"type": "integer", "description": "The size of the sample."},
                 "sample_mean": {"type": "integer", "description": "The mean of the sample."}},
                {"confidence_level": {"type": "number", "description": "The level of "
                                      "confidence. Default is 0.9."}})


def test_an_optional_value_given_once_goes_to_every_call() -> None:
    question = ("Can you give me 95% confidence interval for a sample mean with standard "
                "deviation of 10, sample size of 50 and sample mean of 25? And can you do the "
                "same but for a sample size of 150 instead?")
    plain, shared = ([c.input for c in ask(b, question, [INTERVAL], max_tokens=200).tool_uses]
                     for b in without_and_with("share_optionals"))
    # The model gives the level to one call of two; shared, both have it, nothing else moves.
    assert sorted(c["sample_size"] for c in plain) == [50, 150]
    assert [c.get("confidence_level") for c in plain].count(0.95) == 1
    assert [c.get("confidence_level") for c in shared] == [0.95, 0.95]
    assert [{k: v for k, v in c.items() if k != "confidence_level"} for c in shared] == \
        [{k: v for k, v in c.items() if k != "confidence_level"} for c in plain]
