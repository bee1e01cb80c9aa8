"""The text readers share one stop-word list, one month pattern and one normal form: a word,
a month or a text reads the same in the value copier, the list reader and the preset's
rules."""

from __future__ import annotations

import datetime as dt
import re

import pytest

from tooluse.language import lists, spans, words
from tooluse.language.numbers import MONTH, MONTHS, spoken_numbers
from tooluse.language.spans import candidate_values
from tooluse.language.words import STOP_WORDS, content_words, mentions, normal
from tooluse.llama import no_repeat
from tooluse.presets.en_bfcl import dates, phrases, restate


def test_every_reader_reads_the_one_stop_word_list() -> None:
    assert spans.STOP_WORDS is STOP_WORDS
    assert restate.STOP_WORDS is STOP_WORDS
    # the readers that drop more words drop the stop words and their own few
    assert STOP_WORDS < lists._NOT_ITEMS and STOP_WORDS < phrases._FUNCTION_WORDS
    assert {"may", "per"} <= lists._NOT_ITEMS and {"via", "per"} <= phrases._FUNCTION_WORDS


def test_a_request_verb_is_a_stop_word_for_every_reader() -> None:
    # "calculate" was a stop word for content_words only: the copier offered it as a value
    # and in runs of content words ("Calculate compound interest")
    assert "calculate" in STOP_WORDS
    assert content_words("Calculate the compound interest") == {"compound", "interest"}
    found = candidate_values("Calculate compound interest for 5 years.")
    assert "compound interest" in found
    assert not any("alculate" in span for span in found)


def test_function_words_say_nothing_of_what_a_question_asks() -> None:
    assert content_words("I want to know all about the weather") == {"weather"}
    assert not mentions("give me all of them", "All")
    assert mentions("the scenic views please", "Scenic View")


@pytest.mark.parametrize("name", ["Sep", "sep.", "Sept", "Sept.", "september", "SEPTEMBER"])
def test_sept_is_a_month_for_every_reader(name: str) -> None:
    assert re.fullmatch(rf"(?:{MONTH})\.?", name, re.IGNORECASE)
    # an ordinal next to a month is a date's day, not a number
    assert spoken_numbers(f"the 5th {name}") == []
    assert [d for _, _, d in dates.dates_in(f"{name} 5th, 2023")] == [dt.date(2023, 9, 5)]
    assert restate._DATE.match(f"{name} 5")


def test_a_name_before_a_number_is_not_a_date() -> None:
    # the preset's reader took any word starting like a month for one ("Maroon 5",
    # "Marching 2", "Decimal 3")
    for text in ("Maroon 5", "Marching 2", "Decimal 3", "Mayor 4", "Junior 1"):
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
