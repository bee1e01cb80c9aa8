"""Dates and times written in the format a parameter asks for.

A tool says how it wants a date ("the date, in the format of 'YYYY-MM-DD'", "MM-DD-YYYY",
"'dd/mm/yyyy HH:MM'", "in ISO-8601 format, such as '2023-04-15T13:45:00Z'", a schema's
``"format": "date"``); a user writes "April 11th, 2023", "the 12th of March 2023 at 3 in
the afternoon", "the upcoming Saturday? Today is Tuesday April 25th 2023". A small model
copies the user's words or a piece of them ("15th", "4pm"), copies the date the question
gives for today, the description's example date, or leaves the parameter out when it is
optional. :func:`dated` rewrites a call's dates in the format each parameter asks for (with
the time the question gives the date, where the format has one), gives a date parameter
holding a date the question does not ask for the one other date it asks for, and an
optional date parameter the model left out the one date the question asks for -- every
value still the user's date and time, only written as asked.

Dates read (:func:`dates_in`): a month's name with a day and a year in either order ("April
11th, 2023", "11 April 2023", "the 2nd of march 2023", "2023 April 4th"), a month and day
after a dated one ("from July 10, 2022 to July 20" takes 2022) or, first in the text,
before one ("from April 3rd to April 5th 2023" takes 2023), and numeric dates whose
order is certain (ISO ``2023-04-11``; ``16/03/2024`` and ``03/16/2024``, but not
``03/04/2024``). Days said relative to today ("tomorrow", "the day before yesterday", "the
upcoming Wednesday", "next Thursday", "in 3 days") are read only where the text says which
day today is ("today is Monday April 25th 2023", "today is 20230929"; the weekday it names
counts, as the user sees the week), and then that date is no date asked for. Times read
(:func:`times_in`): "16:00", "4:30 PM", "8pm", "3 in the afternoon", "noon"; a time goes
with the date it follows or comes before ("November 1, 2023 at 4pm"), or with the only
date where the text writes one date and one time (:func:`moments`).

Formats read (:func:`date_format`): ``YYYY-MM-DD``, ``MM-DD-YYYY``, ``DD/MM/YYYY`` and the
like in any case and with ``-``, ``/`` or ``.``, with a time after them (``dd/mm/yyyy
HH:MM``, ``YYYY-MM-DD HH:mm:ss``, ``YYYY-MM-DDTHH:MM:SSZ``; the ``Z`` left out where the
description says the time zone is not included); "(month-day-year)"; an ISO-8601 example
in a description that names ISO ("such as '2023-04-15T13:45:00Z'"); and ``"format":
"date"``. A time in twelve hours, or with an offset, is left alone.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...language.numbers import MONTH, MONTHS
from .schemas import properties

__all__ = ["Moment", "date_format", "dated", "dates_in", "moments", "times_in"]

_MONTH = rf"(?P<month>{MONTH})"
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
_FORMAT = re.compile(
    r"\b(?P<a>yyyy|mm|dd)(?P<sep>[-/.])(?P<b>mm|dd)(?P=sep)(?P<c>yyyy?|yyy|dd)"
    r"(?:(?P<tsep>T|\s+)(?P<time>hh:mm(?::ss)?)(?P<zone>z)?)?"
    # Not a time this reads: twelve hours, fractions of a second, an offset.
    r"(?![-/.:T ]*(?:hh|\d)|\s*[ap]\.?m\b|[:.]s|[+-])", re.IGNORECASE)
_WORDS = re.compile(r"\((?P<a>month|day|year)-(?P<b>month|day|year)-(?P<c>month|day|year)\)",
                    re.IGNORECASE)
#: An ISO-8601 example, read as a format where the description names ISO.
_ISO_NAMED = re.compile(r"\bISO\b|\bISO[- ]?8601", re.IGNORECASE)
_EXAMPLE = re.compile(r"\b(?:19|20)\d\d-[01]\d-[0-3]\d(?:(?P<tsep>[T ])(?P<time>[0-2]\d:[0-5]\d"
                      r"(?::[0-5]\d)?)(?P<zone>Z)?)?(?![\d.:+-])")
_NO_ZONE = re.compile(r"time\s?zone\s+(?:is\s+)?not\s+included|without\s+(?:a\s+|the\s+)?"
                      r"time\s?zone|time\s?zone\b[^.]{0,40}\bseparately", re.IGNORECASE)

_WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_WEEKDAY = r"(?P<weekday>(?:mon|tues|wednes|thurs|fri|satur|sun)day)"
#: Which day today is: a date (or eight digits, 20230929) after "today is", maybe a weekday.
_TODAY = re.compile(rf"\btoday(?:'s\s+date)?\s+is\s+(?:{_WEEKDAY}\b[\s,]*)?", re.IGNORECASE)
_COMPACT = re.compile(r"(?P<year>(?:19|20)\d\d)(?P<month>[01]\d)(?P<day>[0-3]\d)\b")
#: Days counted from today, longest first.
_SHIFTS = [
    (re.compile(r"\b(?:the\s+)?day\s+after\s+tomorrow\b", re.IGNORECASE), 2),
    (re.compile(r"\b(?:the\s+)?day\s+before\s+yesterday\b", re.IGNORECASE), -2),
    (re.compile(r"\btomorrow\b", re.IGNORECASE), 1),
    (re.compile(r"\byesterday\b", re.IGNORECASE), -1),
    (re.compile(r"\b(?:today|tonight)\b", re.IGNORECASE), 0),
]
_IN_DAYS = re.compile(r"\bin\s+(?P<n>\d{1,3})\s+days?\b", re.IGNORECASE)
_ON_WEEKDAY = re.compile(rf"\b(?P<which>this\s+coming|upcoming|coming|this|next|last|on)\s+"
                         rf"{_WEEKDAY}\b", re.IGNORECASE)
_AMPM = r"(?P<ap>[ap])\.?\s?m\b\.?"
_TIMES = [
    re.compile(rf"(?<![\d:.])(?P<h>[01]?\d|2[0-3]):(?P<m>[0-5]\d)(?::(?P<s>[0-5]\d))?(?!\d)"
               rf"(?:\s*{_AMPM})?", re.IGNORECASE),
    re.compile(rf"\b(?P<h>1[0-2]|0?[1-9])\s*{_AMPM}", re.IGNORECASE),
    re.compile(r"\b(?P<h>1[0-2]|0?[1-9])(?::(?P<m>[0-5]\d))?\s+(?:o'?clock\s+)?(?:in\s+the\s+"
               r"(?P<part>morning|afternoon|evening)|at\s+(?P<part2>night))\b", re.IGNORECASE),
    re.compile(r"\b(?P<word>noon|midday|midnight)\b", re.IGNORECASE),
]
#: Between a date and the time after it ("March 12, 2023 at 3pm", "2023-04-15T13:45"),
#: and between a time and the date after it ("4pm on November 1, 2023").
_DATE_THEN_TIME = re.compile(r"T|[\s,]*(?:(?:at|by|around|about|from)\s+)*", re.IGNORECASE)
_TIME_THEN_DATE = re.compile(r"[\s,]*(?:on\s+)?(?:the\s+)?", re.IGNORECASE)


@dataclass(frozen=True)
class Moment:
    """A date a text asks for, with the time it gives that date if it gives one.
    ``spans`` are where the text writes them (one or two pieces); ``start`` and ``end``
    bound them."""

    spans: tuple[tuple[int, int], ...]
    date: dt.date
    time: dt.time | None = None

    @property
    def start(self) -> int:
        return min(s for s, _ in self.spans)

    @property
    def end(self) -> int:
        return max(e for _, e in self.spans)


@dataclass(frozen=True)
class _Today:
    """Where a text says which day today is, that date, and the weekday it names."""

    start: int
    end: int
    date: dt.date
    weekday: int | None


def _apart(start: int, end: int, spans: Iterable[tuple[Any, ...]]) -> bool:
    """Does ``start:end`` overlap none of ``spans`` (tuples that start with a start and an
    end)?"""
    return all(end <= span[0] or start >= span[1] for span in spans)


def dates_in(text: str) -> list[tuple[int, int, dt.date]]:
    """The dates ``text`` writes, as ``(start, end, date)`` in order (see the module
    docstring); spans never overlap."""
    found: list[tuple[int, int, dt.date | tuple[int, int]]] = []

    for pattern in _NAMED:
        for m in pattern.finditer(text):
            month = MONTHS.index(m.group("month")[:3].lower()) + 1
            day = int(m.group("day"))
            if not _apart(m.start(), m.end(), found):
                continue
            if m.groupdict().get("year"):
                date = _date(int(m.group("year")), month, day)
                if date is not None:
                    found.append((m.start(), m.end(), date))
            elif 1 <= day <= 31:
                found.append((m.start(), m.end(), (month, day)))
    for m in _ISO.finditer(text):
        date = _date(int(m.group("year")), int(m.group("month")), int(m.group("day")))
        if date is not None and _apart(m.start(), m.end(), found):
            found.append((m.start(), m.end(), date))
    for m in _NUMERIC.finditer(text):
        a, b, year = int(m.group("a")), int(m.group("b")), int(m.group("year"))
        if (a > 12) == (b > 12) or not _apart(m.start(), m.end(), found):
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
    month = MONTHS.index(whole[0].group("month")[:3].lower()) + 1
    day = int(whole[0].group("day"))
    same = {date for _, _, date in dates_in(question) if (date.month, date.day) == (month, day)}
    return same.pop() if len(same) == 1 else None


def _date(year: int, month: int, day: int) -> dt.date | None:
    try:
        return dt.date(year, month, day)
    except ValueError:
        return None


def _today(text: str) -> _Today | None:
    """Which day ``text`` says today is: "today is Monday April 25th 2023", "today is
    20230929", "Today is monday 2022-10-20"."""
    for m in _TODAY.finditer(text):
        weekday = _WEEKDAYS.index(m.group("weekday")[:3].lower()) if m.group("weekday") \
            else None
        compact = _COMPACT.match(text, m.end())
        if compact is not None:
            date = _date(int(compact.group("year")), int(compact.group("month")),
                         int(compact.group("day")))
            if date is not None:
                return _Today(m.start(), compact.end(), date, weekday)
        for start, end, date in dates_in(text):
            if start >= m.end() and re.fullmatch(r"(?:the\s+)?", text[m.end():start],
                                                 re.IGNORECASE):
                return _Today(m.start(), end, date, weekday)
    return None


def _relative(text: str, today: _Today, skip: tuple[int, int] | None = None,
              ) -> list[tuple[int, int, dt.date]]:
    """The days ``text`` counts from ``today`` ("tomorrow", "the upcoming Wednesday"), as
    ``(start, end, date)``; nothing inside ``skip`` (where the text says which day today
    is)."""
    weekday = today.date.weekday() if today.weekday is None else today.weekday
    found: list[tuple[int, int, dt.date]] = []

    def add(start: int, end: int, shift: int) -> None:
        if _apart(start, end, found) and (skip is None or _apart(start, end, [skip])):
            found.append((start, end, today.date + dt.timedelta(days=shift)))

    for pattern, shift in _SHIFTS:
        for m in pattern.finditer(text):
            add(m.start(), m.end(), shift)
    for m in _IN_DAYS.finditer(text):
        add(m.start(), m.end(), int(m.group("n")))
    for m in _ON_WEEKDAY.finditer(text):
        which = m.group("which").lower().split()[-1]
        target = _WEEKDAYS.index(m.group("weekday")[:3].lower())
        ahead = (target - weekday) % 7
        if which == "next":  # the one of the week after this one (weeks from Monday)
            shift = 7 - weekday + target
        elif which == "last":
            shift = -((weekday - target) % 7 or 7)
        elif which == "this":
            shift = ahead
        else:  # upcoming, coming, on: the next one to come
            shift = ahead or 7
        add(m.start(), m.end(), shift)
    return sorted(found, key=lambda item: item[0])


def times_in(text: str) -> list[tuple[int, int, dt.time]]:
    """The times of day ``text`` writes, as ``(start, end, time)`` in order: "16:00",
    "4:30 PM", "8pm", "3 in the afternoon", "11 at night", "noon"; spans never overlap."""
    found: list[tuple[int, int, dt.time]] = []
    for pattern in _TIMES:
        for m in pattern.finditer(text):
            if not _apart(m.start(), m.end(), found):
                continue
            parts = m.groupdict()
            if parts.get("word"):
                hour, minute, second = (0 if parts["word"].lower() == "midnight" else 12), 0, 0
            else:
                hour, minute = int(parts["h"]), int(parts.get("m") or 0)
                second = int(parts.get("s") or 0)
                part = (parts.get("part") or parts.get("part2") or "").lower()
                ap = (parts.get("ap") or "").lower()
                if ap and not 1 <= hour <= 12:
                    continue  # "16:00 pm"
                later = ap == "p" or part in ("afternoon", "evening") \
                    or (part == "night" and hour >= 6)
                if later and hour < 12:
                    hour += 12
                elif (ap == "a" or part in ("morning", "night")) and hour == 12:
                    hour = 0
            found.append((m.start(), m.end(), dt.time(hour, minute, second)))
    return sorted(found, key=lambda item: item[0])


def moments(text: str, today: _Today | None = None) -> list[Moment]:
    """The dates ``text`` asks for, in order, each with the time it gives it (see the
    module docstring). Where the text says which day today is and counts days from it,
    that date is not asked for; ``today`` counts days in a text that does not say it (a
    call's value, read with its question's today)."""
    own = _today(text)
    dates = dates_in(text)
    base = today or own
    relative = [] if base is None else _relative(text, base, (own.start, own.end)
                                                 if own else None)
    if relative and own is not None:
        dates = [d for d in dates if not own.start <= d[0] < own.end]
    dates = sorted(dates + relative, key=lambda item: item[0])
    times = [t for t in times_in(text) if _apart(t[0], t[1], dates)]
    found: list[Moment] = []
    for start, end, date in dates:
        for t_start, t_end, time in times:
            if (t_start >= end and _DATE_THEN_TIME.fullmatch(text[end:t_start])) \
                    or (t_end <= start and _TIME_THEN_DATE.fullmatch(text[t_end:start])):
                found.append(Moment(((start, end), (t_start, t_end)), date, time))
                break
        else:
            found.append(Moment(((start, end),), date))
    if len(found) == 1 and len(times) == 1 and found[0].time is None:
        found = [Moment((*found[0].spans, times[0][:2]), found[0].date, times[0][2])]
    return found


def date_format(schema: Mapping[str, Any]) -> str | None:
    """The ``strftime`` format a string parameter's schema asks its dates in, with a time
    where it asks for one (see the module docstring), if it says."""
    if schema.get("type") not in ("string", None):
        return None
    if schema.get("format") == "date":
        return "%Y-%m-%d"
    description = str(schema.get("description", ""))
    codes = {"yy": "%Y", "mm": "%m", "dd": "%d"}
    m = _FORMAT.search(description)
    if m is not None:
        parts = [m.group("a").lower()[:2], m.group("b").lower()[:2], m.group("c").lower()[:2]]
        sep = m.group("sep")
        time = (m.group("tsep"), m.group("time"), m.group("zone"))
    elif (words := _WORDS.search(description)) is not None:
        parts = [words.group(k).lower()[:2].replace("mo", "mm").replace("da", "dd")
                 .replace("ye", "yy") for k in ("a", "b", "c")]
        sep, time = "-", (None, None, None)
    elif _ISO_NAMED.search(description) and (example := _EXAMPLE.search(description)):
        parts, sep = ["yy", "mm", "dd"], "-"
        time = (example.group("tsep"), example.group("time"), example.group("zone"))
    else:
        return None
    if sorted(parts) != ["dd", "mm", "yy"]:
        return None
    fmt = sep.join(codes[p] for p in parts)
    tsep, clock, zone = time
    if clock:
        fmt += (" " if tsep.isspace() else tsep) + ("%H:%M:%S" if clock.count(":") == 2
                                                     else "%H:%M")
        if zone and not _NO_ZONE.search(description):
            fmt += "Z"
    return fmt


def _read(value: str, fmt: str, question: str, asked: Sequence[Moment],
          today: _Today | None) -> tuple[dt.date, dt.time | None] | None:
    """The date (and time) a parameter's ``value`` stands for, if it is one: the value as
    asked already; a date (and time) written some other way, or counted from the question's
    ``today``; a month and day the question dates; a time alone, where the question gives
    one date a time; a piece of one date the question asks for ("15th", of "the 15th of
    March, 2024")."""
    timed = "%H" in fmt
    try:
        parsed = dt.datetime.strptime(value.strip(), fmt)
    except ValueError:
        pass
    else:
        return parsed.date(), parsed.time() if timed else None
    text = re.sub(r"^(?:on\s+)?(?:the\s+)?", "", value.strip().rstrip(".,"),
                  flags=re.IGNORECASE)
    whole = [m for m in moments(text, today) if m.start == 0 and m.end == len(text)]
    if len(whole) == 1:
        return whole[0].date, whole[0].time
    if (date := _yearless(text, question)) is not None:
        return date, None
    clock = times_in(text)
    if len(clock) == 1 and clock[0][:2] == (0, len(text)):
        with_time = [m for m in asked if m.time is not None]
        return (with_time[0].date, with_time[0].time) if len(with_time) == 1 else None
    piece, lower = text.lower(), question.lower()
    if len(piece) < 2:
        return None
    holders = [{m for m in asked if any(s <= i and i + len(piece) <= e for s, e in m.spans)}
               for i in range(len(lower)) if lower.startswith(piece, i)]
    owners = set().union(*holders)
    if holders and all(holders) and len(owners) == 1:
        owner = owners.pop()
        return owner.date, owner.time
    return None


def _written(date: dt.date, time: dt.time | None, fmt: str,
             asked: Sequence[Moment]) -> str | None:
    """``date`` in ``fmt``; with the time the question gives that date where the format
    has a time (else ``time``), or None if there is none."""
    if "%H" not in fmt:
        return date.strftime(fmt)
    given = {m.time for m in asked if m.date == date and m.time is not None}
    if len(given) == 1:
        time = given.pop()
    if time is None:
        return None
    return dt.datetime.combine(date, time).strftime(fmt)


def dated(arguments: Mapping[str, Any], schema: Mapping[str, Any] | None,
          question: str) -> dict[str, Any]:
    """``arguments`` with each date of a parameter that asks for a format written in it
    (with the question's time for it, where the format has a time); the one parameter
    holding a date the question does not ask for given the one date the question asks for
    that no other parameter holds; else an optional date parameter left out given the
    question's one date (when exactly one such parameter is missing, every other one holds
    a date, and the question asks for exactly one date none of them holds)."""
    props: Mapping[str, Any] = properties(schema) or {}
    formats = {key: f for key, sub in props.items()
               if isinstance(sub, Mapping) and (f := date_format(sub))}
    if not formats:
        return dict(arguments)
    new = dict(arguments)
    today = _today(question)
    asked = moments(question)
    written = {m.date for m in asked}
    held: set[dt.date] = set()
    unwritten: list[str] = []  # holding a date the question does not ask for
    other = False  # a date parameter holding something else ("Paris"): its date, maybe
    for key, fmt in formats.items():
        value = new.get(key)
        if key not in new:
            continue
        when = _read(value, fmt, question, asked, today) if isinstance(value, str) else None
        if when is None:
            other = True
        elif written and when[0] not in written:
            unwritten.append(key)
        elif (text := _written(*when, fmt, asked)) is not None:
            new[key] = text
            held.add(when[0])
        else:
            other = True  # a date without the time its format asks for
    left = sorted(date for date in written if date not in held)
    if len(unwritten) == 1 and len(left) == 1:
        # A date the question does not ask for (the description's example: "such as
        # '15/03/2024'", or today's) where it asks for one other: that one.
        if (text := _written(left[0], None, formats[unwritten[0]], asked)) is not None:
            new[unwritten[0]] = text
        return new
    missing = [key for key in formats if key not in new]
    if len(missing) == 1 and len(left) == 1 and not other and not unwritten \
            and (text := _written(left[0], None, formats[missing[0]], asked)) is not None:
        new[missing[0]] = text
    return new
