"""The text readers share one list of function words (each reader's set is it and a few named
words more), one month pattern and one normal form: a word, a month or a text reads the same
in the value copier, the list reader and the preset's rules."""

from __future__ import annotations

import datetime as dt
import re

import pytest

from tooluse.language import lists, spans, words
from tooluse.language.numbers import MONTH, MONTHS, spoken_numbers
from tooluse.language.spans import candidate_values
from tooluse.language.words import (
    FUNCTION_WORDS,
    SAYS_NOTHING,
    STOP_WORDS,
    content_words,
    mentions,
    normal,
)
from tooluse.llama import no_repeat
from tooluse.presets.en_bfcl import dates, phrases, restate


def test_every_reader_builds_on_the_one_list_of_function_words() -> None:
    assert FUNCTION_WORDS < STOP_WORDS and FUNCTION_WORDS < SAYS_NOTHING
    assert spans.STOP_WORDS is STOP_WORDS
    assert restate.STOP_WORDS is STOP_WORDS
    # the readers that drop more words drop the stop words and their own few
    assert STOP_WORDS < lists._NOT_ITEMS and STOP_WORDS < phrases._STARTS_NO_VALUE
    assert {"may", "per"} <= lists._NOT_ITEMS and {"via", "per"} <= phrases._STARTS_NO_VALUE


def test_a_request_verb_says_nothing_but_may_be_offered() -> None:
    # "calculate" says nothing of what a question asks; the copier offers it, alone and in a
    # run of content words, as it did when the default path was measured
    assert "calculate" in SAYS_NOTHING and "calculate" not in STOP_WORDS
    assert content_words("Calculate the compound interest") == {"compound", "interest"}
    found = candidate_values("Calculate compound interest for 5 years.")
    assert {"Calculate compound interest", "compound", "interest", "5 years"} <= set(found)


def test_a_request_s_filler_is_a_stop_word_but_counts_as_content() -> None:
    # "all", "want", "about" start no value, yet a tool named for "all" items is one a
    # question saying "all" asks for
    assert {"all", "want", "about"} <= STOP_WORDS - SAYS_NOTHING
    assert content_words("I want to know all about the weather") == {
        "want", "know", "all", "about", "weather"}
    assert mentions("give me all of them", "All")
    assert not any(span.lower() in {"all", "want"}
                   for span in candidate_values("I want all of the reports"))
    assert mentions("the scenic views please", "Scenic View")


@pytest.mark.parametrize("name", ["Sep", "sep.", "Sept", "Sept.", "september", "SEPTEMBER"])
def test_sept_is_a_month_for_every_reader(name: str) -> None:
    assert re.fullmatch(rf"(?:{MONTH})\.?", name, re.IGNORECASE)
    # an ordinal next to a month is a date's day, not a number
    assert spoken_numbers(f"the 5th {name}") == []
    assert [d for _, _, d in dates.dates_in(f"{name} 5th, 2023")] == [dt.date(2023, 9, 5)]
    assert restate._DATE.match(f"{name} 5")


def test_the_preset_reads_a_word_starting_like_a_month_as_a_date() -> None:
    # restate takes any word that starts with a month's name, before a number, for a date
    # ("Maroon 5" too): kept as it was when the preset's numbers were measured
    for text in ("May 3", "Sept. 5", "December 2022", "Maroon 5", "Marching 2"):
        assert restate._DATE.match(text), text
    for text in ("Mayor", "Room 5", "Mai 4"):
        assert restate._DATE.match(text) is None, text
    assert MONTHS.index("sep") == 8 and len(MONTHS) == 12


def test_one_normal_form() -> None:
    text = "New-York's  WEATHER, today!"
    assert normal(text) == "new york s weather today"
    conversation = "Book New-York for me"
    guard = no_repeat.NoRepeat(b"", conversation=conversation)
    assert guard.conversation == f" {normal(conversation)} "
    assert phrases.words is words.words


def test_the_readers_modules_hold_no_word_list_of_their_own() -> None:
    """No second stop-word list or month pattern: the literal ``"the"`` stands in one set
    and ``jan(?:uary)?`` in one pattern, in language/."""
    from pathlib import Path

    src = Path(words.__file__).resolve().parents[1]
    lists_of_the = []
    months = []
    for path in sorted(src.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if re.search(r"""frozenset\(\{[^}]*["']the["'],[^}]*["']to["']""", text, re.S):
            lists_of_the.append(path.relative_to(src).as_posix())
        if "jan(?:uary)?" in text or re.search(r"jan\|feb\|mar", text):
            months.append(path.relative_to(src).as_posix())
    assert lists_of_the == ["language/words.py"]
    assert months == ["language/numbers.py"]
