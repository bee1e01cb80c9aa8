"""The parts of a tool's input schema that the call edits read."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["properties", "required"]


def properties(schema: Any) -> Mapping[str, Any] | None:
    """The ``properties`` of an object schema, or ``None`` where ``schema`` is no mapping or
    holds no mapping there (a tool declared without them, or a malformed one: the edits
    then leave its calls as they are)."""
    props = schema.get("properties") if isinstance(schema, Mapping) else None
    return props if isinstance(props, Mapping) else None


def required(schema: Any) -> set[str]:
    """The names an object schema lists as ``required`` (none where ``schema`` is no
    mapping or ``required`` is no list; only strings, as parameter names are: a malformed
    entry names no parameter, and may not be hashable)."""
    listed = schema.get("required") if isinstance(schema, Mapping) else None
    return {name for name in listed if isinstance(name, str)} if isinstance(listed, list) \
        else set()
