"""Responses API streams (numbered ``response.*`` events) <-> neutral stream events.

:class:`StreamEncoder` writes the gateway's events, in the API's order, each with its
``sequence_number``:

- ``response.created``, ``response.in_progress`` (on the neutral message start);
- per text block: ``response.output_item.added`` (a ``message``),
  ``response.content_part.added`` (an ``output_text``), ``response.output_text.delta``...,
  ``response.output_text.done``, ``response.content_part.done``,
  ``response.output_item.done``;
- per tool call: ``response.output_item.added`` (a ``function_call``),
  ``response.function_call_arguments.delta``..., ``.done``, ``response.output_item.done``
  (a custom tool: ``response.custom_tool_call_input.delta``/``.done``, with the call's
  text, not JSON);
- ``response.completed``, or ``response.incomplete`` (stopped at ``max_output_tokens``);
- on a failure after the start, :meth:`StreamEncoder.fail`: an ``error`` event and
  ``response.failed``.

:func:`decode_events` reads an upstream's stream back into neutral events.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import jiter

from ...errors import BackendErrorKind, WireFormatError
from ...messages import Request, TextBlock, ToolUseBlock, Usage
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
from ._tools import CUSTOM_INPUT, ToolKinds, joined_name
from .errors import backend_error, error_code, response_error
from .requests import encode_call
from .responses import echo_fields, envelope, item_id, status_of, stop_reason_of

__all__ = ["StreamEncoder", "decode_events", "encode_events"]


@dataclass
class _Open:
    """A content block being streamed: its output index, item and text so far."""

    output_index: int
    item: dict[str, Any]
    parts: list[str] = field(default_factory=list)
    custom_sent: int = 0  # characters of a custom call's text already sent


class StreamEncoder:
    """Neutral events -> Responses stream events. ``response_id`` replaces the backend's
    message id; ``echo`` is the request settings the response repeats."""

    def __init__(self, *, request: Request | None = None, echo: dict[str, Any] | None = None,
                 response_id: str | None = None, created_at: float | None = None) -> None:
        self.kinds = ToolKinds(request)
        self.echo = echo if echo is not None else echo_fields()
        self.response_id = response_id or ""
        self.created_at = time.time() if created_at is None else created_at
        self.model: str | None = None
        self.sequence = 0
        self.started = False
        self.done: dict[int, dict[str, Any]] = {}
        self.open: dict[int, _Open] = {}
        self.usage = Usage()
        self.stop_reason: str | None = None
        #: The final response object, once the stream ended (completed, incomplete, failed).
        self.final: dict[str, Any] | None = None

    def _event(self, kind: str, **fields: Any) -> dict[str, Any]:
        event = {"type": kind, "sequence_number": self.sequence, **fields}
        self.sequence += 1
        return event

    def _body(self, status: str, **extra: Any) -> dict[str, Any]:
        output = [self.done[k] for k in sorted(self.done)]
        return envelope(self.response_id, created_at=self.created_at, model=self.model,
                        status=status, output=output, echo=self.echo,
                        usage=self.usage if status != "in_progress" else None, **extra)

    def encode(self, events: Iterable[StreamEvent]) -> Iterator[dict[str, Any]]:
        for event in events:
            yield from self._one(event)

    def _one(self, event: StreamEvent) -> Iterator[dict[str, Any]]:
        if isinstance(event, MessageStart):
            self.started = True
            self.response_id = self.response_id or event.id or "resp_"
            self.model = event.model
            self.usage = Usage(input_tokens=event.usage.input_tokens)
            body = self._body("in_progress")
            yield self._event("response.created", response=body)
            yield self._event("response.in_progress", response=body)
        elif isinstance(event, BlockStart):
            yield from self._start(event)
        elif isinstance(event, TextDelta):
            yield from self._text(self.open[event.index], event.text)
        elif isinstance(event, ToolInputDelta):
            yield from self._arguments(self.open[event.index], event.partial_json)
        elif isinstance(event, BlockStop):
            yield from self._stop(self.open.pop(event.index))
        elif isinstance(event, MessageDelta):
            self.stop_reason = event.stop_reason
            if event.usage.input_tokens:
                self.usage = Usage(input_tokens=event.usage.input_tokens,
                                   output_tokens=self.usage.output_tokens)
            self.usage = Usage(input_tokens=self.usage.input_tokens,
                               output_tokens=event.usage.output_tokens)
        elif isinstance(event, MessageStop):
            status, incomplete = status_of(self.stop_reason)
            self.final = self._body(status, incomplete_details=incomplete)
            yield self._event(f"response.{status}", response=self.final)

    def _start(self, event: BlockStart) -> Iterator[dict[str, Any]]:
        index = len(self.done) + len(self.open)
        block = event.block
        if isinstance(block, TextBlock):
            item = {"id": item_id("msg", self.response_id, index), "type": "message",
                    "status": "in_progress", "role": "assistant", "content": []}
            state = _Open(index, item)
            self.open[event.index] = state
            yield self._event("response.output_item.added", output_index=index, item=item)
            yield self._event("response.content_part.added", item_id=item["id"],
                              output_index=index, content_index=0, part=_text_part(""))
            if block.text:
                yield from self._text(state, block.text)
            return
        call = encode_call(block, self.kinds)
        prefix = "ctc" if call["type"] == "custom_tool_call" else "fc"
        if call["type"] == "custom_tool_call":
            call["input"] = ""
        else:
            call["arguments"] = ""
        item = {"id": item_id(prefix, self.response_id, index), **call, "status": "in_progress"}
        self.open[event.index] = _Open(index, item)
        yield self._event("response.output_item.added", output_index=index, item=item)

    def _text(self, state: _Open, text: str) -> Iterator[dict[str, Any]]:
        state.parts.append(text)
        yield self._event("response.output_text.delta", item_id=state.item["id"],
                          output_index=state.output_index, content_index=0, delta=text,
                          logprobs=[])

    def _arguments(self, state: _Open, fragment: str) -> Iterator[dict[str, Any]]:
        state.parts.append(fragment)
        if state.item["type"] == "function_call":
            yield self._event("response.function_call_arguments.delta", item_id=state.item["id"],
                              output_index=state.output_index, delta=fragment)
            return
        text = _custom_so_far("".join(state.parts))
        if len(text) > state.custom_sent:
            delta, state.custom_sent = text[state.custom_sent:], len(text)
            yield self._event("response.custom_tool_call_input.delta", item_id=state.item["id"],
                              output_index=state.output_index, delta=delta)

    def _stop(self, state: _Open) -> Iterator[dict[str, Any]]:
        item, index = state.item, state.output_index
        status = "incomplete" if self.stop_reason == "max_tokens" else "completed"
        text = "".join(state.parts)
        if item["type"] == "message":
            part = _text_part(text)
            yield self._event("response.output_text.done", item_id=item["id"], output_index=index,
                              content_index=0, text=text, logprobs=[])
            yield self._event("response.content_part.done", item_id=item["id"],
                              output_index=index, content_index=0, part=part)
            item = {**item, "status": status, "content": [part]}
        elif item["type"] == "function_call":
            yield self._event("response.function_call_arguments.done", item_id=item["id"],
                              output_index=index, name=item["name"], arguments=text)
            item = {**item, "arguments": text, "status": status}
        else:
            full = _custom_so_far(text)
            if len(full) > state.custom_sent:
                yield self._event("response.custom_tool_call_input.delta", item_id=item["id"],
                                  output_index=index, delta=full[state.custom_sent:])
            yield self._event("response.custom_tool_call_input.done", item_id=item["id"],
                              output_index=index, input=full)
            item = {**item, "input": full, "status": status}
        self.done[index] = item
        yield self._event("response.output_item.done", output_index=index, item=item)

    def fail(self, kind: BackendErrorKind, message: str,
             param: str | None = None) -> list[dict[str, Any]]:
        """The events that end a started stream on a failure: ``error``, then
        ``response.failed`` holding what was produced so far."""
        error = self._event("error", code=error_code(kind), message=message, param=param)
        self.final = self._body("failed", error=response_error(kind, message))
        return [error, self._event("response.failed", response=self.final)]


def _text_part(text: str) -> dict[str, Any]:
    return {"type": "output_text", "text": text, "annotations": [], "logprobs": []}


def _custom_so_far(json_text: str) -> str:
    """The text of a custom call's ``{"input": ...}`` JSON cut anywhere."""
    if not json_text.strip():
        return ""
    try:
        value = jiter.from_json(json_text.encode(), partial_mode="trailing-strings")
    except ValueError:
        return ""
    text = value.get(CUSTOM_INPUT, "") if isinstance(value, dict) else ""
    return text if isinstance(text, str) else ""


def encode_events(events: Iterable[StreamEvent], /, *, request: Request | None = None,
                  echo: dict[str, Any] | None = None) -> Iterator[dict[str, Any]]:
    """Neutral events -> Responses stream events (the SSE payloads; each names its type)."""
    yield from StreamEncoder(request=request, echo=echo).encode(events)


# --- decoding ------------------------------------------------------------------------------


class _StreamDecoder:
    def __init__(self) -> None:
        self.started = False
        self.blocks: dict[Any, tuple[int, str]] = {}  # output_index -> (neutral index, type)
        self.next_index = 0
        self.ended = False

    def feed(self, data: Any, n: int) -> Iterator[StreamEvent]:
        if not isinstance(data, dict):
            raise WireFormatError("event must be an object", (n,))
        kind = data.get("type")
        if kind == "error" or "error" in data and kind is None:
            error = data.get("error") if isinstance(data.get("error"), dict) else data
            raise backend_error({"error": error})
        if kind in ("response.created", "response.in_progress", "response.queued"):
            if not self.started:
                self.started = True
                response = data.get("response") or {}
                yield MessageStart(id=str(response.get("id") or ""), model=response.get("model"))
            return
        if not self.started:
            raise WireFormatError(f"{kind} before response.created", (n, "type"))
        position = data.get("output_index")
        if kind == "response.output_item.added":
            item = data.get("item") or {}
            if item.get("type") in ("function_call", "custom_tool_call"):
                yield from self._open(position, item["type"], ToolUseBlock(
                    id=item["call_id"], name=joined_name(item.get("namespace"), item["name"])))
                if item["type"] == "custom_tool_call":
                    yield ToolInputDelta(index=self.blocks[position][0],
                                         partial_json='{"' + CUSTOM_INPUT + '": "')
        elif kind == "response.content_part.added":
            if position not in self.blocks and (data.get("part") or {}).get("type") in (
                    "output_text", "refusal"):
                yield from self._open(position, "message", TextBlock(text=""))
        elif kind in ("response.output_text.delta", "response.refusal.delta"):
            yield TextDelta(index=self._index(position, n), text=str(data.get("delta", "")))
        elif kind == "response.function_call_arguments.delta":
            yield ToolInputDelta(index=self._index(position, n),
                                 partial_json=str(data.get("delta", "")))
        elif kind == "response.custom_tool_call_input.delta":
            yield ToolInputDelta(index=self._index(position, n),
                                 partial_json=json.dumps(str(data.get("delta", "")))[1:-1])
        elif kind == "response.output_item.done" and position in self.blocks:
            index, item_type = self.blocks.pop(position)
            if item_type == "custom_tool_call":
                yield ToolInputDelta(index=index, partial_json='"}')
            yield BlockStop(index=index)
        elif kind in ("response.completed", "response.incomplete", "response.failed"):
            response = data.get("response") or {}
            if kind == "response.failed":
                raise backend_error({"error": response.get("error") or {
                    "message": "the upstream response failed"}})
            for index, item_type in list(self.blocks.values()):
                yield BlockStop(index=index)
            self.blocks.clear()
            usage = response.get("usage") or {}
            details = response.get("incomplete_details") or {}
            calls = any(isinstance(o, dict) and o.get("type") in (
                "function_call", "custom_tool_call") for o in response.get("output") or [])
            yield MessageDelta(
                stop_reason=stop_reason_of(response.get("status"), details.get("reason"), calls),
                usage=Usage(input_tokens=int(usage.get("input_tokens") or 0),
                            output_tokens=int(usage.get("output_tokens") or 0)))
            yield MessageStop()
            self.ended = True

    def _open(self, position: Any, item_type: str,
              block: TextBlock | ToolUseBlock) -> Iterator[StreamEvent]:
        self.blocks[position] = (self.next_index, item_type)
        self.next_index += 1
        yield BlockStart(index=self.blocks[position][0], block=block)

    def _index(self, position: Any, n: int) -> int:
        if position not in self.blocks:
            raise WireFormatError(f"a delta for output item {position}, which is not open",
                                  (n, "output_index"))
        return self.blocks[position][0]


def decode_events(events: Iterable[Any], /) -> Iterator[StreamEvent]:
    """Responses stream events (dicts, or their JSON text) -> neutral events."""
    decoder = _StreamDecoder()
    for n, raw in enumerate(events):
        if isinstance(raw, (str, bytes)):
            text = raw.decode() if isinstance(raw, bytes) else raw
            if text.strip() == "[DONE]":
                break
            raw = json.loads(text)
        yield from decoder.feed(raw, n)
        if decoder.ended:
            break
