"""Where each tool's values are in the question (tooluse.presets.en_bfcl.focus)."""

from __future__ import annotations

from tooluse.messages import ToolSpec
from tooluse.presets.en_bfcl.focus import clauses, value_focus


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


def test_a_comma_and_before_the_next_thing_asked_parts_too() -> None:
    # "..., and the least common multiple...": no request word follows the "and".
    assert clauses("Calculate the GCD of 96 and 128, and the LCM of 15 and 25.") == [
        "Calculate the GCD of 96 and 128", "the LCM of 15 and 25."]
    # Without the comma, or before a value that is no "the ...", one clause.
    assert len(clauses("the GCD of 96 and the LCM")) == 1
    assert len(clauses("a height of 10m, a width of 5m, and a depth of 8m")) == 1
    # More verbs start a request: "and then generate".
    assert clauses("Create a piece in D Minor and then generate a signal of 440 Hz") == [
        "Create a piece in D Minor", "generate a signal of 440 Hz"]


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


def test_a_clause_pointing_back_takes_the_last_clause_with_values_along() -> None:
    tools = [tool("us_history.life_expectancy", "Life expectancy in the USA in a year.",
                  "year"),
             tool("us_history.gdp", "Gross domestic product (GDP) of the USA in a year.",
                  "year")]
    question = ("What was the average life expectancy in the USA in the year 1900 and 1950? "
                "Additionally, what was the Gross Domestic Product (GDP) of the USA in these "
                "years?")
    focus = value_focus(question, tools)
    assert focus is not None
    # "these years" are those of the clause before ("Additionally" has no value).
    assert focus.allows("us_history.gdp", "1900")
    assert focus.allows("us_history.gdp", "1950")
    # A clause pointing back that writes numbers of its own keeps to them: "the same
    # company" says nothing of the net income before it.
    tools = [tool("financial_ratio.net_profit_margin", "Net profit margin from the net "
                  "income and total revenue.", "net_income", "total_revenue"),
             tool("financial_ratio.debt_ratio", "Debt ratio from the total liabilities and "
                  "total assets.", "total_liabilities", "total_assets")]
    question = ("Calculate the net profit margin of Company XYZ given that the net income is "
                "$20,000 and total revenue is $100,000. Also calculate the debt ratio of the "
                "same company if the total liabilities are $10,000 and total assets are "
                "$30,000.")
    focus = value_focus(question, tools)
    assert focus is not None
    assert not focus.allows("financial_ratio.debt_ratio", "100000")
    assert focus.allows("financial_ratio.debt_ratio", "10000")
