"""BFCL's answers as tool input: :func:`ground_truth_input`.

:func:`ground_truth_input` reads one of BFCL's ``possible_answer`` calls as the input a model
would send, by BFCL's own conventions (each parameter lists its acceptable values; ``""``
means "may be left out"; nested objects list acceptable values per key). Where BFCL's data
cannot be read literally, the rules below say what is done and why; each use of a rule is
reported so a caller can see (and a test can bound) how often it was needed.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["GroundTruth", "ground_truth_input"]


@dataclass
class GroundTruth:
    """One acceptable input for a call, and the reading rules it needed (rule -> paths).

    ``schema`` is the schema to check ``input`` against: the tool's own, except where the
    ``variable`` rule applies (see :func:`ground_truth_input`).
    """

    input: dict[str, Any]
    schema: dict[str, Any]
    rules: dict[str, list[str]] = field(default_factory=dict)

    def note(self, rule: str, path: str) -> None:
        self.rules.setdefault(rule, []).append(path)


_STRING_TYPES = ("string",)


def ground_truth_input(
    answer: Mapping[str, list[Any]], schema: Mapping[str, Any]
) -> GroundTruth:
    """The first acceptable value of each parameter of one BFCL ground-truth call.

    ``answer`` maps each parameter to its list of acceptable values; ``schema`` is the tool's
    (normalised) input schema. The reading rules:

    * **first value** - each parameter takes its first acceptable value; a parameter whose
      first value is ``""`` is left out (BFCL: "may be left out").
    * **required-not-omittable** - when that parameter is *required* by the schema, leaving it
      out cannot be right, so the first acceptable value other than ``""`` is taken (BFCL's
      own checker fails a call that omits a required parameter).
    * **empty-choices-array** - an empty list of acceptable values for an ``array``
      parameter is read as the empty array (BFCL writes ``"x": []`` where it means
      ``"x": [[]]``: the only value a call could give for a required list with no items).
    * **nested** - a dict value lists acceptable values per key (BFCL's nested form) and is
      read the same way, recursively; lists are read item by item.
    * **variable** - a string where the schema expects another type is BFCL's encoding of a
      Python expression (``x=data['sales']``); BFCL's checker accepts such a value by the
      type of the possible answer (its ``is_variable`` case). ``schema`` is relaxed at
      exactly that place to ``{"type": "string"}``, so everything else is still checked.
    """
    result = GroundTruth({}, copy.deepcopy(dict(schema)))
    result.input = _read_object(answer, result.schema, "", result)
    return result


def _type_of(schema: Any) -> set[str]:
    if not isinstance(schema, Mapping):
        return set()
    t = schema.get("type")
    if isinstance(t, str):
        return {t}
    if isinstance(t, list):
        return {x for x in t if isinstance(x, str)}
    return set()


def _read_object(
    answer: Mapping[str, Any], schema: dict[str, Any], path: str, out: GroundTruth
) -> dict[str, Any]:
    found = schema.get("properties")
    props: dict[str, Any] = found if isinstance(found, dict) else {}
    required = set(schema.get("required") or [])
    values: dict[str, Any] = {}
    for name, choices in answer.items():
        where = f"{path}.{name}" if path else name
        sub = props.get(name, {})
        if not isinstance(choices, list):  # a plain value, not a list of choices
            values[name] = _read_value(choices, sub, where, out, props, name)
            continue
        if not choices:
            if "array" in _type_of(sub):
                out.note("empty-choices-array", where)
                values[name] = []
            continue
        if choices[0] == "":
            rest = [c for c in choices if c != ""]
            if name in required and rest:
                out.note("required-not-omittable", where)
                values[name] = _read_value(rest[0], sub, where, out, props, name)
            continue
        values[name] = _read_value(choices[0], sub, where, out, props, name)
    return values


def _read_value(
    value: Any,
    schema: Any,
    path: str,
    out: GroundTruth,
    parent: dict[str, Any] | list[Any] | None = None,
    key: str | int | None = None,
) -> Any:
    types = _type_of(schema)
    if isinstance(value, str) and types and not (types & set(_STRING_TYPES)):
        out.note("variable", path)
        if isinstance(parent, dict) and isinstance(key, str):
            parent[key] = {"type": "string"}
        elif isinstance(parent, dict) and key == "items":
            parent["items"] = {"type": "string"}
        return value
    if isinstance(value, Mapping):
        sub = schema if isinstance(schema, dict) else {}
        if value and all(isinstance(v, list) for v in value.values()):
            return _read_object(value, sub, path, out)
        return dict(value)
    if isinstance(value, list):
        items = schema.get("items") if isinstance(schema, dict) else None
        read = []
        for i, item in enumerate(value):
            holder = schema if isinstance(schema, dict) else None
            read.append(_read_value(item, items, f"{path}[{i}]", out, holder, "items"))
            if holder is not None:
                items = holder.get("items")
        return read
    return value
