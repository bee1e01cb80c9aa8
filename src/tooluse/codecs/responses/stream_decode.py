"""Responses API streams (numbered ``response.*`` events) read back into neutral events:
:func:`decode_events` (a reasoning item's text and summary deltas as
:class:`ThinkingDelta`, its ``encrypted_content`` from ``response.output_item.done`` as one
:class:`SignatureDelta`; what a finished item or part holds beyond the deltas that came is
sent as one more delta). The other way is :mod:`.stream`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ...errors import WireFormatError
from ...messages import (
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
)
from ...stream import (
    WHOLE_BLOCKS,
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
)
from .._common import validate
from ._reasoning import decode_item
from ._tools import CUSTOM_INPUT, joined_name
from ._wire import _ReasoningIn
from .errors import backend_error
from .responses import (
    decode_output_item,
    decode_usage,
    stop_reason_of,
)
from .server_tools import ITEMS as SERVER_ITEMS
from .server_tools import ServerItems

#: The stream events of a reasoning item's parts the decoder reads (the ``.done`` ones
#: repeat what the deltas brought; the finished item is read at ``output_item.done``).
_REASONING_EVENTS = ("response.reasoning_text.delta", "response.reasoning_summary_part.added",
                     "response.reasoning_summary_text.delta")

__all__ = ["decode_events"]


@dataclass
class _Seen:
    """What a reasoning item's deltas brought so far: its text, its summary parts."""

    text: str = ""
    summary: dict[int, str] = field(default_factory=dict)


def _rest(full: str, seen: str) -> str:
    """What a finished text holds beyond the deltas that came ("" when it does not
    continue them: the deltas stand)."""
    return full[len(seen):] if full.startswith(seen) else ""


class _StreamDecoder:
    def __init__(self) -> None:
        self.started = False
        self.blocks: dict[Any, tuple[int, str]] = {}  # output_index -> (neutral index, type)
        self.reasoning: dict[Any, _Seen] = {}  # output_index -> a reasoning item's deltas
        self.next_index = 0
        self.ended = False
        self.server = ServerItems()

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
            yield from self._item_added(data.get("item") or {}, position)
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
        elif kind in _REASONING_EVENTS:
            yield from self._reasoning(kind, data, position, n)
        elif kind == "response.output_item.done":
            yield from self._item_done(data, position, n)
        elif kind in ("response.completed", "response.incomplete", "response.failed"):
            yield from self._finished(kind, data.get("response") or {})

    def _item_added(self, item: dict[str, Any], position: Any) -> Iterator[StreamEvent]:
        """``response.output_item.added``: a reasoning item or a call opens its block."""
        if item.get("type") == "reasoning":
            item_id = item.get("id")
            yield from self._open(position, "reasoning", ThinkingBlock(
                id=item_id if isinstance(item_id, str) else None))
            self.reasoning[position] = _Seen()
        elif item.get("type") in ("function_call", "custom_tool_call"):
            yield from self._open(position, item["type"], ToolUseBlock(
                id=item["call_id"], name=joined_name(item.get("namespace"), item["name"])))
            if item["type"] == "custom_tool_call":
                yield ToolInputDelta(index=self.blocks[position][0],
                                     partial_json='{"' + CUSTOM_INPUT + '": "')

    def _item_done(self, data: dict[str, Any], position: Any, n: int) -> Iterator[StreamEvent]:
        """``response.output_item.done``: an open block closes; a client-run shell call or a
        server-side item, which open no block as they stream, come whole."""
        item = data.get("item")
        if position in self.blocks:
            if self.blocks[position][1] == "reasoning":
                yield from self._reasoning_done(item, position, n)
            index, item_type = self.blocks.pop(position)
            if item_type == "custom_tool_call":
                yield ToolInputDelta(index=index, partial_json='"}')
            yield BlockStop(index=index)
        elif isinstance(item, dict) and item.get("type") in (
                "local_shell_call", "shell_call", "apply_patch_call"):
            call = decode_output_item(item, (n, "item"))[0]
            assert isinstance(call, ToolUseBlock)
            yield BlockStart(index=self.next_index, block=call.model_copy(update={"input": {}}))
            yield ToolInputDelta(index=self.next_index, partial_json=json.dumps(call.input))
            yield BlockStop(index=self.next_index)
            self.next_index += 1
        elif isinstance(item, dict) and item.get("type") in SERVER_ITEMS:
            for block in self.server.add(item, (n, "item")):
                assert isinstance(block, WHOLE_BLOCKS)
                yield BlockStart(index=self.next_index, block=block)
                yield BlockStop(index=self.next_index)
                self.next_index += 1

    def _finished(self, kind: str, response: dict[str, Any]) -> Iterator[StreamEvent]:
        """The response's end (``completed``, ``incomplete``; ``failed`` is an error): the
        open blocks close, then the stop reason and usage."""
        if kind == "response.failed":
            raise backend_error({"error": response.get("error") or {
                "message": "the upstream response failed"}})
        for index, _ in list(self.blocks.values()):
            yield BlockStop(index=index)
        self.blocks.clear()
        usage = response.get("usage") or {}
        details = response.get("incomplete_details") or {}
        calls = any(isinstance(o, dict) and o.get("type") in (
            "function_call", "custom_tool_call", "local_shell_call", "shell_call",
            "apply_patch_call") for o in response.get("output") or [])
        yield MessageDelta(
            stop_reason=stop_reason_of(response.get("status"), details.get("reason"), calls),
            usage=decode_usage(usage))
        yield MessageStop()
        self.ended = True

    def _open(self, position: Any, item_type: str,
              block: TextBlock | ToolUseBlock | ThinkingBlock) -> Iterator[StreamEvent]:
        self.blocks[position] = (self.next_index, item_type)
        self.next_index += 1
        yield BlockStart(index=self.blocks[position][0], block=block)

    def _reasoning(self, kind: str, data: dict[str, Any], position: Any,
                   n: int) -> Iterator[StreamEvent]:
        index = self._index(position, n)
        seen = self.reasoning.get(position)
        if seen is None:
            raise WireFormatError(f"{kind} for output item {position}, which is not a reasoning "
                                  "item", (n, "type"))
        if kind == "response.reasoning_text.delta":
            delta = str(data.get("delta", ""))
            seen.text += delta
            yield ThinkingDelta(index=index, text=delta)
            return
        number = data.get("summary_index")
        if not isinstance(number, int) or number < 0:
            raise WireFormatError("summary_index must be a number", (n, "summary_index"))
        if kind == "response.reasoning_summary_part.added":
            if number not in seen.summary:  # the part exists, even if it stays empty
                seen.summary[number] = ""
                yield ThinkingDelta(index=index, text="", summary=number)
        elif kind == "response.reasoning_summary_text.delta":
            delta = str(data.get("delta", ""))
            seen.summary[number] = seen.summary.get(number, "") + delta
            yield ThinkingDelta(index=index, text=delta, summary=number)

    def _reasoning_done(self, raw: Any, position: Any, n: int) -> Iterator[StreamEvent]:
        """The finished reasoning item: what it holds beyond the deltas, its signature."""
        index = self.blocks[position][0]
        seen = self.reasoning.pop(position)
        done = decode_item(validate(_ReasoningIn, raw, (n, "item")), (n, "item"))
        rest = _rest(done.text, seen.text)
        if rest:
            yield ThinkingDelta(index=index, text=rest)
        for number, part in enumerate(done.summary):
            rest = _rest(part, seen.summary.get(number, ""))
            if rest or number not in seen.summary:
                yield ThinkingDelta(index=index, text=rest, summary=number)
        if done.signature is not None:
            yield SignatureDelta(index=index, signature=done.signature)

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
