"""ConverseStream events (as boto3 yields them) <-> neutral stream events.

Bedrock sends no ``contentBlockStart`` for text blocks, and splits the end of a message into
``messageStop`` (stop reason) and ``metadata`` (usage); both directions bridge that to the
neutral :class:`MessageDelta` / :class:`MessageStop`. Exception events become
:class:`BackendError` through :func:`.errors.backend_error`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from ...errors import WireFormatError
from ...messages import TextBlock, ToolUseBlock, Usage
from ...stream import (
    BlockStart,
    BlockStop,
    MessageDelta,
    MessageStart,
    MessageStop,
    StreamEvent,
    TextDelta,
    ToolInputDelta,
)
from .._common import Path
from .errors import backend_error
from .responses import _stop_reason, _usage

__all__ = ["decode_events", "encode_events"]

def encode_events(events: Iterable[StreamEvent], *, latency_ms: int = 0) -> Iterator[dict[str, Any]]:
    """Neutral events -> ConverseStream events as boto3 yields them. Text blocks get no
    ``contentBlockStart`` (Bedrock sends none); usage arrives in the final ``metadata``."""
    input_tokens = 0
    usage = Usage()
    tool_blocks: set[int] = set()
    for event in events:
        if isinstance(event, MessageStart):
            input_tokens = event.usage.input_tokens
            yield {"messageStart": {"role": "assistant"}}
        elif isinstance(event, BlockStart):
            if isinstance(event.block, ToolUseBlock):
                tool_blocks.add(event.index)
                yield {
                    "contentBlockStart": {
                        "contentBlockIndex": event.index,
                        "start": {"toolUse": {"toolUseId": event.block.id, "name": event.block.name}},
                    }
                }
            elif event.block.text:
                yield _delta(event.index, {"text": event.block.text})
        elif isinstance(event, TextDelta):
            yield _delta(event.index, {"text": event.text})
        elif isinstance(event, ToolInputDelta):
            yield _delta(event.index, {"toolUse": {"input": event.partial_json}})
        elif isinstance(event, BlockStop):
            yield {"contentBlockStop": {"contentBlockIndex": event.index}}
        elif isinstance(event, MessageDelta):
            usage = Usage(
                input_tokens=event.usage.input_tokens or input_tokens,
                output_tokens=event.usage.output_tokens,
            )
            stop: dict[str, Any] = {"stopReason": event.stop_reason or "end_turn"}
            if event.stop_sequence is not None:
                stop["additionalModelResponseFields"] = {"stop_sequence": event.stop_sequence}
            yield {"messageStop": stop}
        elif isinstance(event, MessageStop):
            yield {"metadata": {"usage": _usage(usage), "metrics": {"latencyMs": latency_ms}}}


def _delta(index: int, delta: dict[str, Any]) -> dict[str, Any]:
    return {"contentBlockDelta": {"contentBlockIndex": index, "delta": delta}}


def _index(body: Any, path: Path) -> int:
    value = body.get("contentBlockIndex") if isinstance(body, dict) else None
    if not isinstance(value, int) or isinstance(value, bool):
        raise WireFormatError("Field required", (*path, "contentBlockIndex"))
    return value


_EXCEPTIONS = {
    "internalServerException", "modelStreamErrorException", "validationException",
    "throttlingException", "serviceUnavailableException", "modelTimeoutException",
}


def decode_events(events: Iterable[Any]) -> Iterator[StreamEvent]:
    """ConverseStream events (boto3's dicts) -> neutral events. A text block's start is
    synthesised at its first delta; the stop reason and usage (``messageStop`` then
    ``metadata``) become one :class:`MessageDelta` followed by :class:`MessageStop`."""
    started: set[int] = set()
    stop: dict[str, Any] | None = None
    finished = False
    for n, data in enumerate(events):
        path: Path = (n,)
        if not isinstance(data, dict) or len(data) != 1:
            raise WireFormatError("stream event must be an object with one member", path)
        ((kind, body),) = data.items()
        path = (n, kind)
        if kind in _EXCEPTIONS:
            message = body.get("message", "") if isinstance(body, dict) else str(body)
            raise backend_error(kind, str(message))
        if kind == "messageStart":
            yield MessageStart()
        elif kind == "contentBlockStart":
            index = _index(body, path)
            start = body.get("start") or {}
            use = start.get("toolUse") if isinstance(start, dict) else None
            if not isinstance(use, dict) or not isinstance(use.get("toolUseId"), str) or not isinstance(use.get("name"), str):
                raise WireFormatError("contentBlockStart needs start.toolUse with toolUseId and name", (*path, "start"))
            started.add(index)
            yield BlockStart(index=index, block=ToolUseBlock(id=use["toolUseId"], name=use["name"]))
        elif kind == "contentBlockDelta":
            index = _index(body, path)
            delta = body.get("delta")
            if isinstance(delta, dict) and isinstance(delta.get("text"), str):
                if index not in started:
                    started.add(index)
                    yield BlockStart(index=index, block=TextBlock(text=""))
                yield TextDelta(index=index, text=delta["text"])
            elif isinstance(delta, dict) and isinstance(delta.get("toolUse"), dict) and isinstance(
                delta["toolUse"].get("input"), str
            ):
                yield ToolInputDelta(index=index, partial_json=delta["toolUse"]["input"])
            else:
                raise WireFormatError("unsupported contentBlockDelta", (*path, "delta"))
        elif kind == "contentBlockStop":
            index = _index(body, path)
            if index not in started:  # an empty text block: Bedrock sent only its stop
                started.add(index)
                yield BlockStart(index=index, block=TextBlock(text=""))
            yield BlockStop(index=index)
        elif kind == "messageStop":
            stop = body if isinstance(body, dict) else {}
            _stop_reason(stop.get("stopReason"), (*path, "stopReason"))
        elif kind == "metadata":
            usage = (body.get("usage") if isinstance(body, dict) else None) or {}
            yield _message_delta(stop, usage, path)
            yield MessageStop()
            finished = True
        else:
            raise WireFormatError(f"unsupported stream event {kind!r}", path)
    if stop is not None and not finished:
        yield _message_delta(stop, {}, ())
        yield MessageStop()


def _message_delta(stop: dict[str, Any] | None, usage: dict[str, Any], path: Path) -> MessageDelta:
    stop = stop or {}
    extra = stop.get("additionalModelResponseFields") or {}
    seq = extra.get("stop_sequence") if isinstance(extra, dict) else None
    return MessageDelta(
        stop_reason=_stop_reason(stop.get("stopReason"), (*path, "stopReason")),
        stop_sequence=seq if isinstance(seq, str) else None,
        usage=Usage(
            input_tokens=int(usage.get("inputTokens") or 0),
            output_tokens=int(usage.get("outputTokens") or 0),
        ),
    )
