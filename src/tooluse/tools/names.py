"""The tool-name rule and the deterministic mapping of names that break it.

The Messages and Converse APIs accept tool names matching ``^[a-zA-Z0-9_-]{1,64}$`` only.
Real tool sets break the rule (``math.factorial``, generated 80-character names), so a user
can either get a clear error or opt in to a mapping. The mapping must be *deterministic*
(the same tool set always gets the same wire names, so a conversation saved yesterday still
refers to the right tools) and *reversible* through the :class:`~tooluse.tools.ToolSet` that
made it; that is why long names get a hash of the original rather than a counter.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence

from ..errors import ToolDefinitionError

__all__ = [
    "MAX_NAME_LENGTH",
    "NAME_PATTERN",
    "check_name",
    "is_valid_name",
    "map_name",
    "map_names",
]

MAX_NAME_LENGTH = 64
NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_INVALID_CHARS = re.compile(r"[^a-zA-Z0-9_-]")
_HASH_LEN = 8


def is_valid_name(name: str) -> bool:
    """Whether ``name`` may be sent as a tool name on the wire."""
    return bool(NAME_PATTERN.fullmatch(name))


def check_name(name: str) -> str:
    """Return ``name`` if it obeys the rule, else raise :class:`ToolDefinitionError` saying why.

    The message names the tool and the way out (``map_names=True``), because the usual cause
    is a tool set the user did not write (an imported catalogue, BFCL functions).
    """
    if not isinstance(name, str):
        raise ToolDefinitionError(f"a tool name must be a string, got {type(name).__name__}")
    if is_valid_name(name):
        return name
    if not name:
        reason = "the name is empty"
    elif len(name) > MAX_NAME_LENGTH:
        reason = f"the name is {len(name)} characters long (at most {MAX_NAME_LENGTH})"
    else:
        bad = sorted(set(_INVALID_CHARS.findall(name)))
        reason = "the name contains " + ", ".join(repr(c) for c in bad)
    raise ToolDefinitionError(
        ("tool '': " if not name else "") + f"invalid tool name: {reason}; names must match ^[a-zA-Z0-9_-]{{1,64}}$ "
        "(use ToolSet(..., map_names=True) or map_name=True to map it to a valid name)",
        tool=name,
    )


def _short_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:_HASH_LEN]


def map_name(name: str) -> str:
    """The valid wire name for ``name``; valid names map to themselves.

    Invalid characters become ``_`` (``math.factorial`` -> ``math_factorial``). A name still
    longer than 64 characters is cut and given ``_`` plus 8 hex digits of the SHA-256 of the
    *original* name, so two long names sharing a 64-character prefix stay distinct and the
    result does not depend on what other tools exist.
    """
    if is_valid_name(name):
        return name
    cleaned = _INVALID_CHARS.sub("_", name) or "tool"
    if len(cleaned) <= MAX_NAME_LENGTH:
        return cleaned
    suffix = "_" + _short_hash(name)
    return cleaned[: MAX_NAME_LENGTH - len(suffix)] + suffix


def _with_counter(base: str, n: int) -> str:
    suffix = f"_{n}"
    return base[: MAX_NAME_LENGTH - len(suffix)] + suffix


def map_names(names: Sequence[str]) -> list[str]:
    """Valid, unique wire names for ``names`` (same order), mapping each with :func:`map_name`.

    Names that are already valid keep themselves even when listed after an invalid name that
    maps onto them (a user who wrote ``math_factorial`` expects to find it under that name);
    the mapped name that collides gets ``_2``, ``_3``... in list order. Exact duplicates of an
    original name are an error: the mapping back would be ambiguous.
    """
    duplicates = _duplicates(names)
    if duplicates:
        raise ToolDefinitionError(
            "duplicate tool names: " + ", ".join(repr(n) for n in duplicates)
        )
    taken = {n for n in names if is_valid_name(n)}
    result: list[str] = []
    for name in names:
        if is_valid_name(name):
            result.append(name)
            continue
        candidate = map_name(name)
        n = 2
        while candidate in taken:
            candidate = _with_counter(map_name(name), n)
            n += 1
        taken.add(candidate)
        result.append(candidate)
    return result


def _duplicates(names: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    dups: list[str] = []
    for name in names:
        if name in seen and name not in dups:
            dups.append(name)
        seen.add(name)
    return dups
