"""Converse responses <-> :class:`Response`, and the stop-reason and usage mapping that
:mod:`.stream` shares.

Converse responses have no id and no model; the id comes from boto3's ``ResponseMetadata``
when present. ``stop_sequence`` travels as ``additionalModelResponseFields``.
``reasoningContent`` blocks are thinking blocks (:mod:`.reasoning`).
"""

from __future__ import annotations

from typing import Any

from ...errors import BackendError, ConversionError, WireFormatError
from ...messages import (
    SERVER_TOOL_BLOCKS,
    ContentBlock,
    RedactedThinkingBlock,
    Response,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
)
from .._common import Path, dropped, one_key, validate
from ._wire import TARGET, _ResponseIn, _ToolUse
from .cache import decode_usage, encode_usage
from .reasoning import decode_block, encode_block
from .requests import _text

__all__ = ["decode_response", "encode_response"]

_STOP_IN = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "guardrail_intervened": "content_filtered",
    "content_filtered": "content_filtered",
    "model_context_window_exceeded": "max_tokens",
}


def _stop_reason(value: Any, path: Path) -> Any:
    if value is None:
        return None
    if value in ("malformed_model_output", "malformed_tool_use"):
        raise BackendError(f"the model's output could not be parsed (stopReason {value})", kind="api")
    if value not in _STOP_IN:
        raise WireFormatError(f"unsupported stopReason {value!r}", path)
    return _STOP_IN[value]


def _response_block(data: Any, path: Path) -> ContentBlock:
    key, value = one_key(data, path, ("text", "toolUse", "reasoningContent"), "ContentBlock")
    if key == "text":
        return _text(value, (*path, "text"), blank_ok=True)
    if key == "reasoningContent":
        return decode_block(value, (*path, key), lenient=True)
    use = validate(_ToolUse, value, (*path, key))
    if not isinstance(use.input, dict):
        raise WireFormatError("toolUse input must be a JSON object", (*path, key, "input"))
    return ToolUseBlock(id=use.toolUseId, name=use.name, input=use.input)


def decode_response(data: Any) -> Response:
    """A Converse response -> :class:`Response` (id from boto3's ``ResponseMetadata`` when
    present)."""
    resp = validate(_ResponseIn, data, ())
    extra = resp.additionalModelResponseFields or {}
    meta = resp.ResponseMetadata or {}
    stop_sequence = extra.get("stop_sequence")
    return Response(
        id=str(meta.get("RequestId") or ""),
        content=[
            _response_block(b, ("output", "message", "content", k))
            for k, b in enumerate(resp.output.message.content)
        ],
        stop_reason=_stop_reason(resp.stopReason, ("stopReason",)),
        stop_sequence=stop_sequence if isinstance(stop_sequence, str) else None,
        usage=decode_usage(data.get("usage")),
    )


def _response_block_out(block: ContentBlock, path: Path) -> dict[str, Any] | None:
    if isinstance(block, (ThinkingBlock, RedactedThinkingBlock)):
        # A response has no strict mode: what Converse cannot hold is dropped with a log line.
        return encode_block(block, path, strict=False, binary=False)
    if isinstance(block, TextBlock):
        return {"text": block.text}
    if isinstance(block, ToolUseBlock):
        return {"toolUse": {"toolUseId": block.id, "name": block.name, "input": block.input}}
    if isinstance(block, SERVER_TOOL_BLOCKS):
        dropped(f"Converse has no form for a {block.type} block", path, TARGET, False)
        return None
    raise ConversionError(f"a response cannot hold a {block.type} block", path, target=TARGET)


def encode_response(resp: Response, *, latency_ms: int = 0) -> dict[str, Any]:
    """:class:`Response` -> Converse response body."""
    out: dict[str, Any] = {
        "output": {
            "message": {
                "role": "assistant",
                "content": [
                    wire for k, b in enumerate(resp.content)
                    if (wire := _response_block_out(b, ("content", k))) is not None
                ],
            }
        },
        "stopReason": "end_turn" if resp.stop_reason in (None, "pause_turn") else resp.stop_reason,
        "usage": encode_usage(resp.usage),
        "metrics": {"latencyMs": latency_ms},
    }
    if resp.stop_sequence is not None:
        out["additionalModelResponseFields"] = {"stop_sequence": resp.stop_sequence}
    return out
