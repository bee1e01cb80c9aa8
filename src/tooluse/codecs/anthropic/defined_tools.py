"""Anthropic-defined client tools as ordinary tools, for backends that do not know them.

The Messages API defines some tools by ``type`` alone (``bash_20250124``,
``text_editor_20250728``, ``memory_20250818``, ``computer_20250124``...): Claude knows their
input schema, and the *client* runs every call. A backend of another vendor knows none of
them, so the codec gives it each tool's documented input schema and a description; the model
calls it by the tool's own name, and the call goes back to the client as any call does. An
Anthropic upstream gets the definition as the client sent it (``Passthrough.tool_fields``).

Web search, web fetch and code execution are different: Anthropic runs them on its own
servers, and no other backend can (:data:`VENDOR_RUN` says why, for the refusal).
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["VENDOR_RUN", "defined_tool", "vendor_run"]

_STR = {"type": "string"}
_INT = {"type": "integer"}
_POINT = {"type": "array", "items": _INT, "minItems": 2, "maxItems": 2,
          "description": "(x, y): pixels from the left and from the top of the screen"}

_BASH: dict[str, Any] = {
    "type": "object",
    "properties": {
        "command": {"type": "string", "description": "The bash command to run."},
        "restart": {"type": "boolean",
                    "description": "Restart the shell session (then no command is needed)."},
    },
}
_BASH_TEXT = ("Run a command in a persistent bash shell on the user's machine and get its "
              "output. State (the working directory, variables) is kept between calls.")


def _editor(commands: list[str]) -> dict[str, Any]:
    """The text editor's input at every version: ``insert`` takes its text as ``new_str``
    (the documentation's parameters, unchanged from 20241022 to 20250728); the versions
    differ in their commands (``undo_edit`` until 20250124)."""
    return {"type": "object", "properties": {
        "command": {"type": "string", "enum": commands, "description": "The command to run."},
        "path": {"type": "string", "description": "Absolute path of the file or directory."},
        "file_text": {"type": "string", "description": "create: the new file's content."},
        "old_str": {"type": "string",
                    "description": "str_replace: the exact text to replace (it must occur "
                                   "once)."},
        "new_str": {"type": "string", "description": "str_replace: the text that replaces "
                                                      "it; insert: the text to insert."},
        "insert_line": {"type": "integer",
                        "description": "insert: the line after which the text goes (0: at "
                                       "the top)."},
        "view_range": {"type": "array", "items": _INT, "minItems": 2, "maxItems": 2,
                       "description": "view: the first and last line to show (-1: to the "
                                      "end)."},
    }, "required": ["command", "path"]}


_EDITOR_TEXT = ("View, create and edit text files on the user's machine: view a file or a "
                "directory, create a file, replace a unique string, insert text after a line.")

_MEMORY: dict[str, Any] = {
    "type": "object",
    "properties": {
        "command": {"type": "string",
                    "enum": ["view", "create", "str_replace", "insert", "delete", "rename"],
                    "description": "The command to run."},
        "path": {"type": "string", "description": "Path under /memories."},
        "view_range": {"type": "array", "items": _INT, "minItems": 2, "maxItems": 2,
                       "description": "view: the first and last line to show."},
        "file_text": {"type": "string", "description": "create: the file's content."},
        "old_str": {"type": "string", "description": "str_replace: the text to replace."},
        "new_str": {"type": "string", "description": "str_replace: the text that replaces it."},
        "insert_line": {"type": "integer", "description": "insert: the line to insert at."},
        "insert_text": {"type": "string", "description": "insert: the text to insert."},
        "old_path": {"type": "string", "description": "rename: the current path."},
        "new_path": {"type": "string", "description": "rename: the new path."},
    },
    "required": ["command"],
}
_MEMORY_TEXT = ("A memory directory (/memories) kept across conversations: view it, and "
                "create, edit, rename and delete the files in it. Look at it before starting "
                "a task, and record what you learn.")

_ACTIONS_2024 = ["key", "type", "mouse_move", "left_click", "left_click_drag", "right_click",
                 "middle_click", "double_click", "screenshot", "cursor_position"]
_ACTIONS_2025 = [*_ACTIONS_2024, "triple_click", "left_mouse_down", "left_mouse_up", "scroll",
                 "hold_key", "wait"]


def _computer(actions: list[str]) -> dict[str, Any]:
    properties: dict[str, Any] = {
        "action": {"type": "string", "enum": actions, "description": "What to do."},
        "coordinate": _POINT,
        "text": {"type": "string",
                 "description": "type: the text to type; key, hold_key: the key or "
                                "combination (xdotool syntax, e.g. ctrl+s); clicks: the keys "
                                "to hold."},
    }
    if "scroll" in actions:
        properties.update({
            "start_coordinate": {**_POINT, "description": "left_click_drag: where to start."},
            "scroll_direction": {"type": "string", "enum": ["up", "down", "left", "right"]},
            "scroll_amount": {"type": "integer", "minimum": 0,
                              "description": "scroll: how many wheel clicks."},
            "duration": {"type": "number", "minimum": 0,
                         "description": "hold_key, wait: seconds."},
        })
    if "zoom" in actions:
        properties["region"] = {"type": "array", "items": _INT, "minItems": 4, "maxItems": 4,
                                "description": "zoom: (x0, y0, x1, y1), the area to view."}
    return {"type": "object", "properties": properties, "required": ["action"]}


def _computer_text(raw: dict[str, Any]) -> str:
    size = ""
    width, height = raw.get("display_width_px"), raw.get("display_height_px")
    if isinstance(width, int) and isinstance(height, int):
        size = f" The screen is {width}x{height} pixels."
    return ("Use the user's computer with the mouse and keyboard, and take screenshots to "
            f"see the screen.{size}")


#: ``type`` families -> (input schema, description) of the client-run tools.
_DEFINED: list[tuple[re.Pattern[str], Any, Any]] = [
    (re.compile(r"^bash_\d{8}$"), _BASH, _BASH_TEXT),
    (re.compile(r"^text_editor_20241022$|^text_editor_20250124$"),
     _editor(["view", "create", "str_replace", "insert", "undo_edit"]), _EDITOR_TEXT),
    (re.compile(r"^text_editor_\d{8}$"),
     _editor(["view", "create", "str_replace", "insert"]), _EDITOR_TEXT),
    (re.compile(r"^memory_\d{8}$"), _MEMORY, _MEMORY_TEXT),
    (re.compile(r"^computer_20241022$"), _computer(_ACTIONS_2024), _computer_text),
    (re.compile(r"^computer_20250124$"), _computer(_ACTIONS_2025), _computer_text),
    # 20251124: zoom (with its region) only when the tool sets enable_zoom
    (re.compile(r"^computer_\d{8}$"),
     lambda raw: _computer([*_ACTIONS_2025, "zoom"] if raw.get("enable_zoom") is True
                           else _ACTIONS_2025), _computer_text),
]

#: The Anthropic-defined tools that run on Anthropic's servers, with what each does there:
#: a backend of another vendor cannot run them.
VENDOR_RUN: dict[str, str] = {
    "web_search": "Anthropic searches the web for the model",
    "web_fetch": "Anthropic fetches web pages for the model",
    "code_execution": "Anthropic runs the model's code in its own sandbox",
}


def defined_tool(raw: dict[str, Any]) -> tuple[dict[str, Any], str] | None:
    """The input schema and description of an Anthropic-defined client tool (``raw`` is its
    definition), or None when ``raw['type']`` is not one."""
    kind = raw.get("type")
    if not isinstance(kind, str):
        return None
    for pattern, schema, text in _DEFINED:
        if pattern.match(kind):
            return (schema(raw) if callable(schema) else dict(schema),
                    text(raw) if callable(text) else text)
    return None


def vendor_run(kind: str) -> str | None:
    """What Anthropic does for a vendor-run tool type (``web_search_20250305``), else None."""
    family = re.sub(r"_\d{8}$", "", kind)
    return VENDOR_RUN.get(family)
