"""The lists a question writes: items of one shape (numbers, with the same unit when the
value has one; capitalised names; places with their region, "Seattle, WA"; dates in
digits, year first; quoted strings; single lowercase words), separated by commas and a
final ``and``/``or``/``&`` (:func:`list_around`, :func:`lists_in`).

The value copier offers such a list whole where an array is due (``copy_values``); the
rules of a preset read them with the same functions (:mod:`tooluse.presets`: one call per
item, ``fan_out``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .numbers import JOINED_UNITS
from .words import STOP_WORDS

__all__ = ["NUMBER_AT", "Item", "find_value", "list_around", "lists_in", "number_value"]


_NUMBER = r"[-+]?\$?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?%?"


#: A unit written joined to its number ("5cm", "10m"; as written: "$1.2M" is no metre): the
#: number is one all the same.
_JOINED_UNIT = "|".join(sorted((re.escape(u) for u in JOINED_UNITS),
                               key=len, reverse=True))


NUMBER_AT = re.compile(_NUMBER + rf"(?!\.\d)(?:(?!\w)|(?=(?:{_JOINED_UNIT})(?![\w/])))")


_SEPARATOR = re.compile(r"\s*(?:,\s*(?:and\s+|or\s+|&\s*)?|\s+(?:and|or|&|as well as|plus)\s+)",
                        re.IGNORECASE)


_FINAL = re.compile(r"(?:and|or|&|as well as|plus)\s+$", re.IGNORECASE)


_WORD = re.compile(r"[^\W\d_][\w'’-]*")


_NAME_WORD = re.compile(r"(?:[A-Z0-9][\w'’.&-]*)")


_POSSESSIVE = re.compile(r"['’]s$")


#: A place written with its region ("San Francisco, CA"; "Paris, France").
_PLACE = re.compile(r"([^,]+),\s*([^,]+)")


_QUOTED = re.compile(r"""(['"‘“])([^'"‘’“”]{1,80})(['"’”])""")


#: A date in digits, year first ("2022-01-01", "2022/02/01").
_DATE = re.compile(r"\d{4}([-/])\d{1,2}\1\d{1,2}(?![\w/-])")


_RANGE_WORDS = ("between", "from")


#: Words that are never an item of a list: the stop words, and the verbs and words that
#: follow "and" without starting an item ("ATP in mitochondria and does it...").
_NOT_ITEMS = STOP_WORDS | frozenset({
    "make", "should", "may", "might", "analyze", "calculate", "compare", "provide", "per",
})


@dataclass(frozen=True)
class Item:
    """One item of a list in the question: its text as it should be written in a call, and
    where it stands."""

    text: str
    start: int
    end: int


def number_value(text: str) -> float | None:
    cleaned = text.replace("$", "").replace(",", "").rstrip("%")
    try:
        return float(cleaned)
    except ValueError:
        return None


def find_value(question: str, value: Any) -> tuple[int, int, str] | None:
    """Where ``value`` stands in the question, and its shape: "number" (a number, or a string
    of digits), "place" (capitalised words, a comma, capitalised words: "Seattle, WA"),
    "name" (capitalised words), "date" (digits, year first: "2022-01-01"), "quoted" or
    "word" (lowercase words)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        for m in NUMBER_AT.finditer(question):
            if m.start() > 0 and (question[m.start() - 1].isalnum() or question[m.start() - 1]
                                  in "_.="):
                continue
            number = number_value(m.group())
            if number is not None and number == float(value):
                return m.start(), m.end(), "number"
        return None
    if not isinstance(value, str) or not value.strip() or len(value) > 80:
        return None
    text = value.strip()
    for quoted in _QUOTED.finditer(question):
        if quoted.group(2).strip().lower() == text.lower():
            return quoted.start(), quoted.end(), "quoted"
    if NUMBER_AT.fullmatch(text) and text[0].isdigit():
        number = number_value(text)  # a number written as a string ("case 28473")
        return find_value(question, int(number) if number is not None and number.is_integer()
                          else number)
    at = re.search(r"(?<![\w])" + re.escape(text) + r"(?![\w])", question, re.IGNORECASE)
    if at is None:
        return None
    if _DATE.fullmatch(text):
        return at.start(), at.end(), "date"
    place = _PLACE.fullmatch(text)
    if place is not None and all(_is_name(part) for part in place.groups()):
        return at.start(), at.end(), "place"
    if _is_name(text):
        return at.start(), at.end(), "name"
    words = text.split()
    if all(_WORD.fullmatch(w) and w.lower() not in _NOT_ITEMS for w in words) and len(words) <= 2:
        return at.start(), at.end(), "word"
    return None


def _is_name(text: str) -> bool:
    """Capitalised words: each a name word, one at least starting with a capital."""
    words = text.split()
    return all(_NAME_WORD.fullmatch(w) for w in words) and any(w[0].isupper() for w in words)


def _unit_after(question: str, end: int) -> str | None:
    m = re.match(r"\s*([^\W\d_]+)", question[end:])
    if m is None or m.group(1).lower() in ("and", "or", "as", "plus", "respectively"):
        return None
    return m.group(1).lower()


def _item_at(question: str, at: int, shape: str, size: int, unit: str | None,
             capital: bool = False) -> Item | None:
    """The item of ``shape`` that starts at ``at``, if one does (lowercase words but the
    first, with ``capital``: "Homo sapiens" beside "Pan troglodytes")."""
    rest = question[at:]
    if shape == "number":
        m = NUMBER_AT.match(rest)
        if m is None:
            return None
        if unit is not None and _unit_after(question, at + m.end()) not in (unit, None):
            return None
        return Item(m.group(), at, at + m.end())
    if shape == "date":
        m = _DATE.match(rest)
        return Item(m.group(), at, at + m.end()) if m else None
    if shape == "quoted":
        m = _QUOTED.match(rest)
        return Item(m.group(2).strip(), at, at + m.end()) if m else None
    if shape == "place":  # "Seattle, WA": a name, a comma, the name of its region
        city = _item_at(question, at, "name", size, None)
        comma = re.match(r",\s*", question[city.end:]) if city is not None else None
        if city is None or comma is None:
            return None
        region = _item_at(question, city.end + comma.end(), "name", 1, None)
        return Item(question[at:region.end], at, region.end) if region is not None else None
    words: list[re.Match[str]] = []
    last = 0
    pattern = _NAME_WORD if shape == "name" else _WORD
    for m in re.finditer(r"\S+", rest):
        if m.start() != (words[-1].end() + 1 if words else 0) or len(words) >= size + 2:
            break
        word = _POSSESSIVE.sub("", m.group().rstrip(",.;:!?)"))
        if not pattern.fullmatch(word) or word.lower() in _NOT_ITEMS:
            break
        if shape == "word" and word[0].isupper() and (words or not capital):
            break
        words.append(m)
        last = m.start() + len(word)
        if m.group() != word:  # punctuation (or a possessive) ends the item
            break
    if not words or (shape == "word" and len(words) > size):
        return None
    text = rest[:last]
    if shape == "name" and not text[0].isupper():
        return None
    return Item(text, at, at + last)


def list_around(question: str, value: Any) -> tuple[list[Item], int] | None:
    """The list in ``question`` that ``value`` is an item of, and its index there; None
    when the value stands alone (or in a range, or not in the question at all)."""
    found = find_value(question, value)
    if found is None:
        return None
    start, end, shape = found
    size = len(str(value).split())
    unit = _unit_after(question, end) if shape == "number" else None
    capital = shape == "word" and str(value).strip()[:1].isupper()
    first = Item(question[start:end] if shape != "quoted" else str(value), start, end)
    items = [first]
    final = False  # a list has a final "and"/"or": "A, B and C", not "Paris, France"
    # Rightwards: separator, item; a final "and"/"or" ends the list.
    at = end
    if unit is not None:
        at = question.lower().index(unit, end) + len(unit)
    while True:
        sep = _SEPARATOR.match(question, at)
        if sep is None:
            break
        item = _item_at(question, sep.end(), shape, size, unit, capital)
        if item is None:
            break
        items.append(item)
        at = item.end
        if unit is not None and _unit_after(question, at) == unit:
            at = question.lower().index(unit, at) + len(unit)
        if _FINAL.search(sep.group() + " "):
            final = True
            break
    # Leftwards: "A, B and <value>" — earlier items separated by commas.
    index = 0
    before = question[:start]
    while True:
        sep = re.search(r"(?:,\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+)$", before)
        if sep is None:
            break
        head = before[: sep.start()]
        item = None
        for m in list(re.finditer(r"(?<![^\s,(])\S", head))[-(size + 2):]:
            if shape == "name" and re.search(r"(?:^|[.!?]\s+)$", head[: m.start()]):
                continue  # a sentence's first word is capitalised anyway ("Play Taylor...")
            probe = _item_at(question, m.start(), shape, size, unit, capital)
            if probe is not None and question[probe.end:sep.start()].strip().lower() in (
                    "", unit or ""):
                item = probe
                break
        if item is None:
            break
        items.insert(0, item)
        final = final or bool(re.search(r"\b(?:and|or)\b", sep.group()))
        index += 1
        before = question[: item.start]
    if len(items) < 2 or not final:
        return None
    word_before = re.search(r"([^\W\d_]+)\W*$", question[: items[0].start])
    if shape == "number" and word_before is not None \
            and word_before.group(1).lower() in _RANGE_WORDS:
        return None
    if re.match(r"\s*(?:to|-|–)\s*" + _NUMBER, question[items[-1].end:]) and shape == "number":
        return None
    return items, index


def lists_in(text: str, spans: Sequence[str]) -> list[list[str]]:
    """The lists in ``text`` (see :func:`list_around`) that hold one of ``spans`` (the
    values the conversation offers, e.g. :func:`~.spans.candidate_values`), each
    once, as the strings its items are written with."""
    by_end: dict[int, list[Item]] = {}
    for span in spans:
        around = list_around(text, number_value(span) if NUMBER_AT.fullmatch(span)
                             else span)
        if around is None:
            continue
        items = around[0]
        known = by_end.get(items[-1].end)
        if known is None or items[0].start < known[0].start:
            by_end[items[-1].end] = items  # "Santa Barbara and Monterey", not "Barbara..."
    return [[item.text for item in items] for _, items in sorted(by_end.items())]
