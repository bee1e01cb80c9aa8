"""Dates written in the format a parameter asks for.

A tool says how it wants a date ("the date, in the format of 'YYYY-MM-DD'", "MM-DD-YYYY",
a schema's ``"format": "date"``); a user writes "April 11th, 2023", "the 2nd of march
2023", "Jun.20,2023". A small model copies the user's words (or leaves the parameter out
when it is optional, or copies the description's example date: "such as '15/03/2024'").
:func:`dated` rewrites a call's dates in the format each parameter asks for, gives an
optional date parameter the model left out the one date the question writes, and a date
parameter holding a date the question does not write the one other date it writes —
every value still the user's date, only written as asked.

Dates read (:func:`dates_in`): a month's name with a day and a year in either order ("April
11th, 2023", "11 April 2023", "the 2nd of march 2023", "2023 April 4th"), a month and day
after a dated one ("from July 10, 2022 to July 20" takes 2022) or, first in the text,
before one ("from April 3rd to April 5th 2023" takes 2023), and numeric dates whose
order is certain (ISO ``2023-04-11``; ``16/03/2024`` and ``03/16/2024``, but not
``03/04/2024``). Formats read (:func:`date_format`): ``YYYY-MM-DD``, ``MM-DD-YYYY``,
``DD/MM/YYYY`` and the like in any case and with ``-``, ``/`` or ``.``, "(month-day-year)",
and ``"format": "date"``; a format with a time (``YYYY-MM-DDTHH:MM``) is left alone.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["date_format", "dated", "dates_in"]

_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MONTH = (r"(?P<month>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?"
          r"|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)")
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
_DATED = [
    re.compile(rf"\b{_MONTH}\.?\s*{_DAY}\b(?:\s*,\s*|\s+){_YEAR}\b", re.IGNORECASE),
    re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH}\b\.?(?:\s*,\s*|\s+){_YEAR}\b", re.IGNORECASE),
    re.compile(rf"\b{_YEAR}\s+{_MONTH}\.?\s+{_DAY}\b", re.IGNORECASE),
]
#: Without a year: it comes from a dated one around ("July 10, 2022 to July 20").
_YEARLESS = [
    re.compile(rf"\b{_MONTH}\.?\s*{_DAY}\b(?!\s*,?\s*(?:19|20)\d\d)", re.IGNORECASE),
    re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH}\b(?!\.?\s*,?\s*(?:19|20)\d\d)", re.IGNORECASE),
]
#: Dated first: a yearless pattern may match only where no dated one did.
_NAMED = [*_DATED, *_YEARLESS]
_ISO = re.compile(r"\b(?P<year>(?:19|20)\d\d)[-/.](?P<month>[01]?\d)[-/.](?P<day>[0-3]?\d)\b")
_NUMERIC = re.compile(r"\b(?P<a>[0-3]?\d)[-/.](?P<b>[0-3]?\d)[-/.](?P<year>(?:19|20)\d\d)\b")
#: A format in a description: its parts in order and the separator.
_FORMAT = re.compile(r"\b(?P<a>yyyy|mm|dd)(?P<sep>[-/.])(?P<b>mm|dd)(?P=sep)(?P<c>yyyy?|yyy|dd)"
                     r"(?![-/.:T ]*(?:hh|\d))", re.IGNORECASE)
_WORDS = re.compile(r"\((?P<a>month|day|year)-(?P<b>month|day|year)-(?P<c>month|day|year)\)",
                    re.IGNORECASE)


def dates_in(text: str) -> list[tuple[int, int, dt.date]]:
    """The dates ``text`` writes, as ``(start, end, date)`` in order (see the module
    docstring); spans never overlap."""
    found: list[tuple[int, int, dt.date | tuple[int, int]]] = []

    def free(start: int, end: int) -> bool:
        return all(end <= s or start >= e for s, e, _ in found)

    for pattern in _NAMED:
        for m in pattern.finditer(text):
            month = _MONTHS.index(m.group("month")[:3].lower()) + 1
            day = int(m.group("day"))
            if not free(m.start(), m.end()):
                continue
            if m.groupdict().get("year"):
                date = _date(int(m.group("year")), month, day)
                if date is not None:
                    found.append((m.start(), m.end(), date))
            elif 1 <= day <= 31:
                found.append((m.start(), m.end(), (month, day)))
    for m in _ISO.finditer(text):
        date = _date(int(m.group("year")), int(m.group("month")), int(m.group("day")))
        if date is not None and free(m.start(), m.end()):
            found.append((m.start(), m.end(), date))
    for m in _NUMERIC.finditer(text):
        a, b, year = int(m.group("a")), int(m.group("b")), int(m.group("year"))
        if (a > 12) == (b > 12) or not free(m.start(), m.end()):
            continue  # 03/04/2024: April or March, no telling
        date = _date(year, b, a) if a > 12 else _date(year, a, b)
        if date is not None:
            found.append((m.start(), m.end(), date))
    found.sort(key=lambda item: item[0])
    dated = [value for _, _, value in found if isinstance(value, dt.date)]
    dates: list[tuple[int, int, dt.date]] = []
    for start, end, value in found:
        if isinstance(value, dt.date):
            read: dt.date | None = value
        elif dates:  # the year of one before
            read = _date(dates[-1][2].year, *value)
        else:  # first in the text: the year of the first dated one after
            read = _date(dated[0].year, *value) if dated else None
        if read is not None:
            dates.append((start, end, read))
    return dates


def _yearless(text: str, question: str) -> dt.date | None:
    """The date of ``question`` that ``text``, a month and day without a year ("April
    3rd"), stands for: the one date of the question with that month and day."""
    whole = [m for pattern in _YEARLESS if (m := pattern.fullmatch(text))]
    if not whole:
        return None
    month = _MONTHS.index(whole[0].group("month")[:3].lower()) + 1
    day = int(whole[0].group("day"))
    same = {date for _, _, date in dates_in(question) if (date.month, date.day) == (month, day)}
    return same.pop() if len(same) == 1 else None


def _date(year: int, month: int, day: int) -> dt.date | None:
    try:
        return dt.date(year, month, day)
    except ValueError:
        return None


def date_format(schema: Mapping[str, Any]) -> str | None:
    """The ``strftime`` format a string parameter's schema asks its dates in, if it says."""
    if schema.get("type") not in ("string", None):
        return None
    if schema.get("format") == "date":
        return "%Y-%m-%d"
    description = str(schema.get("description", ""))
    m = _FORMAT.search(description)
    if m is not None:
        parts = [m.group("a").lower()[:2], m.group("b").lower()[:2], m.group("c").lower()[:2]]
        sep = m.group("sep")
    else:
        words = _WORDS.search(description)
        if words is None:
            return None
        parts = [words.group(k).lower()[:2].replace("mo", "mm").replace("da", "dd")
                 .replace("ye", "yy") for k in ("a", "b", "c")]
        sep = "-"
    codes = {"yy": "%Y", "mm": "%m", "dd": "%d"}
    if sorted(parts) != ["dd", "mm", "yy"]:
        return None
    return sep.join(codes[p] for p in parts)


def dated(arguments: Mapping[str, Any], schema: Mapping[str, Any] | None,
          question: str) -> dict[str, Any]:
    """``arguments`` with each date of a parameter that asks for a format written in it;
    the one parameter holding a date the question does not write given the one date the
    question writes that no other parameter holds; else an optional date parameter left
    out given the question's one date (when exactly one such parameter is missing, every
    other one holds a date, and the question writes exactly one date none of them
    holds)."""
    props: Mapping[str, Any] = (schema or {}).get("properties") or {}
    formats = {key: f for key, sub in props.items()
               if isinstance(sub, Mapping) and (f := date_format(sub))}
    if not formats:
        return dict(arguments)
    new = dict(arguments)
    written = {date for _, _, date in dates_in(question)}
    held: set[dt.date] = set()
    unwritten: list[str] = []  # holding a date the question does not write
    other = False  # a date parameter holding something else ("3:00"): its date, maybe
    for key, fmt in formats.items():
        value = new.get(key)
        if key not in new:
            continue
        text = re.sub(r"^(?:on\s+)?(?:the\s+)?", "", value.strip().rstrip(".,"),
                      flags=re.IGNORECASE) if isinstance(value, str) else ""
        read = dates_in(text)
        if len(read) == 1 and read[0][0] == 0 and read[0][1] == len(text):
            new[key] = read[0][2].strftime(fmt)
            if read[0][2] in written or not written:
                held.add(read[0][2])
            else:
                unwritten.append(key)
        elif (date := _yearless(text, question)) is not None:
            new[key] = date.strftime(fmt)
            held.add(date)
        else:
            other = True
    asked = sorted({date for date in written if date not in held})
    if len(unwritten) == 1 and len(asked) == 1:
        # A date the question does not write (the description's example: "such as
        # '15/03/2024'") where it writes one other: that one.
        new[unwritten[0]] = asked[0].strftime(formats[unwritten[0]])
        return new
    missing = [key for key in formats if key not in new]
    if len(missing) == 1 and len(asked) == 1 and not other and not unwritten:
        new[missing[0]] = asked[0].strftime(formats[missing[0]])
    return new
