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
- per thinking block: ``response.output_item.added`` (a ``reasoning`` item), then for its
  text ``response.content_part.added`` (a ``reasoning_text``),
  ``response.reasoning_text.delta``..., ``.done``, ``response.content_part.done``, and for
  each summary part ``response.reasoning_summary_part.added``,
  ``response.reasoning_summary_text.delta``..., ``.done``,
  ``response.reasoning_summary_part.done``; ``response.output_item.done`` carries the
  whole item, its ``encrypted_content`` (the block's signature) included. A redacted thinking
  block has no Responses form: its events are skipped (with a log line);
- ``response.completed``, or ``response.incomplete`` (stopped at ``max_output_tokens``);
- on a failure after the start, :meth:`StreamEncoder.fail`: an ``error`` event and
  ``response.failed``.

An upstream's stream is read back by :mod:`.stream_decode`.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import jiter

from ...errors import BackendErrorKind
from ...messages import (
    SERVER_TOOL_BLOCKS,
    RedactedThinkingBlock,
    Request,
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
    tool_input,
)
from .._common import dropped
from ._reasoning import reasoning_item
from ._tools import CUSTOM_INPUT, ToolKinds
from ._wire import TARGET
from .errors import default_param, error_code, response_error
from .request_encoding import encode_call
from .responses import (
    echo_fields,
    envelope,
    item_id,
    output_item,
    server_items,
    status_of,
)
from .shell_tools import KINDS as CLIENT_RUN

#: The stream events of a reasoning item's parts the decoder reads (the ``.done`` ones
#: repeat what the deltas brought; the finished item is read at ``output_item.done``).
_REASONING_EVENTS = ("response.reasoning_text.delta", "response.reasoning_summary_part.added",
                     "response.reasoning_summary_text.delta")

__all__ = ["StreamEncoder", "encode_events"]


@dataclass
class _Open:
    """A content block being streamed: its output index, item and text so far."""

    output_index: int
    item: dict[str, Any]
    parts: list[str] = field(default_factory=list)
    custom_sent: int = 0  # characters of a custom call's text already sent


@dataclass
class _Thinking(_Open):
    """A thinking block being streamed as a reasoning item: its text parts and summary
    parts so far, the part now open (``("text", k)`` or ``("summary", k)``) and the
    signature."""

    texts: list[str] = field(default_factory=list)
    summary: list[str] = field(default_factory=list)
    current: tuple[str, int] | None = None
    signature: str | None = None


class StreamEncoder:
    """Neutral events -> Responses stream events. ``response_id`` replaces the backend's
    message id; ``echo`` is the request settings the response repeats."""

    def __init__(self, *, request: Request | None = None, echo: dict[str, Any] | None = None,
                 response_id: str | None = None, created_at: float | None = None) -> None:
        self.kinds = ToolKinds(request)
        self.request = request
        self.echo = echo if echo is not None else echo_fields()
        self.response_id = response_id or ""
        self.created_at = time.time() if created_at is None else created_at
        self.model: str | None = None
        self.sequence = 0
        self.started = False
        self.done: dict[int, dict[str, Any]] = {}
        self.open: dict[int, _Open] = {}
        # redacted thinking blocks, which have no form here, and server tools' blocks, whose
        # items are sent whole at their start
        self.skipped: set[int] = set()
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
            self.usage = event.usage.model_copy(update={"output_tokens": 0})
            body = self._body("in_progress")
            yield self._event("response.created", response=body)
            yield self._event("response.in_progress", response=body)
        elif isinstance(event, BlockStart):
            yield from self._start(event)
        elif isinstance(event, (TextDelta, ToolInputDelta, ThinkingDelta, SignatureDelta,
                                BlockStop)) and event.index in self.skipped:
            if isinstance(event, BlockStop):
                self.skipped.discard(event.index)
        elif isinstance(event, TextDelta):
            yield from self._text(self.open[event.index], event.text)
        elif isinstance(event, ToolInputDelta):
            yield from self._arguments(self.open[event.index], event.partial_json)
        elif isinstance(event, ThinkingDelta):
            yield from self._thinking(self.open[event.index], event.text, event.summary)
        elif isinstance(event, SignatureDelta):
            state = self.open[event.index]
            if isinstance(state, _Thinking):
                state.signature = (state.signature or "") + event.signature
        elif isinstance(event, BlockStop):
            yield from self._stop(self.open.pop(event.index))
        elif isinstance(event, MessageDelta):
            self.stop_reason = event.stop_reason
            self.usage = merge_usage(self.usage, event.usage)
        elif isinstance(event, MessageStop):
            status, incomplete = status_of(self.stop_reason)
            self.final = self._body(status, incomplete_details=incomplete)
            yield self._event(f"response.{status}", response=self.final)

    def _start(self, event: BlockStart) -> Iterator[dict[str, Any]]:
        index = len(self.done) + len(self.open)
        block = event.block
        if isinstance(block, SERVER_TOOL_BLOCKS):
            self.skipped.add(event.index)  # whole here: its stop has nothing to add
            for item in server_items(block, self.response_id, index, self.kinds,
                                     self.request):
                yield from self._server_item(index, item)
                index += 1
            return
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
        if isinstance(block, RedactedThinkingBlock):
            dropped("the Responses API has no redacted reasoning", ("content", event.index),
                    TARGET, strict=False)
            self.skipped.add(event.index)
            return
        if isinstance(block, ThinkingBlock):
            item = {"id": block.id if block.id is not None else item_id(
                "rs", self.response_id, index), "type": "reasoning", "summary": []}
            thinking = _Thinking(index, item, signature=block.signature)
            self.open[event.index] = thinking
            yield self._event("response.output_item.added", output_index=index, item=item)
            if block.text:
                yield from self._thinking(thinking, block.text, None)
            for number, part in enumerate(block.summary):
                yield from self._thinking(thinking, part, number)
            return
        assert isinstance(block, ToolUseBlock)
        if self.kinds.of(block.name).kind in CLIENT_RUN:
            # its item is made of the whole input: added and done when the input is
            self.open[event.index] = _Open(index, {"type": "client_run", "call": block})
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

    def _server_item(self, index: int, item: dict[str, Any]) -> Iterator[dict[str, Any]]:
        """The events of an item of a tool the server ran, which is whole already: added
        (in progress), its own progress events, done."""
        kind, ids = item["type"], {"item_id": item["id"], "output_index": index}
        if kind == "mcp_call":
            started = {**item, "arguments": "", "output": None, "error": None,
                       "status": "in_progress"}
            yield self._event("response.output_item.added", output_index=index, item=started)
            yield self._event("response.mcp_call_arguments.delta", **ids,
                              delta=item["arguments"])
            yield self._event("response.mcp_call_arguments.done", **ids,
                              arguments=item["arguments"])
            yield self._event("response.mcp_call.in_progress", **ids)
            yield self._event("response.mcp_call.failed" if item["status"] == "failed"
                              else "response.mcp_call.completed", **ids)
        elif kind == "mcp_list_tools":
            yield self._event("response.output_item.added", output_index=index,
                              item={**item, "tools": [], "error": None})
            yield self._event("response.mcp_list_tools.in_progress", **ids)
            yield self._event("response.mcp_list_tools.failed" if item.get("error")
                              else "response.mcp_list_tools.completed", **ids)
        elif "status" in item:
            yield self._event("response.output_item.added", output_index=index,
                              item={**item, "status": "in_progress"})
        else:
            yield self._event("response.output_item.added", output_index=index, item=item)
        self.done[index] = item
        yield self._event("response.output_item.done", output_index=index, item=item)

    def _text(self, state: _Open, text: str) -> Iterator[dict[str, Any]]:
        state.parts.append(text)
        yield self._event("response.output_text.delta", item_id=state.item["id"],
                          output_index=state.output_index, content_index=0, delta=text,
                          logprobs=[])

    def _arguments(self, state: _Open, fragment: str) -> Iterator[dict[str, Any]]:
        state.parts.append(fragment)
        if state.item["type"] == "client_run":
            return
        if state.item["type"] == "function_call":
            yield self._event("response.function_call_arguments.delta", item_id=state.item["id"],
                              output_index=state.output_index, delta=fragment)
            return
        text = _custom_so_far("".join(state.parts))
        if len(text) > state.custom_sent:
            delta, state.custom_sent = text[state.custom_sent:], len(text)
            yield self._event("response.custom_tool_call_input.delta", item_id=state.item["id"],
                              output_index=state.output_index, delta=delta)

    def _thinking(self, state: _Open, text: str, summary: int | None) -> Iterator[dict[str, Any]]:
        """A piece of a thinking block's text (``summary`` None) or of its summary part
        ``summary``, opening (and closing the previous) part as needed."""
        assert isinstance(state, _Thinking)
        ids = {"item_id": state.item["id"], "output_index": state.output_index}
        if summary is None:
            if not text:
                return
            if state.current is None or state.current[0] != "text":
                yield from self._close_part(state)
                state.texts.append("")
                state.current = ("text", len(state.texts) - 1)
                yield self._event("response.content_part.added", **ids,
                                  content_index=state.current[1],
                                  part={"type": "reasoning_text", "text": ""})
            k = state.current[1]
            state.texts[k] += text
            yield self._event("response.reasoning_text.delta", **ids, content_index=k, delta=text)
            return
        if state.current != ("summary", summary):
            yield from self._close_part(state)
            while len(state.summary) <= summary:
                state.summary.append("")
                state.current = ("summary", len(state.summary) - 1)
                yield self._event("response.reasoning_summary_part.added", **ids,
                                  summary_index=state.current[1],
                                  part={"type": "summary_text", "text": ""})
                if state.current[1] < summary:
                    yield from self._close_part(state)
            state.current = ("summary", summary)
        state.summary[summary] += text
        if text:
            yield self._event("response.reasoning_summary_text.delta", **ids,
                              summary_index=summary, delta=text)

    def _close_part(self, state: _Thinking) -> Iterator[dict[str, Any]]:
        """The ``.done`` events of the thinking block's open part, if one is open."""
        if state.current is None:
            return
        (kind, k), state.current = state.current, None
        ids = {"item_id": state.item["id"], "output_index": state.output_index}
        if kind == "text":
            text = state.texts[k]
            yield self._event("response.reasoning_text.done", **ids, content_index=k, text=text)
            yield self._event("response.content_part.done", **ids, content_index=k,
                              part={"type": "reasoning_text", "text": text})
        else:
            text = state.summary[k]
            yield self._event("response.reasoning_summary_text.done", **ids, summary_index=k,
                              text=text)
            yield self._event("response.reasoning_summary_part.done", **ids, summary_index=k,
                              part={"type": "summary_text", "text": text})

    def _stop(self, state: _Open) -> Iterator[dict[str, Any]]:
        item, index = state.item, state.output_index
        if isinstance(state, _Thinking):
            yield from self._close_part(state)
            item = reasoning_item(item["id"], state.summary, state.texts, state.signature)
            self.done[index] = item
            yield self._event("response.output_item.done", output_index=index, item=item)
            return
        status = "incomplete" if self.stop_reason == "max_tokens" else "completed"
        text = "".join(state.parts)
        if item["type"] == "client_run":
            call = item["call"].model_copy(update={"input": tool_input(
                text, state.output_index, item["call"].name, complete=False)})
            item = output_item(call, self.response_id, index, self.kinds, status)
            yield self._event("response.output_item.added", output_index=index,
                              item={**item, "status": "in_progress"})
            self.done[index] = item
            yield self._event("response.output_item.done", output_index=index, item=item)
            return
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
        error = self._event("error", code=error_code(kind), message=message,
                            param=param or default_param(kind))
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
