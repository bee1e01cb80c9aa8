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
from collections.abc import Mapping
from typing import Any

from .choices import content_words, split_name, stem

__all__ = ["NEGATIONS", "asked_flags"]

_WORD = re.compile(r"[A-Za-z0-9']+")
#: Words that, in the three before a parameter's word, say the user does not want it.
NEGATIONS = frozenset({"not", "no", "don't", "dont", "doesn't", "without", "never",
                       "exclude", "excluding", "excluded", "nor", "neither", "isn't",
                       "aren't", "won't", "shouldn't", "skip", "omit", "except"})


def asked_flags(arguments: Mapping[str, Any], schema: Any, question: str) -> dict[str, Any]:
    """``arguments`` with each boolean parameter the question speaks of set as it asks
    (see the module docstring)."""
    props = schema.get("properties") if isinstance(schema, Mapping) else None
    if not isinstance(props, Mapping):
        return dict(arguments)
    words = [w.lower() for w in _WORD.findall(question)]
    stems = [stem(w) for w in words]
    changed: dict[str, Any] = {}
    for key, value in arguments.items():
        if not isinstance(value, bool):
            continue
        named = content_words(split_name(key))
        at = next((i for i, s in enumerate(stems) if s in named), None)
        if at is None:
            continue
        wanted = not any(w in NEGATIONS for w in words[max(0, at - 3):at])
        if wanted != value:
            changed[key] = wanted
    return {**arguments, **changed}
