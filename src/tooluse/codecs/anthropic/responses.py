"""Messages API response bodies <-> :class:`~tooluse.messages.Response`.

Also holds the stop-reason tables and the single-block decoder, which the stream codec
(:mod:`.stream`) reuses for ``message_delta`` and ``content_block_start`` events, so a
streamed and a whole response decode by the same rules.
"""

from __future__ import annotations

from typing import Any

from ...errors import ConversionError, WireFormatError
from ...messages import (
    SERVER_TOOL_BLOCKS,
    ContentBlock,
    RedactedThinkingBlock,
    Response,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
)
from .._common import LenientModel, Path, dispatch, validate
from . import thinking
from ._wire import (
    TARGET,
    _RedactedThinkingOut,
    _ResponseIn,
    _TextOut,
    _ThinkingOut,
    _ToolUseOut,
)
from .cache import decode_usage, encode_usage
from .context import decode_applied, encode_applied
from .server_tools import answer_blocks, is_paired_block, pair_blocks, upstream_block

_STOP_IN = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "refusal": "content_filtered",
    "model_context_window_exceeded": "max_tokens",
    "pause_turn": "pause_turn",
}
_STOP_OUT = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "content_filtered": "refusal",
    "pause_turn": "pause_turn",
}


def _stop_reason(value: str | None, path: Path) -> Any:
    if value is None:
        return None
    if value not in _STOP_IN:
        raise WireFormatError(f"unsupported stop_reason {value!r}", path)
    return _STOP_IN[value]


def server_side_block(raw: Any) -> bool:
    """A block the API produced and consumed itself (a server tool's call and result): the
    answer's text and client tool calls do not depend on it, and the neutral model cannot
    carry it, so decoding leaves it out (citations on text, likewise). Thinking is carried,
    and so are a tool search's and an MCP call's blocks (:func:`.server_tools.is_paired_block`
    is asked first)."""
    kind = raw.get("type") if isinstance(raw, dict) else None
    return isinstance(kind, str) and (
        kind in ("server_tool_use", "mcp_tool_use", "container_upload")
        or (kind.endswith("_tool_result") and kind != "tool_result")
    )


_ANSWER_BLOCKS: dict[str, type[LenientModel]] = {"text": _TextOut, "tool_use": _ToolUseOut, "thinking": _ThinkingOut,
                  "redacted_thinking": _RedactedThinkingOut}


def _response_block(raw: Any, path: Path
                    ) -> TextBlock | ToolUseBlock | ThinkingBlock | RedactedThinkingBlock:
    block = dispatch(raw, path, _ANSWER_BLOCKS)
    if isinstance(block, _TextOut):
        return TextBlock(text=block.text)
    if isinstance(block, (_ThinkingOut, _RedactedThinkingOut)):
        return thinking.decode_block(block)
    assert isinstance(block, _ToolUseOut)
    return ToolUseBlock(id=block.id, name=block.name, input=block.input)


def _answer_content(raw: list[Any]) -> list[ContentBlock]:
    """An answer's blocks: a tool search's and an MCP call's use and result joined into one
    neutral block; other server tools' blocks left out."""
    blocks: list[tuple[Path, Any]] = []
    for k, b in enumerate(raw):
        path: Path = ("content", k)
        if is_paired_block(b):
            blocks.append((path, upstream_block(b, path)))
        elif not server_side_block(b):
            blocks.append((path, _response_block(b, path)))
    return [block for _, block in pair_blocks(blocks)]


def decode_response(data: Any) -> Response:
    """A Messages API response body -> :class:`Response`."""
    resp = validate(_ResponseIn, data, ())
    return Response(
        id=resp.id,
        model=resp.model,
        content=_answer_content(resp.content),
        stop_reason=_stop_reason(resp.stop_reason, ("stop_reason",)),
        stop_sequence=resp.stop_sequence,
        usage=decode_usage(data.get("usage")),
        applied_edits=decode_applied(data.get("context_management")),
    )


def _response_block_out(block: ContentBlock, path: Path) -> list[dict[str, Any]]:
    if isinstance(block, TextBlock):
        return [{"type": "text", "text": block.text}]
    if isinstance(block, ToolUseBlock):
        return [{"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}]
    if isinstance(block, (ThinkingBlock, RedactedThinkingBlock)):
        return [thinking.encode_answer(block)]
    if isinstance(block, SERVER_TOOL_BLOCKS):
        return list(answer_blocks(block))  # an MCP listing has no Messages form: none
    raise ConversionError(f"a response cannot hold a {block.type} block", path, target=TARGET)


def encode_response(resp: Response) -> dict[str, Any]:
    """:class:`Response` -> Messages API response body."""
    body = {
        "id": resp.id,
        "type": "message",
        "role": "assistant",
        "model": resp.model,
        "content": [wire for k, b in enumerate(resp.content)
                    for wire in _response_block_out(b, ("content", k))],
        "stop_reason": _STOP_OUT[resp.stop_reason] if resp.stop_reason else None,
        "stop_sequence": resp.stop_sequence,
        "usage": encode_usage(resp.usage),
    }
    if resp.applied_edits is not None:
        body["context_management"] = encode_applied(resp.applied_edits)
    return body
