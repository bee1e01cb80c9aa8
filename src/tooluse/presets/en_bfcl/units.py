"""The unit the question writes, for a unit parameter (``stated_units``).

A small model filling a unit parameter mostly copies the description's default ("Default is
'cm'") or a unit it has seen often, though the question writes its own: "the area of two
circles, one with a radius of 5 meters" gets ``radius: 5, unit: "cm"``, and "the temperature
in Fahrenheit" the enum's default ``celsius``. :func:`stated_units` writes the question's
unit instead, as the question writes it (an enum's member, up to case, where the parameter
has an enum):

- only a parameter whose name says it is a unit (``unit``, ``units``, ``temp_unit``,
  ``to_unit``...), whose value the question does not write;
- the unit the question asks the answer in ("in Fahrenheit", "in km/h"), or the one unit it
  writes after the call's numbers ("a radius of 5 meters", "5m" for ``radius: 5``);
- where it writes both and they differ ("a base of 12 meters ... the area in square
  meters"), the parameter's name and description tell which: the answer's ("to_unit",
  "the desired units for the result") or the values' ("the unit of measure used",
  "from_unit"); when they do not, nothing is done;
- a unit is a word of :data:`UNITS` (metres, inches, kilograms, Celsius, km/h, g/mol...),
  "square" or "cubic" before it being part of it; a unit of one letter only joined to its
  number ("5m").

Nothing is done when the question writes none, or two different ones, or the model's value
is one the question writes as a word. The model's value stays where it is the question's
unit up to a plural ("miles" for "in mile") or the question writes it joined to a number
("cm" for "5cm"). The result is kept only if the call still validates
(:func:`.call_edits.call_adjuster`), and a unit the question states so is kept by
``optional_from_conversation`` though the question does not write it as a word.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ...language.numbers import JOINED_UNITS, UNITS
from ...language.words import given_by, split_name
from .schemas import properties

__all__ = ["JOINED_UNITS", "UNITS", "question_unit", "stated_units"]


_UNIT = r"(?:(?:square|cubic|sq\.?)\s+)?(?:[^\W\d_][\w°²³/.]*(?<!\.)|°[cfCF])"
#: A number and the word after it: "5 meters", "5m", "4.5 km/h".
_AFTER_NUMBER = re.compile(rf"(?<![\w.])(-?\d+(?:[.,]\d+)*)(\s*)({_UNIT})")
#: The unit asked for: "in Fahrenheit", "in km/h".
_ASKED = re.compile(rf"\b(?:in|into|to)\s+({_UNIT})", re.IGNORECASE)


def _is_unit_parameter(key: str) -> bool:
    return bool({"unit", "units"} & set(split_name(key).lower().split()))


def _unit(words: str, joined: bool) -> bool:
    """Is ``words`` a unit ("meters", "square feet"; one of one letter only when joined to
    its number)?"""
    word = words.split()[-1]
    return word.lower() in UNITS and (len(words) > 1 or joined)


def _same(one: str, other: str) -> bool:
    """Are two units one, up to case and a plural ("mile" and "miles")?"""
    def plain(text: str) -> str:
        text = text.lower().strip()
        return text[:-1] if text.endswith("s") and len(text) > 2 else text
    return plain(one) == plain(other)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    try:
        return float(str(value).replace(",", ""))
    except ValueError:
        return None


def _numbers(value: Any) -> set[float]:
    if isinstance(value, list):
        return set().union(*(_numbers(v) for v in value)) if value else set()
    if isinstance(value, Mapping):
        return set().union(*(_numbers(v) for v in value.values())) if value else set()
    number = _number(value)
    return set() if number is None else {number}


def _one(found: list[str]) -> str | None:
    """The one unit of ``found`` (as first written), or None for none or several."""
    return found[0] if found and len({f.lower() for f in found}) == 1 else None


#: Words of a unit parameter's name, then of its description, saying it names the unit of
#: the answer or of the values given.
_NAMED_ANSWER = frozenset({"to", "target", "output", "result", "desired"})
_NAMED_VALUES = frozenset({"from", "source", "input"})
_OF_ANSWER = frozenset({"result", "resulting", "output", "desired", "return", "returned",
                        "answer"})
_OF_VALUES = frozenset({"used", "given", "input", "inputs", "measured"})


def question_unit(question: str, numbers: set[float], prefer: str | None = None) -> str | None:
    """The unit ``question`` asks the answer in ("in Fahrenheit"), or the one it writes after
    ``numbers``: whichever it writes, or the one ``prefer`` says (``"answer"`` or
    ``"values"``) where it writes both and they differ; None when it writes none, or
    several of either kind, or both and nothing says which."""
    asked = _one([m.group(1) for m in _ASKED.finditer(question)
                  if _unit(m.group(1), joined=False)])
    given = _one([m.group(3) for m in _AFTER_NUMBER.finditer(question)
                  if _number(m.group(1)) in numbers and _unit(m.group(3), not m.group(2))])
    if asked is None or given is None or _same(asked, given):
        return given or asked
    return asked if prefer == "answer" else given if prefer == "values" else None


def _prefer(key: str, spec: Mapping[str, Any]) -> str | None:
    """Which unit the parameter names, by its name's words, then its description's: the
    answer's, the values' or (None) it does not say."""
    description = spec.get("description")
    said = set(re.findall(r"[a-z]+", description.lower())) \
        if isinstance(description, str) else set()
    for words, answer, values in ((set(split_name(key).lower().split()), _NAMED_ANSWER,
                                   _NAMED_VALUES), (said, _OF_ANSWER, _OF_VALUES)):
        if words & values and not words & answer:
            return "values"
        if words & answer and not words & values:
            return "answer"
    return None


def stated_units(arguments: Mapping[str, Any], schema: Any, question: str) -> dict[str, Any]:
    """For each unit parameter of ``arguments`` whose value the question does not write as a
    word, the unit the question states (see the module docstring): the model's own value
    where it is that unit up to a plural or the question writes it joined to a number
    ("cm" for "5cm"), else the question's unit. Parameters it states nothing for are not
    in the result."""
    props = properties(schema)
    if props is None:
        return {}
    stated: dict[str, Any] = {}
    for key, value in arguments.items():
        spec = props.get(key)
        if not isinstance(spec, Mapping) or not isinstance(value, str) \
                or not _is_unit_parameter(key) or given_by(value, question):
            continue
        numbers = set().union(*(_numbers(v) for k, v in arguments.items() if k != key))
        unit = question_unit(question, numbers, _prefer(key, spec))
        if unit is None:
            continue
        if _same(unit, value):
            stated[key] = value
            continue
        members = spec.get("enum")
        if isinstance(members, list):
            named = [m for m in members if isinstance(m, str) and m.lower() == unit.lower()]
            if len(named) == 1:
                stated[key] = named[0]
        elif spec.get("type") == "string" and "const" not in spec:
            stated[key] = unit
    return stated
