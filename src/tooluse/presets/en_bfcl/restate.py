"""The number of calls follows the request: one call per clause that restates a call's values.

A small model asked "the BMI of a person 6 feet tall weighing 80 kg, also for one 5.6 feet
tall weighing 60 kg" writes the call for the first person and closes the call block (on
BFCL ``parallel``, most answers held one call where two to four were asked for, docs/benchmarks/code.md; and
most of these questions are not lists but clauses: "...then repeat with a change in time of 10
seconds", "...and $20000 short term, $50000 long term in Florida"). The question says
what the further calls are: it writes other values *in the same places* as the values the
model used. :func:`restatements` finds them and returns the model's call again with each
clause's values in place of its own.

How a value of the question is given to a parameter of the model's call:

- it has the same shape as the value the model wrote there — a number, capitalised words,
  a place with its region ("Chicago, IL"), a date ("May 3rd 2022"), a quoted string, or a
  lowercase word (only where the question says "also", "another", "same", "then",
  "respectively"...: most of a question's words are not values) — and no call uses it; a
  value of one shape is not another's (a quoted "San Mateo" is not a name as well);
- its neighbourhood matches: the word right before it is the one before the model's value
  ("from Tokyo" / "from San Francisco"), and the content words around it (up to three
  before, two after, within its clause) stand around the model's value elsewhere or name
  the parameter ("a change in time of 10 seconds" / "change in time of 4 seconds":
  ``d_time``; "$20000 short term": ``short_term_gain``); the parameter scoring best, alone;
- or it is the model's value written again ("USD to AUD and USD to CAD");
- or, when nothing around the values of a shape tells, by position: the question's unused
  values of that shape outside the model's, as many as the call has such parameters (or a
  multiple), fill them in the order the model's values stand ("3 and 4, 5 and 12").

Where lists go in step ("respectively"), the items of a list one of the model's values
stands in are never restated: they are :mod:`.fan_out`'s ("Taylor Swift and Maroon 5 ...
20 minutes and 15 minutes respectively").

Values given so go into calls in the order they stand: a parameter given a second time
starts the next call. A call's clause (between the calls around it; after the call's own
values, up to the next comma or full stop) then gives the parameters the call lacks its
values of no parameter yet, when they are as many ("...and $9000 at a rate of 3%": 9000 is
the principal of the call 3% makes). Each new call is the model's with those values
replaced, written as the model wrote its own (a rate it wrote 0.05 for "5%" is 0.03 for
"3%"). Without a word saying "again", a new call needs two values from its clause (one may
be the model's written again), or one placed with two matching signs. It must differ from
every call there is and validate against its tool's schema (``valid``).

Where the calls name several tools, a question restates each in its own clauses, and their
values are no other tool's: each tool is restated from the clauses it alone owns
(:func:`.focus.owned_spans`: the clauses sharing most words with it; a clause as much
another tool's is neither's), the other tools' values and the rest of the question being
no values of it ("...the stock forecast for Apple Inc. for 30 days, and then for Microsoft
Corporation for 45 days? After that, the weather forecast for New York City..."). Such a
question's "also", "then", "after that" part its requests and say nothing of this one, so
a new call needs two values or one placed with two matching signs; its values stand in one
clause that no other call of the tool takes values from, and if the model's call does, two
of them differ from the model's (a single value left there is likelier the model's mistake:
"convert 5000 Japanese Yen into US Dollars" with ``to_currency: "Yen"``); lowercase words
are no values. A tool owning no clause alone is not restated.

Whatever the tools: a percentage restates only a percentage ("4%" is no "5 years"), and a
new call does not write one name in two parameters the model's call keeps apart ("from
Tokyo to Tokyo").
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...language.lists import NUMBER_AT, find_value, list_around, number_value
from ...language.numbers import MONTH
from ...language.words import STOP_WORDS, whole_spans
from .fan_out import as_value, norm

__all__ = ["restatements"]

#: A call as (tool name, input).
Call = tuple[str, dict[str, Any]]

_TOKEN = re.compile(r"[^\W_][\w'’.-]*|[,;:!?()]")
_CLAUSE_END = frozenset(",;:!?()")
_NAME_RUN = re.compile(r"[A-Z][\w'’&.-]*(?:\s+(?:[A-Z0-9][\w'’&.-]*))*")
#: A place with its region ("Chicago, IL", "Berlin, Germany"): one value.
_PLACE = re.compile(r"[A-Z][\w'’.-]*(?:\s+[A-Z][\w'’.-]*)*"
                    r",\s*[A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*)*")
#: Words saying a question asks for more than one thing ("do the same for...", "then
#: repeat with..."); without one, a new call must differ in two values or more.
_AGAIN = re.compile(r"\b(?:also|another|again|same|repeat|then|as well|both|each|respectively"
                    r"|too|other|second|plus|vs|versus|compare|separately|individually)\b",
                    re.IGNORECASE)
#: The shapes of values, the most particular first.
_SHAPES = ("quoted", "place", "date", "name", "number", "word")
#: Capitalised words that are not names.
_NOT_NAMES = frozenset({"I", "I'm", "I'd", "I've", "I'll", "Can I", "Could I", "How", "What"})
#: A quoted string: the same quote mark on both sides, not an apostrophe within a word.
_QUOTED = re.compile(r"""(?<!\w)(?:'([^'"\n]{1,80})'|"([^'"\n]{1,80})"|‘([^‘’\n]{1,80})’"""
                     r"""|“([^“”\n]{1,80})”)(?!\w)""")
#: Dates are not names: a date goes where a date went ("on May 3rd 2022"). Any word that
#: starts with a month's name reads as one ("Maroon 5" too), as when the preset was measured.
_DATE = re.compile(rf"(?:{MONTH})[a-z]*\.?\s*\d", re.IGNORECASE)
#: Numbers written as words are a count, not a lowercase value.
_NUMBER_WORDS = frozenset({"one", "two", "three", "four", "five", "six", "seven", "eight",
                           "nine", "ten", "twice", "once"})


@dataclass(frozen=True)
class _Value:
    """A value of the question: where it stands, its text, and its shape."""

    start: int
    end: int
    text: str
    shape: str


def _stem(word: str) -> str:
    word = word.lower().strip(".'’")
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") \
        else word


#: Words too common to tell one place in a sentence from another.
_ARTICLES = frozenset({"a", "an", "the", "and", "or"})


@dataclass(frozen=True)
class _Context:
    """Around a value: the word right before it (None after punctuation or an article), the
    content words right next to it, and those within its clause (up to three before, two
    after; a number ends the run), each with where it stands."""

    previous: str | None
    next_to: frozenset[tuple[str, int]]
    words: frozenset[tuple[str, int]]

    def score(self, other: _Context, key_words: frozenset[str]) -> int:
        """How alike two values' places are: the same word before; each content word around
        this one that stands around ``other`` too (elsewhere: two values side by side share
        their neighbours, which says nothing) or names the parameter; once more for the
        same word right next to both ("gini criterion" / "entropy criterion")."""
        theirs = {w for w, _ in other.words}
        shared = {w for w, at in self.words
                  if w in key_words or (w in theirs and (w, at) not in other.words)}
        beside = {w for w, at in self.next_to
                  if (w, at) not in other.next_to and w in {x for x, _ in other.next_to}}
        return (self.previous is not None and self.previous == other.previous) \
            + len(shared) + len(beside)


def _context(question: str, value: _Value) -> _Context:
    before = [(m.group(), m.start()) for m in _TOKEN.finditer(question, 0, value.start)]
    after = [(m.group(), m.start()) for m in _TOKEN.finditer(question, value.end)]
    previous = before[-1][0].lower() if before and before[-1][0] not in _CLAUSE_END else None
    words: set[tuple[str, int]] = set()
    next_to: set[tuple[str, int]] = set()
    for run, limit in ((before[::-1], 3), (after, 2)):
        for taken, (token, at) in enumerate(run[:limit]):
            if token in _CLAUSE_END or token[0].isdigit() or token.lower() in ("and", "or"):
                break
            if token.lower() not in STOP_WORDS and not token[0].isupper():
                # (a capitalised word is likelier another value than a word about one)
                words.add((_stem(token), at))
                if taken == 0:
                    next_to.add((_stem(token), at))
    return _Context(None if previous in _ARTICLES else previous, frozenset(next_to),
                    frozenset(words))


def _values(question: str, shape: str) -> list[_Value]:
    """The question's values of ``shape``."""
    found: list[_Value] = []
    if shape == "number":
        for m in NUMBER_AT.finditer(question):
            if m.start() > 0 and (question[m.start() - 1].isalnum()
                                  or question[m.start() - 1] in "_.=:^/"):
                continue  # part of a name, a time or a unit ("m/s^2")
            found.append(_Value(m.start(), m.end(), m.group(), shape))
    elif shape == "quoted":
        found = [_Value(m.start(), m.end(), next(g for g in m.groups() if g).strip(), shape)
                 for m in _QUOTED.finditer(question)]
    elif shape in ("name", "date"):
        for m in _NAME_RUN.finditer(question):
            # A sentence ends a name ("...in Celsius. The second..."), an abbreviation not.
            text = re.split(r"(?<=[a-z]{2})\.\s", m.group())[0].rstrip(".")
            if text in _NOT_NAMES or len(text) < 2 or (
                    re.search(r"(?:^|[.!?][\"'”’)]?\s+)[\"'“‘(]*$", question[: m.start()])
                    and " " not in text):
                continue  # a sentence's first word is capitalised anyway
            if (_DATE.match(text) is not None) == (shape == "date"):
                found.append(_Value(m.start(), m.start() + len(text), text, shape))
    elif shape == "place":
        found = [_Value(m.start(), m.end(), m.group(), shape) for m in _PLACE.finditer(question)]
    elif shape == "word":
        found = [_Value(m.start(), m.end(), m.group(), shape)
                 for m in re.finditer(r"(?<![\w'’-])[a-z][a-z-]+(?![\w'’])", question)
                 if m.group() not in STOP_WORDS and m.group() not in _NUMBER_WORDS]
    return found


def _name_words(key: str) -> frozenset[str]:
    return frozenset(_stem(w) for w in re.split(r"[_\W]+|(?<=[a-z])(?=[A-Z])", key) if w)


def _as_value(value: _Value, like: Any, spot: _Value) -> Any:
    """``value`` written as the model wrote ``like`` (found at ``spot``): as
    :func:`.fan_out.as_value`, and a fraction where it wrote "5%" as 0.05."""
    if isinstance(like, (int, float)) and not isinstance(like, bool) \
            and value.text.endswith("%") and spot.text.endswith("%"):
        number, percent = number_value(value.text), number_value(spot.text)
        if number is not None and percent and abs(like - percent / 100) < 1e-9:
            return float(f"{number / 100:.12g}")
    if value.text.endswith("%") != spot.text.endswith("%"):
        return None  # a rate is no restatement of a count ("4%" for "5 years")
    if isinstance(like, str) and like != spot.text and like.lower() == spot.text.lower():
        # Written in the model's case: "shortest" as `Shortest`, so "scenic" as `Scenic`
        # (an enum's member, where the question's own case is none).
        return _in_case_of(like, value.text)
    return as_value(value.text, like)


def _in_case_of(like: str, text: str) -> str:
    """``text`` in the case ``like`` is written in: all capitals, capitalised words, or
    lowercase; else as it is."""
    if like.isupper():
        return text.upper()
    if like.islower():
        return text.lower()
    if like == like.title():
        return text.title()
    if like == like[:1].upper() + like[1:].lower():
        return text[:1].upper() + text[1:].lower()
    return text


def restatements(calls: Sequence[Call], question: str,
                 schemas: Mapping[str, Mapping[str, Any] | None], *, limit: int,
                 valid: Callable[[str, dict[str, Any]], bool],
                 parts: Mapping[str, Sequence[tuple[int, int]]] | None = None) -> list[Call]:
    """The calls ``question`` restates for ``calls`` (the model's, in order) with other
    values, that ``calls`` leave out (see the module docstring). At most ``limit`` calls in
    all; ``valid(name, input)`` must accept each new call. Where ``calls`` name several
    tools, a tool is restated only from the ``parts`` of the question it alone owns
    (``(start, end)`` spans, by tool: :func:`.focus.owned_spans`); without ``parts``, not
    at all."""
    names = list(dict.fromkeys(name for name, _ in calls))
    if len(names) == 1:
        return _restated(calls, question, [], limit=limit, valid=valid)
    # Calls of several tools: a value of one tool's clause is no restatement of another's.
    # Restating every tool from the whole question did worse than fan_out alone, from the
    # clauses each tool alone owns better (bench/bfcl_fan_out_ceiling.py; docs/benchmarks/code.md).
    if not parts:
        return []
    extra: list[Call] = []
    owners = Counter(span for spans in parts.values() for span in spans)
    for name in names:
        # A clause as much another tool's (as many of its words) is neither's to restate.
        spans = [span for span in parts.get(name, ()) if owners[span] == 1]
        if not spans:
            continue
        own = [call for call in calls if call[0] == name]
        others = [call for call in [*calls, *extra] if call[0] != name]
        extra += _restated(own, question, others, owned=spans,
                           limit=limit - len(calls) + len(own) - len(extra), valid=valid)
    return extra


def _outside(spans: Sequence[tuple[int, int]], length: int) -> list[tuple[int, int]]:
    """The spans of a text of ``length`` characters that none of ``spans`` covers."""
    gaps: list[tuple[int, int]] = []
    at = 0
    for start, end in sorted(spans):
        if start > at:
            gaps.append((at, start))
        at = max(at, end)
    if at < length:
        gaps.append((at, length))
    return gaps


def _restated(calls: Sequence[Call], question: str, others: Sequence[Call], *, limit: int,
              valid: Callable[[str, dict[str, Any]], bool],
              owned: Sequence[tuple[int, int]] | None = None) -> list[Call]:
    """:func:`restatements` for the calls of one tool, ``others``' values being no values
    of it. Given the clauses the tool ``owned``, only their values are, and a new call's
    values must stand in one of them, not one the model's call takes values from."""
    located = [_locate(question, args) for _, args in calls]
    used = [(v.start, v.end) for spots in located for v in spots.values()] \
        + _written(question, calls, located) \
        + _written(question, others, [{} for _ in others]) \
        + (_outside(owned, len(question)) if owned is not None else [])
    if "respectively" in question.lower():
        # Lists in step are fan_out's to call ("...20 minutes and 15 minutes respectively":
        # 15 goes with the other list's artist, not with this call's).
        used += [(item.start, item.end) for (_, args), spots in zip(calls, located, strict=True)
                 for key in spots for found in [list_around(question, args[key])] if found
                 for item in found[0]]
    # The template: the model's first call whose values the question writes.
    template = next(((args, spots) for (_, args), spots in zip(calls, located, strict=True)
                     if spots), None)
    if template is None:
        return []
    name = calls[0][0]
    args, spots = template
    again = _AGAIN.search(question) is not None
    taken = {_clause_of(value, owned) for found in located if found is not spots
             for value in found.values()} if owned is not None else set()
    extra: list[Call] = []
    seen = [dict(a) for _, a in calls]
    # (Among several tools' requests, lowercase words are likelier anything but a value.)
    given, left = _give(question, spots, used, again and owned is None)
    for group in _groups(question, given, left, spots):
        new = dict(args)
        for key, (value, _) in group.items():
            new[key] = _as_value(value, args[key], spots[key])
        if any(v is None for v in new.values()) or any(_same(a, new) for a in seen):
            continue
        if all(score < 0 for _, score in group.values()):
            continue
        if _doubled(new) - _doubled(args):
            continue  # one name in two places the model's call keeps apart ("Tokyo to Tokyo")
        changed = [score for key, (_, score) in group.items()
                   if norm(new[key]) != norm(args[key])]
        if not ((again and owned is None) or len(group) >= 2 or max(changed, default=0) >= 2):
            # One value elsewhere, nothing saying "again": likelier a mistake. (Among
            # several tools' requests, "also", "then"... part them and say nothing of this.)
            continue
        if owned is not None:
            home = {_clause_of(value, owned) for value, _ in group.values()}
            if len(home) != 1 or None in home or home & taken or (
                    len(changed) < 2
                    and any(_clause_of(spot, owned) in home for spot in spots.values())):
                # Across clauses, a clause another call of the tool takes values from (its
                # values the model's mistakes there), or one value the model's own clause
                # left out.
                continue
        if len(calls) + len(extra) >= limit or not valid(name, new):
            continue
        extra.append((name, new))
        seen.append(new)
    return extra


def _doubled(args: Mapping[str, Any]) -> set[str]:
    """The strings ``args`` holds in two parameters or more, normalised (numbers may well
    be the same: "a length of 5 and a width of 5")."""
    values = [norm(v) for v in args.values() if isinstance(v, str)]
    return {v for v in values if values.count(v) > 1}


def _clause_of(value: _Value, clauses: Sequence[tuple[int, int]]) -> int | None:
    return next((i for i, (start, end) in enumerate(clauses)
                 if start <= value.start < end), None)


def _locate(question: str, args: Mapping[str, Any]) -> dict[str, _Value]:
    """Where the call's scalar values stand in the question, by parameter."""
    spots: dict[str, _Value] = {}
    for key, value in args.items():
        if isinstance(value, (list, dict, bool)) or value is None:
            continue
        found = find_value(question, value)
        if found is None and isinstance(value, float) and not value.is_integer():
            found = _percent_at(question, value)  # 0.05 written "5%"
        if found is None and isinstance(value, str):
            place = next((m for m in _PLACE.finditer(question)
                          if m.group().lower() == value.strip().lower()), None)
            found = (place.start(), place.end(), "place") if place else None
        if found is None or (found[2] == "word" and " " in str(value).strip()):
            continue
        start, end, shape = found
        if shape == "name" and not question[start].isupper():
            shape = "word"  # "the burger", however the model capitalised it
        if shape == "name" and _DATE.match(question, start):
            shape = "date"
        if shape == "word" and (" " in question[start:end] or question[start:end].lower()
                                in _NUMBER_WORDS):
            continue
        spots[key] = _Value(start, end, question[start:end], shape)
    return spots


def _percent_at(question: str, value: float) -> tuple[int, int, str] | None:
    """Where ``question`` writes the fraction ``value`` as a percentage ("5%" for 0.05)."""
    for m in NUMBER_AT.finditer(question):
        number = number_value(m.group())
        if m.group().endswith("%") and number is not None \
                and abs(number - value * 100) < 1e-9:
            return m.start(), m.end(), "number"
    return None


def _written(question: str, calls: Sequence[Call],
             located: Sequence[Mapping[str, _Value]]) -> list[tuple[int, int]]:
    """Where the calls' other values (items of arrays and objects too) stand in the
    question: "Rome, Italy" is one value, not two names free for another call."""
    spans: list[tuple[int, int]] = []

    def walk(value: Any) -> None:
        if isinstance(value, list):
            for item in value:
                walk(item)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, str) and value.strip():
            spans.extend(whole_spans(question, value))
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            found = find_value(question, value)
            if found is None and isinstance(value, float) and not value.is_integer():
                found = _percent_at(question, value)  # 0.05 written "5%"
            if found is not None:
                spans.append(found[:2])

    for (_, args), spots in zip(calls, located, strict=True):
        for key, value in args.items():
            if key not in spots:
                walk(value)
    return spans


_TIME = re.compile(r"(?<![\w.:])(\d{1,2}):(\d{2})(?![\w:])")


def _times(question: str, spots: Mapping[str, _Value], keys: Sequence[str],
           used: Sequence[tuple[int, int]]) -> list[tuple[_Value, str, int]]:
    """Where the model wrote a time's hour and minutes in two parameters ("3:15" as
    ``hours: 3``, ``minutes: 15``), the hour and minutes of each other time the question
    writes ("8:20 and 11:50"), given to the same two (placed as surely as by two signs)."""
    for hour in keys:
        minute = next((k for k in keys if spots[k].start == spots[hour].end + 1
                       and question[spots[hour].end] == ":"), None)
        if minute is None:
            continue
        given: list[tuple[_Value, str, int]] = []
        for m in _TIME.finditer(question):
            if any(m.start() < e and s < m.end() for s, e in used):
                continue
            given += [(_Value(m.start(1), m.end(1), m.group(1), "number"), hour, 2),
                      (_Value(m.start(2), m.end(2), m.group(2), "number"), minute, 2)]
        return given
    return []


def _same(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return a.keys() == b.keys() and all(norm(a[k]) == norm(b[k]) for k in a)


def _give(question: str, spots: Mapping[str, _Value], used: Sequence[tuple[int, int]],
          again: bool) -> tuple[list[tuple[_Value, str, int]], list[_Value]]:
    """The question's unused values, each with the parameter it is given to and how well
    its place matched, in order; and those of no parameter yet (see :func:`_groups`).
    Lowercase words only where the question says "again": most of its words are not
    values."""
    given: list[tuple[_Value, str, int]] = []
    left: list[_Value] = []
    used = list(used)
    inner = (min(v.start for v in spots.values()), max(v.end for v in spots.values()))
    shapes = {v.shape for v in spots.values()} - (set() if again else {"word"})
    # A value of one shape is not another's ("San Mateo" quoted is not a name too).
    for shape in sorted(shapes, key=_SHAPES.index):
        keys = sorted((k for k, v in spots.items() if v.shape == shape),
                      key=lambda k: spots[k].start)
        free = [v for v in _values(question, shape)
                if not any(v.start < e and s < v.end for s, e in used)]
        contexts = {k: _context(question, spots[k]) for k in keys}
        matched = _times(question, spots, keys, used) if shape == "number" else []
        free = [v for v in free if all(v.start != m.start for m, _, _ in matched)]
        for value in free:
            around = _context(question, value)
            scores = {k: around.score(contexts[k], _name_words(k)) for k in keys}
            best = max(scores.values())
            if best >= (2 if shape == "word" else 1) \
                    and sum(s == best for s in scores.values()) == 1:
                matched.append((value, max(scores, key=lambda k: scores[k]), best))
            elif shape != "word" and any(value.text.lower() == spots[k].text.lower()
                                         for k in keys):
                # The same value again ("USD to AUD and USD to CAD"): a restated one.
                key = next(k for k in keys if value.text.lower() == spots[k].text.lower())
                matched.append((value, key, 0))
        rest = [v for v in free if all(v is not m for m, _, _ in matched)]
        # (among the model's own values, a value is likelier another parameter's)
        outside = [v for v in rest if v.end <= inner[0] or v.start >= inner[1]]
        if shape != "word" and len(keys) >= 2 and rest and outside == rest \
                and len(rest) % len(keys) == 0 and not any(score for _, _, score in matched):
            # Nothing told by its place: by position, when the counts fit.
            matched = [(value, keys[i % len(keys)], 0) for i, value in enumerate(rest)]
            rest = []
        given += matched
        if shape != "word":
            left += rest
            used += [(value.start, value.end) for value in free]
    merged: list[tuple[_Value, str, int]] = []
    for value, key, score in sorted(given, key=lambda item: item[0].start):
        if value.shape == "word":
            # A word value takes the content word right before it ("classical music"),
            # and two words in a row for one parameter are one value.
            before = re.search(r"(?<![\w'’-])([a-z][a-z-]+) +$", question[: value.start])
            if merged and merged[-1][1] == key \
                    and not question[merged[-1][0].end:value.start].strip():
                before = None
                first = merged.pop()[0]
                value = _Value(first.start, value.end, question[first.start:value.end], "word")
            elif before and before.group(1) not in STOP_WORDS \
                    and before.group(1) not in _NUMBER_WORDS \
                    and not any(before.start(1) < e and s < value.start for s, e in used):
                value = _Value(before.start(1), value.end,
                               question[before.start(1):value.end], "word")
        merged.append((value, key, score))
    return merged, left


def _groups(question: str, given: Sequence[tuple[_Value, str, int]], left: Sequence[_Value],
            spots: Mapping[str, _Value]) -> list[dict[str, tuple[_Value, int]]]:
    """The values given, cut into calls: a parameter given again, or the model's own
    values between, starts the next. Then each call's clause (from the call before to
    the call after) gives the parameters it lacks the values of no parameter it holds,
    when they are as many, in order ("...and $9000 at a rate of 3%": 9000 is the principal
    of the call that 3% makes); a call made of such values only is none."""
    template = (min(v.start for v in spots.values()), max(v.end for v in spots.values()))
    groups: list[dict[str, tuple[_Value, int]]] = []
    current: dict[str, tuple[_Value, int]] = {}
    side = None
    for value, key, score in given:
        here = value.start >= template[1]
        if key in current or (current and here != side):
            groups.append(current)
            current = {}
        current[key] = (value, score)
        side = here
    if current:
        groups.append(current)
    spans = [(min(v.start for v, _ in g.values()), max(v.end for v, _ in g.values()))
             for g in groups]
    free = list(left)
    for i, group in enumerate(groups):
        after = spans[i][0] >= template[1]
        low = spans[i - 1][1] if i and (spans[i - 1][0] >= template[1]) == after \
            else (template[1] if after else 0)
        high = spans[i + 1][0] if i + 1 < len(groups) \
            and (spans[i + 1][0] >= template[1]) == after else (10**9 if after else template[0])
        for shape in {v.shape for v in free}:
            missing = sorted((k for k, v in spots.items() if v.shape == shape
                              and k not in group), key=lambda k: spots[k].start)
            # After the call's own values, only within their clause ("...and 15 minutes
            # respectively, on Spotify": Spotify is not the second call's artist).
            there = [v for v in free if v.shape == shape and low <= v.start and v.end <= high
                     and not (v.start >= spans[i][1]
                              and re.search(r"[,.;?!]", question[spans[i][1]:v.start]))]
            if missing and len(there) == len(missing):
                for key, value in zip(missing, there, strict=True):
                    group[key] = (value, -1)
                    free.remove(value)
    return groups
