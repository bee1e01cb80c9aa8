"""Booleans the question asks for (``asked_flags``).

A boolean parameter is mostly a question of its own: ``include_human_impact``,
``avoid_tolls``, ``full_name``. When the question speaks of it ("...for the next 5 years
including human impact", "with toll roads avoided", "the full name of the president"), the
user wants it, unless a negation stands right before ("Don't return full text"). A 135M
model writes ``false`` for most of these: the first value of its schema, the safe one. The
question is read instead:

- a boolean parameter one of whose name's words (stemmed, no stop word) the question says
  is true, or false when "not", "no", "don't", "without", "never", "exclude"... stands in the
  three words before that word;
- a parameter the question does not speak of is left as the model wrote it.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from ...language.words import content_words, split_name, stem
from .schemas import properties

__all__ = ["NEGATIONS", "WORD", "asked_flags", "negated", "question_words", "spoken_of"]

#: A word of the question as the edits that read its words see it.
WORD = re.compile(r"[A-Za-z0-9']+")
#: Words that, in the three before a parameter's word, say the user does not want it.
NEGATIONS = frozenset({"not", "no", "don't", "dont", "doesn't", "without", "never",
                       "exclude", "excluding", "excluded", "nor", "neither", "isn't",
                       "aren't", "won't", "shouldn't", "skip", "omit", "except"})


def question_words(question: str) -> tuple[list[str], list[str]]:
    """The question's words, lowercased, and their stems (:func:`~tooluse.language.words.stem`)."""
    words = [w.lower() for w in WORD.findall(question)]
    return words, [stem(w) for w in words]


def negated(words: Sequence[str], at: int) -> bool:
    """Does a negation (:data:`NEGATIONS`) stand in the three of the lowercased ``words``
    before the one at ``at``?"""
    return any(w in NEGATIONS for w in words[max(0, at - 3):at])


def spoken_of(named: Collection[str], words: Sequence[str],
              stems: Sequence[str]) -> bool | None:
    """Does the question (:func:`question_words`) ask for the thing one of whose stemmed
    words ``named`` holds: True where it says the first such word, False where a negation
    stands before it, None where it says none?"""
    at = next((i for i, s in enumerate(stems) if s in named), None)
    return None if at is None else not negated(words, at)


def asked_flags(arguments: Mapping[str, Any], schema: Any, question: str) -> dict[str, Any]:
    """``arguments`` with each boolean parameter the question speaks of set as it asks
    (see the module docstring)."""
    props = properties(schema)
    if props is None:
        return dict(arguments)
    words, stems = question_words(question)
    changed: dict[str, Any] = {}
    for key, value in arguments.items():
        if not isinstance(value, bool):
            continue
        wanted = spoken_of(content_words(split_name(key)), words, stems)
        if wanted is not None and wanted != value:
            changed[key] = wanted
    return {**arguments, **changed}
