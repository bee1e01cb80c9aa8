"""The words of a text, as tooluse reads them: split, lowercased, stemmed, with
stop words aside; where a value stands in a text, and how often.

One reading, shared: the value copier (``copy_values``) asks whether the conversation gives
a value (:func:`given_by`, :func:`times_given`, :func:`mentions`), and the rules of a preset
(:mod:`tooluse.presets`) read questions with the same functions rather than their own. The
words every reader sets aside (:data:`FUNCTION_WORDS`, with :data:`STOP_WORDS` and
:data:`SAYS_NOTHING` built on it) and the normal form of a text (:func:`normal`) are defined
here once, for every reader.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any

from .numbers import scaled_numbers

__all__ = [
    "FUNCTION_WORDS",
    "NUMBER",
    "SAYS_NOTHING",
    "STOP_WORDS",
    "content_words",
    "given_by",
    "mentions",
    "names_only",
    "normal",
    "split_name",
    "stem",
    "times_given",
    "value_key",
    "whole_spans",
    "words",
]


_WORD = re.compile(r"[^\W_]+", re.UNICODE)


NUMBER = re.compile(r"-?\d+(?:[.,]\d+)*(?:\.\d+)?")


#: English function words and the verbs a request opens with ("find", "show me", "tell"):
#: the words every reader sets aside. The other sets below are this one and a few more, so a
#: word added here reaches every reader.
FUNCTION_WORDS = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "could", "do", "does", "find",
    "for", "from", "get", "give", "how", "i", "in", "is", "it", "me", "my", "of", "on",
    "or", "please", "show", "tell", "that", "the", "this", "to", "use", "using", "what",
    "when", "where", "which", "who", "why", "will", "with", "would", "you", "your",
})


#: Stop words: no value is one of them alone (a capitalised one starts a sentence) and a run
#: of content words stops at them. The function words and a request's filler ("want",
#: "have", "also", "all"). Read by the value copier's spans, the list reader and the preset's
#: rules.
STOP_WORDS = FUNCTION_WORDS | frozenset({
    "about", "after", "all", "also", "am", "any", "been", "but", "did", "each", "given",
    "had", "has", "have", "help", "i'd", "i'm", "if", "into", "its", "just", "know", "let",
    "let's", "like", "need", "our", "so", "some", "than", "their", "them", "then", "there",
    "these", "those", "us", "want", "was", "we", "were",
})


#: The words that say nothing of what a question asks for (:func:`content_words`,
#: :func:`mentions`): the function words and "calculate". Not the filler of
#: :data:`STOP_WORDS`: "all" or "also" in a tool's description or a question count as words
#: that say something. The two sets differ as they did when the default path's and the
#: preset's numbers were measured (docs/benchmarks/code.md, "The text readers' words").
SAYS_NOTHING = FUNCTION_WORDS | frozenset({"calculate"})


def words(text: str) -> list[str]:
    """The words of ``text``, lowercase, without punctuation (letters and digits; an
    underscore or an apostrophe splits)."""
    return [w.lower() for w in _WORD.findall(text)]


#: Words ending so take "es" in the plural ("classes", "matches", "boxes"); others take "s"
#: ("prices", "movies": the "e" is the word's own).
_ES_PLURAL = ("ss", "sh", "ch", "x", "z")


def stem(word: str) -> str:
    """A crude stem so that 'prices'/'price'/'pricing', 'calculated'/'calculate',
    'movies'/'movie' and 'cities'/'city' meet: one ending taken off ("ing", "ed", a plural's
    "s" or "es"), then a final "e" dropped and a final "y" written "i"."""
    if len(word) > 4 and word.endswith("es") and word[:-2].endswith(_ES_PLURAL):
        word = word[:-2]
    elif len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    elif len(word) > 6 and word.endswith("ing"):
        word = word[:-3]
    elif len(word) > 5 and word.endswith("ed"):
        word = word[:-2]
    if len(word) > 3 and word.endswith("e"):
        word = word[:-1]
    elif len(word) > 3 and word.endswith("y"):
        word = word[:-1] + "i"
    return word


_IDENTIFIER = re.compile(r"[^\W_]+(?:_[^\W_]+)+")


def names_only(value: str, naming: Collection[str], conversation: str = "") -> bool:
    """Are all the words of ``value`` (one at least) among ``naming`` (stemmed words, such
    as a tool's and its parameters' names)?

    Not an identifier joined by underscores that ``conversation`` writes as such: a dataset
    the user calls ``data_random_forest`` is a name of theirs, even for
    ``random_forest.train``'s ``data``."""
    found = words(value)
    if not found or not all(stem(w) in naming for w in found):
        return False
    # Only then the identifier, which searches the whole conversation: the copier asks
    # this of every span at every value.
    return not (_IDENTIFIER.fullmatch(value.strip()) and re.search(
        rf"(?<![\w.]){re.escape(value.strip())}(?![\w]|\.\w)", conversation))


def split_name(name: str) -> str:
    """``get_current_stock_price`` / ``getStockPrice`` / ``math.hypot`` -> plain words."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    return re.sub(r"[._\-]+", " ", spaced)


def content_words(text: str) -> set[str]:
    """The words of ``text`` that say something (stemmed, none of :data:`SAYS_NOTHING`,
    three letters or more)."""
    return {stem(w) for w in words(text) if len(w) > 2 and w not in SAYS_NOTHING}


def normal(text: str) -> str:
    """``text``'s words (:func:`words`) joined by single spaces: the one normal form in which
    texts are compared ("New-York!" and "new york" are one)."""
    return " ".join(words(text))


def given_by(value: Any, conversation: str, name: str = "") -> bool:
    """Does the conversation give ``value`` (for parameter ``name``)?

    Strings: their words appear in order in the conversation (case and punctuation aside).
    Numbers: the number is written in it. Booleans: a word of the parameter's name is in it
    (the user asked about that aspect). Lists and objects: every value inside is given.
    """
    if isinstance(value, bool):
        named = {stem(w) for w in words(split_name(name)) if len(w) > 3}
        return bool(named & {stem(w) for w in words(conversation)})
    if isinstance(value, (int, float, str)):
        return times_given(value, conversation) > 0
    if isinstance(value, list):
        return all(given_by(v, conversation, name)
                   or (isinstance(v, str) and mentions(conversation, v)) for v in value)
    if isinstance(value, dict):
        return all(given_by(v, conversation, str(k)) for k, v in value.items())
    return False


def times_given(value: float | str, conversation: str) -> int:
    """How many times the conversation writes ``value``: a number as a number ("1,000" for
    1000; "213 million" for 213 and for 213000000), a string as its words in order (case
    and punctuation aside)."""
    written = value_key(value)
    if isinstance(written, str):
        return len(re.findall(rf"(?<= ){re.escape(written)}(?= )",
                              f" {normal(conversation)} ")) if written else 0
    count = sum(whole == written for _, whole in scaled_numbers(conversation))
    for match in NUMBER.findall(conversation):
        try:
            count += float(match.replace(",", "")) == written
        except ValueError:
            continue
    return count


def value_key(value: float | str) -> float | str:
    """One key for a value however the call types it: ``10`` and ``"10"`` are one number."""
    if isinstance(value, (int, float)):
        return float(value)
    if NUMBER.fullmatch(value.strip()):
        try:
            return float(value.strip().replace(",", ""))
        except ValueError:  # "1,2.3.4"
            pass
    return normal(value)


def whole_spans(text: str, value: str) -> list[tuple[int, int]]:
    """Where ``text`` writes ``value`` (stripped) as whole words, case aside: not as a piece
    of a longer word ("CA" is not in "CA123456")."""
    value = value.strip()
    if not value:
        return []
    return [m.span() for m in re.finditer(rf"(?<!\w){re.escape(value)}(?!\w)", text,
                                          re.IGNORECASE)]


def mentions(conversation: str, value: str) -> bool:
    """Does the conversation name ``value`` (an enum member, an item of a list), loosely:
    one of its words of three letters or more, stemmed ("scenic views" for "Scenic View",
    "disabled people" for "Disabled Access"); a value of one or two letters must stand as
    written ("G (Guanine)" for "G")."""
    if len(value.strip()) <= 2:
        return re.search(rf"(?<!\w){re.escape(value.strip())}(?!\w)", conversation) is not None \
            if value.strip() else False
    asked = {stem(w) for w in words(conversation)}
    return any(stem(w) in asked for w in words(value) if len(w) > 2 and w not in SAYS_NOTHING)
