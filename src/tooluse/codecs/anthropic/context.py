"""Messages ``context_management`` <-> the neutral context edits.

Request: ``context_management.edits`` -> :class:`~tooluse.messages.ContextEdit` (the API's
defaults filled in: ``clear_tool_uses_20250919`` triggers at 100,000 input tokens and keeps
3 tool uses, ``clear_thinking_20251015`` keeps the last thinking turn). Other edit types
(``compact_*``) are kept for an Anthropic upstream only. Answer:
``context_management.applied_edits`` <-> :class:`~tooluse.messages.AppliedEdit`.
"""

from __future__ import annotations

from typing import Any, Literal

from ...errors import WireFormatError
from ...messages import AppliedEdit, ContextEdit
from .._common import LenientModel, Path, WireModel, validate

__all__ = ["decode_applied", "decode_edits", "encode_applied"]

_TYPES = {"clear_tool_uses": "clear_tool_uses_20250919", "clear_thinking": "clear_thinking_20251015"}
_KINDS = {wire: kind for kind, wire in _TYPES.items()}


class _Count(WireModel):
    type: Literal["input_tokens", "tool_uses", "thinking_turns", "all"]
    value: int | None = None


class _ClearToolUses(WireModel):
    type: Literal["clear_tool_uses_20250919"]
    trigger: _Count | None = None
    keep: _Count | None = None
    clear_at_least: _Count | None = None
    exclude_tools: list[str] | None = None
    clear_tool_inputs: bool | list[str] | None = None


class _ClearThinking(WireModel):
    type: Literal["clear_thinking_20251015"]
    keep: _Count | Literal["all"] | None = None


def _value(count: _Count | None, kinds: tuple[str, ...], path: Path) -> int | None:
    if count is None:
        return None
    if count.type not in kinds:
        raise WireFormatError(f"expected type {' or '.join(kinds)}", (*path, "type"))
    if count.value is None or count.value < 0:
        raise WireFormatError("expected a value >= 0", (*path, "value"))
    return count.value


def decode_edits(raw: Any) -> list[ContextEdit]:
    """The edits of a (validated) ``context_management`` object."""
    edits = raw.get("edits") if isinstance(raw, dict) else None
    out: list[ContextEdit] = []
    for k, item in enumerate(edits or []):
        path: Path = ("context_management", "edits", k)
        kind = item.get("type") if isinstance(item, dict) else None
        if kind == "clear_tool_uses_20250919":
            edit = validate(_ClearToolUses, item, path)
            trigger = edit.trigger or _Count(type="input_tokens", value=100_000)
            tokens = _value(trigger, ("input_tokens", "tool_uses"), (*path, "trigger"))
            keep = _value(edit.keep, ("tool_uses",), (*path, "keep"))
            out.append(ContextEdit(
                kind="clear_tool_uses",
                trigger_input_tokens=tokens if trigger.type == "input_tokens" else None,
                trigger_tool_uses=tokens if trigger.type == "tool_uses" else None,
                keep=3 if keep is None else keep,
                clear_at_least=_value(edit.clear_at_least, ("input_tokens",),
                                      (*path, "clear_at_least")),
                exclude_tools=list(edit.exclude_tools or []),
                clear_tool_inputs=edit.clear_tool_inputs or False))
        elif kind == "clear_thinking_20251015":
            thinking = validate(_ClearThinking, item, path)
            keep_all = thinking.keep == "all" or isinstance(thinking.keep, _Count) \
                and thinking.keep.type == "all"
            turns = None if keep_all or not isinstance(thinking.keep, _Count) else _value(
                thinking.keep, ("thinking_turns",), (*path, "keep"))
            out.append(ContextEdit(kind="clear_thinking",
                                   keep=None if keep_all else (1 if turns is None else turns)))
    return out


class _AppliedIn(LenientModel):
    type: str
    cleared_input_tokens: int = 0
    cleared_tool_uses: int | None = None
    cleared_thinking_turns: int | None = None


def decode_applied(raw: Any) -> list[AppliedEdit] | None:
    """An answer's ``context_management`` -> the applied edits (None: none reported)."""
    if not isinstance(raw, dict) or not isinstance(raw.get("applied_edits"), list):
        return None
    out: list[AppliedEdit] = []
    for item in raw["applied_edits"]:
        edit = validate(_AppliedIn, item, ("context_management", "applied_edits"))
        kind = _KINDS.get(edit.type)
        if kind is not None:
            out.append(AppliedEdit(kind=kind,  # type: ignore[arg-type]
                                   cleared=edit.cleared_tool_uses or edit.cleared_thinking_turns
                                   or 0, cleared_input_tokens=edit.cleared_input_tokens))
    return out


def encode_applied(edits: list[AppliedEdit]) -> dict[str, Any]:
    """The answer's ``context_management`` object."""
    applied = []
    for edit in edits:
        count = "cleared_tool_uses" if edit.kind == "clear_tool_uses" else "cleared_thinking_turns"
        applied.append({"type": _TYPES[edit.kind], count: edit.cleared,
                        "cleared_input_tokens": edit.cleared_input_tokens})
    return {"applied_edits": applied}
