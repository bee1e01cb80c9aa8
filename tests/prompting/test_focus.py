"""Where each tool's values are in the question (tooluse.prompting.focus)."""

from __future__ import annotations

from tooluse.messages import ToolSpec
from tooluse.prompting.focus import clauses, value_focus


def tool(name: str, description: str, *params: str) -> ToolSpec:
    return ToolSpec(name=name, description=description, input_schema={
        "type": "object", "properties": {p: {"type": "string"} for p in params}})


COUNTRY = [tool("country_info.largest_city", "The largest city of a country.", "country"),
           tool("country_info.population", "The population of a country.", "country"),
           tool("country_info.capital", "The capital of a country.", "country")]


def test_clauses_part_at_sentences_semicolons_and_new_requests() -> None:
    assert clauses("Find the sum of 3 and 5. Also find the product of 7; then stop") == [
        "Find the sum of 3 and 5.", "Also find the product of 7", "then stop"]
    # "and" between two values is not a new request.
    assert clauses("What is the weather in Paris and London?") == [
        "What is the weather in Paris and London?"]
    assert clauses("Get the capital of Australia, and what is the population of Canada") == [
        "Get the capital of Australia", "what is the population of Canada"]


def test_each_tool_takes_its_values_from_its_own_clause() -> None:
    question = ("What is the capital city of Australia, what is the current population of "
                "Canada, and what is the largest city in Brazil?")
    focus = value_focus(question, COUNTRY)
    assert focus is not None
    assert focus.allows("country_info.population", "Canada")
    assert not focus.allows("country_info.population", "Australia")
    assert not focus.allows("country_info.largest_city", "Canada")
    assert focus.allows("country_info.largest_city", "Brazil")
    # A value the question does not write is not the question's to place.
    assert focus.allows("country_info.capital", "Canberra")
    # A tool owning no clause may take any value.
    assert focus.allows("weather", "Canada")


def test_a_clause_without_values_takes_the_one_before_along() -> None:
    tools = [tool("sales_growth.calculate", "Sales growth rate of a company.", "company",
                  "years"),
             tool("financial_ratios.interest_coverage", "Interest coverage ratio.",
                  "company_name", "years")]
    question = ("Find me the sales growth rate for company XYZ for the last 3 years. "
                "Also the interest coverage ratio for the same duration.")
    focus = value_focus(question, tools)
    assert focus is not None
    assert focus.allows("financial_ratios.interest_coverage", "XYZ")
    assert focus.allows("financial_ratios.interest_coverage", "3")


def test_nothing_to_tell_apart() -> None:
    assert value_focus("Capital of Australia. Population of Canada.", COUNTRY[:1]) is None
    assert value_focus("What is the population of Canada?", COUNTRY) is None
    # Every clause the same tool's: no part to tell.
    assert value_focus("Population of Canada. Population of Peru.", COUNTRY) is None
