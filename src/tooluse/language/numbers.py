"""Numbers as a text writes them without digits standing alone: in words ("two nights", "the
top three plants"), as ordinals ("the 16th century", not a date's "10th December") or with
a scale ("213 million", "$1.2M"); and units of measure as questions write them.

The value copier offers these numbers as spans (:mod:`.spans`); the rules of a preset
read them with the same functions (:mod:`tooluse.presets`).
"""

from __future__ import annotations

import re

__all__ = ["JOINED_UNITS", "MONTH", "MONTHS", "NUMBER_WORDS", "SCALES", "UNITS", "counts",
           "plain_numbers", "scaled_numbers", "spoken_numbers"]


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


#: A month's name in English, whole or cut to three letters ("Sept" too), as a regular
#: expression (match it with ``re.IGNORECASE``): the one month pattern of every reader.
MONTH = (r"jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
         r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?")


#: The months' first three letters, in order: ``MONTHS.index(name[:3].lower()) + 1`` is the
#: number of a month :data:`MONTH` matched.
MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")


_MONTH_WORD = re.compile(rf"(?:{MONTH})\.?$", re.IGNORECASE)


def spoken_numbers(text: str) -> list[int]:
    """The numbers ``text`` writes in words or as ordinals, in order, with repeats ("a
    hundred" is 100; "twenty one" is 20 and 1, not 21)."""
    found: list[tuple[int, int]] = []
    for match in _WORD.finditer(text):
        found.append((match.start(), NUMBER_WORDS[match.group(1).lower()]))
    for match in _ORDINAL.finditer(text):
        before = text[:match.start()].split()[-1:]
        after = text[match.end():].split()[:1]
        if any(_MONTH_WORD.match(word.strip(",.")) for word in before + after):
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


#: Scale words, and the abbreviations written after a currency sign ("$1M", "€5k", "£2bn").
SCALES = {"thousand": 10**3, "million": 10**6, "billion": 10**9, "trillion": 10**12}


_ABBREVIATED = {"k": 10**3, "m": 10**6, "mm": 10**6, "mn": 10**6, "b": 10**9, "bn": 10**9}


_SCALED = re.compile(
    r"(?<![\w.])(?P<sign>[$€£¥]\s?)?(?P<number>\d+(?:,\d{3})*(?:\.\d+)?)"
    r"(?:\s?(?P<word>" + "|".join(SCALES) + r")s?\b"
    r"|(?P<short>k|m|mm|mn|b|bn)\b)", re.IGNORECASE)


#: A number written without a scale after it.
_PLAIN = re.compile(r"(?<![\w.])(?>(\d+(?:,\d{3})*(?:\.\d+)?))(?!\w|\s?(?:"
                    + "|".join(SCALES) + r")s?\b)")


def plain_numbers(text: str) -> set[float]:
    """The numbers ``text`` writes in digits without a scale after them."""
    return {float(match.group(1).replace(",", "")) for match in _PLAIN.finditer(text)}


def scaled_numbers(text: str) -> list[tuple[float, int | float]]:
    """Each number ``text`` writes with a scale, as ``(written, value)``: ``(213.0,
    213000000)`` for "213 million", ``(1.2, 1200000)`` for "$1.2M". An abbreviation counts
    only after a currency sign: "10 m" is ten metres, "300K" three hundred kelvin."""
    found: list[tuple[float, int | float]] = []
    for match in _SCALED.finditer(text):
        if match.group("short") and not match.group("sign"):
            continue
        written = float(match.group("number").replace(",", ""))
        scale = SCALES[match.group("word").lower()] if match.group("word") \
            else _ABBREVIATED[match.group("short").lower()]
        value = float(f"{written * scale:.12g}")
        found.append((written, int(value) if value.is_integer() else value))
    return found


#: Units of measure as questions write them (lowercase): length, area, volume, mass, time,
#: temperature, speed, energy, power, pressure, electricity, amount and data.
UNITS = frozenset((
    "m", "meter", "meters", "metre", "metres", "cm", "centimeter", "centimeters", "centimetre",
    "centimetres", "mm", "millimeter", "millimeters", "millimetre", "millimetres", "km",
    "kilometer", "kilometers", "kilometre", "kilometres", "inch", "inches", "ft", "foot",
    "feet", "yd", "yard", "yards", "mi", "mile", "miles", "nm", "nanometer", "nanometers",
    "m2", "m²", "sq.m", "km2", "km²", "acre", "acres", "hectare", "hectares",
    "l", "liter", "liters", "litre", "litres", "ml", "milliliter", "milliliters", "millilitre",
    "millilitres", "gallon", "gallons", "gal", "cup", "cups", "tablespoon", "tablespoons",
    "tbsp", "teaspoon", "teaspoons", "tsp", "m3", "m³", "cm3", "cm³",
    "g", "gram", "grams", "kg", "kilogram", "kilograms", "mg", "milligram", "milligrams", "lb",
    "lbs", "pound", "pounds", "oz", "ounce", "ounces", "ton", "tons", "tonne", "tonnes",
    "s", "sec", "secs", "second", "seconds", "ms", "millisecond", "milliseconds", "min",
    "mins", "minute", "minutes", "h", "hr", "hrs", "hour", "hours",
    "celsius", "fahrenheit", "kelvin", "°c", "°f", "km/h", "kmh", "kph", "mph", "m/s", "knots",
    "j", "joule", "joules", "kj", "kilojoule", "kilojoules", "cal", "calorie", "calories",
    "kcal", "kwh", "w", "watt", "watts", "kw", "kilowatt", "kilowatts", "hp",
    "pa", "pascal", "pascals", "kpa", "atm", "atmosphere", "atmospheres", "bar", "psi", "mmhg",
    "v", "volt", "volts", "a", "ampere", "amperes", "amp", "amps", "c", "coulomb", "coulombs",
    "n", "newton", "newtons", "t", "tesla", "ohm", "ohms", "hz", "hertz", "khz", "mhz", "ghz",
    "mol", "mole", "moles", "g/mol", "g/mole", "grams/mol", "grams/mole", "kb", "mb", "gb",
    "tb", "bytes", "kilobytes", "megabytes", "gigabytes", "terabytes",
))


#: Units as they are written joined to a number ("5cm", "4C", "0.5A"), case kept: "$1.2M"
#: and "$5K" are scales, not metres or kelvins.
JOINED_UNITS = frozenset({u for u in UNITS if u.isalpha()}
                         | {"A", "C", "V", "W", "J", "N", "T", "L", "Hz", "Pa", "KB", "MB", "GB",
                            "TB", "kWh", "mAh"})
