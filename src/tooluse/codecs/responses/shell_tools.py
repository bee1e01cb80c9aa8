"""The Responses tools a client runs on its own machine, for backends that do not know them:
``local_shell``, ``shell`` (with no environment, or a ``local`` one) and ``apply_patch``.

OpenAI defines each by ``type`` alone and writes their calls as items of their own; the
client (Codex, an agent) runs them. A backend of another vendor gets each as an ordinary
tool with an input schema (:func:`decode_tool`), the model calls it by that name, and the
call goes back to the client as the API's item:

- ``local_shell`` <-> ``local_shell_call`` (``action: {type: exec, command, env,
  timeout_ms, working_directory, user}``; the neutral input is the action without its
  ``type``) and ``local_shell_call_output`` (``id`` the call's, ``output`` text);
- ``shell`` <-> ``shell_call`` (``action: {commands, timeout_ms, max_output_length}``, the
  limits null when not set, and ``environment`` null) and
  ``shell_call_output`` (``output``: one ``{stdout, stderr, outcome}`` per command, kept
  as a JSON part);
- ``apply_patch`` <-> ``apply_patch_call`` (``operation: {type: create_file |
  update_file | delete_file, path, diff}``, the neutral input) and
  ``apply_patch_call_output`` (``status`` ``failed`` is an error result, ``output`` text).

A ``shell`` tool whose environment is a container runs on OpenAI's servers: refused on
other backends (``Request.passthrough.required``).
"""

from __future__ import annotations

from typing import Any, Literal

from ...messages import JsonBlock, Passthrough, TextBlock, ToolResultBlock, ToolSpec, ToolUseBlock
from .._common import Path, validate
from ._wire import ItemModel

__all__ = ["ITEMS", "KINDS", "call_item", "decode_item", "decode_tool", "output_item"]

#: Tool types the client runs, each a neutral tool of the same name.
KINDS = ("local_shell", "shell", "apply_patch")

_ARGV = {"type": "array", "items": {"type": "string"}}
_SCHEMAS: dict[str, tuple[str, dict[str, Any]]] = {
    "local_shell": ("Run a command on the user's machine (argv form) and get its output.", {
        "type": "object", "properties": {
            "command": {**_ARGV, "description": "The program and its arguments."},
            "working_directory": {"type": "string"},
            "timeout_ms": {"type": "integer", "minimum": 1},
            "env": {"type": "object", "additionalProperties": {"type": "string"}},
            "user": {"type": "string"}},
        "required": ["command"]}),
    "shell": ("Run shell commands on the user's machine and get their output.", {
        "type": "object", "properties": {
            "commands": {**_ARGV, "description": "Shell commands, run one after the other."},
            "timeout_ms": {"type": "integer", "minimum": 1},
            "max_output_length": {"type": "integer", "minimum": 1}},
        "required": ["commands"]}),
    "apply_patch": (("Create, update or delete a file on the user's machine: for create_file "
                    "and update_file, diff is the V4A diff of the change (empty for "
                    "delete_file)."), {
        "type": "object", "properties": {
            "type": {"type": "string", "enum": ["create_file", "update_file", "delete_file"]},
            "path": {"type": "string"},
            "diff": {"type": "string"}},
        # the API's create_file and update_file operations require their diff
        "required": ["type", "path", "diff"]}),
}


def decode_tool(raw: dict[str, Any], path: Path, passthrough: Passthrough) -> ToolSpec | None:
    """A client-run tool as its neutral tool (None for another type, or a container
    shell, which is made ``required``)."""
    kind = raw.get("type")
    if kind not in KINDS:
        return None
    environment = raw.get("environment")
    if kind == "shell" and isinstance(environment, dict) and environment.get("type") != "local":
        passthrough.tools.append(raw)
        passthrough.required.append(f"{'.'.join(map(str, path))}: shell ({environment.get('type')}"
                                    "): OpenAI runs the commands in its own container")
        return None
    description, schema = _SCHEMAS[str(kind)]
    passthrough.tool_fields[str(kind)] = {**raw, "name": kind}
    return ToolSpec(name=str(kind), description=description, input_schema=schema)


class _LocalShellCall(ItemModel):
    type: Literal["local_shell_call"]
    call_id: str
    action: dict[str, Any]
    id: str | None = None


class _LocalShellOutput(ItemModel):
    type: Literal["local_shell_call_output"]
    id: str
    output: str


class _ShellCall(ItemModel):
    type: Literal["shell_call"]
    call_id: str
    action: dict[str, Any]
    id: str | None = None


class _ShellOutput(ItemModel):
    type: Literal["shell_call_output"]
    call_id: str
    output: list[Any]


class _PatchCall(ItemModel):
    type: Literal["apply_patch_call"]
    call_id: str
    operation: dict[str, Any]
    id: str | None = None


class _PatchOutput(ItemModel):
    type: Literal["apply_patch_call_output"]
    call_id: str
    status: Literal["completed", "failed"]
    output: str | None = None


#: Their input items -> models.
ITEMS: dict[str, type[ItemModel]] = {
    "local_shell_call": _LocalShellCall, "local_shell_call_output": _LocalShellOutput,
    "shell_call": _ShellCall, "shell_call_output": _ShellOutput,
    "apply_patch_call": _PatchCall, "apply_patch_call_output": _PatchOutput,
}


def decode_item(raw: dict[str, Any], path: Path) -> tuple[str, ToolUseBlock | ToolResultBlock]:
    """One of :data:`ITEMS` as its side and neutral block."""
    item = validate(ITEMS[raw["type"]], raw, path)
    if isinstance(item, _LocalShellCall):
        action = {k: v for k, v in item.action.items() if k != "type"}
        return "assistant", ToolUseBlock(id=item.call_id, name="local_shell", input=action)
    if isinstance(item, _ShellCall):
        # the limits the API writes as null are left out, as the model left them out
        action = {k: v for k, v in item.action.items() if v is not None}
        return "assistant", ToolUseBlock(id=item.call_id, name="shell", input=action)
    if isinstance(item, _PatchCall):
        return "assistant", ToolUseBlock(id=item.call_id, name="apply_patch",
                                         input=dict(item.operation))
    if isinstance(item, _LocalShellOutput):
        return "user", ToolResultBlock(tool_use_id=item.id, content=[TextBlock(text=item.output)]
                                       if item.output else [])
    if isinstance(item, _ShellOutput):
        return "user", ToolResultBlock(tool_use_id=item.call_id,
                                       content=[JsonBlock(value=item.output)])
    assert isinstance(item, _PatchOutput)
    return "user", ToolResultBlock(tool_use_id=item.call_id, is_error=item.status == "failed",
                                   content=[TextBlock(text=item.output)] if item.output else [])


def call_item(block: ToolUseBlock, kind: str) -> dict[str, Any]:
    """A call of a client-run tool as its item (no id or status)."""
    if kind == "local_shell":
        return {"type": "local_shell_call", "call_id": block.id,
                "action": {"type": "exec", "env": {}, **block.input}}
    if kind == "shell":
        # the API writes the action's limits and the environment, null when not set
        action = {"timeout_ms": None, "max_output_length": None, **block.input}
        return {"type": "shell_call", "call_id": block.id, "action": action,
                "environment": None}
    return {"type": "apply_patch_call", "call_id": block.id, "operation": dict(block.input)}


def output_item(block: ToolResultBlock, kind: str) -> dict[str, Any]:
    """The result of a client-run tool as its output item."""
    text = block.text()
    if kind == "local_shell":
        return {"type": "local_shell_call_output", "id": block.tool_use_id, "output": text}
    if kind == "shell":
        parts = block.content
        if len(parts) == 1 and isinstance(parts[0], JsonBlock) and isinstance(parts[0].value, list):
            output = parts[0].value
        else:
            output = [{"stdout": text, "stderr": "",
                       "outcome": {"type": "exit", "exit_code": 1 if block.is_error else 0}}]
        return {"type": "shell_call_output", "call_id": block.tool_use_id, "output": output}
    return {"type": "apply_patch_call_output", "call_id": block.tool_use_id,
            "status": "failed" if block.is_error else "completed", "output": text}
