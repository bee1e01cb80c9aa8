"""A conversation with server tools' blocks, as a backend that runs no server tools sees it.

The neutral history keeps what the server ran for the model as the API shows it (a
:class:`~tooluse.messages.ToolSearchBlock` or :class:`~tooluse.messages.MCPCallBlock`
inside the assistant turn, an approval in the user turn). A model that is not the vendor's
knows only calls and results, so :func:`lower` rewrites each such block as the call the
model made and its result, splitting the turn there:

- a tool search: a call of the search tool, and a result naming the tools found (or why
  the search failed);
- an MCP call: a call of the tool by the name the model calls it, and its result; a call
  that waited for approval gets its result from the call the approval ran, or a result
  saying it was denied (or never answered);
- an MCP listing and an approval answer: left out (the tools are in the tool list; the
  decision is in the result);
- a tool result's tool references: text saying which tools were loaded.

:func:`loaded_tools` reads which deferred tools the history has loaded.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..deferred import loaded_tools
from ..messages import (
    ContentBlock,
    MCPApprovalBlock,
    MCPCallBlock,
    MCPListToolsBlock,
    Message,
    ResultPart,
    TextBlock,
    ToolReferenceBlock,
    ToolResultBlock,
    ToolSearchBlock,
    ToolUseBlock,
)

__all__ = ["found_text", "has_server_blocks", "loaded_tools", "lower"]

#: The name the model calls an MCP server's tool by, from (server, tool name).
NameOf = Callable[[str, str], str]


def has_server_blocks(messages: Sequence[Message]) -> bool:
    """Whether a history holds anything :func:`lower` rewrites."""
    for message in messages:
        for block in message.content:
            if isinstance(block, (ToolSearchBlock, MCPCallBlock, MCPListToolsBlock,
                                  MCPApprovalBlock)):
                return True
            if isinstance(block, ToolResultBlock) and any(
                    isinstance(p, ToolReferenceBlock) for p in block.content):
                return True
    return False


def found_text(block: ToolSearchBlock) -> str:
    """The result a model reads for a tool search."""
    if block.error is not None:
        return f"The tool search failed ({block.error})."
    if not block.found:
        return "No tool matched: no tool does this."
    return ("Found " + ", ".join(block.found) + ". They are now in your tools: call the one "
            "that does what the user asked.")


def _reference_text(part: ResultPart) -> ResultPart:
    if isinstance(part, ToolReferenceBlock):
        return TextBlock(text=f"Tool {part.name} is now available.")
    return part


def _decisions(messages: Sequence[Message]) -> tuple[dict[str, MCPCallBlock],
                                                         dict[str, MCPApprovalBlock]]:
    """The calls an approval ran (by the waiting call they answer, when it is in the
    history) and the answers given."""
    waiting = {b.id for m in messages for b in m.content
               if isinstance(b, MCPCallBlock) and b.content is None}
    ran: dict[str, MCPCallBlock] = {}
    answers: dict[str, MCPApprovalBlock] = {}
    for message in messages:
        for block in message.content:
            if isinstance(block, MCPCallBlock) and block.approval_request_id in waiting:
                ran[block.approval_request_id] = block
            elif isinstance(block, MCPApprovalBlock):
                answers[block.request_id] = block
    return ran, answers


def lower(messages: Sequence[Message], name_of: NameOf) -> list[Message]:
    """``messages`` with every server tool's block rewritten as a call and its result (see
    the module docstring); consecutive turns of one role joined."""
    ran, answers = _decisions(messages)
    out: list[Message] = []

    def put(role: str, blocks: list[ContentBlock]) -> None:
        if not blocks:
            return
        if out and out[-1].role == role:
            out[-1] = Message(role=out[-1].role, content=[*out[-1].content, *blocks])
        else:
            out.append(Message(role=role, content=blocks))  # type: ignore[arg-type]

    for message in messages:
        if message.role == "user":
            kept: list[ContentBlock] = []
            for block in message.content:
                if isinstance(block, MCPApprovalBlock):
                    continue
                if isinstance(block, ToolResultBlock) and any(
                        isinstance(p, ToolReferenceBlock) for p in block.content):
                    block = block.model_copy(update={
                        "content": [_reference_text(p) for p in block.content]})
                kept.append(block)
            put("user", kept)
            continue
        turn: list[ContentBlock] = []
        for block in message.content:
            if isinstance(block, MCPListToolsBlock):
                continue
            if isinstance(block, MCPCallBlock) and block.approval_request_id in ran:
                continue  # its result went with the call that waited for approval
            if isinstance(block, ToolSearchBlock):
                call = ToolUseBlock(id=block.id, name=block.name, input=block.input)
                result = ToolResultBlock(tool_use_id=block.id,
                                         content=[TextBlock(text=found_text(block))],
                                         is_error=block.error is not None)
            elif isinstance(block, MCPCallBlock):
                call = ToolUseBlock(id=block.id, name=name_of(block.server, block.name),
                                    input=block.input)
                result = _mcp_result(block, ran, answers)
            else:
                turn.append(block)
                continue
            put("assistant", [*turn, call])
            put("user", [result])
            turn = []
        put("assistant", turn)
    return out


def _mcp_result(block: MCPCallBlock, ran: dict[str, MCPCallBlock],
                answers: dict[str, MCPApprovalBlock]) -> ToolResultBlock:
    if block.content is not None:
        return ToolResultBlock(tool_use_id=block.id, content=list(block.content),
                               is_error=block.is_error)
    done = ran.get(block.id)
    if done is not None and done.content is not None:
        return ToolResultBlock(tool_use_id=block.id, content=list(done.content),
                               is_error=done.is_error)
    answer = answers.get(block.id)
    if answer is not None and not answer.approve:
        why = f" ({answer.reason})" if answer.reason else ""
        text = f"The user denied this call of tool {block.name!r}{why}, so it was not run."
    else:
        text = f"This call of tool {block.name!r} waits for the user's approval; it was not run."
    return ToolResultBlock(tool_use_id=block.id, content=[TextBlock(text=text)], is_error=True)
