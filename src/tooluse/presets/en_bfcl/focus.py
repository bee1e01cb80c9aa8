"""Where each tool's values are in the question (``focus_values``).

A question asking several tools for several things mostly asks each in a sentence or clause
of its own: "What is the capital of Australia, what is the population of Canada, and what is
the largest city in Brazil?" A small model filling ``country_info.population`` copies a
country of the question, often the wrong one. :func:`value_focus` splits the question into
its clauses (sentences, ``;``, a comma before a question word, "and"/"also"/"then"
before a new request, and ", and the": "the GCD of 96 and 128, and the LCM of 15 and 25"),
gives each clause to the tool whose words it shares most (a word of the tool's name
counting three times: once as the tool's word, twice as its name's; a clause sharing none
goes with the one before it), and so tells, for each tool, the part of the question its
values come from. A clause with no value of its own ("also the interest coverage ratio for
the same duration"), or one that points back and writes no number ("the GDP of the USA in
these years", "how many stores in each city"), takes the last clause before it that writes
a value along. A clause pointing back that writes numbers keeps to its own ("the debt ratio
of the same company if the total liabilities are $10,000": the company is no value of the
call, the net income before it is no value of it).

A value copier (:mod:`tooluse.llama.copy_values`) then offers a call only the spans of
its tool's part, and does not take the model's own value as given by the conversation when
the question writes it only outside that part. A tool that owns no clause has no part: its
values may come from anywhere.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ...language.words import content_words, split_name
from ...messages import ToolSpec
from ...prompting.hints import ValueFocus
from .choices import tool_text

__all__ = ["ValueFocus", "clause_spans", "clauses", "owned_spans", "value_focus"]

#: Where a question's requests part: the end of a sentence, a semicolon, a comma before a
#: question word, "and"/"also"/"then"/"after that" before a word that starts a new
#: request, or ", and the".
_REQUEST = (r"can|could|would|will|please|provide|give|tell|find|calculate|get|what|how|"
            r"i|also|determine|check|fetch|show|retrieve|book|search|compute|convert|"
            r"predict|estimate|identify|list|look|generate|create|make|analy[sz]e|assess|"
            r"compare|solve|evaluate|perform|display|locate|translate|schedule|order|buy|"
            r"play|send")
_BREAK = re.compile(
    r"(?<=[.?!])[\"']?\s+|;\s+|,\s+(?=(?:what|how|which|who|where|when)\b)"
    rf"|,?\s+(?:and then|and also|after that|then|also|and)\s+(?=(?:{_REQUEST})\b)"
    r"|,\s+and\s+(?=the\b)",
    re.IGNORECASE)
#: A clause that writes a value: a digit, a quote, or a capital past the clause's start.
_HAS_VALUE = re.compile(r"\d|['\"]|(?<!^)(?<![.?!]\s)\b[A-Z]")
#: A clause that points back at values written before it ("the same coordinates", "these
#: years", "each city", "both cities").
_BACK = re.compile(r"\b(?:same|these|those|each|both|respective(?:ly)?|aforementioned)\b",
                   re.IGNORECASE)
_DIGIT = re.compile(r"\d")


def clause_spans(question: str) -> list[tuple[int, int]]:
    """Where the question's clauses stand (see the module docstring): ``(start, end)``
    each, without the words that part them."""
    spans: list[tuple[int, int]] = []
    start = 0
    for cut in [*_BREAK.finditer(question), None]:
        end = cut.start() if cut is not None else len(question)
        text = question[start:end]
        if text.strip():
            left = len(text) - len(text.lstrip())
            spans.append((start + left, start + len(text.rstrip())))
        if cut is not None:
            start = cut.end()
    return spans


def clauses(question: str) -> list[str]:
    """The question's clauses, each asking for one thing (see the module docstring)."""
    return [question[start:end] for start, end in clause_spans(question)]


def owned_spans(question: str, tools: Sequence[ToolSpec]) -> dict[str, list[tuple[int, int]]]:
    """For each of ``tools`` that owns clauses of ``question``, where they stand (see the
    module docstring); empty when there is nothing to tell apart (one tool, one clause, or
    one tool owning every clause)."""
    spans = clause_spans(question)
    if len(tools) < 2 or len(spans) < 2:
        return {}
    known = [content_words(tool_text(tool, examples=False)) for tool in tools]
    named = [content_words(split_name(tool.name)) for tool in tools]
    owned: dict[int, list[tuple[int, int]]] = {}
    owners: list[int] = []
    before: tuple[int, int] | None = None
    for span in spans:
        clause = question[span[0]:span[1]]
        words = content_words(clause)
        scores = [len(words & k) + 2 * len(words & n) for k, n in zip(known, named, strict=True)]
        best = max(scores)
        if best > 0:
            owners = [i for i, score in enumerate(scores) if score == best]
        valued = bool(_HAS_VALUE.search(clause))
        back = _BACK.search(clause) is not None and not _DIGIT.search(clause)
        taken = [span] if before is None or (valued and not back) else [before, span]
        for i in owners:
            owned.setdefault(i, []).extend(s for s in taken if s not in owned.get(i, []))
        if valued or before is None:
            before = span
    if len(owned) < 2:
        return {}
    return {tools[i].name: spans_of for i, spans_of in owned.items()}


def value_focus(question: str, tools: Sequence[ToolSpec]) -> ValueFocus | None:
    """The parts of ``question`` each of ``tools`` takes its values from, or None when
    there is nothing to tell apart (one tool, one clause, or one tool owning every
    clause)."""
    owned = owned_spans(question, tools)
    if not owned:
        return None
    return ValueFocus(question, {name: " ".join(dict.fromkeys(question[s:e] for s, e in spans))
                                 for name, spans in owned.items()})
