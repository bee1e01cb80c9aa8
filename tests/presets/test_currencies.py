"""currency_codes: ISO codes for the currencies the question names."""

from __future__ import annotations

from typing import Any

from tooluse.presets.en_bfcl.currencies import currency_codes, named_currencies

S = {"type": "string"}
CONVERT = {"type": "object", "properties": {
    "amount": {"type": "number"}, "from_currency": S, "to_currency": S}}
RATE = {"type": "object", "properties": {"base_currency": S, "target_currency": S,
                                         "fee": {"type": "number"}}}


def test_the_currencies_a_question_names() -> None:
    assert named_currencies("Convert 150 Euros to Canadian dollars.") == [
        ("EUR", 12, True), ("CAD", 21, False)]
    assert [c for c, _, _ in named_currencies("£20 in yen, or 20 GBP in USD")] == [
        "GBP", "JPY", "USD"]
    # A dollar alone is the US dollar; "won" and "real" alone are words, not currencies.
    assert named_currencies("I won 5 dollars, for real") == [("USD", 8, True)]
    assert [c for c, _, _ in named_currencies("Korean won and Swiss francs")] == ["KRW", "CHF"]


def test_codes_where_the_call_writes_codes() -> None:
    call: dict[str, Any] = {"amount": 150, "from_currency": "EUR", "to_currency": "CAN"}
    assert currency_codes(call, CONVERT, "Convert 150 Euros to Canadian dollars.") == {
        **call, "to_currency": "CAD"}
    # The same code twice: the source is the currency written with the amount.
    same = {"amount": 200, "from_currency": "USD", "to_currency": "USD"}
    assert currency_codes(same, CONVERT, "How many US dollars are 200 euros?") == {
        **same, "from_currency": "EUR"}
    # No amount: "to" between the two says which is the source; a sign counts as a code.
    rate = {"base_currency": "£", "target_currency": "Japanese", "fee": 0.02}
    assert currency_codes(rate, RATE, "The rate from British pounds to Japanese yen.") == {
        **rate, "base_currency": "GBP", "target_currency": "JPY"}
    one = {"type": "object", "properties": {"currency": S}}
    assert currency_codes({"currency": "EU"}, one, "a loan of 500 euros") == {"currency": "EU"}
    assert currency_codes({"currency": "EUE"}, one, "a loan of 500 euros") == {
        "currency": "EUR"}


def test_left_alone() -> None:
    # Names the question writes stay names.
    names = {"amount": 150, "from_currency": "Euros", "to_currency": "Canadian dollars"}
    assert currency_codes(names, CONVERT, "Convert 150 Euros to Canadian dollars.") == names
    # Three currencies named for two parameters; one named for two.
    call = {"amount": 1, "from_currency": "EUR", "to_currency": "CAN"}
    assert currency_codes(call, CONVERT, "150 Euros to Canadian dollars or yen") == call
    assert currency_codes(call, CONVERT, "150 Euros, please") == call
    # Neither an amount nor "to" says which is the source.
    assert currency_codes(call, CONVERT, "Euros versus Canadian dollars") == call
    # Parameters whose roles are unknown; no properties.
    pair = {"type": "object", "properties": {"currency_a": S, "currency_b": S}}
    assert currency_codes({"currency_a": "EUR", "currency_b": "CAN"}, pair,
                          "150 Euros to Canadian dollars") == {"currency_a": "EUR",
                                                               "currency_b": "CAN"}
    assert currency_codes(call, {"type": "object"}, "euros") == call
