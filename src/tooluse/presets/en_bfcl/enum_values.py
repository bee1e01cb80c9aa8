"""A value that names another parameter's enum member is that parameter's (``enum_values``).

A small model filling a movie search (``directed_by``, a free string; ``genre``, an enum of
"Drama", "Comedy", "Action"...) for "We really want to see a Drama" writes
``directed_by: "Drama"``: the word it found in the question goes to the first parameter
that takes a string. The schema says whose value it is: "Drama" is a member of ``genre``'s
enum, and a director is no genre. :func:`enum_values` gives such a value to the
parameter whose enum holds it and takes it out of the free one:

- only a free string parameter (no ``enum``, ``const``, ``format`` or ``pattern``) whose
  value is, up to case, a member of exactly one other parameter's enum;
- not a value the free parameter's own description writes (``directed_by``: "Use
  'dontcare' if the director is not a specific search criterion" — ``genre``'s enum holds
  "dontcare" as well);
- the enum parameter takes the member as its enum writes it, when it has no value, its
  default, or that member already; a different member stays, and so does the free value;
- the free parameter is left out when it is optional; a required one keeps its value.

The result is kept only if the call still validates (:func:`.call_edits.call_adjuster`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .choices import free_string
from .schemas import properties, required

__all__ = ["enum_values"]


def enum_values(arguments: Mapping[str, Any], schema: Any, question: str = "") -> dict[str, Any]:
    """``arguments`` with each free string value that names another parameter's enum member
    given to that parameter (see the module docstring). ``question`` is not read: the
    schema alone tells."""
    del question
    props = properties(schema)
    if props is None:
        return dict(arguments)
    needed = required(schema)
    enums = {key: [m for m in spec["enum"] if isinstance(m, str)]
             for key, spec in props.items()
             if isinstance(spec, Mapping) and isinstance(spec.get("enum"), list)}
    result = dict(arguments)
    for key, value in arguments.items():
        spec = props.get(key)
        if not isinstance(spec, Mapping) or not free_string(value, spec):
            continue
        wanted = value.strip().lower()
        description = spec.get("description")
        if isinstance(description, str) and wanted in description.lower():
            continue  # a value the parameter itself speaks of ("Use 'dontcare' if...")
        owners = [(other, member) for other, members in enums.items() if other != key
                  for member in members if member.lower() == wanted]
        if len(owners) != 1:
            continue
        other, member = owners[0]
        current = result.get(other)
        default = props[other].get("default") if isinstance(props[other], Mapping) else None
        if current is not None and current != default and str(current).lower() != wanted:
            continue  # the enum holds another of its members: which is wrong is not told
        result[other] = member
        if key not in needed:
            del result[key]
    return result
