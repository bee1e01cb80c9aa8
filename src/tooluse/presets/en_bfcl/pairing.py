"""Calls' values paired as the question pairs them (``pair_in_order``).

"The average temperature in New York for the past 7 days in Fahrenheit, and in Los Angeles
... in Celsius": a 135M model writes the two calls with the right values, but crossed —
New York in Celsius, Los Angeles in Fahrenheit. The question pairs its values by where they
stand: the first place with the first unit, the second with the second. :func:`in_order`
pairs them so.

For each tool called two times or more, the parameters whose values differ between its
calls are read; where every call has the same parameters, each of these values is written
once in the question (a name, a quoted string, a number, a place...) and no two calls share
one, and the calls do not take them in the same order of the question for every
parameter, the values are paired again by order: the call with the first value of one
parameter takes the first of each other, and so on. Anything else is left as it is: a
value written twice ("from Paris to Rome and from Berlin to Paris") says nothing of order,
and calls sharing a value are a list's combinations (:mod:`.fan_out`), not a crossing.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from ...language.lists import find_value
from .fan_out import norm

__all__ = ["differing", "in_order", "repeated_tools"]

#: A call as (tool name, input).
Call = tuple[str, dict[str, Any]]


def repeated_tools(calls: Sequence[Call]) -> list[list[int]]:
    """For each tool called two times or more in ``calls``, the places of its calls."""
    places: defaultdict[str, list[int]] = defaultdict(list)
    for i, (name, _) in enumerate(calls):
        places[name].append(i)
    return [at for at in places.values() if len(at) > 1]


def differing(args: Sequence[dict[str, Any]]) -> list[str]:
    """The parameters every one of a tool's calls (``args``, their inputs) holds, not all
    with one value: those that tell the calls apart, in the order they are first written."""
    keys = dict.fromkeys(k for a in args for k in a)
    return [k for k in keys if all(k in a for a in args)
            and len({norm(a[k]) for a in args}) > 1]


def _only_place(question: str, value: Any) -> int | None:
    """Where ``question`` writes ``value``, if it writes it exactly once."""
    if isinstance(value, (bool, list, dict)) or value is None:
        return None
    found = find_value(question, value)
    if found is None:
        return None
    start, end, _ = found
    if isinstance(value, (int, float)):
        return None if find_value(question[end:], value) is not None else start
    pattern = r"(?<!\w)" + re.escape(question[start:end]) + r"(?!\w)"
    return start if len(re.findall(pattern, question, re.IGNORECASE)) == 1 else None


def in_order(calls: Sequence[Call], question: str) -> list[Call]:
    """``calls`` with each tool's values paired in the question's order where they are
    crossed (see the module docstring); the calls keep their places."""
    out = [(name, dict(args)) for name, args in calls]
    for at in repeated_tools(calls):
        name = calls[at[0]][0]
        args = [calls[i][1] for i in at]
        if any(set(a) != set(args[0]) for a in args):
            continue
        varying = differing(args)
        places: dict[str, list[int]] = {}
        for key in varying:
            found = [_only_place(question, a[key]) for a in args]
            if len({norm(a[key]) for a in args}) < len(args) or None in found:
                break
            places[key] = [p for p in found if p is not None]
        if len(varying) < 2 or len(places) < len(varying):
            continue
        orders = {key: sorted(range(len(args)), key=places[key].__getitem__)
                  for key in varying}
        if len({tuple(order) for order in orders.values()}) == 1:
            continue
        # The call holding the r-th value of the first parameter takes the r-th of each.
        for rank, j in enumerate(orders[varying[0]]):
            out[at[j]] = (name, {**args[j], **{key: args[orders[key][rank]][key]
                                               for key in varying}})
    return out
