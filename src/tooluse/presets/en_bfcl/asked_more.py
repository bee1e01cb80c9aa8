"""One more call where the question asks for the same again and the model wrote one.

A small model offered one tool often writes one call and closes the call block where the
question asks for more: "find vegan restaurants in Los Angeles, CA ..., and then do the
same for San Francisco, CA and Seattle, WA". :mod:`.fan_out` and :mod:`.restate` add the
calls a list or a restated clause spells out around the model's values; where they find
nothing, the model itself is asked to go on: its call block is reopened after its call,
with a second call to the same tool forced (as if the model had written ``<invoke>``). The
model writes that call's values as it wrote the first one's; a call identical to the first
is rolled back to its least sure value, which then gives way to the next best (the text
backend's repeat guard), and dropped if it still repeats. The second call's values can
then be the first item of a list that :mod:`.fan_out` completes ("San Francisco, CA and
Seattle, WA").

:func:`asks_for_more` is the reading of the question this rests on: it asks for the same
thing again ("do the same for", "repeat the same process", "once again"). Broader cues
("then", "also", "each", an ordinal) fire on one-call questions too ("meters/second", "the
third major chord"): with them, right one-call answers came out with a second call and no
further answer was gained (docs/benchmarks/code.md). This wording appears in ``parallel`` questions and in none
of the one-tool questions of ``simple_python``, ``live_simple`` or ``irrelevance``.
"""

from __future__ import annotations

import re

__all__ = ["asks_for_more"]

_SAME_AGAIN = re.compile(r"\b(?:the same|again|repeat(?:s|ed|ing)?)\b", re.IGNORECASE)


def asks_for_more(question: str) -> bool:
    """Whether ``question`` asks for the same thing again ("do the same for ...")."""
    return _SAME_AGAIN.search(question) is not None
