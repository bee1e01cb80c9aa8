"""The decisions taken around a small model (presets/en_bfcl/choices.py) without a model: tool
retrieval, values given by the conversation, the call-or-answer rule and their wiring in
PromptToolsBackend through a fake text model that scores alternatives."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from tooluse.messages import (
    Message,
    Request,
    ToolChoice,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
)
from tooluse.presets.en_bfcl import EnBfcl
from tooluse.presets.en_bfcl.choices import (
    CallDecision,
    further_tools,
    keep_given_optionals,
    name_coverage,
    naming_words,
    percents_as_fractions,
    prerequisite,
    relevance,
    select_tools,
    without_inside_others,
)
from tooluse.prompting import PromptToolsBackend, TextEnd, ToolGrammar, tool_call_grammar
from tooluse.language.words import given_by, mentions, names_only, stem


def tool(name: str, description: str, **props: Any) -> ToolSpec:
    return ToolSpec(name=name, description=description, input_schema={
        "type": "object", "properties": props or {"x": {"type": "string"}},
        "required": list(props)[:1] or ["x"]})


TOOLS = [
    tool("get_weather", "Current weather and temperature in a city.", city={"type": "string"}),
    tool("get_stock_price", "Latest stock price of a company ticker.", symbol={"type": "string"}),
    tool("send_email", "Send an email message to a recipient.", to={"type": "string"}),
    tool("translate_text", "Translate text into another language.", text={"type": "string"}),
    tool("book_flight", "Book a flight between two airports.", origin={"type": "string"}),
    tool("calculate_bmi", "Body mass index from weight and height.", weight={"type": "number"}),
]


def test_retrieval_keeps_the_relevant_tools_and_names_the_rest() -> None:
    pytest.importorskip("bm25s")
    kept, left_out = select_tools("What is the stock price of Apple?", TOOLS, 2)
    assert "get_stock_price" in [t.name for t in kept] and len(kept) == 2
    assert len(left_out) == 4 and "get_stock_price" not in left_out
    # a tool that must stay (named choice, earlier call) stays, within the limit's count
    kept, left_out = select_tools("weather in Paris", TOOLS, 2, keep=["send_email"])
    assert {"get_weather", "send_email"} == {t.name for t in kept}
    # order of the offer is kept; under the limit nothing is left out
    assert select_tools("anything", TOOLS[:3], 5) == (TOOLS[:3], [])


def test_values_given_by_the_conversation() -> None:
    text = "Book 2 rooms at the Grand Hotel in São Paulo for 3.5 nights, with breakfast."
    assert given_by("grand hotel", text) and given_by("São Paulo", text)
    assert not given_by("Hilton", text) and not given_by("", text)
    assert given_by(2, text) and given_by(3.5, text) and not given_by(4, text)
    assert given_by(True, text, "include_breakfast") and not given_by(True, text, "pet_friendly")
    assert given_by(["Grand Hotel", 2], text) and not given_by({"a": "Ritz"}, text)
    schema = {"type": "object", "required": ["hotel"], "properties": {}}
    kept, dropped = keep_given_optionals(
        {"hotel": "Ritz", "rooms": 2, "currency": "EUR", "pets": True}, schema, text)
    assert kept == {"hotel": "Ritz", "rooms": 2} and dropped == ["currency", "pets"]


def test_an_optional_parameter_does_not_take_a_value_another_one_took() -> None:
    schema = {"type": "object", "required": ["base", "height"], "properties": {
        "unit": {"type": "string"}, "base": {"type": "integer"},
        "height": {"type": "integer"}, "tags": {"type": "array"}}}
    text = "Find the area of a triangle with a base of 10 units and height of 5 units."
    # "10" is written once and base (required) has it, whatever order the model wrote them.
    kept, dropped = keep_given_optionals(
        {"unit": "10", "base": 10, "height": 5, "tags": []}, schema, text)
    assert kept == {"base": 10, "height": 5} and dropped == ["unit", "tags"]
    # Written twice, the value may serve twice; a word is counted like a number.
    twice = "Route from Philadelphia to Philadelphia, 10 stops and 10 detours"
    schema2 = {"type": "object", "required": ["start"], "properties": {
        "start": {"type": "string"}, "end": {"type": "string"},
        "stops": {"type": "integer"}, "detours": {"type": "integer"},
        "via": {"type": "string"}}}
    kept, dropped = keep_given_optionals(
        {"start": "Philadelphia", "end": "Philadelphia", "stops": 10, "detours": 10,
         "via": "Philadelphia"}, schema2, twice)
    assert kept == {"start": "Philadelphia", "end": "Philadelphia", "stops": 10,
                    "detours": 10} and dropped == ["via"]
    # A word naming the tool or a parameter is what the question asks for, not a value.
    shape = {"type": "object", "required": ["radius"], "properties": {
        "radius": {"type": "integer"}, "unit": {"type": "string"}}}
    kept, dropped = keep_given_optionals({"radius": 5, "unit": "Circle"}, shape,
                                         "the area of a circle with a radius of 5 units",
                                         "geometry.calculate_area_circle")
    assert kept == {"radius": 5} and dropped == ["unit"]
    kept, dropped = keep_given_optionals({"radius": 5, "unit": "cm"}, shape,
                                         "the area of a circle with a radius of 5 cm",
                                         "geometry.calculate_area_circle")
    assert kept == {"radius": 5, "unit": "cm"} and dropped == []
    # An identifier the user writes with underscores is a name of theirs, even made of
    # the tool's words; not one the conversation does not write, nor a tool's own name.
    train = {"type": "object", "properties": {"data": {"type": "string"},
                                               "n_estimators": {"type": "integer"}}}
    naming = naming_words("random_forest.train", train)
    asked = 'Train on the dataset "data_random_forest" with 100 trees.'
    assert not names_only("data_random_forest", naming, asked)
    assert names_only("data_random_forest", naming, "Train a random forest on my data.")
    assert names_only("random_forest", naming, "call random_forest.train twice")
    assert names_only("random forest data", naming, asked)
    assert not names_only("iris_data", naming, "use iris_data")  # not only naming words
    kept, _ = keep_given_optionals({"n_estimators": 100, "data": "data_random_forest"},
                                   train, asked, "random_forest.train")
    assert kept == {"n_estimators": 100, "data": "data_random_forest"}
    # Among optional parameters, the first one written keeps the value.
    kept, dropped = keep_given_optionals({"stops": 3, "detours": 3}, schema2, "3 stops")
    assert kept == {"stops": 3} and dropped == ["detours"]


def test_an_optional_string_written_only_inside_another_value_is_that_values() -> None:
    recipe = {"type": "object", "required": ["website", "recipe"], "properties": {
        "website": {"type": "string"}, "recipe": {"type": "string"},
        "optional_meal_time": {"type": "string"}}}
    asked = "How many calories in the Beef Lasagna Recipe from Foodnetwork.com?"
    kept, dropped = keep_given_optionals(
        {"website": "Foodnetwork.com", "recipe": "Beef Lasagna Recipe",
         "optional_meal_time": "Beef"}, recipe, asked)
    assert kept == {"website": "Foodnetwork.com", "recipe": "Beef Lasagna Recipe"}
    assert dropped == ["optional_meal_time"]
    # Written again on its own, it is given; so is a value the longer one does not hold.
    kept, dropped = keep_given_optionals(
        {"website": "Foodnetwork.com", "recipe": "Beef Lasagna Recipe",
         "optional_meal_time": "Beef"}, recipe, asked + " Beef is for dinner.")
    assert dropped == []
    kept, dropped = keep_given_optionals(
        {"website": "Foodnetwork.com", "recipe": "Lasagna",
         "optional_meal_time": "Beef"}, recipe, asked)
    assert dropped == []
    # An item of a list uses the value as much as a parameter does.
    game = {"type": "object", "required": ["teams"], "properties": {
        "teams": {"type": "array", "items": {"type": "string"}},
        "venue": {"type": "string"}}}
    question = "Who won the basketball game between Lakers and Clippers on Jan 28, 2021?"
    kept, dropped = keep_given_optionals(
        {"teams": ["Lakers", "Clippers"], "venue": "Lakers"}, game, question)
    assert kept == {"teams": ["Lakers", "Clippers"]} and dropped == ["venue"]
    kept, dropped = keep_given_optionals(
        {"teams": ["Lakers", "Clippers"], "venue": "Lakers"}, game,
        question + " They played at the Lakers' home court.")
    assert dropped == []
    # So does a number of a list: the 1 of both vectors is not also the rounding's.
    vectors = {"type": "object", "required": ["vector1", "vector2"], "properties": {
        "vector1": {"type": "array", "items": {"type": "integer"}},
        "vector2": {"type": "array", "items": {"type": "integer"}},
        "rounding": {"type": "integer"}}}
    question = "Calculate the cosine similarity between vector A [3, 2, 1] and vector B [1, 2, 3]."
    kept, dropped = keep_given_optionals(
        {"vector1": [3, 2, 1], "vector2": [1, 2, 3], "rounding": 1}, vectors, question)
    assert kept == {"vector1": [3, 2, 1], "vector2": [1, 2, 3]} and dropped == ["rounding"]
    kept, dropped = keep_given_optionals(
        {"vector1": [3, 2, 1], "vector2": [1, 2, 3], "rounding": 1}, vectors,
        question + " Round it to 1 decimal place.")
    assert dropped == []


def test_an_optional_string_inside_a_value_grown_since_is_left_out() -> None:
    recipe = {"type": "object", "required": ["website", "recipe"], "properties": {
        "website": {"type": "string"}, "recipe": {"type": "string"},
        "optional_meal_time": {"type": "string"}}}
    asked = "How many calories in the Beef Lasagna Recipe from Foodnetwork.com?"
    grown = {"website": "Foodnetwork.com", "recipe": "Beef Lasagna Recipe",
             "optional_meal_time": "Beef"}
    assert without_inside_others(grown, recipe, asked) == {
        "website": "Foodnetwork.com", "recipe": "Beef Lasagna Recipe"}
    # A required string stays; so does one the conversation also writes on its own.
    assert without_inside_others(grown, {**recipe, "required": list(grown)}, asked) == grown
    assert without_inside_others(grown, recipe, asked + " Beef for dinner.") == grown


def test_enum_members_mentioned_loosely_and_lists_of_them_given() -> None:
    park = "Find me the closest nature park that allows camping and has scenic views."
    assert [m for m in ("Camping", "Scenic View", "Trails", "Picnic Areas")
            if mentions(park, m)] == ["Camping", "Scenic View"]
    dna = "A DNA sequence with more G (Guanine) and C (Cytosine)."
    assert [m for m in ("A", "T", "C", "G") if mentions(dna, m)] == ["A", "C", "G"]
    assert not mentions("Good morning", "G") and not mentions("anything", " ")
    # Stop words alone do not make a mention ("the" of "The Hague").
    assert not mentions("the weather", "The Hague")
    # An optional list of mentioned members is kept, one of invented members is not.
    schema = {"type": "object", "required": [], "properties": {}}
    kept, dropped = keep_given_optionals(
        {"features": ["Camping", "Scenic View"], "extras": ["Trails"]}, schema, park)
    assert kept == {"features": ["Camping", "Scenic View"]} and dropped == ["extras"]


def test_percentages_given_as_fractions_where_a_rate_is_due() -> None:
    schema = {"type": "object", "properties": {
        "rate": {"type": "number", "description": "The annual interest rate."},
        "years": {"type": "number"},
        "share": {"type": "number", "description": "The share, as a percentage."},
        "count": {"type": "integer"}}}
    question = "Invest at 5% for 10 years; a share of 3 percent and 7 %."
    fixed, changed = percents_as_fractions(
        {"rate": 5, "years": 10, "share": 3, "count": 7}, schema, question)
    assert fixed == {"rate": 0.05, "years": 10, "share": 3, "count": 7} and changed == ["rate"]
    # A number the question also writes plainly is left alone ("5% for 5 years").
    assert percents_as_fractions({"rate": 5}, schema, "5% for 5 years")[1] == []
    assert percents_as_fractions({"rate": 3.5}, schema, "at 3.5 %")[0] == {"rate": 0.035}
    assert percents_as_fractions({"rate": 5}, {"type": "object"}, "5%") == ({"rate": 5}, [])


def test_further_tools_cover_the_rest_of_the_question() -> None:
    weather, stock, email = TOOLS[0], TOOLS[1], TOOLS[2]
    question = "What's the weather in Paris, and send an email message to Bob about it?"
    assert further_tools(question, [weather, stock, email], 0) == [2]
    # One word more ("latest") is not a further request; a word of the tool's name counts
    # twice ("price").
    assert further_tools("What's the weather in Paris, latest?", [weather, stock], 0) == []
    assert further_tools("What's the weather in Paris, price?", [weather, stock], 0) == [1]
    # Among more than five tools, none is planned (word overlap by chance).
    assert further_tools(question, TOOLS, 0) == []
    assert further_tools(question, TOOLS, 0, max_tools=6) == [2]


PRICE = ToolSpec(name="get_current_stock_price", description="Gets the current stock price "
                 "for a company from its ticker symbol.", input_schema={
                     "type": "object", "required": ["symbol"],
                     "properties": {"symbol": {"type": "string"}}})
TICKER = ToolSpec(name="get_ticker_symbol", description="Gets the stock ticker symbol for a "
                  "company searched by name.", input_schema={
                      "type": "object", "required": ["company_name"],
                      "properties": {"company_name": {"type": "string"}}})


def test_prerequisite_looks_up_what_the_chosen_tool_needs() -> None:
    question = "What is the current stock price of General Motors?"
    assert prerequisite(question, [PRICE, TICKER], 0) == 1
    assert prerequisite(question, [PRICE, TICKER], 0, called={"get_ticker_symbol"}) is None
    # The question speaks of the symbol: nothing to look up first.
    assert prerequisite("The price of the stock with symbol GM?", [PRICE, TICKER], 0) is None
    # A tool whose name shares the parameter's word with the chosen one's does not count
    # (country_info_capital's "country" is not looked up by country_info_largest_city).
    capital = tool("country_info_capital", "The capital of a country.",
                   country={"type": "string"})
    largest = tool("country_info_largest_city", "The largest city of a country.",
                   country={"type": "string"})
    assert prerequisite("What is the capital of Brazil?", [capital, largest], 0) is None
    # Nor one that looks nothing up (sum_elements for sort_list's elements).
    sort = tool("sort_list", "Sort a list.", elements={"type": "array"})
    total = tool("sum_elements", "Add the elements.", elements={"type": "array"})
    assert prerequisite("Sort these names: Sam, Alice", [sort, total], 0) is None


def test_relevance_and_decision() -> None:
    assert relevance("What's the weather in Paris?", TOOLS[0]) == pytest.approx(0.5)
    assert relevance("Tell me a joke", TOOLS[0]) == 0.0
    # Example values quoted in a description do not make a tool's subject
    # (mcp-server-time's convert_time mentions 'Asia/Tokyo').
    convert = tool("convert_time", "Convert time between timezones.", target_timezone={
        "type": "string", "description": "Target IANA timezone name (e.g., 'Asia/Tokyo')."})
    current = tool("get_current_time", "Get current time in a specific timezone.",
                   timezone={"type": "string", "description": "IANA timezone name."})
    question = "What time is it in Tokyo?"
    assert relevance(question, convert) > relevance(question, current)
    assert relevance(question, convert, examples=False) == relevance(question, current,
                                                                     examples=False)
    # A question asking for two things is covered by the two tools together.
    both = "What's the weather in Paris and the stock price of Apple?"
    assert relevance(both, TOOLS[:2]) > max(relevance(both, t) for t in TOOLS[:2])
    assert relevance(both, [TOOLS[0]]) == relevance(both, TOOLS[0])
    rule = CallDecision(bias=10.0, w_open=1.0, w_tool=0.0, w_rel=5.0)
    assert rule.calls(-8.0, -1.0, 0.0) and not rule.calls(-12.0, -1.0, 0.0)
    assert rule.calls(-12.0, -1.0, 1.0)
    assert not rule.calls(float("nan"), 0.0, 0.0)


def test_name_coverage_is_how_much_of_a_tool_name_the_question_says() -> None:
    assert name_coverage("What's the price of Apple?", TOOLS) == 0.5  # price, not stock
    assert name_coverage("What is the weather like in Oslo?", TOOLS) == 1.0  # "get" says nothing
    assert name_coverage("Tell me a joke about cats.", TOOLS) == 0.0
    assert name_coverage("anything", []) == 0.0
    # The decision weighs it: the same scores call only with the tool's name said.
    rule = CallDecision(bias=4.0, w_open=0.4, w_rel=0.3, w_name=3.4)
    assert rule.calls(-12.0, 0.0, 0.4, name_coverage("the stock price of Apple", TOOLS))
    assert not rule.calls(-12.0, 0.0, 0.4, name_coverage("Tell me a joke about cats", TOOLS))


def test_grammar_first_tool_is_fixed_later_ones_free() -> None:
    grammar = tool_call_grammar(TOOLS[:2], ToolChoice(type="any"), first="get_stock_price")
    assert grammar.prefill.endswith("<tool_name>get_stock_price</tool_name>\n<parameters>\n")
    second = "\n<invoke>\n<tool_name>get_weather</tool_name>\n<parameters>\n<city>Oslo</city>\n" \
        "</parameters>\n</invoke>\n</function_calls>"
    assert grammar.matcher.matches(
        b"<symbol>AAPL</symbol>\n</parameters>\n</invoke>" + second.encode())
    with pytest.raises(ValueError, match="not among the tools"):
        tool_call_grammar(TOOLS[:2], ToolChoice(type="any"), first="nope")


def test_grammar_only_first_closes_the_block_after_the_planned_calls() -> None:
    plan = ["get_stock_price", "get_weather"]
    body = (b"<symbol>AAPL</symbol>\n</parameters>\n</invoke>\n<invoke>\n"
            b"<tool_name>get_weather</tool_name>\n<parameters>\n<city>Oslo</city>\n"
            b"</parameters>\n</invoke>")
    third = (b"\n<invoke>\n<tool_name>get_weather</tool_name>\n<parameters>\n"
             b"<city>Rome</city>\n</parameters>\n</invoke>")
    free = tool_call_grammar(TOOLS[:2], ToolChoice(type="any"), first=plan)
    only = tool_call_grammar(TOOLS[:2], ToolChoice(type="any"), first=plan, only_first=True)
    assert free.prefill == only.prefill
    for grammar in (free, only):
        assert grammar.matcher.matches(body + b"\n</function_calls>")
    assert free.matcher.matches(body + third + b"\n</function_calls>")
    assert not only.matcher.matches(body + third + b"\n</function_calls>")


class ScoringText:
    """A fake text model that scores alternatives from a table and writes one output."""

    model = "fake"

    def __init__(self, scores: dict[str, float], output: str) -> None:
        self.scores = scores
        self.output = output
        self.asked: list[dict[str, Any]] = []

    def score_continuations(self, messages: Sequence[dict[str, str]],
                            continuations: Sequence[str], *, prefill: str = "") -> list[float]:
        return [self.scores.get(c, -20.0) for c in continuations]

    def generate_text(self, messages: Sequence[dict[str, str]], *, prefill: str = "",
                      stop: Sequence[str] = (), max_tokens: int = 1024,
                      temperature: float = 0.0, top_p: float | None = None,
                      top_k: int | None = None,
                      grammar: ToolGrammar | None = None) -> Iterator[str | TextEnd]:
        self.asked.append({"prefill": prefill, "grammar": grammar})
        yield self.output
        yield TextEnd(reason="end")


OPENER = "<function_calls>\n<invoke>\n<tool_name>"


def _request(question: str, choice: str = "auto") -> Request:
    return Request(messages=[Message(role="user", content=question)], tools=TOOLS[:2],
                   tool_choice=ToolChoice(type=choice), max_tokens=64)


def test_backend_decides_call_or_text_and_scores_the_whole_tool_name() -> None:
    scores = {OPENER: -3.0, "get_weather</tool_name>": -9.0, "get_stock_price</tool_name>": -2.0}
    call_body = "<symbol>AAPL</symbol>\n</parameters>\n</invoke>\n</function_calls>"
    text = ScoringText(scores, call_body)
    backend = PromptToolsBackend(text, score_tools=True, assist=EnBfcl(
        only=("decide",), decision=CallDecision(bias=5.0)))
    response = backend.complete(_request("Stock price of AAPL?"))
    assert [(b.name, b.input) for b in response.tool_uses] == [
        ("get_stock_price", {"symbol": "AAPL"})]
    assert text.asked[0]["prefill"].endswith("<tool_name>get_stock_price</tool_name>\n"
                                             "<parameters>\n")
    assert backend.last_end is not None and backend.last_end.timings["call_decided"] == 1.0
    # a low likelihood of opening a call: text only (the text grammar, no prefill)
    text = ScoringText({**scores, OPENER: -9.0}, "I cannot help with that.")
    backend = PromptToolsBackend(text, score_tools=True, assist=EnBfcl(
        only=("decide",), decision=CallDecision(bias=5.0)))
    response = backend.complete(_request("Tell me a joke"))
    assert response.text() == "I cannot help with that." and not response.tool_uses
    grammar = text.asked[0]["grammar"]
    assert text.asked[0]["prefill"] == "" and grammar is not None
    assert not grammar.matcher.matches(b"<function_calls>")


def test_backend_ranks_the_first_tool_by_the_question_words_it_covers() -> None:
    # The model finds get_weather's whole name likelier; the question's words are the
    # stock tool's.
    scores = {OPENER: -3.0, "get_weather</tool_name>": -1.0, "get_stock_price</tool_name>": -6.0}
    call_body = "<symbol>AAPL</symbol>\n</parameters>\n</invoke>\n</function_calls>"
    for rank, first in ((False, "get_weather"), (True, "get_stock_price")):
        text = ScoringText(scores, call_body)
        backend = PromptToolsBackend(text, score_tools=not rank,
                                     assist=EnBfcl(only=("rank_tools",)) if rank else None)
        backend.complete(_request("What is the latest stock price of the AAPL ticker?", "any"))
        assert text.asked[0]["prefill"].endswith(f"<tool_name>{first}</tool_name>\n"
                                                 "<parameters>\n")
    # Under auto without a decision nothing is forced; one tool: nothing to rank.
    text = ScoringText(scores, "Fine.")
    PromptToolsBackend(text, assist=EnBfcl(only=("rank_tools",))).complete(_request("stock price?"))
    assert "<tool_name>" not in text.asked[0]["prefill"]


def test_backend_plans_the_further_tools_the_question_asks_for() -> None:
    scores = {OPENER: -3.0, "get_weather</tool_name>": -1.0, "get_stock_price</tool_name>": -6.0}
    body = ("<city>Paris</city>\n</parameters>\n</invoke>\n<invoke>\n<tool_name>"
            "get_stock_price</tool_name>\n<parameters>\n<symbol>AAPL</symbol>\n"
            "</parameters>\n</invoke>\n</function_calls>")
    text = ScoringText(scores, body)
    backend = PromptToolsBackend(text, assist=EnBfcl(only=("rank_tools", "plan_tools")))
    question = "Current weather and temperature in the city of Paris, and the stock price?"
    response = backend.complete(_request(question, "any"))
    assert [b.name for b in response.tool_uses] == ["get_weather", "get_stock_price"]
    # The first call's tool was the rule's choice; the second call was the plan's, not the
    # model's (its values are the model's): both recorded.
    first, second = response.tool_uses
    assert first.source == "model" and first.origin is not None \
        and first.origin.steered_by == ["rank_tools"]
    assert second.source == "added" and second.origin is not None \
        and second.origin.rule == "plan_tools"
    grammar = text.asked[0]["grammar"]
    assert backend.last_end is not None and backend.last_end.timings["planned_calls"] == 2.0
    # The grammar forces the second call's tool: stopping after the first is not allowed.
    assert not grammar.matcher.matches(b"<city>Paris</city>\n</parameters>\n</invoke>\n"
                                       b"</function_calls>")
    assert grammar.matcher.matches(body.encode())


def test_backend_calls_the_prerequisite_first_and_the_chosen_tool_next_turn() -> None:
    scores = {"get_current_stock_price</tool_name>": -1.0, "get_ticker_symbol</tool_name>": -5.0}
    text = ScoringText(scores, "<company_name>General Motors</company_name>\n</parameters>\n"
                       "</invoke>\n</function_calls>")
    backend = PromptToolsBackend(text, assist=EnBfcl(only=("rank_tools", "prerequisite_tools")))
    question = "What is the current stock price of General Motors?"
    first = backend.complete(Request(messages=[Message(role="user", content=question)],
                                     tools=[PRICE, TICKER], tool_choice=ToolChoice(type="any")))
    assert [b.name for b in first.tool_uses] == ["get_ticker_symbol"]
    assert backend.last_end is not None and backend.last_end.timings["prerequisite_first"] == 1
    # Next turn, with the symbol looked up: the price tool.
    call = first.tool_uses[0]
    # (the model writes the company's name; the lookup's result replaces it)
    text.output = "<symbol>General Motors</symbol>\n</parameters>\n</invoke>\n</function_calls>"
    second = backend.complete(Request(messages=[
        Message(role="user", content=question),
        Message(role="assistant", content=[call]),
        Message(role="user", content=[ToolResultBlock(tool_use_id=call.id, content="GM")])],
        tools=[PRICE, TICKER], tool_choice=ToolChoice(type="any")))
    assert [(b.name, b.input) for b in second.tool_uses] == [
        ("get_current_stock_price", {"symbol": "GM"})]
    # The looked-up value replaced the model's, and the call says so.
    origin = second.tool_uses[0].origin
    assert origin is not None and origin.source == "edited"
    assert [(c.parameter, c.before, c.after, c.rule) for c in origin.changes] == [
        ("symbol", "General Motors", "GM", "prerequisite_tools")]


def test_between_tools_covering_as_much_one_not_yet_called_is_ranked_first() -> None:
    # "How much is a share of Ford?" says nothing of either tool's words; the model would
    # look the symbol up again, but after the lookup the price tool is next.
    scores = {"get_current_stock_price</tool_name>": -5.0, "get_ticker_symbol</tool_name>": -1.0}
    text = ScoringText(scores, "<symbol>F</symbol>\n</parameters>\n</invoke>\n"
                       "</function_calls>")
    backend = PromptToolsBackend(text, assist=EnBfcl(only=("rank_tools",)))
    question = "How much is a share of Ford currently?"
    lookup = ToolUseBlock(id="toolu_1", name="get_ticker_symbol",
                          input={"company_name": "Ford"})
    response = backend.complete(Request(messages=[
        Message(role="user", content=question),
        Message(role="assistant", content=[lookup]),
        Message(role="user", content=[ToolResultBlock(tool_use_id="toolu_1", content="F")])],
        tools=[PRICE, TICKER], tool_choice=ToolChoice(type="any")))
    assert [b.name for b in response.tool_uses] == ["get_current_stock_price"]


def test_backend_leaves_out_invented_optionals_and_retrieves_tools() -> None:
    pytest.importorskip("bm25s")
    body = ("get_weather</tool_name>\n<parameters>\n<city>Oslo</city>\n"
            "<unit>kelvin</unit>\n</parameters>\n</invoke>\n</function_calls>")
    weather = ToolSpec(name="get_weather", description="Weather in a city.", input_schema={
        "type": "object", "required": ["city"],
        "properties": {"city": {"type": "string"}, "unit": {"type": "string"}}})
    backend = PromptToolsBackend(ScoringText({}, body), assist=EnBfcl(
        only=("optional_from_conversation",), max_tools=3))
    request = Request(messages=[Message(role="user", content="Weather in Oslo?")],
                      tools=[weather, *TOOLS[1:]], tool_choice=ToolChoice(type="any"))
    response = backend.complete(request)
    assert [b.input for b in response.tool_uses] == [{"city": "Oslo"}]
    assert len(backend.last_left_out) == 3 and "get_weather" not in backend.last_left_out
    assert backend.last_end is not None and backend.last_end.timings["optional_dropped"] == 1


def test_stems_of_one_word_meet() -> None:
    for words in (("prices", "price", "pricing", "priced"),
                  ("calculated", "calculate", "calculating"),
                  ("movies", "movie"), ("cities", "city"), ("classes", "class"),
                  ("matches", "match"), ("services", "service"), ("ironing", "iron")):
        assert len({stem(w) for w in words}) == 1, words
    # Words ending in "ss", "us", "is" are no plurals.
    assert stem("status") == "status" and stem("analysis") == "analysis"
    assert stem("movies") != stem("movers")


def test_a_tool_named_in_the_plural_is_named_by_the_singular() -> None:
    movies = ToolSpec(name="Movies_3_FindMovies", description="Find movies.",
                      input_schema={"type": "object", "properties": {}})
    assert name_coverage("Can you find me a nice movie directed by James Gray?", [movies]) == 1.0
