"""Numbers the question gives a parameter by its name (``named_numbers``).

A 135M model spreads the question's numbers over a call's numeric parameters mostly in the
order it meets them: "the magnetic field 10 meters away from a wire carrying a current of
20 Amperes" becomes ``current: 10, distance: 20``; "a group size of 50 with extroverted
members being 15 and introverted members being 35" becomes ``total: 15, extroverts: 35,
introverts: 50``. The question says whose each number is, by a word of the parameter's
name written just before it ("a *current* of 20", "*extroverted* members being 15") or right
after it ("for 5 *days*", "the 19th *century*"). :func:`named_numbers` reads that:

- a number is named for a numeric parameter (``integer`` or ``number``, no enum) when, in
  the three words before it, the nearest word that is a word of one numeric parameter's
  name (stemmed; a word two of them share says nothing; a stem of five letters or more may
  begin the name's word: "*covers* 400" for ``coverage_rate``) is one of that parameter's,
  or when the word right after it is; both naming two different parameters says nothing.
  Looking back stops at punctuation, at another number and at a word that makes the number
  another quantity ("this *acceleration* for 10 seconds"); a parameter's word right after
  a number ("440Hz *frequency* for 5 seconds"), after "per" ("per *time* period is 4") or
  in a list of parameters' words ("its base and *height* as 6cm and 10cm") labels no
  number after it;
- a parameter named by one number only, a number naming one parameter only, is given it
  where the call gives it another number the question writes (or, for a number written as
  an ordinal, "19th", any other number); a parameter of the call holding the named number,
  and named by none, takes the value it had in exchange;
- a percentage ("3%") or a number with a scale ("213 million") names nothing: the call
  writes those otherwise (0.03, 213000000; :mod:`.choices`, :mod:`.spoken`);
- only where the question writes no more numbers than the tool has numeric parameters: a
  question with more asks for more calls than one ("a loan term of 15 years, 20 years and
  30 years"), and what names one number does not name the others.

The result is kept only if the call still validates (:func:`.call_edits.call_adjuster`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from typing import Any

from ...language.numbers import SCALES
from ...language.words import content_words, split_name, stem
from .schemas import properties
from .spoken import numeric_parameter

__all__ = ["named_numbers"]

_TOKEN = re.compile(r"(?P<number>(?<![\w.])-?\d+(?:,\d{3})*(?:\.\d+)?)(?P<suffix>[^\W\d_]*%?)"
                    r"|(?P<word>[^\W\d_][\w'\-]*)|(?P<stop>[,;.!?()\[\]])")
_ORDINAL = frozenset({"st", "nd", "rd", "th"})
#: How many words before a number may name it.
_BEFORE = 3
_SCALE_WORDS = frozenset(word.lower() for word in SCALES)
#: Words between a parameter's word and a number that make the number another quantity:
#: "keeps this acceleration *for* 10 seconds".
_APART = frozenset({"for", "in", "after", "within", "from", "by", "per", "with", "over",
                    "during", "than", "every", "each", "until", "since", "before"})
#: Words before a parameter's word that make it no label of the number after it: "per
#: *time* period is 4" is not the time.
_NOT_LABEL = frozenset({"per", "each", "every"})


def _kind(match: re.Match[str]) -> str:
    return next(kind for kind in ("number", "word", "stop") if match.group(kind) is not None)


def _named(tokens: list[tuple[str, re.Match[str]]],
           owners: Mapping[str, str]) -> dict[str, set[tuple[float, bool]]]:
    """Each parameter the question (its ``tokens``) names a number for: ``{key: {(number,
    ordinal)}}``; ``owners`` maps a stemmed name word to the one parameter it belongs to."""
    named: dict[str, set[tuple[float, bool]]] = {}
    by_number: dict[float, set[str]] = {}
    for i, (kind, match) in enumerate(tokens):
        if kind != "number":
            continue
        suffix = match.group("suffix").lower()
        ordinal = suffix in _ORDINAL
        after_word = tokens[i + 1][1].group("word") if i + 1 < len(tokens) \
            and tokens[i + 1][0] == "word" else None
        if suffix.endswith("%") or (suffix and not ordinal and suffix in _SCALE_WORDS) \
                or (after_word and after_word.lower() in _SCALE_WORDS):
            continue
        before = None
        for at in range(i - 1, max(-1, i - 1 - _BEFORE), -1):
            if tokens[at][0] != "word" or tokens[at][1].group().lower() in _APART:
                break
            owner = _owner(owners, tokens[at][1].group("word"))
            if owner is not None:
                if not _names_other(tokens, at, owners):
                    before = owner
                break
        after = _owner(owners, after_word) if after_word else None
        if before and after and before != after:
            continue
        key = before or after
        if key is None:
            continue
        value = _value(match)
        named.setdefault(key, set()).add((value, ordinal))
        by_number.setdefault(value, set()).add(key)
    return {key: found for key, found in named.items()
            if len({value for value, _ in found}) == 1
            and all(len(by_number[value]) == 1 for value, _ in found)}


def _owner(owners: Mapping[str, str], word: str) -> str | None:
    """The parameter a word of the question names: its stem is one of the parameter's name
    words, or, five letters or more, begins one ("covers" for ``coverage_rate``)."""
    said = stem(word.lower())
    if said in owners:
        return owners[said]
    if len(said) < 5:
        return None
    found = {key for name, key in owners.items() if name.startswith(said)}
    return found.pop() if len(found) == 1 else None


def _value(match: re.Match[str]) -> float:
    return float(match.group("number").replace(",", ""))


def _names_other(tokens: list[tuple[str, re.Match[str]]], at: int,
                 owners: Mapping[str, str]) -> bool:
    """Is the parameter's word at ``at`` no label of the number after it: right after a
    number ("440Hz *frequency* for 5 seconds": the frequency is 440), after "per", or one
    of a list of parameters' words ("its base and *height* as 6cm and 10cm")?"""
    if at == 0:
        return False
    kind, match = tokens[at - 1]
    if kind == "number":
        return True
    word = (match.group("word") or "").lower() if kind == "word" else match.group()
    if word in _NOT_LABEL:
        return True
    if word in ("and", "or", ",") and at >= 2 and tokens[at - 2][0] == "word":
        return stem(tokens[at - 2][1].group("word").lower()) in owners
    return False


def named_numbers(arguments: Mapping[str, Any], schema: Any, question: str) -> dict[str, Any]:
    """``arguments`` with each number the question names a numeric parameter for given to
    it (see the module docstring)."""
    props = properties(schema)
    if props is None:
        return dict(arguments)
    numeric = [key for key, spec in props.items() if numeric_parameter(spec)]
    words: dict[str, set[str]] = {key: content_words(split_name(str(key))) for key in numeric}
    counted = Counter(word for said in words.values() for word in said)
    owners = {word: key for key, said in words.items() for word in said
              if counted[word] == 1}
    tokens = [(_kind(m), m) for m in _TOKEN.finditer(question)]
    written = {_value(match) for kind, match in tokens if kind == "number"}
    if len(written) > len(numeric):  # numbers for more calls than one
        return dict(arguments)
    named = _named(tokens, owners)
    result = dict(arguments)
    for key, found in named.items():
        value, ordinal = next(iter(found))
        held = result.get(key)
        if isinstance(held, bool) or not isinstance(held, (int, float)) or held == value:
            continue
        if not ordinal and held not in written:
            continue
        number: int | float = int(value) if value.is_integer() else value
        if props[key].get("type") == "integer" and not isinstance(number, int):
            continue
        for other, other_value in result.items():
            if other != key and other not in named and other in words \
                    and not isinstance(other_value, bool) and other_value == value:
                result[other] = held
                break
        result[key] = number
    return result
