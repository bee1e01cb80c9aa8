"""Values the question gives once for every call it asks alike (``share_optionals``).

"Can you give me 95% confidence interval for a sample mean with standard deviation of 10,
sample size of 50 and sample mean of 25? And can you do the same but for a sample size of
150 instead?" A 135M model writes both calls but gives the confidence level to the first
only: an optional parameter, and the second call's own clause does not write it. The
question wrote it once, before anything that tells its requests apart, so it holds for all
of them. :func:`shared_optionals` gives it to each call of the tool that leaves it out.

For each tool called two times or more: the values that differ between its calls tell the
calls apart, and the question writes them from some point on; an optional parameter that
some calls hold, all with the same value, and the others leave out, is given to these
others when the question writes that value before that point ("95%" for 0.95). A value
written after it is one call's own ("...then fetch the same sequence again but this time
in 'genbank' format": the other calls do not take the format), and calls whose differing
values the question does not write say nothing of where their shared part ends: they are
left as they are.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...language.lists import find_value
from .fan_out import norm
from .pairing import differing, repeated_tools

__all__ = ["shared_optionals", "written_at"]

#: A call as (tool name, input).
Call = tuple[str, dict[str, Any]]


def written_at(question: str, value: Any) -> int | None:
    """Where ``question`` first writes ``value`` (a fraction also as a percentage: 0.95
    as "95%"), or None."""
    if isinstance(value, (bool, list, dict)) or value is None:
        return None
    found = find_value(question, value)
    if found is not None:
        return found[0]
    if isinstance(value, float) and 0 < value < 1:
        percent = find_value(question, round(value * 100, 9))
        if percent is not None and question[percent[0]:percent[1]].endswith("%"):
            return percent[0]
    return None


def shared_optionals(calls: Sequence[Call], question: str) -> list[Call]:
    """``calls`` with the optional values the question gives once for all of a tool's
    calls written into each (see the module docstring); the calls keep their places."""
    out = [(name, dict(args)) for name, args in calls]
    for at in repeated_tools(calls):
        args = [calls[i][1] for i in at]
        places = [p for p in (written_at(question, a[k]) for k in differing(args) for a in args)
                  if p is not None]
        if not places:
            continue
        apart = min(places)
        for key in dict.fromkeys(k for a in args for k in a):
            held = [a[key] for a in args if key in a]
            if len(held) == len(args) or len({norm(v) for v in held}) != 1:
                continue
            place = written_at(question, held[0])
            if place is None or place >= apart:
                continue
            for i in at:
                out[i][1].setdefault(key, held[0])
    return out
