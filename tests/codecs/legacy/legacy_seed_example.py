"""The seed's worked example (000/002/003), transcribed: tools and the exact turn texts of the
stock-price conversation (General Motors -> GM -> 38.50), in the English of the original
document (SPEC.md §2)."""

from __future__ import annotations

from tooluse.messages import ToolSpec

TICKER = ToolSpec(
    name="get_ticker_symbol",
    description=(
        "Gets the stock ticker symbol for a company searched by name. Returns str: The ticker "
        "symbol for the company stock. Raises TickerNotFound: if no matching ticker symbol is "
        "found."
    ),
    input_schema={
        "type": "object",
        "properties": {"company_name": {"type": "string", "description": "The name of the company."}},
        "required": ["company_name"],
    },
)
PRICE = ToolSpec(
    name="get_current_stock_price",
    description=(
        "Gets the current stock price for a company. Returns float: The current stock price. "
        "Raises ValueError: if the input symbol is invalid/unknown."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "symbol": {"type": "string", "description": "The stock symbol of the company to get the price for."}
        },
        "required": ["symbol"],
    },
)

SCRATCHPAD = (
    "<scratchpad>\n"
    "To answer this question, I will need to:\n"
    "1. Get the ticker symbol for General Motors using the get_ticker_symbol() function.\n"
    "2. Use the returned ticker symbol to get the current stock price using the "
    "get_current_stock_price() function.\n"
    "</scratchpad>"
)
FIRST_CALL = (
    "<function_calls>\n<invoke>\n<tool_name>get_ticker_symbol</tool_name>\n<parameters>\n"
    "<company_name>General Motors</company_name>\n</parameters>\n</invoke>\n</function_calls>"
)
FIRST_RESULT = (
    "<function_results>\n<result>\n<tool_name>get_ticker_symbol</tool_name>\n<stdout>\nGM\n"
    "</stdout>\n</result>\n</function_results>"
)
SECOND_CALL = (
    "<function_calls>\n<invoke>\n<tool_name>get_current_stock_price</tool_name>\n<parameters>\n"
    "<symbol>GM</symbol>\n</parameters>\n</invoke>\n</function_calls>"
)
SECOND_RESULT = (
    "<function_results>\n<result>\n<tool_name>get_current_stock_price</tool_name>\n<stdout>\n"
    "38.50\n</stdout>\n</result>\n</function_results>"
)
ANSWER = "<answer>\nThe current stock price of General Motors is $38.50.\n</answer>"
