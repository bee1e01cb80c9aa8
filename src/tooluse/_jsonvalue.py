"""The JSON Schema type name of a Python value, shared by validation messages, the legacy
parser's value conversion and the BFCL checker (one definition, so they never disagree on
what a ``bool`` is: JSON Schema's ``boolean``, not an ``integer``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["json_type"]


def json_type(value: Any) -> str:
    """``None`` -> ``"null"``, ``True`` -> ``"boolean"``, ``3`` -> ``"integer"``, ``2.5`` ->
    ``"number"``, ``"x"`` -> ``"string"``, lists and tuples -> ``"array"``, mappings ->
    ``"object"``; anything else -> its Python type name."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return type(value).__name__
