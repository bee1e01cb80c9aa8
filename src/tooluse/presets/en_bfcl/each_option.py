"""A call for each of a parameter's options the question lists (``each_option``).

"Sort these lists in both ascending and descending order", "considering both the shortest
and scenic route preferences", "the precipitation for the last six months, the last year,
and the last five years": the question names two or more options of one parameter — its
enum's members, or the strings its description quotes — side by side, and wants a call for
each. A 135M model writes the call with the first option and closes the block, and
:mod:`.fan_out` does not see a list there: the call writes the option as the enum does
("Shortest", "six_months"), not as the question, and the items may be phrases.

:func:`option_calls` reads the question instead. For a parameter with two options or more,
the options the question writes are found (their words stemmed and in a row, as
:mod:`.named_options` reads them, an option inside a longer one the question writes not
counting; where options differ only in case, "AA", "Aa", "aa", as written). When two or
more stand close together, as a list does, each call holding one of them is repeated with
each other one. Close together: at most four words between one and the next, none of them
a word that sets two values of one call apart ("from Celsius to Fahrenheit", "rather
than", "instead of", "versus"), and an "and", "or", "plus", "&" or "as well as" between
the first and the last. Strings a description quotes "e.g." or "such as" are examples, not
every option: a list of them is :mod:`.fan_out`'s.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ...language.words import stem
from .flags import WORD
from .named_options import option_spans, parameter_options
from .schemas import properties

__all__ = ["named_in_list", "option_calls"]

#: A call as (tool name, input).
Call = tuple[str, dict[str, Any]]

#: Words between two values of one call, not items of a list.
_APART = frozenset({"to", "from", "into", "than", "instead", "versus", "vs", "per", "over",
                    "against", "between"})
_JOINED = re.compile(r"\b(?:and|or|plus|as well as)\b|&", re.IGNORECASE)
#: A description quoting examples of values rather than every option.
_EXAMPLES = re.compile(r"\be\.?g\.|\bsuch as\b|\bfor (?:example|instance)\b|\betc\b",
                       re.IGNORECASE)
#: Words between one listed option and the next.
_MAX_GAP = 4


def named_in_list(options: Sequence[str], question: str) -> list[str]:
    """The ``options`` ``question`` lists side by side (see the module docstring), in
    the order it writes them; empty when fewer than two."""
    spans = [(m.start(), m.end()) for m in WORD.finditer(question)]
    words = [question[s:e] for s, e in spans]
    stems = [stem(w.lower()) for w in words]
    exact = len({o.lower() for o in options}) < len(options)
    found = sorted((at, o) for o in dict.fromkeys(options)
                   for at in option_spans(o, stems, words if exact else None))
    # An option the question writes only inside a longer one it writes ("New" in "Like New").
    found = [(at, o) for at, o in found
             if not any(q != at and q[0] <= at[0] and at[1] <= q[1] for q, _ in found)]
    best: list[tuple[tuple[int, int], str]] = []
    for first in range(len(found)):
        run = [found[first]]
        for at, option in found[first + 1:]:
            last = run[-1][0]
            gap = [w.lower() for w in words[last[1]:at[0]]]
            if at[0] < last[1] or len(gap) > _MAX_GAP or _APART & set(gap):
                break
            if option not in {o for _, o in run}:
                run.append((at, option))
        between = question[spans[run[0][0][1] - 1][1]:spans[run[-1][0][0]][0]]
        if len(run) > max(1, len(best)) and _JOINED.search(between):
            best = run
    return [option for _, option in best]


def option_calls(calls: Sequence[Call], question: str,
                 schemas: Mapping[str, Mapping[str, Any] | None], *, limit: int,
                 valid: Callable[[str, dict[str, Any]], bool]) -> list[Call]:
    """The calls ``question`` asks for that ``calls`` leave out: each call holding one of
    the options of a parameter the question lists (:func:`named_in_list`), repeated with
    each other one. At most ``limit`` calls in all; ``valid(name, input)`` must accept each
    new call."""
    extra: list[Call] = []
    seen = [(name, dict(args)) for name, args in calls]
    for name, args in calls:
        for key, spec in (properties(schemas.get(name)) or {}).items():
            value = args.get(key)
            if not isinstance(value, str) or not isinstance(spec, Mapping):
                continue
            if _EXAMPLES.search(str(spec.get("description", ""))) and "enum" not in spec:
                continue  # "e.g. '1 week', '2 weeks'": examples, not every option
            listed = named_in_list(parameter_options(spec), question)
            # The option the call holds: as written, else up to case.
            held = next((o for o in listed if o == value),
                        next((o for o in listed if o.lower() == value.lower()), None))
            if held is None:
                continue
            for option in listed:
                new = {**args, key: option}
                if option == held or (name, new) in seen:
                    continue
                if len(calls) + len(extra) >= limit or not valid(name, new):
                    continue
                extra.append((name, new))
                seen.append((name, new))
    return extra
