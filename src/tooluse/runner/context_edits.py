"""Context edits made by the server before the model sees the history (Messages
``context_management``), for backends that cannot make them.

:func:`apply_edits` applies a request's :class:`~tooluse.messages.ContextEdit` list in order
and says what each did (:class:`~tooluse.messages.AppliedEdit`), as the Messages API reports
``context_management.applied_edits``:

- ``clear_thinking``: the thinking blocks of every assistant turn but the last ``keep``
  turns that hold some are left out;
- ``clear_tool_uses``: when the prompt has reached the trigger (input tokens, or tool uses
  in the history), the results of the oldest calls are replaced by :data:`CLEARED`, keeping
  the last ``keep`` calls and every call of ``exclude_tools``; with ``clear_tool_inputs``
  the calls' inputs are emptied too. Unless at least ``clear_at_least`` tokens go, nothing
  is cleared. A result already cleared stays as it is.

The prompt's tokens are counted by the function the caller gives (the backend's exact
count where it has one); an edit that clears nothing is not reported.
"""

from __future__ import annotations

from collections.abc import Callable

from ..messages import (
    AppliedEdit,
    ContentBlock,
    ContextEdit,
    Message,
    RedactedThinkingBlock,
    Request,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)

__all__ = ["CLEARED", "apply_edits"]

#: What a cleared tool result holds.
CLEARED = "[This tool result was cleared to save context.]"

Count = Callable[[Request], int]


def apply_edits(request: Request, count: Count) -> tuple[Request, list[AppliedEdit]]:
    """``request`` with its context edits applied (and none left to apply), and what each
    edit that changed something did."""
    applied: list[AppliedEdit] = []
    current = request.model_copy(update={"context_edits": []})
    for edit in request.context_edits:
        before = count(current)
        if edit.kind == "clear_thinking":
            messages, cleared = _clear_thinking(current.messages, edit.keep)
        else:
            if not _triggered(edit, current, before):
                continue
            messages, cleared = _clear_tool_uses(current.messages, edit)
        if not cleared:
            continue
        edited = current.model_copy(update={"messages": messages})
        saved = max(before - count(edited), 0)
        if edit.kind == "clear_tool_uses" and edit.clear_at_least is not None \
                and saved < edit.clear_at_least:
            continue
        current = edited
        applied.append(AppliedEdit(kind=edit.kind, cleared=cleared, cleared_input_tokens=saved))
    return current, applied


def _clear_thinking(messages: list[Message], keep: int | None) -> tuple[list[Message], int]:
    if keep is None:
        return messages, 0
    thinking = [i for i, m in enumerate(messages) if m.role == "assistant" and m.thinking]
    older = set(thinking[:max(len(thinking) - keep, 0)])
    out = [m.model_copy(update={"content": [
        b for b in m.content if not isinstance(b, (ThinkingBlock, RedactedThinkingBlock))]})
        if i in older else m for i, m in enumerate(messages)]
    return out, len(older)


def _uses(messages: list[Message]) -> list[ToolUseBlock]:
    return [b for m in messages if m.role == "assistant" for b in m.content
            if isinstance(b, ToolUseBlock)]


def _triggered(edit: ContextEdit, request: Request, tokens: int) -> bool:
    if edit.trigger_tool_uses is not None:
        return len(_uses(request.messages)) >= edit.trigger_tool_uses
    return edit.trigger_input_tokens is None or tokens >= edit.trigger_input_tokens


def _cleared(block: ToolResultBlock) -> bool:
    return block.content == [TextBlock(text=CLEARED)]


def _clear_tool_uses(messages: list[Message], edit: ContextEdit) -> tuple[list[Message], int]:
    candidates = [u for u in _uses(messages) if u.name not in edit.exclude_tools]
    keep = edit.keep if edit.keep is not None else 0
    clear = {u.id: u.name for u in candidates[:max(len(candidates) - keep, 0)]}
    inputs = edit.clear_tool_inputs
    cleared = 0
    out: list[Message] = []
    for message in messages:
        content: list[ContentBlock] = []
        for block in message.content:
            if isinstance(block, ToolResultBlock) and block.tool_use_id in clear \
                    and not _cleared(block):
                block = block.model_copy(update={"content": [TextBlock(text=CLEARED)]})
                cleared += 1
            elif isinstance(block, ToolUseBlock) and block.id in clear and block.input and (
                    inputs is True or isinstance(inputs, list) and block.name in inputs):
                block = block.model_copy(update={"input": {}})
            content.append(block)
        out.append(message.model_copy(update={"content": content}))
    return out, cleared
