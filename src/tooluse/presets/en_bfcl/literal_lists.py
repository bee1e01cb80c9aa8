"""Lists the question writes out, given whole to the array parameter they are for
(``literal_lists``).

A 135M model copies a list the question writes badly: ``elements: []`` for "Sort this list
of names: ['Sam', 'Alice', 'Jack']", ``cash_flows: [10000, 15000, 20000, 25000, 30000]``
for "[-50000, 10000, 15000, 20000, 25000, 30000]" (the first item lost), ``data: [85, 90,
88, 92, 86, 89, 91, 91, 91, ...]`` for "85, 90, 88, 92, 86, 89, 91" (the last item
repeated until the grammar's limit). :func:`literal_lists` reads the lists the question
writes: in brackets, as JSON or Python ("['I', 'V', 'vi', 'IV']", "[ [10, 20], [30, 40] ]"),
or as a run of three or more numbers with commas ("85, 90, 88 and 92"). An array
parameter's value is replaced by such a list:

- where it is empty and the question writes exactly one list no other parameter of the
  call holds;
- where it is a shorter run of the list's items in their order ("[29]" of "[23, 45, 12,
  89, 34, 67, 29]"), or the list with its last item repeated after it, for exactly one
  list.

The result is kept only if the call still validates (:func:`.call_edits.call_adjuster`):
a list of names is not given to an array of numbers.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping
from typing import Any

from .schemas import properties

__all__ = ["lists_in", "literal_lists"]

_NUMBER = r"-?\d+(?:\.\d+)?"
#: Three or more numbers with a comma and a space between them ("85, 90, 88 and 92"):
#: "10,000" is one number, not two.
_RUN = re.compile(rf"(?<![\w.,-]){_NUMBER}(?:,\s+{_NUMBER}){{1,}}(?:,?\s+and\s+{_NUMBER})?"
                  rf"(?!\w|[.,]\d)")


def _bracketed(text: str) -> list[tuple[int, int]]:
    """The spans of ``text``'s outermost bracketed parts ("[ [10, 20], [30, 40] ]")."""
    spans: list[tuple[int, int]] = []
    depth, start = 0, 0
    for at, char in enumerate(text):
        if char == "[":
            if depth == 0:
                start = at
            depth += 1
        elif char == "]" and depth:
            depth -= 1
            if depth == 0:
                spans.append((start, at + 1))
    return spans


def _parsed(text: str) -> list[Any] | None:
    """``text`` as a JSON or Python list literal, or None."""
    for parse in (json.loads, ast.literal_eval):
        try:
            value = parse(text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        if isinstance(value, list):
            return [_plain(item) for item in value]
    return None


def _plain(value: Any) -> Any:
    """``value`` with tuples written as lists (Python's ``(1, 2)`` is JSON's ``[1, 2]``)."""
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


def lists_in(question: str) -> list[list[Any]]:
    """The lists ``question`` writes, in order and each once: the bracketed JSON or Python
    list literals, and the runs of three or more numbers outside them."""
    found: list[tuple[int, list[Any]]] = []
    spans = _bracketed(question)
    for start, end in spans:
        value = _parsed(question[start:end])
        if value:
            found.append((start, value))
    for match in _RUN.finditer(question):
        if any(s <= match.start() < e for s, e in spans):
            continue
        items = re.findall(_NUMBER, match.group())
        if len(items) >= 3:
            found.append((match.start(), [float(n) if "." in n else int(n) for n in items]))
    lists: list[list[Any]] = []
    for _, value in sorted(found, key=lambda pair: pair[0]):
        if not any(_same(value, seen) for seen in lists):
            lists.append(value)
    return lists


def _same(one: Any, other: Any) -> bool:
    """Equal as JSON values, 1 and 1.0 alike but not True and 1."""
    if isinstance(one, bool) or isinstance(other, bool):
        return one is other
    if isinstance(one, (int, float)) and isinstance(other, (int, float)):
        return float(one) == float(other)
    if isinstance(one, list) and isinstance(other, list):
        return len(one) == len(other) and all(map(_same, one, other))
    return bool(one == other)


def _part_of(value: list[Any], whole: list[Any]) -> bool:
    """Is ``value`` a shorter run of ``whole``'s items in order, or ``whole`` with its last
    item repeated after it (a model copying a list runs on until the grammar stops it)?"""
    if len(value) < len(whole):
        return any(_same(value, whole[at:at + len(value)])
                   for at in range(len(whole) - len(value) + 1))
    return len(value) > len(whole) and _same(value[:len(whole)], whole) \
        and all(_same(item, whole[-1]) for item in value[len(whole):])


def literal_lists(arguments: Mapping[str, Any], schema: Any,
                  question: str) -> dict[str, Any]:
    """``arguments`` with each array parameter given the list the question writes that it
    holds a part of, or, held empty, the one list of the question the call holds nowhere
    else."""
    props = properties(schema)
    if props is None:
        return dict(arguments)
    arrays = {str(key): value for key, value in arguments.items()
              if isinstance(value, list) and isinstance(sub := props.get(key), Mapping)
              and sub.get("type") == "array"}
    # Only a call holding an array reads the question's lists (each bracketed part parsed).
    lists = lists_in(question) if arrays else []
    if not lists:
        return dict(arguments)
    changed: dict[str, Any] = {}
    for key, value in arrays.items():
        if any(_same(value, whole) for whole in lists):
            continue
        if value:
            found = [whole for whole in lists if _part_of(value, whole)]
        else:
            held = [v for k, v in arguments.items() if k != key]
            found = [whole for whole in lists if not any(_same(whole, v) for v in held)]
        if len(found) == 1:
            changed[key] = found[0]
    return {**arguments, **changed}
