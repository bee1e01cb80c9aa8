"""Validating tool input against its schema, with messages a model can act on.

The model reads these messages in an ``is_error`` tool result and retries, so each problem
names its parameter by path (``'items[2].price'``) and says what is expected in plain words
("missing required parameter 'location'", "'count' must be an integer, got string '5'"),
and *every* problem is listed at once (one round trip per problem would exhaust the 2-3
retries a model tends to make).

Compiling a validator costs far more than running it (see ``docs/benchmarks/tools.md``), so
validators are built once per distinct schema and cached by the schema's canonical JSON.
"""

from __future__ import annotations

import json
import re
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError
from jsonschema.protocols import Validator

from .._jsonvalue import json_type

__all__ = ["compile_validator", "describe_errors", "input_path", "input_problems"]

_CACHE_SIZE = 1024
_cache: OrderedDict[str, Validator] = OrderedDict()
_lock = threading.Lock()


def _canonical(schema: Mapping[str, Any]) -> str:
    return json.dumps(schema, sort_keys=True, separators=(",", ":"), default=repr)


def compile_validator(schema: Mapping[str, Any]) -> Validator:
    """A draft 2020-12 validator for ``schema`` (already checked), shared by every tool with
    an equal schema. Formats are asserted where jsonschema has a checker for them."""
    key = _canonical(schema)
    with _lock:
        found = _cache.get(key)
        if found is not None:
            _cache.move_to_end(key)
            return found
    validator: Validator = Draft202012Validator(
        dict(schema), format_checker=Draft202012Validator.FORMAT_CHECKER
    )
    with _lock:
        _cache[key] = validator
        if len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return validator


def clear_cache() -> None:
    """Forget every compiled validator (for benchmarks and tests)."""
    with _lock:
        _cache.clear()


def input_path(path: Iterable[str | int]) -> str:
    """``("items", 2, "price")`` -> ``"items[2].price"``; ``()`` -> ``""``: a path inside a
    tool's input, as a model reads it (a wire field path is ``errors.wire_path``)."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def input_problems(validator: Validator, instance: Any) -> list[str]:
    """Every problem with ``instance``, worded for a model, ordered by the path each one
    names (array indexes numerically), so the list reads like the input."""
    return describe_errors(list(validator.iter_errors(instance)))


def _sort_key(path: Sequence[str | int]) -> list[tuple[int, int, str]]:
    return [(0, p, "") if isinstance(p, int) else (1, 0, p) for p in path]


def describe_errors(errors: Sequence[ValidationError]) -> list[str]:
    found: list[tuple[list[tuple[int, int, str]], str]] = []
    seen: set[str] = set()
    for error in errors:
        for path, text in _describe(error):
            if text not in seen:
                seen.add(text)
                found.append((_sort_key(path), text))
    found.sort(key=lambda item: item[0])  # stable: same-path problems keep jsonschema's order
    return [text for _, text in found]


_TYPE_WORDS = {
    "object": "an object",
    "array": "an array",
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "null": "null",
}


def _type_words(expected: Any) -> str:
    names = expected if isinstance(expected, list) else [expected]
    words = [_TYPE_WORDS.get(str(n), repr(n)) for n in names]
    return " or ".join(words)


def _json_type(value: Any) -> str:
    return json_type(value)

def _show(value: Any, limit: int = 60) -> str:
    """A short rendering of a value for a message (long values are cut, not dumped)."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    if isinstance(value, str):
        text = "'" + value.replace("'", "\\'") + "'"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _got(value: Any) -> str:
    kind = _json_type(value)
    if kind in ("object", "array"):
        return f"got {_TYPE_WORDS.get(kind, kind)}"
    if kind == "null":
        return "got null"
    return f"got {kind} {_show(value)}"


def _subject(path: Sequence[str | int]) -> str:
    return f"'{input_path(path)}'" if path else "the input"


def _child(path: Sequence[str | int], name: str) -> str:
    return input_path([*path, name])


def _describe(error: ValidationError) -> list[tuple[list[str | int], str]]:
    path = list(error.absolute_path)
    who = _subject(path)
    kind = error.validator
    arg: Any = error.validator_value
    value = error.instance
    schema = error.schema if isinstance(error.schema, Mapping) else {}

    if kind == "required":
        missing = [r for r in arg if isinstance(value, Mapping) and r not in value]
        return [([*path, r], f"missing required parameter '{_child(path, r)}'") for r in missing]
    if kind == "additionalProperties" and arg is False and isinstance(value, Mapping):
        return [
            ([*path, name], f"unexpected parameter '{_child(path, name)}'")
            for name in _extra_keys(value, schema)
        ] or [(path, f"{who}: {error.message}")]
    if kind == "unevaluatedProperties" and arg is False:
        return [(path, f"{who} has unexpected parameters: {error.message}")]
    if kind == "type":
        return [(path, f"{who} must be {_type_words(arg)}, {_got(value)}")]
    if kind == "enum":
        return [(path, f"{who} must be one of {_show_list(arg)}, got {_show(value)}")]
    if kind == "const":
        return [(path, f"{who} must be {_show(arg)}, got {_show(value)}")]
    if kind in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        words = {
            "minimum": "at least",
            "maximum": "at most",
            "exclusiveMinimum": "greater than",
            "exclusiveMaximum": "less than",
        }[kind]
        return [(path, f"{who} must be {words} {arg}, got {_show(value)}")]
    if kind == "multipleOf":
        return [(path, f"{who} must be a multiple of {arg}, got {_show(value)}")]
    if kind in ("minLength", "maxLength"):
        words = "at least" if kind == "minLength" else "at most"
        return [(path, f"{who} must be {words} {arg} characters long, got {len(value)}")]
    if kind in ("minItems", "maxItems"):
        words = "at least" if kind == "minItems" else "at most"
        return [(path, f"{who} must have {words} {arg} items, got {len(value)}")]
    if kind in ("minProperties", "maxProperties"):
        words = "at least" if kind == "minProperties" else "at most"
        return [(path, f"{who} must have {words} {arg} entries, got {len(value)}")]
    if kind == "uniqueItems":
        return [(path, f"{who} must not contain duplicate items")]
    if kind == "pattern":
        return [(path, f"{who} must match the pattern {arg!r}, got {_show(value)}")]
    if kind == "format":
        return [(path, f"{who} must be a valid {arg}, got {_show(value)}")]
    if kind in ("anyOf", "oneOf"):
        return [(path, text) for text in _describe_alternatives(error, who)]
    if kind == "not":
        return [(path, f"{who} must not match {_show(arg)}")]
    return [(path, f"{who}: {error.message}")]


def _show_list(values: Any) -> str:
    if isinstance(values, list):
        return "[" + ", ".join(_show(v) for v in values) + "]"
    return _show(values)


def _extra_keys(value: Mapping[str, Any], schema: Mapping[str, Any]) -> list[str]:
    props = schema.get("properties", {}) or {}
    patterns = [re.compile(p) for p in (schema.get("patternProperties") or {})]
    return [
        key
        for key in value
        if key not in props and not any(p.search(key) for p in patterns)
    ]


def _describe_alternatives(error: ValidationError, who: str) -> list[str]:
    """``anyOf``/``oneOf``: say which forms are allowed; when only one form is even close
    (its own failures are deeper than a type mismatch), give that form's problems."""
    members = error.validator_value if isinstance(error.validator_value, list) else []
    if error.validator == "oneOf" and not error.context:
        return [f"{who} matches more than one of the allowed forms; it must match exactly one"]
    by_branch: dict[int, list[ValidationError]] = {}
    for sub in error.context or []:
        branch = sub.schema_path[0] if sub.schema_path else -1
        by_branch.setdefault(int(branch) if isinstance(branch, int) else -1, []).append(sub)
    # Branches that failed only on "type" at the alternative's own level are not close.
    close = [
        b
        for b, subs in by_branch.items()
        if not all(
            s.validator in ("type", "const", "enum") and len(s.relative_path) == 0 for s in subs
        )
    ]
    if len(close) == 1:
        inner = describe_errors(by_branch[close[0]])
        if inner:
            return inner
    forms = [_form_words(m) for m in members]
    if forms and all(forms):
        return [f"{who} must be {' or '.join(forms)}, {_got(error.instance)}"]
    return [f"{who} does not match any of the allowed forms, {_got(error.instance)}"]


def _form_words(member: Any) -> str:
    if isinstance(member, Mapping):
        if "const" in member:
            return _show(member["const"])
        if "enum" in member:
            return "one of " + _show_list(member["enum"])
        if "type" in member:
            return _type_words(member["type"])
    return ""
