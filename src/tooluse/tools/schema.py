"""Checking, normalising and tidying tool input schemas.

Three separate jobs, kept apart on purpose:

* :func:`check_schema` enforces what the Messages API enforces (a valid draft 2020-12
  schema whose top level is ``type: object`` without ``oneOf``/``allOf``/``anyOf``), once,
  when the tool is made, so a bad schema fails at definition time and not at the first call.
* :func:`normalize_schema` is an *explicit* translation of the loose dialect found in real
  catalogues such as BFCL (``"type": "dict"``, ``"float"``, ``"tuple"``, ``"any"``...) into
  JSON Schema. It is opt-in: a schema is never made valid by switching validation off.
* :func:`tidy_schema` removes what pydantic adds for its own purposes (``title`` on every
  field, ``$defs`` + ``$ref`` indirection) so that the model sees a short, inline schema.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from ..errors import ToolDefinitionError

__all__ = ["BFCL_TYPE_ALIASES", "LARK_KEY", "check_schema", "normalize_schema", "public_schema",
           "tidy_schema"]

#: The schema key of a string's Lark grammar: tooluse's own (a Responses ``custom`` tool's
#: ``lark`` format becomes it), read by the grammar engine of text backends
#: (:mod:`tooluse.grammar.lark`) and left out of what goes to an API
#: (:func:`public_schema`).
LARK_KEY = "x-lark"


def public_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` as an API is sent it: without tooluse's own keys (:data:`LARK_KEY`), which a
    vendor's schema checker would refuse or ignore (the grammar is stated in the tool's
    description too). ``schema`` itself when it has none (no copy on the common path)."""
    if not _has_lark(schema):
        return schema
    out: dict[str, Any] = _without_lark(schema)
    return out


def _has_lark(node: Any) -> bool:
    if isinstance(node, dict):
        return LARK_KEY in node or any(_has_lark(v) for v in node.values())
    if isinstance(node, list):
        return any(_has_lark(v) for v in node)
    return False


def _without_lark(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _without_lark(v) for k, v in node.items() if k != LARK_KEY}
    if isinstance(node, list):
        return [_without_lark(v) for v in node]
    return node

#: Non-JSON-Schema type names seen in BFCL and similar catalogues (Python's spelling) and the
#: JSON Schema type each one means. ``"any"`` is handled apart: it means "no type constraint".
BFCL_TYPE_ALIASES: dict[str, str] = {
    "dict": "object",
    "float": "number",
    "double": "number",
    "tuple": "array",
    "list": "array",
    "str": "string",
    "int": "integer",
    "long": "integer",
    "bool": "boolean",
    "NoneType": "null",
    "none": "null",
}

_JSON_TYPES = {"object", "array", "string", "number", "integer", "boolean", "null"}

# Keywords whose value is one schema, a list of schemas, or a name -> schema map.
_ONE_SCHEMA = (
    "items",
    "additionalProperties",
    "unevaluatedProperties",
    "unevaluatedItems",
    "contains",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
    "additionalItems",
)
_SCHEMA_LISTS = ("prefixItems", "allOf", "anyOf", "oneOf")
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")

_TRUTHY = {"true", "yes", "1", "y"}


def check_schema(schema: Any, *, tool: str | None = None) -> dict[str, Any]:
    """Return ``schema`` if a tool may use it as its input schema, else raise
    :class:`ToolDefinitionError` naming ``tool`` and saying what is wrong."""
    if not isinstance(schema, Mapping):
        raise ToolDefinitionError(
            f"the input schema must be a JSON object, got {type(schema).__name__}", tool=tool
        )
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        where = "/".join(str(p) for p in exc.path)
        at = f" at '{where}'" if where else ""
        raise ToolDefinitionError(
            f"the input schema is not valid JSON Schema (draft 2020-12){at}: {exc.message}"
            + (" (BFCL-style types need normalize=True)" if _looks_bfcl(schema) else ""),
            tool=tool,
        ) from None
    if schema.get("type") != "object":
        got = schema.get("type", "no type")
        raise ToolDefinitionError(
            f"the input schema's top level must be {{'type': 'object'}}, got {got!r}"
            + (" (BFCL-style types need normalize=True)" if got == "dict" else ""),
            tool=tool,
        )
    combinators = [k for k in ("oneOf", "allOf", "anyOf") if k in schema]
    if combinators:
        raise ToolDefinitionError(
            "the input schema may not use " + "/".join(combinators) + " at the top level "
            "(the Messages API rejects it); move the alternatives into a property",
            tool=tool,
        )
    return dict(schema)


def _looks_bfcl(schema: Any) -> bool:
    """Whether a schema uses a type name from :data:`BFCL_TYPE_ALIASES` or ``"any"``."""
    found = False

    def visit(node: Any) -> None:
        nonlocal found
        if isinstance(node, dict):
            t = node.get("type")
            names = t if isinstance(t, list) else [t]
            if any(isinstance(n, str) and (n in BFCL_TYPE_ALIASES or n == "any") for n in names):
                found = True
            for value in node.values():
                visit(value)
        elif isinstance(node, list):
            for value in node:
                visit(value)

    visit(schema)
    return found


def normalize_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Translate a BFCL-style schema into JSON Schema draft 2020-12 (a new dict; the input
    is not modified). The rules, each applied at every depth:

    * a type alias from :data:`BFCL_TYPE_ALIASES` becomes its JSON Schema type
      (``dict`` -> ``object``, ``float`` -> ``number``, ``tuple`` -> ``array``...);
    * ``"type": "any"`` is dropped (any JSON value is accepted there);
    * ``"optional": true`` (also ``"true"``/``"yes"``, as BFCL writes it) removes the property
      from its parent's ``required``, because that is what its author said, and the
      non-standard keyword itself is dropped;
    * an ``enum`` of scalars on an ``array`` schema is moved into ``items``: an array can never
      equal a string, so the only satisfiable reading is "each item is one of these"
      (BFCL's ``metrics`` parameters are written this way);
    * a scalar ``type`` (``integer``, ``number``, ``boolean``, ``string``, ``null``) beside
      an ``enum`` holding a member of another type is dropped, and the enum alone says what
      is accepted: no value could satisfy both (``"type": "integer", "enum": ["1", "2"]``,
      ``"type": "boolean", "enum": ["True", "False", "dontcare"]`` in BFCL's live
      categories, whose answers hold the enum's strings), and the enum is what its author
      listed;
    * a ``required`` that is not a list of strings is dropped rather than rejected, and so
      is a ``properties`` that is not an object.

    Anything else is kept as is, so the result can still be rejected by :func:`check_schema`
    when it is wrong in a way no rule explains.
    """
    result: dict[str, Any] = _normalize(copy.deepcopy(dict(schema)))
    return result


def _normalize(node: Any) -> Any:
    if isinstance(node, list):
        return [_normalize(item) for item in node]
    if not isinstance(node, dict):
        return node
    t = node.get("type")
    if isinstance(t, str):
        if t == "any":
            del node["type"]
        elif t in BFCL_TYPE_ALIASES:
            node["type"] = BFCL_TYPE_ALIASES[t]
    elif isinstance(t, list):
        mapped = [BFCL_TYPE_ALIASES.get(x, x) if isinstance(x, str) else x for x in t]
        if "any" in mapped:
            del node["type"]
        else:
            node["type"] = list(dict.fromkeys(mapped))
    if "properties" in node and not isinstance(node["properties"], dict):
        del node["properties"]
    if "required" in node and not (
        isinstance(node["required"], list) and all(isinstance(r, str) for r in node["required"])
    ):
        del node["required"]
    for key in _ONE_SCHEMA:
        if key in node:
            node[key] = _normalize(node[key])
    for key in _SCHEMA_LISTS:
        if isinstance(node.get(key), list):
            node[key] = [_normalize(s) for s in node[key]]
    for key in _SCHEMA_MAPS:
        if isinstance(node.get(key), dict):
            node[key] = {name: _normalize(s) for name, s in node[key].items()}
    props = node.get("properties")
    if isinstance(props, dict):
        optional = [name for name, s in props.items() if isinstance(s, dict) and _is_optional(s)]
        for s in props.values():
            if isinstance(s, dict):
                s.pop("optional", None)
        if optional and isinstance(node.get("required"), list):
            node["required"] = [r for r in node["required"] if r not in optional]
    if (
        node.get("type") == "array"
        and isinstance(node.get("enum"), list)
        and all(not isinstance(v, (list, dict)) for v in node["enum"])
    ):
        items = node.get("items")
        items = dict(items) if isinstance(items, dict) else {}
        items.setdefault("enum", node.pop("enum"))
        node["items"] = items
    enum = node.get("enum")
    kind = node.get("type")
    if kind in _SCALAR_TYPES and isinstance(enum, list):
        accepts = Draft202012Validator({"type": kind}).is_valid
        if not all(accepts(value) for value in enum):
            del node["type"]
    return node


_SCALAR_TYPES = ("integer", "number", "boolean", "string", "null")


def _is_optional(schema: dict[str, Any]) -> bool:
    flag = schema.get("optional")
    if isinstance(flag, bool):
        return flag
    return isinstance(flag, str) and flag.strip().lower() in _TRUTHY


def tidy_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Make a pydantic-generated schema short and self-contained.

    Drops the ``title`` keyword pydantic puts on every model and field (the name is already
    the property key; titles only cost tokens), inlines ``$ref``s into ``$defs`` when the
    definitions are not recursive (some clients and small models cannot follow refs), and
    turns ``anyOf: [{type: X}, {type: "null"}]`` into ``type: [X, "null"]``. Recursive
    definitions are kept as valid ``$defs`` with refs.
    """
    result: dict[str, Any] = copy.deepcopy(dict(schema))
    defs = result.pop("$defs", None)
    if isinstance(defs, dict) and defs:
        if _recursive(defs):
            kept: dict[str, Any] = _strip(result)
            kept["$defs"] = {k: _strip(v) for k, v in defs.items()}
            return kept
        result = _inline(result, defs)
    stripped: dict[str, Any] = _strip(result)
    return stripped


def _ref_name(ref: Any) -> str | None:
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return ref[len("#/$defs/"):]
    return None


def _refs(node: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(node, dict):
        name = _ref_name(node.get("$ref"))
        if name:
            found.add(name)
        for value in node.values():
            found |= _refs(value)
    elif isinstance(node, list):
        for value in node:
            found |= _refs(value)
    return found


def _recursive(defs: dict[str, Any]) -> bool:
    graph = {name: _refs(body) for name, body in defs.items()}

    def reaches(start: str, target: str, seen: set[str]) -> bool:
        for nxt in graph.get(start, ()):
            if nxt == target:
                return True
            if nxt not in seen:
                seen.add(nxt)
                if reaches(nxt, target, seen):
                    return True
        return False

    return any(reaches(name, name, set()) for name in graph)


def _inline(node: Any, defs: dict[str, Any]) -> Any:
    if isinstance(node, list):
        return [_inline(v, defs) for v in node]
    if not isinstance(node, dict):
        return node
    name = _ref_name(node.get("$ref"))
    if name is not None and name in defs:
        target = _inline(copy.deepcopy(defs[name]), defs)
        siblings = {k: _inline(v, defs) for k, v in node.items() if k != "$ref"}
        merged = dict(target)
        merged.update(siblings)  # a field's own description wins over the model's
        return merged
    return {k: _inline(v, defs) for k, v in node.items()}


def _strip(node: Any) -> Any:
    """Drop ``title`` keywords and fold nullable anyOfs, descending only into subschemas
    (so a property *named* "title", or a default value holding one, is left alone)."""
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title" and isinstance(value, str):
            continue
        if key in _ONE_SCHEMA:
            out[key] = _strip(value)
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            out[key] = [_strip(v) for v in value]
        elif key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: _strip(v) for name, v in value.items()}
        else:
            out[key] = value
    members = out.get("anyOf")
    if (
        isinstance(members, list)
        and len(members) >= 2
        and "type" not in out
        and all(
            isinstance(m, dict) and set(m) == {"type"} and m["type"] in _JSON_TYPES
            for m in members
        )
    ):
        out["type"] = [m["type"] for m in members]
        del out["anyOf"]
    return _reorder(out)


_FIRST_KEYS = ("type", "description", "enum", "properties", "items", "required")


def _reorder(schema: dict[str, Any]) -> dict[str, Any]:
    """Put ``type`` and ``description`` first (pydantic sorts keys alphabetically): the
    schema is read by a model, and a reader wants to know what a thing is before its
    details. Key order carries no meaning in JSON Schema."""
    ordered = {k: schema[k] for k in _FIRST_KEYS if k in schema}
    ordered.update((k, v) for k, v in schema.items() if k not in ordered)
    return ordered
