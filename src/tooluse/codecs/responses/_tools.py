"""How Responses tools that the neutral model has no word for are carried through it.

The neutral :class:`~tooluse.messages.ToolSpec` is a name, a description and a JSON Schema.
Two Responses tool kinds are more than that, and each is mapped so that a backend sees an
ordinary tool and the codec can write its calls back in the API's own shape:

- a ``custom`` tool takes free text, not JSON: it becomes a tool whose input is one string
  property ``input`` (:func:`custom_schema`; a ``regex`` grammar becomes that property's
  ``pattern``, a ``lark`` grammar its ``x-lark``, so text backends constrain the text with
  their grammar engine: llguidance runs the Lark grammar itself); its calls
  (``custom_tool_call``) carry ``{"input": text}``.
- a ``namespace`` groups tools under a name; each member becomes a tool named
  ``<namespace>__<name>`` (:func:`joined_name`), and its calls carry the two names apart
  again (``function_call.namespace``).

Which neutral tool is which is kept in ``Request.passthrough.tool_fields`` (keys ``type``,
``format``, ``namespace``, ``name``); :class:`ToolKinds` reads it back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...messages import Request
from ...tools.schema import LARK_KEY
from ._wire import TARGET
from .shell_tools import KINDS as CLIENT_RUN

__all__ = ["CUSTOM_INPUT", "ToolKinds", "custom_schema", "joined_name"]

#: The property holding a custom tool call's text.
CUSTOM_INPUT = "input"
NAMESPACE_JOIN = "__"


def joined_name(namespace: str | None, name: str) -> str:
    """The neutral name of tool ``name`` in ``namespace``."""
    return f"{namespace}{NAMESPACE_JOIN}{name}" if namespace else name


def custom_schema(fmt: dict[str, Any] | None) -> dict[str, Any]:
    """The input schema of a custom tool with format ``fmt``."""
    prop: dict[str, Any] = {"type": "string"}
    if fmt is not None and fmt.get("type") == "grammar":
        if fmt.get("syntax") == "regex":
            prop["pattern"] = f"^(?:{fmt['definition']})$"
        else:
            prop["description"] = "text in the language of the tool's Lark grammar"
            prop[LARK_KEY] = str(fmt["definition"])
    return {"type": "object", "properties": {CUSTOM_INPUT: prop}, "required": [CUSTOM_INPUT],
            "additionalProperties": False}


def custom_description(description: str, fmt: dict[str, Any] | None) -> str:
    """The description a backend sees: a Lark grammar is stated there (the model must
    know the language it writes; a regex travels as the schema's pattern)."""
    if fmt is not None and fmt.get("type") == "grammar" and fmt.get("syntax") == "lark":
        return (f"{description}\n\n" if description else "") + (
            "The input is free text (not JSON) in this Lark grammar:\n" + str(fmt["definition"]))
    return description


@dataclass(frozen=True)
class WireTool:
    """How a neutral tool's calls are written: ``kind`` ``function`` or ``custom``, the
    wire ``name`` and its ``namespace`` (None outside one)."""

    kind: str
    name: str
    namespace: str | None = None


class ToolKinds:
    """The wire identity of each neutral tool of a request (function by default)."""

    def __init__(self, request: Request | None = None) -> None:
        self._tools: dict[str, WireTool] = {}
        passthrough = request.passthrough if request is not None else None
        if passthrough is None or passthrough.api != TARGET:
            return
        for neutral, fields in passthrough.tool_fields.items():
            kind = fields.get("type")
            self._tools[neutral] = WireTool(
                kind=kind if kind == "custom" or kind in CLIENT_RUN else "function",
                name=str(fields.get("name", neutral)),
                namespace=fields.get("namespace"),
            )

    def of(self, neutral_name: str) -> WireTool:
        return self._tools.get(neutral_name) or WireTool(kind="function", name=neutral_name)

    def is_custom(self, neutral_name: str) -> bool:
        return self.of(neutral_name).kind == "custom"
