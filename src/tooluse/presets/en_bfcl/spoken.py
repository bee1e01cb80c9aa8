"""Numbers a question writes without digits standing alone: in words ("two nights", "the
top three plants"), as ordinals ("the 16th century") or with a scale ("213 million",
"$1.2M").

A 135M model asked for "two nights" writes a number the question writes in digits
elsewhere (``nights: 2022`` from "10th December 2022"), and an optional ``days: 3`` for
"the next three days" looked ungiven, so it was left out. :func:`spoken_numbers` finds
these numbers so that the value copier offers them (:mod:`tooluse.language.spans`), and
:func:`counts` finds the words they count, so that the optional rule takes "three days" as
giving ``days`` (:func:`.choices.keep_given_optionals`) but not "two charges" as giving a
permittivity of 2. An ordinal next to a month's name is a date's day ("10th December"), not
a number of its own.

"A population of 213 million" asks for ``population: 213000000``; the model writes 213.
:func:`scaled_numbers` finds such numbers, so that the copier offers the whole number and
:func:`scaled` writes it where the model wrote the digits alone, unless the parameter says
it counts in that scale ("revenue in millions").

"Compounded quarterly" is 4 times a year; a call of a compound interest tool needs the 4
(``n``, ``compounding_periods_per_year``), and the model writes another number of the
question or leaves it out. :func:`compounding` writes it. An object "dropped" or "starting
from rest" has an initial velocity of 0, and "11 PM" is hour 23 to a parameter "in 24 hour
format"; the model writes another number of the question. :func:`implied` writes them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, TypeGuard

from ...language.numbers import SCALES, plain_numbers, scaled_numbers, spoken_numbers
from .dates import times_in
from .schemas import properties

__all__ = ["PER_YEAR", "compounding", "implied", "numeric_parameter", "numeric_value",
           "scaled"]


def scaled(arguments: Mapping[str, Any], schema: Any, conversation: str) -> dict[str, Any]:
    """``arguments`` with each number parameter whose value the conversation writes only
    with a scale ("213 million": 213; for an integer parameter, "8.5 million": 8 as well)
    given the whole number (213000000), unless the parameter's name or description speaks
    of that scale ("revenue in millions")."""
    props = properties(schema)
    if props is None:
        return dict(arguments)
    scaled_as: dict[float, set[int | float]] = {}
    # An integer parameter's model writes "8.5 million" as 8: its integer part.
    cut_as: dict[float, set[int | float]] = {}
    for written, value in scaled_numbers(conversation):
        scaled_as.setdefault(written, set()).add(value)
        if not written.is_integer():
            cut_as.setdefault(float(int(written)), set()).add(value)
    plain = plain_numbers(conversation)
    changed: dict[str, Any] = {}
    for key, value in arguments.items():
        sub = props.get(key)
        if (not isinstance(sub, Mapping) or sub.get("type") not in ("integer", "number")
                or isinstance(value, bool) or not isinstance(value, (int, float))
                or float(value) in plain):
            continue
        found = scaled_as.get(float(value)) or (
            cut_as.get(float(value)) if sub.get("type") == "integer" else None)
        if found is None or len(found) != 1:
            continue
        (whole,) = found
        said = f"{key} {sub.get('description', '')}".lower()
        if any(word in said for word in SCALES) or (
                sub.get("type") == "integer" and not float(whole).is_integer()):
            continue
        changed[key] = whole
    return {**arguments, **changed}


#: How many times a year a word says: "compounded *quarterly*" is 4 times a year.
PER_YEAR = {"annually": 1, "yearly": 1, "semiannually": 2, "semi-annually": 2,
            "biannually": 2, "half-yearly": 2, "quarterly": 4, "monthly": 12, "weekly": 52,
            "daily": 365}
_COMPOUND = re.compile(r"\bcompound(?:s|ed|ing)?\b", re.IGNORECASE)
#: A parameter counting how often interest is compounded: "The number of times that
#: interest is compounded per year", "...per unit time", "...per time period".
_TIMES_PER = re.compile(r"\b(?:times|periods)\b.*\bper\s+(?:year|unit\s+(?:of\s+)?time"
                        r"|time\s+period|period)\b", re.IGNORECASE)


def numeric_parameter(spec: Any) -> TypeGuard[Mapping[str, Any]]:
    """Is ``spec`` the schema of a number or integer parameter free of an enum?"""
    return isinstance(spec, Mapping) and spec.get("type") in ("integer", "number") \
        and "enum" not in spec


def numeric_value(spec: Any, value: Any) -> TypeGuard[Mapping[str, Any]]:
    """Is ``value`` a number (not a boolean) held by a :func:`numeric_parameter` (whose
    schema is ``spec``)?"""
    return numeric_parameter(spec) and isinstance(value, (int, float)) \
        and not isinstance(value, bool)


def compounding(arguments: Mapping[str, Any], schema: Any, question: str) -> dict[str, Any]:
    """``arguments`` with the number of times a year interest is compounded that the
    question says in a word ("compounded quarterly": 4, "with monthly compounding": 12)
    written, or added, where a numeric parameter counts them (its description: "the number
    of times that interest is compounded per year", or "interest applied per time period").
    The word must stand within three words of "compound", "compounded", "compounds" or
    "compounding", and be the only such word the question says (two are for two calls)."""
    props = properties(schema)
    if props is None:
        return dict(arguments)
    words = re.findall(r"[\w-]+", question.lower())
    near = {at for at, word in enumerate(words) if _COMPOUND.fullmatch(word)}
    said = {PER_YEAR[word] for at, word in enumerate(words) if word in PER_YEAR
            and any(abs(at - other) <= 3 for other in near)}
    if len(said) != 1:
        return dict(arguments)
    (times,) = said
    changed: dict[str, Any] = {}
    for key, sub in props.items():
        description = sub.get("description") if isinstance(sub, Mapping) else None
        if (numeric_parameter(sub) and isinstance(description, str)
                and _TIMES_PER.search(description)
                and re.search(r"compound|interest", description, re.IGNORECASE)
                and arguments.get(key) != times):
            changed[str(key)] = times
    return {**arguments, **changed} if len(changed) == 1 else dict(arguments)


#: An object at rest to begin with: "started from rest", "at rest", "dropped from 100 m".
_AT_REST = re.compile(r"\b(?:from|at)\s+rest\b|\bdropped\b", re.IGNORECASE)
_INITIAL_VELOCITY = re.compile(r"initial[\W_]*(?:velocity|speed)", re.IGNORECASE)
_TWENTY_FOUR = re.compile(r"\b24[- ]?hours?\s+(?:format|clock|time)", re.IGNORECASE)
#: A period named by its unit alone: "for the next week", "over the past decade".
_PERIOD = re.compile(r"\b(?:next|past|last|coming|upcoming|previous|following)\s+"
                     r"(minute|hour|day|week|month|year|decade)\b(?!\s*-)", re.IGNORECASE)
#: How many of each unit a period of one unit holds.
_IN_PERIOD = {
    "minute": {"minutes": 1, "seconds": 60}, "hour": {"hours": 1, "minutes": 60},
    "day": {"days": 1, "hours": 24}, "week": {"weeks": 1, "days": 7},
    "month": {"months": 1, "days": 30}, "year": {"years": 1, "months": 12, "days": 365},
    "decade": {"decades": 1, "years": 10},
}
_UNITS = "seconds|minutes|hours|days|weeks|months|years|decades"
#: A parameter's description saying what it counts: "the number of days", "in years".
_COUNTS_UNIT = re.compile(rf"\b(?:number of|in)\s+(?:\w+\s+)?({_UNITS})\b", re.IGNORECASE)
_NAME_UNIT = re.compile(rf"(?:^|_)({_UNITS})(?:_|$)")


def implied(arguments: Mapping[str, Any], schema: Any, question: str) -> dict[str, Any]:
    """``arguments`` with the numbers the question says without writing them:
    - an initial velocity or speed parameter (its name) given 0 where the question says
      the object starts "from rest", is "at rest" or is "dropped", unless it speaks of an
      initial velocity or speed itself ("dropped with an initial speed of 5 m/s");
    - an integer parameter "in 24 hour format" holding the one time the question writes
      as its hour on a twelve-hour clock ("opens until 11 PM", or "until 23:00": 11) given
      the hour in 24 (23);
    - a parameter counting a unit of time (a plural unit in its name, ``days_ahead``, or
      its description's "number of days", "in years") holding a number the question does
      not write, where the question's one period is named by its unit alone ("for the
      next week", "over the past decade"), given the period's length in that unit
      (``days: 7``, ``duration: 10``; a month is 30 days).
    Only values the call has are changed."""
    props = properties(schema)
    if props is None:
        return dict(arguments)
    at_rest = bool(_AT_REST.search(question)) and not _INITIAL_VELOCITY.search(question)
    times = times_in(question)
    periods = {match.group(1).lower() for match in _PERIOD.finditer(question)}
    period = _IN_PERIOD[next(iter(periods))] if len(periods) == 1 else {}
    # The numbers the question writes, read only where it names a period.
    written = plain_numbers(question) | set(spoken_numbers(question)) if period else set()
    changed: dict[str, Any] = {}
    for key, value in arguments.items():
        sub = props.get(key)
        if not numeric_value(sub, value):
            continue
        if at_rest and _INITIAL_VELOCITY.search(str(key)) and value != 0:
            changed[key] = 0
        elif sub.get("type") == "integer" and len(times) == 1 \
                and _TWENTY_FOUR.search(str(sub.get("description", ""))):
            hour = times[0][2].hour
            if hour != value and hour % 12 == value % 12 and value <= 12:
                changed[key] = hour
        elif period and value not in written:
            unit = _counted_unit(str(key), sub)
            if unit in period and period[unit] != value:
                changed[key] = period[unit]
    return {**arguments, **changed}


def _counted_unit(key: str, spec: Mapping[str, Any]) -> str | None:
    """The unit of time a numeric parameter counts, plural: by its name (``days``,
    ``days_ahead``), else by its description ("the number of days", "in years")."""
    named = _NAME_UNIT.search(re.sub(r"(?<=[a-z])(?=[A-Z])", "_", key).lower())
    if named:
        return named.group(1)
    said = {m.group(1).lower() for m in _COUNTS_UNIT.finditer(str(spec.get("description", "")))}
    return next(iter(said)) if len(said) == 1 else None
