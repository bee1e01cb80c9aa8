"""A string value replaced by the name the question writes for it (``written_names``).

A 135M model filling a free string parameter sometimes writes a value the question never
writes, though the question names what the parameter asks for, or writes more or other
than that name. :func:`written_names` replaces such a value where the question leaves no
doubt which name is meant:

- **a name ending in the parameter's name**: "the ranking of Manchester United in Premier
  League" gives ``league: "Manchester City"``, a team the model knows; the question's one
  capitalised name whose last word is the parameter's ("Premier *League*" for ``league``,
  "San Diego *County*" for ``county``) is the value;
- **a name misspelt**: ``team_name: "Liverly"`` for "played by Liverpool F.C.": the model
  copied the start of a name and ended it another way; the question's one capitalised
  word that starts with the same four letters or more (and is not the value with an
  ending added or cut, "German" for "Germany") is the value;
- **another value written on**: ``source: "New York to Philadelphia"`` beside
  ``destination: "Philadelphia"``, ``location: "London 2022/08/16"`` beside ``date:
  "2022/08/16"``, ``location: "Sydney, Australia"`` beside ``country: "Australia"``: a
  value that ends in another parameter's value, after a comma, "to", "from", "in", or a
  space before one with digits, is the part before it; not where the parameter's
  description writes a comma between words ("e.g. Boston, MA": the city with its state);
- **a kind given a count**: "a single room for two nights" gives ``room_type: "two"``
  beside ``nights: 2``, the count written twice; for a ``<thing>_type`` (``_kind``,
  ``_category``, ``_class``) parameter, the one word the question writes right before the
  thing ("*single* room") is the value.

The first two replace only a value the question does not write as whole words (case
aside). A value is replaced only by one no other parameter of the call holds; enum and
formatted parameters are left alone; the call must still validate (the caller checks).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ...language.numbers import NUMBER_WORDS
from ...language.words import STOP_WORDS, split_name, whole_spans
from .choices import free_string
from .schemas import properties

__all__ = ["written_names"]

#: Parameter-name endings too general to name anything ("customer_name", "room_type").
_GENERAL = frozenset({"name", "type", "kind", "id", "value", "number", "text", "string",
                      "code", "date", "time", "query", "info", "details", "data", "title",
                      "category", "class", "key", "description"})
#: The endings that make a parameter the kind of the thing named before them.
_KINDS = frozenset({"type", "kind", "category", "class"})
#: Lowercase words that may join a name's capitalised words ("Bank *of* America").
_CONNECTORS = r"(?:of|the|de|la|del|du|von|van)"
_CAPITALISED = r"[A-Z][\w'&.-]*"
_WORD = re.compile(r"[^\W\d_]+")
#: The fewest letters a misspelt name must share with the question's word, from its start.
_SHARED = 4


def written_names(arguments: Mapping[str, Any], schema: Any,
                  question: str) -> dict[str, Any]:
    """``arguments`` with each free string value replaced by the name the question writes
    for it, where there is one (see the module docstring)."""
    props = properties(schema)
    if props is None:
        return dict(arguments)
    changed: dict[str, Any] = {}
    for key, value in arguments.items():
        if not free_string(value, props.get(key)):
            continue
        name = _written_on(value, props[key], arguments) \
            or (_kind(key, value, arguments, question) if whole_spans(question, value)
                else _headed(key, question) or _misspelt(value, question))
        held = {v for k, v in arguments.items() if k != key and isinstance(v, str)}
        if name and name not in held:
            changed[key] = name
    return {**arguments, **changed}


def _headed(key: str, question: str) -> str | None:
    """The question's one capitalised name whose last word is the last word of the
    parameter's name, capitalised, or its plural ("Premier League" for ``league``)."""
    words = split_name(key).lower().split()
    head = words[-1] if words else ""
    if len(head) < 3 or head in _GENERAL:
        return None
    name = re.compile(rf"((?:{_CAPITALISED}\s+(?:{_CONNECTORS}\s+)?){{1,4}}){head.capitalize()}s?"
                      r"(?![\w-])")
    found: set[str] = set()
    for match in name.finditer(question):
        lead = match.group(1).split()
        while lead and lead[0].lower() in STOP_WORDS:  # "What", "The", "In" start no name
            lead.pop(0)
        if lead:
            found.add(" ".join([*lead, match.group()[len(match.group(1)):]]))
    return found.pop() if len(found) == 1 else None


def _misspelt(value: str, question: str) -> str | None:
    """The question's one capitalised word that starts like the one-word ``value`` (four
    letters or more) but is neither a start of it nor starts with it ("Liverpool" for
    "Liverly"; not "German" for "Germany", nor "Tigers" for "Tiger")."""
    plain = value.strip().lower()
    if not _WORD.fullmatch(plain) or len(plain) < _SHARED:
        return None
    found = {word for word in _WORD.findall(question)
             if word[0].isupper() and word.lower()[:_SHARED] == plain[:_SHARED]
             and not word.lower().startswith(plain) and not plain.startswith(word.lower())}
    return found.pop() if len(found) == 1 else None


def _written_on(value: str, spec: Mapping[str, Any], arguments: Mapping[str, Any]) -> str | None:
    """The part of ``value`` before another parameter's value it ends in ("New York" of
    "New York to Philadelphia" beside ``"Philadelphia"``)."""
    city_state = re.search(r"\w, \w", str(spec.get("description", ""))) is not None
    for other in arguments.values():
        if not isinstance(other, str) or not other.strip() or other.strip() == value.strip():
            continue
        joins = [r"\s+(?:to|from|in)\s+", *([] if city_state else [r"\s*,\s*"]),
                 *([r"\s+"] if re.search(r"\d", other) else [])]
        found = re.fullmatch(rf"(.+?)(?:{'|'.join(joins)}){re.escape(other.strip())}",
                             value.strip(), re.IGNORECASE)
        if found and len(found.group(1).strip()) >= 2:
            return found.group(1).strip()
    return None


def _kind(key: str, value: str, arguments: Mapping[str, Any], question: str) -> str | None:
    """For a ``<thing>_type`` parameter holding a count another numeric parameter holds
    ("two" beside ``nights: 2``), the one word the question writes right before the thing
    ("single" of "a single room" for ``room_type``)."""
    words = split_name(key).lower().split()
    if len(words) < 2 or words[-1] not in _KINDS:
        return None
    plain = value.strip().lower()
    count: float | None = NUMBER_WORDS.get(plain)
    if count is None:
        try:
            count = float(plain)
        except ValueError:
            return None
    if not any(isinstance(v, (int, float)) and not isinstance(v, bool) and v == count
               for k, v in arguments.items() if k != key):
        return None
    before = re.compile(rf"(?<![\w-])([^\W\d_][\w-]*)\s+{re.escape(words[-2])}s?(?![\w-])",
                        re.IGNORECASE)
    found = {m.group(1).lower() for m in before.finditer(question)
             if m.group(1).lower() not in STOP_WORDS and m.group(1).lower() not in NUMBER_WORDS}
    return found.pop() if len(found) == 1 else None
