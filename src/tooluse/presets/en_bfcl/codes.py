"""Codes a parameter's description lists: the question names the thing, the call writes its code.

Many APIs take a number or a short code where the user speaks of a thing, and say so in
the parameter's description: "The ID of the service type. For example, 1 represents a
cleaning service, 2 an ironing service, and 3 a comprehensive cleaning service";
"'1' corresponds to Bangkok, '2' to Chiang Mai"; "'M' for male, 'F' for female". A small
model asked for "a housekeeper who provides ironing services" writes a made-up id
(``service_id: 12345``) or copies another number of the question (on BFCL ``live_simple``
it wrote no right id in such questions, with a call forced or not: docs/benchmarks/code.md).

:func:`code_table` reads such a table from a description: two entries or more, each a code
(an integer, or a string in quotes) then "represents", "corresponds to", "stands for",
"means", "for", "to", "=", ":" or "is", then a short phrase. :func:`described_codes` writes
a parameter's code where the question names exactly one entry: the entry whose distinctive
words (its phrase's content words, less those every entry of the table has: "service" in
the example) the question all says, stemmed, the entry saying most of them if several do.
It writes the code in place of the model's value, and adds a parameter the call left out
(the conversation gives its value). A parameter whose description lists no such table is
left alone; one with an enum ("enum": [1, 2] beside "'1' represents cleaning service, and
'2' represents ironing service") is given only a code among its members.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ...language.words import content_words
from .schemas import properties

__all__ = ["code_table", "described_codes"]

_CODE = r"""(?:(?P<quote>['"‘“])(?P<quoted>[^'"‘’“”\s]{1,12})['"’”]|(?P<number>-?\d{1,9})(?![\w.]))"""
_LINK = r"""(?:represents?|corresponds?\s+to|stands?\s+for|means|is\s+for|for|to|is|=|:|->|→)"""
_ENTRY = re.compile(
    r"(?:^|(?<=[\s,;(]))" + _CODE + r"\s*" + _LINK
    + r"""\s+(?:an?\s+|the\s+)?(?P<phrase>[^\W\d_][^,;.()'"]{0,60}?)"""
    + r"""\s*(?=[,;.()]|$|\s+(?:and|or)\s+(?:['"‘“]|-?\d))""",
    re.IGNORECASE)


def code_table(description: str) -> list[tuple[str, str]]:
    """The ``(code, phrase)`` entries a parameter's ``description`` lists, in order; empty
    unless it lists two or more with different codes (one "1 for" is no table)."""
    entries: list[tuple[str, str]] = []
    for m in _ENTRY.finditer(description):
        code = m.group("quoted") if m.group("quote") else m.group("number")
        phrase = m.group("phrase").strip()
        if len(phrase.split()) <= 5 and code not in {c for c, _ in entries}:
            entries.append((code, phrase))
    return entries if len(entries) >= 2 else []


def _named(question: str, table: list[tuple[str, str]]) -> str | None:
    """The code of the one entry of ``table`` that ``question`` names (see the module
    docstring), or None."""
    words = [content_words(phrase) for _, phrase in table]
    shared = set.intersection(*words)  # a table has two entries or more
    asked = content_words(question)
    said = [(len(own), code) for (code, _), w in zip(table, words, strict=True)
            if (own := w - shared) and own <= asked]
    if not said:
        return None
    best = max(n for n, _ in said)
    codes = [code for n, code in said if n == best]
    return codes[0] if len(codes) == 1 else None


def _typed(code: str, schema: Mapping[str, Any]) -> Any:
    """``code`` as the parameter's type asks: an integer for "integer", a number for
    "number"/"float"; None when it cannot be one."""
    kind = schema.get("type")
    if kind == "integer":
        return int(code) if re.fullmatch(r"-?\d+", code) else None
    if kind in ("number", "float"):
        try:
            return float(code) if "." in code else int(code)
        except ValueError:
            return None
    if kind in ("string", None):
        return code
    return None


def described_codes(arguments: Mapping[str, Any], schema: Any,
                    question: str) -> dict[str, Any]:
    """``arguments`` with the code of each parameter whose description lists codes written
    as the question names one (see the module docstring)."""
    props = properties(schema)
    if props is None:
        return dict(arguments)
    changed: dict[str, Any] = {}
    for key, sub in props.items():
        if not isinstance(sub, Mapping) or not isinstance(sub.get("description"), str):
            continue
        table = code_table(sub["description"])
        code = _named(question, table) if table else None
        value = _typed(code, sub) if code is not None else None
        enum = sub.get("enum")
        if isinstance(enum, list) and value not in enum:
            continue
        if value is not None and arguments.get(key) != value:
            changed[str(key)] = value
    return {**arguments, **changed}
