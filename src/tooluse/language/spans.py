"""Values the conversation offers for a tool call's parameters (``copy_values``).

A 135M model writing a call mostly invents its values: "base 10 and height 5" becomes
``<base>5</base>``, "in San Francisco" becomes ``<city>San Francisco, CA</city>``. The
spans the user (or an earlier tool result) actually wrote are the likeliest right values,
so the decoder offers them as alternatives at each parameter value: the grammar keeps only
those the parameter's schema allows, and the model's own likelihood picks among them and
its free value (``tooluse.llama.copy_values``). This module only finds the spans.
"""

from __future__ import annotations

import re

from .numbers import scaled_numbers, spoken_numbers
from .words import STOP_WORDS

__all__ = ["candidate_values"]

_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:,\d{3})*(?:\.\d+)?(?![\w])")
_QUOTED = re.compile(r"""["'\u2018\u201c`]([^"'\u2019\u201d`\n<>]{1,80})["'\u2019\u201d`]""")
# Capitalised phrases ("New York", "General Motors", "Romeo and Juliet"), words with
# digits or symbols inside ("AAPL", "x^2+3x", "2021-06-01", "user@example.com").
_PHRASE = re.compile(r"\b[A-Z][\w'.\-]*(?:(?: (?:of|and|de|the|la|du|von|van)| )"
                     r" ?[A-Z][\w'.\-]*)*")
_SYMBOL = re.compile(r"[\d^*/+=@_\\]")
_TAGGED = re.compile(r">([^<>\n]{1,80})<")
_WORD = re.compile(r"[^\W\d_][\w\-]*")
_MARKUP = re.compile(r"<[^<>]*>")
#: Words a run of content words may hold ("19th century", "lightly active").
_RUN_WORD = re.compile(r"[^\W_][\w'\-]*")
_RUN_LONGEST = 5


def _number_forms(text: str) -> list[str]:
    plain = text.replace(",", "")
    forms = [plain]
    if "." in plain:
        trimmed = plain.rstrip("0").rstrip(".")
        if trimmed and trimmed != plain:
            forms.append(trimmed)
    return forms


def _balanced(word: str) -> str:
    """``(ticker`` -> ``ticker``, ``f(x)`` stays."""
    while word[:1] == "(" and word.count("(") > word.count(")"):
        word = word[1:]
    while word[-1:] == ")" and word.count(")") > word.count("("):
        word = word[:-1]
    return word


def _places(text: str, phrases: list[re.Match[str]]) -> list[str]:
    """Capitalised phrases joined by ", " ("Berkeley, CA, USA"): each chain whole, and its
    first two parts."""
    places: list[str] = []
    chain: list[re.Match[str]] = []
    for match in [*phrases, None]:
        if match is not None and chain and text[chain[-1].end():match.start()] == ", ":
            chain.append(match)
            continue
        if len(chain) > 1:
            places.append(text[chain[0].start():chain[-1].end()])
            if len(chain) > 2:
                places.append(text[chain[0].start():chain[1].end()])
        chain = [] if match is None else [match]
    return places


def _runs(text: str) -> list[str]:
    """Runs of two to five words, none a stop word, with nothing but a space between them
    ("Mississippi river", "vegan chocolate cake")."""
    runs: list[str] = []
    for piece in re.split(r"[^\w'\- ]+| {2,}", text):
        words: list[str] = []
        for word in [*piece.split(" "), ""]:
            if _RUN_WORD.fullmatch(word) and word.lower() not in STOP_WORDS:
                words.append(word)
                continue
            if 1 < len(words) <= _RUN_LONGEST:
                runs.append(" ".join(words))
            words = []
    return runs


def candidate_values(conversation: str, limit: int = 24) -> list[str]:
    """Spans of ``conversation`` a parameter value may copy, most specific first and
    without repeats: numbers (``1,000`` also as ``1000``), numbers written in words or as
    ordinals (``2`` for "two nights", ``16`` for "the 16th century"), numbers written
    with a scale (``213000000`` for "213 million", ``1200000`` for "$1.2M"), quoted
    strings, values inside tags (earlier tool results), places written with their region
    ("London, UK", "Manhattan, New York"), capitalised phrases, words holding digits or
    symbols, runs of two to five content words ("lightly active", "chocolate cake"), then
    the remaining single words. At most ``limit``; the caller keeps those the grammar
    allows at the parameter (a number for an integer, an enum member for an enum)."""
    found: list[str] = []
    seen: set[str] = set()

    def add(span: str) -> None:
        span = span.strip(" .,;:!?")
        if span and span.lower() not in STOP_WORDS and span not in seen:
            seen.add(span)
            found.append(span)

    text = _MARKUP.sub(" ", conversation)
    for match in _NUMBER.finditer(text):
        for form in _number_forms(match.group()):
            add(form)
    for number in spoken_numbers(text):
        add(str(number))
    for _, whole in scaled_numbers(text):
        add(str(whole))
    for match in _QUOTED.finditer(conversation):
        add(match.group(1))
    for match in _TAGGED.finditer(conversation):
        add(match.group(1))
    phrases = list(_PHRASE.finditer(text))
    for place in _places(text, phrases):
        add(place)
    for match in phrases:
        add(match.group())
    for word in text.split():
        word = _balanced(word.strip(",;:!?\"'").rstrip("."))
        if _SYMBOL.search(word):
            add(word)
    for run in _runs(text):
        add(run)
    for match in _WORD.finditer(text):
        if len(match.group()) > 2:
            add(match.group())
    return found[:limit]
