"""The system prompt that describes tools to a model that only reads and writes text.

The frame is the documented legacy format's (``docs/legacy.md``): how to call, then
``<tools>`` with one ``<tool_description>`` per tool. Two additions come from the later form
of this prompt that the Messages API builds: the value rule (strings as is, lists and
objects as JSON, spaces kept) and, with ``style="json"``, tools given as JSON Schema instead
of XML.

The documented ``<parameter>`` holds only ``<name>``, ``<type>`` and ``<description>``. What a
model also needs (required or optional, the allowed values, a default, the shape of a nested
object or array) goes into the description text and, for nested shapes, as the parameter's
JSON Schema: models read both, and a grammar or the parser never depends on it. A tool's
example inputs (``ToolSpec.input_examples``, Messages ``input_examples``) follow its
parameters as ``<examples>``, each written as the ``<invoke>`` the model would write (with
``style="json"``: an ``input_examples`` list beside the schema).

Placement of the caller's own system prompt: *after* the tools section, separated by a blank
line. That is the order the Messages API uses for its tool prompt, and it leaves the
caller's instructions last, closest to the conversation, where they weigh most.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal, Protocol

from ...messages import ToolUseBlock
from ._text import escape
from .render import render_invoke
from .schema import resolve, schema_types, type_label

__all__ = [
    "DEMONSTRATIONS",
    "TOOLS_PREAMBLE",
    "TOOL_STYLES",
    "VALUE_RULES",
    "ToolStyle",
    "render_tool_description",
    "render_tools_prompt",
]

#: How the tools are described: XML ``<tool_description>`` blocks (the documented form),
#: JSON Schema, or Python function signatures with a docstring.
ToolStyle = Literal["xml", "json", "python"]
TOOL_STYLES: tuple[ToolStyle, ...] = ("xml", "json", "python")


class _ToolLike(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def input_schema(self) -> Mapping[str, Any]: ...


TOOLS_PREAMBLE = """\
In this environment you have access to a set of tools you can use to answer the user's question.

You may call them like this:
<function_calls>
<invoke>
<tool_name>$TOOL_NAME</tool_name>
<parameters>
<$PARAMETER_NAME>$PARAMETER_VALUE</$PARAMETER_NAME>
...
</parameters>
</invoke>
</function_calls>"""

VALUE_RULES = """\
Write string and scalar parameter values as they are, and lists and objects as JSON. \
Spaces in string values are kept exactly as written. \
The characters <, > and & inside a value may be written as &lt;, &gt; and &amp;. \
Call results come back inside <function_results>."""

_INLINE_BUDGET = 200
_SINGLE_CALL = "Call at most one tool at a time: put a single <invoke> in <function_calls>."


def _compact_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "), sort_keys=False)


def _is_nested(schema: Any, root: Mapping[str, Any]) -> bool:
    """Does the parameter have inner structure a one-word type label cannot show?"""
    schema = resolve(schema, root)
    if not isinstance(schema, Mapping):
        return False
    types = schema_types(schema, root)
    if "object" in types:
        return True
    if "array" in types:
        items = resolve(schema.get("items"), root)
        return isinstance(items, Mapping) and bool(
            schema_types(items, root) & {"object", "array"}
            or "enum" in items
            or "anyOf" in items
            or "oneOf" in items
        )
    return any(k in schema for k in ("anyOf", "oneOf", "allOf")) and bool(
        types & {"object", "array"}
    )


def _inline_refs(schema: Any, root: Mapping[str, Any]) -> Any:
    """The schema with local ``$ref`` replaced by their targets, for the model to read.

    A recursive reference (a tree of ``Node``) is left as ``{"$ref": ...}`` where it recurs,
    and the whole expansion is capped at :data:`_INLINE_BUDGET` nodes, so a schema whose
    references fan out cannot blow the prompt up.
    """
    budget = [_INLINE_BUDGET]

    def walk(node: Any, active: frozenset[str]) -> Any:
        budget[0] -= 1
        if budget[0] < 0:
            return node
        if isinstance(node, Mapping):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref not in active:
                target = resolve(node, root)
                if target is not node:
                    return walk(target, active | {ref})
            return {k: walk(v, active) for k, v in node.items() if k != "$defs"}
        if isinstance(node, list):
            return [walk(v, active) for v in node]
        return node

    return walk(schema, frozenset())


def _parameter_notes(
    prop: Mapping[str, Any], required: bool, root: Mapping[str, Any], raw_prop: Any = None
) -> list[str]:
    notes = ["Required." if required else "Optional."]
    enum = prop.get("enum")
    if isinstance(enum, list) and enum:
        notes.append("One of: " + ", ".join(_compact_json(v) for v in enum) + ".")
    elif "const" in prop:
        notes.append(f"Must be {_compact_json(prop['const'])}.")
    if "default" in prop:
        notes.append(f"Default: {_compact_json(prop['default'])}.")
    for key, label in (("minimum", "Minimum"), ("maximum", "Maximum"), ("format", "Format"),
                       ("pattern", "Pattern")):
        if key in prop:
            notes.append(f"{label}: {prop[key]}.")
    types = schema_types(prop, root)
    if types & {"array", "object"}:
        notes.append("Write it as JSON.")
    if _is_nested(prop, root):
        shown = raw_prop if isinstance(raw_prop, Mapping) else prop  # keeps its $ref name
        notes.append("JSON Schema: " + _compact_json(_inline_refs(shown, root)))
    return notes


def render_tool_description(tool: _ToolLike) -> str:
    """One ``<tool_description>`` in the documented shape, with the extras described above."""
    schema: Mapping[str, Any] = tool.input_schema or {}
    properties = schema.get("properties")
    props: Mapping[str, Any] = properties if isinstance(properties, Mapping) else {}
    required_list = schema.get("required")
    required = (
        {r for r in required_list if isinstance(r, str)} if isinstance(required_list, list)
        else set()
    )
    lines = [
        "<tool_description>",
        f"<tool_name>{escape(tool.name)}</tool_name>",
        f"<description>{escape(tool.description or '')}</description>",
        "<parameters>",
    ]
    for name, raw_prop in props.items():
        prop = resolve(raw_prop, schema)
        prop = prop if isinstance(prop, Mapping) else {}
        described = prop.get("description") or (
            raw_prop.get("description") if isinstance(raw_prop, Mapping) else None
        )
        description = str(described or "")
        notes = _parameter_notes(prop, name in required, schema, raw_prop)
        text = " ".join([description.strip(), *notes]).strip() if description else " ".join(notes)
        lines.extend(
            [
                "<parameter>",
                f"<name>{escape(str(name))}</name>",
                f"<type>{escape(type_label(prop, schema))}</type>",
                f"<description>{escape(text)}</description>",
                "</parameter>",
            ]
        )
    lines.append("</parameters>")
    lines.extend(_examples(tool))
    lines.append("</tool_description>")
    return "\n".join(lines)


def _examples(tool: _ToolLike) -> list[str]:
    """The tool's example inputs (``input_examples``), each written as the call the model
    would write: ``<examples>`` of ``<example>`` blocks."""
    examples = getattr(tool, "input_examples", None) or []
    if not examples:
        return []
    lines = ["<examples>"]
    for example in examples:
        call = ToolUseBlock(id="example", name=tool.name, input=dict(example))
        lines.extend(["<example>", render_invoke(call), "</example>"])
    lines.append("</examples>")
    return lines


_PYTHON_TYPES = {"string": "str", "integer": "int", "number": "float", "boolean": "bool",
                 "array": "list", "object": "dict", "null": "None"}


def _python_type(prop: Mapping[str, Any], root: Mapping[str, Any]) -> str:
    """A parameter's type as a Python annotation (``str``, ``list[int]``, ``str | None``)."""
    enum = prop.get("enum")
    if isinstance(enum, list) and enum:
        return "Literal[" + ", ".join(_compact_json(v) for v in enum) + "]"
    labels = []
    for t in schema_types(prop, root) or {"any"}:
        label = _PYTHON_TYPES.get(t, "Any")
        items = resolve(prop.get("items"), root) if t == "array" else None
        if isinstance(items, Mapping) and items:
            label = f"list[{_python_type(items, root)}]"
        labels.append(label)
    return " | ".join(sorted(labels, key=lambda label: label == "None"))


def _render_tool_python(tool: _ToolLike) -> str:
    """The tool as a Python function: its signature (required parameters first, the others
    with their default or ``None``) and a docstring with the description and one line per
    parameter (its description and the notes the XML form gives), in ``<tool_description>``."""
    schema: Mapping[str, Any] = tool.input_schema or {}
    properties = schema.get("properties")
    props: Mapping[str, Any] = properties if isinstance(properties, Mapping) else {}
    required_list = schema.get("required")
    required = {r for r in required_list if isinstance(r, str)} \
        if isinstance(required_list, list) else set()
    params: list[tuple[bool, str]] = []
    notes: list[str] = []
    for name, raw_prop in props.items():
        prop = resolve(raw_prop, schema)
        prop = prop if isinstance(prop, Mapping) else {}
        annotation = f"{name}: {_python_type(prop, schema)}"
        if name not in required:
            annotation += " = " + (_compact_json(prop["default"]) if "default" in prop
                                   else "None")
        params.append((name not in required, annotation))
        described = str(prop.get("description") or "").strip()
        note = " ".join([described, *_parameter_notes(prop, name in required, schema,
                                                      raw_prop)]).strip()
        notes.append(f"        {name}: {note}")
    signature = ", ".join(a for _, a in sorted(params, key=lambda p: p[0]))
    doc = (tool.description or "").strip().replace('"""', "'''")
    lines = [f"def {tool.name}({signature}):", f'    """{doc}']
    if notes:
        lines.extend(["", "    Args:", *notes])
    lines.append('    """')
    return "<tool_description>\n" + escape("\n".join(lines)) + "\n</tool_description>"


#: Demonstrations of the call format, with made-up tools that no request offers: a request
#: and the call block that answers it (one call; two calls in one block).
DEMONSTRATIONS: tuple[tuple[str, str, list[ToolUseBlock]], ...] = (
    ("convert_currency(amount: float, source: str, target: str)",
     "How many Japanese yen are 250 euros?",
     [ToolUseBlock(id="demo", name="convert_currency",
                   input={"amount": 250, "source": "EUR", "target": "JPY"})]),
    ("find_recipe(dish: str, servings: int = None)",
     "Find me a recipe for lasagna for 4 people, and one for pancakes.",
     [ToolUseBlock(id="demo", name="find_recipe", input={"dish": "lasagna", "servings": 4}),
      ToolUseBlock(id="demo", name="find_recipe", input={"dish": "pancakes"})]),
)


def _demonstrations(count: int) -> str:
    """The first ``count`` of :data:`DEMONSTRATIONS`, as text for the system prompt."""
    parts = ["For example (these tools are made up; use only the tools listed below):"]
    for signature, question, calls in DEMONSTRATIONS[:count]:
        block = "\n".join(render_invoke(c) for c in calls)
        parts.append(f"With a tool {signature}, the request \"{question}\" is answered "
                     f"with:\n<function_calls>\n{block}\n</function_calls>")
    return "\n\n".join(parts)


def _render_tool_json(tool: _ToolLike) -> str:
    document: dict[str, Any] = {
        "name": tool.name,
        "description": tool.description or "",
        "input_schema": dict(tool.input_schema or {"type": "object"}),
    }
    examples = getattr(tool, "input_examples", None)
    if examples:
        document["input_examples"] = [dict(e) for e in examples]
    return f"<tool>{escape(_compact_json(document))}</tool>"


def render_tools_prompt(
    tools: Sequence[_ToolLike],
    system: str | None = None,
    *,
    style: ToolStyle = "xml",
    parallel: bool = True,
    demonstrations: int = 0,
) -> str:
    """The system prompt that teaches a text model the tools and how to call them.

    ``system`` (the caller's own system prompt) comes after the tools section.
    ``style="json"`` describes each tool by its JSON Schema instead of XML parameters,
    ``style="python"`` as a Python function signature with a docstring.
    ``parallel=False`` asks for one call at a time (``disable_parallel_tool_use``).
    ``demonstrations`` (0 to 2): that many examples of a request and its call block, with
    made-up tools (:data:`DEMONSTRATIONS`), after the format's description.
    """
    if style not in TOOL_STYLES:
        raise ValueError(f"style must be one of {', '.join(TOOL_STYLES)}, not {style!r}")
    if not 0 <= demonstrations <= len(DEMONSTRATIONS):
        raise ValueError(f"demonstrations must be 0 to {len(DEMONSTRATIONS)}, "
                         f"not {demonstrations}")
    parts = [TOOLS_PREAMBLE, VALUE_RULES]
    if not parallel:
        parts.append(_SINGLE_CALL)
    if demonstrations:
        parts.append(_demonstrations(demonstrations))
    if style == "xml":
        body = "\n".join(render_tool_description(t) for t in tools)
        parts.append(f"Here are the tools available:\n<tools>\n{body}\n</tools>")
    elif style == "python":
        body = "\n".join(_render_tool_python(t) for t in tools)
        parts.append("Here are the tools available, each as a Python function (call it with "
                     f"the format above):\n<tools>\n{body}\n</tools>")
    else:
        body = "\n".join(_render_tool_json(t) for t in tools)
        parts.append(
            "Here are the tools available, each as JSON with its name, description and the "
            f"JSON Schema of its parameters (input_schema):\n<tools>\n{body}\n</tools>"
        )
    if system:
        parts.append(system)
    return "\n\n".join(parts)
