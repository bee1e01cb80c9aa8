"""Numbers a call took from the wrong place in the question (``stray_numbers``).

A 135M model fills a numeric parameter with a number it read off the question's text
without it being a quantity of the question:

- a number inside a term another parameter of the call holds: "the derivative of the
  function 2x^2 at x = 1" becomes ``function: "2x^2", value: 2``;
- an exponent: "accelerated at 9.8 m/s^2 for a duration of 5 seconds" becomes
  ``acceleration: 9.8, time: 2``;
- the number a date the call holds writes: "for 3 nights starting from March 10th, 2023"
  becomes ``start_date: "March 10th, 2023", duration: 2023``;
- a long number with a zero dropped or added: "shareholder's equity of $10,000,000" becomes
  ``shareholder_equity: 1000000``.

:func:`stray_numbers` gives such a parameter the question's one number the call leaves
unused, where there is exactly one. A number is the question's ("written free") when it is
written in digits outside the strings the call holds, not after ``^`` or ``**`` and not
glued to a word before it ("B1004", "CO2"), or in words ("two nights"; :func:`.spoken
.spoken_numbers`). A number is used when the call holds it anywhere, as itself, as the
fraction of a percentage ("5%": 0.05), whole with its scale ("$1.2M": 1200000) or in the
digits of a string. Only one parameter is changed, and only if no other parameter of the
call is stray too. The result is kept only if the call still validates
(:func:`.call_edits.call_adjuster`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ...language.numbers import scaled_numbers, spoken_numbers
from .schemas import properties
from .spoken import numeric_value

__all__ = ["stray_numbers"]

#: A number in digits ("10,000,000" is one), with a sign written on it ("x = -2", not the
#: "- 1" of "2x - 1") and a percent sign after it.
_NUMBER = re.compile(r"(?P<sign>(?<![\w)])-)?(?<![\d.,])"
                     r"(?P<number>\d+(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
                     r"(?![\d])(?P<percent>\s?%)?")
#: Where a number is an exponent or part of a name: "m/s^2", "x**3", "B1004", "CO2".
_BOUND_BEFORE = re.compile(r"(?:\^|\*\*|[^\W\d_])$")


def _numbers(value: Any) -> list[float]:
    """Every number ``value`` holds: itself, a list's or object's members, a string's digits."""
    if isinstance(value, bool):
        return []
    if isinstance(value, (int, float)):
        return [abs(float(value))]
    if isinstance(value, str):
        return [float(m.group("number").replace(",", "")) for m in _NUMBER.finditer(value)]
    if isinstance(value, Mapping):
        return [n for member in value.values() for n in _numbers(member)]
    if isinstance(value, list):
        return [n for member in value for n in _numbers(member)]
    return []


def _spans(question: str, arguments: Mapping[str, Any]) -> list[tuple[int, int]]:
    """Where in ``question`` the call's string values are written (of two characters or
    more and holding a digit: "2x^2", "March 10th, 2023")."""
    spans: list[tuple[int, int]] = []
    for value in arguments.values():
        texts = value if isinstance(value, list) else [value]
        for text in texts:
            if isinstance(text, str) and len(text) >= 2 and re.search(r"\d", text):
                spans += [(m.start(), m.end())
                          for m in re.finditer(re.escape(text), question)]
    return spans


def _written(question: str, arguments: Mapping[str, Any]) -> tuple[list[tuple[float, bool]],
                                                                   set[float]]:
    """The numbers ``question`` writes free, each with whether it is a percentage, and
    those it writes only bound (in a string the call holds, as an exponent, in a name)."""
    spans = _spans(question, arguments)
    free: list[tuple[float, bool]] = []  # signed: "x = -2" is -2
    bound: set[float] = set()
    for match in _NUMBER.finditer(question):
        number = float(match.group("number").replace(",", ""))
        start = match.start("number")
        if _BOUND_BEFORE.search(question[:start]) or any(
                s <= start < e for s, e in spans):
            bound.add(number)
        else:
            free.append((-number if match.group("sign") else number,
                         match.group("percent") is not None))
    free += [(float(n), False) for n in spoken_numbers(question)]
    return free, bound - {abs(n) for n, _ in free}


def _same_digits(one: float, other: float) -> bool:
    """Do two whole numbers of 100 or more differ only by zeros at their end (1000000,
    10000000)?"""
    if not (one.is_integer() and other.is_integer()) or min(one, other) < 100:
        return False
    return str(int(one)).rstrip("0") == str(int(other)).rstrip("0")


def stray_numbers(arguments: Mapping[str, Any], schema: Any,
                  question: str) -> dict[str, Any]:
    """``arguments`` with the one numeric parameter holding a number the question writes
    only bound (in a string the call holds, as an exponent) or not at all but for a zero
    more or less, given the one number the question writes free that the call leaves
    unused."""
    props = properties(schema)
    if props is None:
        return dict(arguments)
    free, bound = _written(question, arguments)
    wholes = {float(written): float(value) for written, value in scaled_numbers(question)}
    said = {abs(n) for n, _ in free} | set(wholes.values()) \
        | {abs(n) / 100 for n, p in free if p}
    numeric = {str(key): abs(float(value)) for key, value in arguments.items()
               if numeric_value(props.get(key), value) and abs(float(value)) not in said}
    # A number written bound is stray; failing that, one not written at all (a zero lost).
    stray = {k: v for k, v in numeric.items() if v in bound} or {
        k: v for k, v in numeric.items() if v.is_integer() and v >= 100}
    if len(stray) != 1:
        return dict(arguments)
    ((key, value),) = stray.items()
    held = [n for k, v in arguments.items() if k != key for n in _numbers(v)]

    def used(number: float, percent: bool) -> bool:
        number = abs(number)
        forms = {number, wholes.get(number, number)} | ({number / 100} if percent else set())
        return any(abs(n - form) < 1e-9 for n in held for form in forms)

    unused = {n for n, percent in free if not used(n, percent)}
    if len(unused) != 1:
        return dict(arguments)
    (number,) = unused
    if value in bound or _same_digits(value, abs(number)):
        return {**arguments, key: int(number) if number.is_integer() else number}
    return dict(arguments)
