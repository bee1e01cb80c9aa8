"""What the legacy format needs to know about a JSON Schema: a parameter's types.

Parameter values travel as text (``<count>5</count>``). Writing them needs only the rule
"strings as is, everything else as JSON"; reading them back needs the parameter's schema to
know that ``5`` is the integer 5 and not the string "5". This module does both directions
and the human-readable type labels of the tools prompt (``array of integer``).

Only local references (``#/$defs/...``) are followed: a tool's schema is self-contained, and
nothing is ever fetched.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

import jsonschema

from ..._jsonvalue import json_type
from ...errors import ToolUseError

__all__ = [
    "ConversionProblem",
    "ValueReader",
    "convert_value",
    "render_value",
    "resolve",
    "schema_types",
    "type_label",
]

# BFCL and other real-world tool sets spell a few JSON Schema types the Python way.
_TYPE_ALIASES = {"dict": "object", "float": "number", "tuple": "array", "list": "array",
                 "int": "integer", "bool": "boolean", "str": "string", "any": ""}
_JSON_TYPES = ("null", "boolean", "integer", "number", "string", "array", "object")
# Order in which a text value is tried against the allowed types. ``string`` comes last: it
# accepts anything, so it only wins when no stricter allowed type reads the text.
_TRY_ORDER = ("null", "boolean", "integer", "number", "array", "object")
_INT = re.compile(r"[-+]?\d+")
_NUMBER = re.compile(r"-?(?:\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?")
_MAX_REF_DEPTH = 32


class ConversionProblem(ToolUseError, ValueError):
    """A parameter's text cannot be read as any type its schema allows."""


def resolve(schema: Any, root: Mapping[str, Any] | None, depth: int = 0) -> Any:
    """Follow a local ``$ref`` (``#/$defs/Name``) against ``root``; anything else unchanged."""
    while (
        isinstance(schema, Mapping)
        and isinstance(schema.get("$ref"), str)
        and root is not None
        and depth < _MAX_REF_DEPTH
    ):
        ref: str = schema["$ref"]
        if not ref.startswith("#"):
            return schema
        target: Any = root
        for part in ref[1:].split("/"):
            if not part:
                continue
            part = part.replace("~1", "/").replace("~0", "~")
            if isinstance(target, Mapping) and part in target:
                target = target[part]
            else:
                return schema
        schema = target
        depth += 1
    return schema


def _json_type_of(value: Any) -> str:
    return json_type(value)

def schema_types(schema: Any, root: Mapping[str, Any] | None = None, _depth: int = 0) -> set[str]:
    """The JSON types a schema allows; the empty set means "anything" (no constraint found)."""
    schema = resolve(schema, root)
    if not isinstance(schema, Mapping) or _depth > _MAX_REF_DEPTH:
        return set()
    types: set[str] = set()
    declared = schema.get("type")
    declared_list = [declared] if isinstance(declared, str) else declared
    for t in declared_list if isinstance(declared_list, list) else []:
        if isinstance(t, str):
            t = _TYPE_ALIASES.get(t, t)
            if t in _JSON_TYPES:
                types.add(t)
            elif t == "":
                return set()
    if not types:
        if "enum" in schema and isinstance(schema["enum"], list):
            types.update(_json_type_of(v) for v in schema["enum"])
        elif "const" in schema:
            types.add(_json_type_of(schema["const"]))
        elif "properties" in schema:
            types.add("object")
        elif "items" in schema or "prefixItems" in schema:
            types.add("array")
    if not types:
        for key in ("anyOf", "oneOf"):
            branches = schema.get(key)
            if isinstance(branches, list) and branches:
                sub = [schema_types(b, root, _depth + 1) for b in branches]
                if any(not s for s in sub):
                    return set()
                for s in sub:
                    types |= s
        all_of = schema.get("allOf")
        for branch in all_of if isinstance(all_of, list) else []:
            types |= schema_types(branch, root, _depth + 1)
    if "integer" in types and "number" in types:
        types.discard("integer")  # every integer is a number; keep the wider reading
        types.add("number")
    return types


def type_label(schema: Any, root: Mapping[str, Any] | None = None, _depth: int = 0) -> str:
    """A short human label for the tools prompt: ``string``, ``array of integer``, ``object``,
    ``string or null``; ``any`` when the schema says nothing."""
    schema = resolve(schema, root)
    if not isinstance(schema, Mapping) or _depth > 8:
        return "any"
    for key in ("anyOf", "oneOf"):
        branches = schema.get(key)
        if isinstance(branches, list) and branches and "type" not in schema:
            branch_labels = [type_label(b, root, _depth + 1) for b in branches]
            return " or ".join(dict.fromkeys(branch_labels))
    types = schema_types(schema, root)
    if not types:
        return "any"
    labels: list[str] = []
    for t in _JSON_TYPES:
        if t not in types:
            continue
        if t == "array":
            items = schema.get("items")
            if isinstance(items, Mapping) and items:
                labels.append("array of " + type_label(items, root, _depth + 1))
                continue
        labels.append(t)
    return " or ".join(labels)


def render_value(value: Any) -> str:
    """A parameter value as the model writes it: strings as is, everything else as JSON.

    Raises ``ValueError`` for what JSON cannot hold (NaN, infinity, non-JSON objects).
    """
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _parse_json(text: str) -> Any:
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except RecursionError as exc:  # absurdly deep nesting: a problem, not a crash
        raise ValueError("JSON nested too deeply") from exc


def _try_type(t: str, text: str) -> tuple[bool, Any]:
    """Read stripped ``text`` as JSON type ``t``; ``(False, None)`` if it does not fit."""
    if t == "null":
        return (True, None) if text.lower() in ("null", "none") else (False, None)
    if t == "boolean":
        low = text.lower()
        if low in ("true", "false"):
            return True, low == "true"
        return False, None
    if t == "integer":
        if _INT.fullmatch(text):
            try:
                return True, int(text)
            except ValueError:  # more digits than Python converts by default
                return False, None
        if _NUMBER.fullmatch(text):
            number = float(text)
            if math.isfinite(number) and number.is_integer():
                return True, int(number)
        return False, None
    if t == "number":
        if _INT.fullmatch(text) and not text.startswith("+"):
            try:
                return True, int(text)
            except ValueError:
                return False, None
        if _NUMBER.fullmatch(text):
            number = float(text)
            if math.isfinite(number):
                return True, number
        return False, None
    if t in ("array", "object"):
        if not text.startswith("[" if t == "array" else "{"):
            return False, None
        try:
            value = _parse_json(text)
        except ValueError:
            return False, None
        return (True, value) if isinstance(value, list if t == "array" else dict) else (False, None)
    return False, None


class ValueReader:
    """Reads one parameter's text as its schema's type; built once per parameter and reused
    (the parser keeps one per tool parameter, so a schema is analysed once, not per call).

    - ``enum``/``const``: the allowed value whose rendering equals the text, or else the
      stripped text (so ``enum: [1, 2]`` reads ``2`` as the integer 2, a string enum keeps the
      string, and `` celsius`` reads as ``celsius``).
    - Typed schema: the first of null, boolean, integer, number, array, object that reads the
      stripped text; then ``string``, which keeps the text exactly as written.
    - Untyped schema (``{}``, ``any``): JSON if the stripped text is valid JSON, else the text.
    - ``"default": null`` on a typed schema also reads ``null`` as ``None``.
    """

    __slots__ = ("_null_default", "_root", "_schema", "_validator", "allowed", "order", "types")

    def __init__(self, schema: Any, root: Mapping[str, Any] | None = None) -> None:
        schema = resolve(schema, root)
        self._schema = schema
        self._root = root
        self._validator: Any = None
        self.allowed: list[tuple[str, Any]] = []
        if isinstance(schema, Mapping):
            values: list[Any] = []
            if isinstance(schema.get("enum"), list):
                values = list(schema["enum"])
            elif "const" in schema:
                values = [schema["const"]]
            for candidate in values:
                try:
                    self.allowed.append((render_value(candidate), candidate))
                except (TypeError, ValueError):
                    continue
        self.types = schema_types(schema, root)
        self.order = [t for t in _TRY_ORDER if t in self.types]
        if (
            self.types
            and "null" not in self.types
            and isinstance(schema, Mapping)
            and "default" in schema
            and schema["default"] is None
        ):
            # "default": null says the author's function takes None here (Python's
            # ``x: str = None``): a written ``null`` means that, not the four-letter string.
            self.order.insert(0, "null")
        self._null_default = bool(self.order) and self.order[0] == "null" \
            and "null" not in self.types

    def read(self, text: str) -> Any:
        """The value; raises :class:`ConversionProblem` saying what was expected.

        When the text has several readings (``0`` under ``anyOf: [string, enum: [1, "0"]]``
        is the integer 0 or the string "0"), the first one the schema accepts wins, so a
        value the grammar allowed is never read back as one the schema refuses."""
        stripped = text.strip()
        for rendered, candidate in self.allowed:
            if rendered == text:
                return candidate
        # A model's stray spaces around an allowed value (" celsius") do not make it another
        # value: the exact match above comes first, so an enum member with spaces still wins.
        for rendered, candidate in self.allowed:
            if rendered == stripped:
                return candidate
        readings: list[Any] = []
        if not self.types:
            try:
                readings.append(_parse_json(stripped))
            except ValueError:
                pass
            readings.append(text)
        else:
            for t in self.order:
                ok, value = _try_type(t, stripped)
                if ok:
                    readings.append(value)
            if "string" in self.types:
                readings.append(text)
        if len(readings) > 1 and not (self._null_default and readings[0] is None):
            return self._accepted(readings)
        if readings:
            return readings[0]
        expected = " or ".join(t for t in _JSON_TYPES if t in self.types)
        shown = stripped if len(stripped) <= 80 else stripped[:77] + "..."
        hint = " (lists and objects are written as JSON)" if self.types & {"array", "object"} \
            else ""
        raise ConversionProblem(f"expected {expected}{hint}, got {shown!r}")


    def _accepted(self, readings: list[Any]) -> Any:
        """The first reading the schema accepts (the first one if none is, or if the schema
        cannot be checked: validation then reports it with its own words)."""
        if self._validator is None:
            try:
                base = jsonschema.Draft202012Validator(
                    dict(self._root) if isinstance(self._root, Mapping) else {})
                self._validator = base.evolve(schema=self._schema)
            except Exception:  # noqa: BLE001 - an unusable schema: keep the first reading
                self._validator = False
        if self._validator is False:
            return readings[0]
        for value in readings:
            try:
                if self._validator.is_valid(value):
                    return value
            except Exception:  # noqa: BLE001, S112 - unknown types, self-referencing schemas
                continue  # not known to be accepted
        return readings[0]


def convert_value(text: str, schema: Any, root: Mapping[str, Any] | None = None) -> Any:
    """Read a parameter's text (already unescaped) as the type its schema allows (see
    :class:`ValueReader`). Raises :class:`ConversionProblem`."""
    return ValueReader(schema, root).read(text)
