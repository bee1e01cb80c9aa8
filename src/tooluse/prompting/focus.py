"""Where each tool's values are in the question (``focus_values``).

A question asking several tools for several things mostly asks each in a sentence or clause
of its own: "What is the capital of Australia, what is the population of Canada, and what is
the largest city in Brazil?" A small model filling ``country_info.population`` copies a
country of the question, often the wrong one. :func:`value_focus` splits the question into
its clauses (sentences, ``;``, a comma before a question word, and "and"/"also"/"then"
before a new request), gives each clause to the tool whose words it shares most (a word of
the tool's name counting three times: once as the tool's word, twice as its name's; a clause
sharing none goes with the one before it), and so tells, for each tool, the part of the
question its values come from. A clause with no value of its own ("also the interest
coverage ratio for the same duration") takes the clause before it along.

A value copier (:mod:`tooluse.backends._copy_values`) then offers a call only the spans of
its tool's part, and does not take the model's own value as given by the conversation when
the question writes it only outside that part. A tool that owns no clause has no part: its
values may come from anywhere.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..messages import ToolSpec
from .choices import content_words, given_by, split_name, tool_text

__all__ = ["ValueFocus", "clauses", "value_focus"]

#: Where a question's requests part: the end of a sentence, a semicolon, a comma before a
#: question word, or "and"/"also"/"then"/"after that" before a word that starts a new
#: request.
_REQUEST = (r"can|could|would|will|please|provide|give|tell|find|calculate|get|what|how|"
            r"i|also|determine|check|fetch|show|retrieve|book|search|compute|convert|"
            r"predict|estimate|identify|list|look")
_BREAK = re.compile(
    r"(?<=[.?!])[\"']?\s+|;\s+|,\s+(?=(?:what|how|which|who|where|when)\b)"
    rf"|,?\s+(?:and then|and also|after that|then|also|and)\s+(?=(?:{_REQUEST})\b)",
    re.IGNORECASE)
#: A clause that writes a value: a digit, a quote, or a capital past the clause's start.
_HAS_VALUE = re.compile(r"\d|['\"]|(?<!^)(?<![.?!]\s)\b[A-Z]")


def clauses(question: str) -> list[str]:
    """The question's clauses, each asking for one thing (see the module docstring)."""
    return [part.strip() for part in _BREAK.split(question) if part and part.strip()]


@dataclass(frozen=True)
class ValueFocus:
    """For each tool that owns a part of ``question``, that part (see the module
    docstring)."""

    question: str
    parts: Mapping[str, str]

    def allows(self, tool: str, value: str) -> bool:
        """May a call of ``tool`` take ``value``: the question does not write it, or writes
        it in ``tool``'s part, or ``tool`` owns no part?"""
        part = self.parts.get(tool)
        if part is None or not given_by(value, self.question):
            return True
        return given_by(value, part)


def value_focus(question: str, tools: Sequence[ToolSpec]) -> ValueFocus | None:
    """The parts of ``question`` each of ``tools`` takes its values from, or None when
    there is nothing to tell apart (one tool, one clause, or one tool owning every
    clause)."""
    parts = clauses(question)
    if len(tools) < 2 or len(parts) < 2:
        return None
    known = [content_words(tool_text(tool, examples=False)) for tool in tools]
    named = [content_words(split_name(tool.name)) for tool in tools]
    owned: dict[int, list[str]] = {}
    owners: list[int] = []
    before = ""
    for clause in parts:
        words = content_words(clause)
        scores = [len(words & k) + 2 * len(words & n) for k, n in zip(known, named, strict=True)]
        best = max(scores)
        if best > 0:
            owners = [i for i, score in enumerate(scores) if score == best]
        taken = [clause] if _HAS_VALUE.search(clause) or not before else [before, clause]
        for i in owners:
            owned.setdefault(i, []).extend(taken)
        before = clause
    if len(owned) < 2:
        return None
    return ValueFocus(question, {tools[i].name: " ".join(dict.fromkeys(texts))
                                 for i, texts in owned.items()})
