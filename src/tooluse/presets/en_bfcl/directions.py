"""Where from, where to: a call's two ends as the question orders them (``from_to``).

A 135M model fills a "from" parameter and a "to" parameter with the question's two values,
but not always in the question's order: "Book a flight from Seattle to Boston" comes out as
``_from: "Boston", to: "Seattle"``. :func:`from_to` swaps the two values back where the
question leaves no doubt: it writes the "to" value, then "to" or "into" and the "from"
value, in one phrase ("Seattle to Boston"), and never the two the other way round.

The parameters are told apart by their names' words (:data:`FROM_WORDS`:
``from_currency``, ``start_location``, ``origin``, ``source_language``...;
:data:`TO_WORDS`: ``to``, ``end_location``, ``destination``, ``target_language``...); a call
with more than one of either kind is left as written, as is any value the question does
not write. Numbers count too ("integrate from 1 to 2": ``start_x: 1``, ``end_x: 2``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ...language.words import split_name

__all__ = ["FROM_WORDS", "TO_WORDS", "from_to"]

#: Words of a parameter's name that make it the start of a move or a conversion.
FROM_WORDS = frozenset({"from", "origin", "source", "src", "start", "departure", "base"})
#: Words of a parameter's name that make it the end of one.
TO_WORDS = frozenset({"to", "destination", "dest", "end", "target", "arrival"})


def from_to(arguments: Mapping[str, Any], schema: Any, question: str) -> dict[str, Any]:
    """``arguments`` with a "from" and a "to" parameter's values swapped where the question
    writes them the other way round (see the module docstring)."""
    ends: dict[str, list[str]] = {"from": [], "to": []}
    for key in arguments:
        words = set(re.findall(r"[a-z]+", split_name(key).lower()))
        if words & FROM_WORDS and not words & TO_WORDS:
            ends["from"].append(key)
        elif words & TO_WORDS and not words & FROM_WORDS:
            ends["to"].append(key)
    if len(ends["from"]) != 1 or len(ends["to"]) != 1:
        return dict(arguments)
    start, end = ends["from"][0], ends["to"][0]
    origin, target = _text(arguments[start]), _text(arguments[end])
    if not origin or not target or origin.lower() == target.lower():
        return dict(arguments)
    if _leads(target, origin, question) and not _leads(origin, target, question):
        return {**arguments, start: arguments[end], end: arguments[start]}
    return dict(arguments)


def _text(value: Any) -> str:
    """A string's or a number's text ("" for anything else): ``5`` and ``5.0`` as "5"."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return ""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value).strip()


def _leads(first: str, second: str, question: str) -> bool:
    """Does the question write ``first`` then "to"/"into" and ``second`` in one phrase
    ("from Seattle to Boston", "EUR into USD", "from my home in San Francisco to my office
    in Palo Alto": up to four words before ``second``)?"""
    a, b = re.escape(first.strip()), re.escape(second.strip())
    return re.search(rf"(?<!\w){a}\s+(?:to|into)\s+(?:[\w'-]+\s+){{0,4}}?{b}(?!\w)",
                     question, re.IGNORECASE) is not None
