"""Numbers a question writes without digits standing alone: in words ("two nights", "the
top three plants") or as ordinals ("the 16th century").

A 135M model asked for "two nights" writes a number the question writes in digits
elsewhere (``nights: 2022`` from "10th December 2022"), and an optional ``days: 3`` for
"the next three days" looked ungiven, so it was left out. :func:`spoken_numbers` finds
these numbers so that the value copier offers them (:mod:`.copy_values`), and
:func:`counts` finds the words they count, so that the optional rule takes "three days" as
giving ``days`` (:func:`.choices.keep_given_optionals`) but not "two charges" as giving a
permittivity of 2. An ordinal next to a month's name is a date's day ("10th December"), not
a number of its own.
"""

from __future__ import annotations

import re

__all__ = ["counts", "spoken_numbers"]

#: Cardinal numbers written in words.
NUMBER_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60,
    "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100, "dozen": 12,
}
_WORD = re.compile(r"\b(" + "|".join(NUMBER_WORDS) + r")\b", re.IGNORECASE)
_ORDINAL = re.compile(r"(?<![\w.])(\d+)(?:st|nd|rd|th)\b", re.IGNORECASE)
_MONTH = re.compile(r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?"
                    r"|aug(?:ust)?|sep(?:t|tember)?|oct(?:ober)?|nov(?:ember)?"
                    r"|dec(?:ember)?)\.?$", re.IGNORECASE)


def spoken_numbers(text: str) -> list[int]:
    """The numbers ``text`` writes in words or as ordinals, in order, with repeats ("a
    hundred" is 100; "twenty one" is 20 and 1, not 21)."""
    found: list[tuple[int, int]] = []
    for match in _WORD.finditer(text):
        found.append((match.start(), NUMBER_WORDS[match.group(1).lower()]))
    for match in _ORDINAL.finditer(text):
        before = text[:match.start()].split()[-1:]
        after = text[match.end():].split()[:1]
        if any(_MONTH.match(word.strip(",.")) for word in before + after):
            continue  # "10th December", "April 4th": a date's day
        found.append((match.start(), int(match.group(1))))
    return [number for _, number in sorted(found)]


def counts(text: str) -> list[tuple[int, tuple[str, ...]]]:
    """Each number ``text`` writes in words with the (up to two) words after it, what it
    counts: ``(3, ("days",))`` for "the next three days", ``(3, ("personality", "traits"))``
    for "three personality traits of...", ``(2, ("charges", "of"))``."""
    found: list[tuple[int, tuple[str, ...]]] = []
    for match in _WORD.finditer(text):
        after = re.match(r"(?:\s+[A-Za-z][\w\-]*){1,2}", text[match.end():])
        found.append((NUMBER_WORDS[match.group(1).lower()],
                      tuple(after.group().split()) if after else ()))
    return found
