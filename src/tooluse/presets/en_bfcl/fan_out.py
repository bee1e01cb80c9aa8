"""The number of calls follows the request: one call per item of a list the user wrote.

A small model asked for "the factorial of 5, 10 and 15" writes the call for 5 and closes
the call block (on BFCL ``parallel``, most answers held one call where two to four were
asked for: docs/benchmarks/code.md). The question itself says how many calls are wanted: the value the model wrote
(``5``) is the first item of a list (``5, 10 and 15``), so the same call is due for each
other item. :func:`fan_out` finds such lists around the values of the model's calls and
returns the calls the model left out: its own call with the list's value replaced by each
other item — every value still written by the model or copied from the question, every
call still validated against its tool's schema.

What counts as a list (:func:`list_around`): items of the same shape as the value (numbers,
with the same unit when the value has one; capitalised names; places with their region,
"Seattle, WA"; dates in digits, year first; quoted strings; single lowercase words),
separated by commas and a final ``and``/``or``/``&``. Lists that are not a request for
several calls are left alone:

- a range (``between 1 and 1000``, ``from 2 to 5``);
- items the call already uses for other parameters (``the GCD of 96 and 128``: both
  values are the call's);
- values of array parameters (the list is the array).

Several lists of the same length go together (``Taylor Swift and Maroon 5, for 20 and 15
minutes respectively``: the second call takes the second item of each).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ...language.lists import NUMBER_AT, Item, find_value, list_around, lists_in, number_value

__all__ = ["NUMBER_AT", "Item", "as_value", "fan_out", "find_value", "list_around", "lists_in",
           "norm", "number_value"]

#: A call as (tool name, input).
Call = tuple[str, dict[str, Any]]


def as_value(text: str, like: Any) -> Any:
    """``text`` (a value of the question) written as the call's value ``like`` was: a number
    for a number (None when it is none), an integer for an integer."""
    if isinstance(like, (int, float)) and not isinstance(like, bool):
        number = number_value(text)
        if number is None:
            return None
        return int(number) if isinstance(like, int) and number.is_integer() else number
    return text


def fan_out(calls: Sequence[Call], question: str,
            schemas: Mapping[str, Mapping[str, Any] | None], *, limit: int,
            valid: Callable[[str, dict[str, Any]], bool]) -> list[Call]:
    """The calls ``question`` asks for that ``calls`` (the model's, in order) leave out:
    for each call, one more per further item of the lists its values stand in (see the
    module docstring). At most ``limit`` calls in all; ``valid(name, input)`` must accept
    each new call."""
    extra: list[Call] = []
    seen = [(name, dict(args)) for name, args in calls]
    for name, args in calls:
        props = ((schemas.get(name) or {}).get("properties") or {})
        names = {norm(w) for k in props for w in re.split(r"[_\W]+|(?<=[a-z])(?=[A-Z])", k)}
        lists: dict[str, tuple[list[Item], int]] = {}
        for key, value in args.items():
            schema = props.get(key) or {}
            if isinstance(value, (list, dict)) or schema.get("type") in ("array", "object"):
                continue
            found = list_around(question, value)
            if found is None:
                continue
            items, index = found
            others = {norm(x) for k, v in args.items() if k != key
                      for x in (v if isinstance(v, list) else [v])}
            if any(norm(as_value(i.text, value)) in others for j, i in enumerate(items)
                   if j != index):
                continue  # the items are this call's other values: not several calls
            if any(norm(i.text) in names for i in items):
                continue  # "a base of 10 units and height of 5": a parameter's name
            if re.search(r"\bbetween\W*$", question[: items[0].start], re.IGNORECASE):
                continue  # "between New York and Boston": one call about both
            lists[key] = found
        if not lists:
            continue
        for choice in _combinations(lists, together="respectively" in question.lower()):
            new = dict(args)
            for key, (items, _) in lists.items():
                if key in choice:
                    new[key] = as_value(items[choice[key]].text, args[key])
            if new == args or any(value is None for value in new.values()):
                continue
            if any(n == name and all(norm(a.get(k)) == norm(new[k]) for k in lists)
                   for n, a in seen):
                continue  # the model already wrote this item's call
            if len(calls) + len(extra) >= limit or not valid(name, new):
                continue
            extra.append((name, new))
            seen.append((name, new))
    return extra


def _combinations(lists: Mapping[str, tuple[list[Item], int]],
                  together: bool) -> list[dict[str, int]]:
    """Which item of each list each call takes (the model's own call left out): with
    ``together`` ("respectively"), the lists of the longest length go in step, the others
    keep the model's value; else every combination of the lists' items."""
    if together:
        length = max(len(items) for items, _ in lists.values())
        return [{k: j for k, (items, index) in lists.items() if len(items) == length}
                for j in range(length)]
    combos: list[dict[str, int]] = [{}]
    for key, (items, _) in lists.items():
        combos = [{**c, key: j} for c in combos for j in range(len(items))]
    return combos


def norm(value: Any) -> str:
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, (int, float)):
        return repr(float(value))
    return str(value).strip().strip("'\".,;:!?").lower()
