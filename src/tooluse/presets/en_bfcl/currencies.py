"""Currency codes for the currencies the question names (``currency_codes``).

"Convert 150 Euros to Canadian dollars": a 135M model writes ``from_currency: "EUR"``
right, then ``to_currency: "CAN"`` — a code of its own making; "200 euros to US dollars"
gives ``from_currency: "USD", to_currency: "USD"``; "from British pounds to Japanese yen"
gives ``base_currency: "£"``. Where the call writes currencies as codes (a value of three
capital letters or a currency sign), :func:`currency_codes` gives each currency parameter
(a free string parameter whose name says ``currency``) the ISO 4217 code of the currency
the question names for it:

- one currency parameter and one currency named: its code;
- a source and a target parameter (``from_``/``base_``/``source_``..., ``to_``/
  ``target_``/``quote_``...) and two currencies named: the source is the one the question
  writes with the amount ("200 *US dollars*", "*€*150"), or else the first where the
  question writes "to" or "into" between them ("from British pounds *to* Japanese yen").

Currencies are named by a word ("euros", "yen", "pound sterling"), with the country's
adjective where one word names several ("Canadian dollars", "Swiss francs"; a dollar alone
is the US dollar), by a sign ("$", "€", "£", "¥", "₹") or by their code ("EUR"). Values
the question writes as names ("British Pounds") are left as written, as is any call where
the question names another number of currencies than the call has parameters for them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ...language.words import split_name
from .choices import free_string
from .schemas import properties

__all__ = ["currency_codes", "named_currencies"]

#: Adjectives that say whose dollar, pound, franc... a currency is.
_ADJECTIVES = {
    "us": "USD", "u.s.": "USD", "american": "USD", "canadian": "CAD", "australian": "AUD",
    "singapore": "SGD", "hong kong": "HKD", "new zealand": "NZD", "british": "GBP",
    "japanese": "JPY", "chinese": "CNY", "indian": "INR", "swiss": "CHF", "mexican": "MXN",
    "south korean": "KRW", "korean": "KRW", "russian": "RUB", "brazilian": "BRL",
    "swedish": "SEK", "norwegian": "NOK", "danish": "DKK", "turkish": "TRY",
    "south african": "ZAR", "egyptian": "EGP", "thai": "THB", "philippine": "PHP",
}
#: Currency words, and the currency each names alone.
_NOUNS = {
    "dollar": "USD", "euro": "EUR", "pound": "GBP", "sterling": "GBP", "yen": "JPY",
    "yuan": "CNY", "renminbi": "CNY", "rupee": "INR", "franc": "CHF", "peso": "MXN",
    "won": "KRW", "ruble": "RUB", "rouble": "RUB", "real": "BRL", "krona": "SEK",
    "krone": "NOK", "rand": "ZAR", "lira": "TRY", "baht": "THB",
}
#: Words that name a currency only after an adjective ("Korean won", "Brazilian real").
_AMBIGUOUS = frozenset({"won", "real"})
_SIGNS = {"$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY", "₹": "INR"}
_ADJECTIVE = "|".join(sorted((re.escape(a) for a in _ADJECTIVES), key=len, reverse=True))
_NAMED = re.compile(rf"(?<![\w.])(?:({_ADJECTIVE})\s+)?({'|'.join(_NOUNS)})(?:e?s)?(?!\w)",
                    re.IGNORECASE)
_SIGN = re.compile("[" + "".join(_SIGNS) + "]")
#: A code the question writes: three capitals, one of the codes above.
_CODE = re.compile(r"(?<![\w])(" + "|".join(sorted(set(_NOUNS.values())
                                                   | set(_ADJECTIVES.values()))) + r")(?!\w)")
_AMOUNT = re.compile(r"\d(?:[\d,.]*\d)?\s*(?:million|billion|thousand|k|m)?\s*$", re.IGNORECASE)
_SOURCE_WORDS = frozenset({"from", "base", "source", "original", "have", "sell"})
_TARGET_WORDS = frozenset({"to", "target", "into", "quote", "destination", "desired", "buy"})


def named_currencies(question: str) -> list[tuple[str, int, bool]]:
    """The currencies ``question`` names, in order, each once: ``(code, where, with an
    amount)`` — where it first names it, and whether it writes it with a number ("200 US
    dollars", "€150", "150 EUR") anywhere."""
    found: list[tuple[int, int, str, bool]] = []
    for match in _NAMED.finditer(question):
        adjective, noun = (match.group(1) or "").lower(), match.group(2).lower()
        if noun in _AMBIGUOUS and not adjective:
            continue
        code = _ADJECTIVES[adjective] if adjective else _NOUNS[noun]
        found.append((match.start(), match.end(), code,
                      bool(_AMOUNT.search(question[:match.start()]))))
    for match in _SIGN.finditer(question):
        found.append((match.start(), match.end(), _SIGNS[match.group()],
                      bool(re.match(r"\s*\d", question[match.end():]))))
    for match in _CODE.finditer(question):
        found.append((match.start(), match.end(), match.group(),
                      bool(_AMOUNT.search(question[:match.start()]))))
    named: dict[str, tuple[int, bool]] = {}
    for start, _, code, amount in sorted(found):
        where, had = named.get(code, (start, False))
        named[code] = (where, had or amount)
    return [(code, where, amount) for code, (where, amount) in named.items()]


def currency_codes(arguments: Mapping[str, Any], schema: Any,
                   question: str) -> dict[str, Any]:
    """``arguments`` with each currency parameter given the code of the currency the
    question names for it, where the call writes codes (see the module docstring)."""
    props = properties(schema)
    if props is None:
        return dict(arguments)
    keys = [k for k, v in arguments.items()
            if "currency" in split_name(k).lower() and free_string(v, props.get(k))]
    values = [str(arguments[k]).strip() for k in keys]
    # The call writes codes: a code or a sign, or one value for two parameters.
    as_codes = any(re.fullmatch(r"[A-Z]{3}", v) or v in _SIGNS for v in values) \
        or len(set(values)) < len(values)
    if not keys or not as_codes:
        return dict(arguments)
    named = named_currencies(question)
    if len(named) != len(keys) or len(keys) > 2:
        return dict(arguments)
    if len(keys) == 1:
        return {**arguments, keys[0]: named[0][0]}
    roles = [_role(k) for k in keys]
    if sorted(r for r in roles if r is not None) != [0, 1]:
        return dict(arguments)
    with_amount = [code for code, _, amount in named if amount]
    if len(with_amount) == 1:
        source = with_amount[0]
    elif re.search(r"(?<!\w)(?:to|into)(?!\w)", question[named[0][1]:named[1][1]],
                   re.IGNORECASE):
        source = named[0][0]
    else:
        return dict(arguments)
    target = next(code for code, _, _ in named if code != source)
    return {**arguments, **{k: source if r == 0 else target for k, r in zip(keys, roles)}}


def _role(key: str) -> int | None:
    """0 for a source currency parameter (``from_currency``, ``base_currency``), 1 for a
    target (``to_currency``, ``target_currency``), None for neither."""
    words = set(split_name(key).lower().split())
    if words & _SOURCE_WORDS:
        return 0
    if words & _TARGET_WORDS:
        return 1
    return None
