"""ConverseStream events (as boto3 yields them) <-> neutral stream events.

Bedrock sends no ``contentBlockStart`` for text or reasoning blocks, and splits the end of a message into
``messageStop`` (stop reason) and ``metadata`` (usage); both directions bridge that to the
neutral :class:`MessageDelta` / :class:`MessageStop`. Exception events become
:class:`BackendError` through :func:`.errors.backend_error`.

Reasoning arrives as ``contentBlockDelta`` with ``reasoningContent``: ``{text}`` pieces
(:class:`ThinkingDelta`), ``{signature}`` (:class:`SignatureDelta`), or ``{redactedContent}``
(a :class:`RedactedThinkingBlock`, whole, as its block's first delta; base64 text in JSON,
raw bytes from boto3). A thinking block's summary parts have no Converse delta: dropped with a
log line.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from ...errors import WireFormatError
from ...messages import (
    SERVER_TOOL_BLOCKS,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    Usage,
)
from ...stream import (
    BlockStart,
    BlockStop,
    MessageDelta,
    MessageStart,
    MessageStop,
    SignatureDelta,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolInputDelta,
    merge_usage,
    without_blocks,
)
from .._common import Path, one_key
from .cache import decode_usage, encode_usage
from .errors import backend_error
from .reasoning import log, redacted_data
from .responses import _stop_reason

__all__ = ["decode_events", "encode_events"]

def encode_events(events: Iterable[StreamEvent], *, latency_ms: int = 0) -> Iterator[dict[str, Any]]:
    """Neutral events -> ConverseStream events as boto3 yields them. Text blocks get no
    ``contentBlockStart`` (Bedrock sends none); usage arrives in the final ``metadata``."""
    started = usage = Usage()
    tool_blocks: set[int] = set()
    summaries: set[int] = set()  # thinking blocks whose summary was dropped (logged once)
    for event in without_blocks(events, SERVER_TOOL_BLOCKS):
        if isinstance(event, MessageStart):
            started = usage = event.usage
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
            elif isinstance(event.block, RedactedThinkingBlock):
                yield _delta(event.index, {"reasoningContent": {"redactedContent": event.block.data}})
            elif isinstance(event.block, ThinkingBlock):
                # The neutral start is empty; one that is not opens with its content.
                thinking = event.block
                if thinking.text:
                    yield _delta(event.index, {"reasoningContent": {"text": thinking.text}})
                if thinking.summary:
                    summaries.add(event.index)
                    log.warning("converse: reasoning summary of block %d dropped (no "
                                "Converse delta holds it)", event.index)
                if thinking.signature:
                    yield _delta(event.index, {"reasoningContent": {"signature": thinking.signature}})
            elif isinstance(event.block, TextBlock) and event.block.text:
                yield _delta(event.index, {"text": event.block.text})
        elif isinstance(event, TextDelta):
            yield _delta(event.index, {"text": event.text})
        elif isinstance(event, ThinkingDelta):
            if event.summary is None:
                yield _delta(event.index, {"reasoningContent": {"text": event.text}})
            elif event.index not in summaries:
                summaries.add(event.index)
                log.warning("converse: reasoning summary of block %d dropped (no Converse "
                            "delta holds it)", event.index)
        elif isinstance(event, SignatureDelta):
            yield _delta(event.index, {"reasoningContent": {"signature": event.signature}})
        elif isinstance(event, ToolInputDelta):
            yield _delta(event.index, {"toolUse": {"input": event.partial_json}})
        elif isinstance(event, BlockStop):
            yield {"contentBlockStop": {"contentBlockIndex": event.index}}
        elif isinstance(event, MessageDelta):
            usage = merge_usage(started, event.usage)
            stop: dict[str, Any] = {"stopReason": event.stop_reason or "end_turn"}
            if event.stop_sequence is not None:
                stop["additionalModelResponseFields"] = {"stop_sequence": event.stop_sequence}
            yield {"messageStop": stop}
        elif isinstance(event, MessageStop):
            yield {"metadata": {"usage": encode_usage(usage), "metrics": {"latencyMs": latency_ms}}}


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
            elif isinstance(delta, dict) and "reasoningContent" in delta:
                yield from _reasoning_delta(index, delta["reasoningContent"], started,
                                            (*path, "delta", "reasoningContent"))
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


def _reasoning_delta(index: int, body: Any, started: set[int], path: Path) -> Iterator[StreamEvent]:
    """A ``reasoningContent`` delta: text, signature or (whole, opening its block) redacted."""
    key, value = one_key(body, path, ("text", "signature", "redactedContent"),
                         "ReasoningContentBlockDelta")
    if key == "redactedContent":
        if index in started:
            raise WireFormatError("redactedContent must open its content block", (*path, key))
        started.add(index)
        yield BlockStart(index=index,
                         block=RedactedThinkingBlock(data=redacted_data(value, (*path, key), check=False)))
        return
    if not isinstance(value, str):
        raise WireFormatError("Input should be a valid string", (*path, key))
    if index not in started:
        started.add(index)
        yield BlockStart(index=index, block=ThinkingBlock())
    yield ThinkingDelta(index=index, text=value) if key == "text" else SignatureDelta(index=index, signature=value)


def _message_delta(stop: dict[str, Any] | None, usage: dict[str, Any], path: Path) -> MessageDelta:
    stop = stop or {}
    extra = stop.get("additionalModelResponseFields") or {}
    seq = extra.get("stop_sequence") if isinstance(extra, dict) else None
    return MessageDelta(
        stop_reason=_stop_reason(stop.get("stopReason"), (*path, "stopReason")),
        stop_sequence=seq if isinstance(seq, str) else None,
        usage=decode_usage(usage),
    )
