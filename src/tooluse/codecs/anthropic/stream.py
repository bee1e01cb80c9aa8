"""Messages API server-sent events <-> the neutral stream events of :mod:`tooluse.stream`.

:func:`encode_events` gives the SSE payloads the gateway sends; :func:`decode_events` reads
the ones the API sends (dicts or JSON text), reusing the response block and stop-reason rules
of :mod:`.responses` and the error mapping of :mod:`.errors`.

Thinking streams as the API streams it: ``content_block_start`` with ``{"type": "thinking",
"thinking": "", "signature": ""}``, ``thinking_delta`` pieces, then one ``signature_delta``
before ``content_block_stop`` (the SDKs set the signature from that delta, not append to it,
so a signature that reached the gateway in pieces is sent whole); a summary part (another
API's) streams as more ``thinking_delta`` text after a blank line, as
:func:`.thinking.answer_text` shows it whole. ``redacted_thinking`` arrives whole in its
``content_block_start``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from ...errors import WireFormatError
from ...messages import (
    SERVER_TOOL_BLOCKS,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
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
    ThinkingJoiner,
    ToolInputDelta,
    tool_input,
)
from .._common import Path
from .cache import decode_usage, encode_usage
from .context import decode_applied, encode_applied
from .errors import backend_error
from .responses import _STOP_OUT, _response_block, _stop_reason, server_side_block
from .server_tools import answer_blocks, is_paired_block, pair_blocks, upstream_block


def encode_events(events: Iterable[StreamEvent]) -> Iterator[dict[str, Any]]:
    """Neutral events -> Messages SSE event payloads (each has its ``type``; the SSE
    ``event:`` name is that type). No ``ping``: the server adds those."""
    started: dict[str, Any] = {}
    edits: Any = None  # the context edits applied, told at the end (message_delta)
    thoughts: dict[int, _Thought] = {}
    # A server tool's neutral block is two wire blocks (its use, its result), an MCP
    # listing none: each neutral index -> the wire index its later events go to.
    wire = _WireIndex()
    for event in wire.renumbered(events):
        if isinstance(event, MessageStart):
            started = encode_usage(event.usage)
            edits = event.applied_edits
            yield {
                "type": "message_start",
                "message": {
                    "id": event.id,
                    "type": "message",
                    "role": "assistant",
                    "model": event.model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": started,
                },
            }
        elif isinstance(event, BlockStart) and isinstance(event.block, SERVER_TOOL_BLOCKS):
            for k, block in enumerate(answer_blocks(event.block)):
                at = event.index + k
                if k:
                    yield {"type": "content_block_stop", "index": at - 1}
                if block["type"] in ("server_tool_use", "mcp_tool_use"):
                    yield {"type": "content_block_start", "index": at,
                           "content_block": {**block, "input": {}}}
                    yield _delta(at, {"type": "input_json_delta",
                                      "partial_json": json.dumps(block["input"],
                                                                 ensure_ascii=False)})
                else:
                    yield {"type": "content_block_start", "index": at, "content_block": block}
        elif isinstance(event, BlockStart):
            yield from _start(event, thoughts)
        elif isinstance(event, TextDelta):
            yield _delta(event.index, {"type": "text_delta", "text": event.text})
        elif isinstance(event, ThinkingDelta):
            thought = thoughts.get(event.index)
            text = thought.piece(event) if thought is not None else event.text
            if text:
                yield _delta(event.index, {"type": "thinking_delta", "thinking": text})
        elif isinstance(event, SignatureDelta):
            thoughts.setdefault(event.index, _Thought()).signature += event.signature
        elif isinstance(event, ToolInputDelta):
            yield _delta(event.index, {"type": "input_json_delta", "partial_json": event.partial_json})
        elif isinstance(event, BlockStop):
            thought = thoughts.pop(event.index, None)
            if thought is not None and thought.signature:
                yield _delta(event.index, {"type": "signature_delta", "signature": thought.signature})
            yield {"type": "content_block_stop", "index": event.index}
        elif isinstance(event, MessageDelta):
            edits = event.applied_edits if event.applied_edits is not None else edits
            # The input side again only where the end corrects the start (the API's own
            # message_delta repeats it; clients read it from either).
            usage = {key: value for key, value in encode_usage(event.usage).items()
                     if value and value != started.get(key) and key != "output_tokens"}
            usage["output_tokens"] = event.usage.output_tokens
            delta: dict[str, Any] = {
                "type": "message_delta",
                "delta": {
                    "stop_reason": _STOP_OUT[event.stop_reason] if event.stop_reason else None,
                    "stop_sequence": event.stop_sequence,
                },
                "usage": usage,
            }
            if edits is not None:
                delta["context_management"] = encode_applied(edits)
            yield delta
        elif isinstance(event, MessageStop):
            yield {"type": "message_stop"}


class _WireIndex:
    """The wire index of each neutral block: a server tool's block takes two (its use, then
    its result), one with no Messages form none (left out with its stop)."""

    def __init__(self) -> None:
        self.next = 0
        self.of: dict[int, int] = {}  # neutral index -> its last wire index
        self.skipped: set[int] = set()

    def renumbered(self, events: Iterable[StreamEvent]) -> Iterator[StreamEvent]:
        """The events with wire indices; a server block's start carries its first."""
        for event in events:
            index = getattr(event, "index", None)
            if isinstance(event, BlockStart):
                width = len(list(answer_blocks(event.block))) \
                    if isinstance(event.block, SERVER_TOOL_BLOCKS) else 1
                if width == 0:
                    self.skipped.add(event.index)
                    continue
                first = self.next
                self.next += width
                self.of[event.index] = self.next - 1
                yield event.model_copy(update={"index": first})
            elif index is None:
                yield event
            elif index not in self.skipped:
                yield event.model_copy(update={"index": self.of.get(index, index)})


class _Thought:
    """An open thinking block being encoded: its pieces joined as they come (a summary part
    after a blank line, as the whole answer shows it) and its signature so far."""

    def __init__(self) -> None:
        self.joined = ThinkingJoiner()
        self.signature = ""

    def piece(self, delta: ThinkingDelta) -> str:
        """The ``thinking_delta`` text of ``delta``."""
        return self.joined.add(delta.summary, delta.text)


def _start(event: BlockStart, thoughts: dict[int, _Thought]) -> Iterator[dict[str, Any]]:
    block = event.block
    start: dict[str, Any]
    if isinstance(block, ThinkingBlock):
        start = {"type": "thinking", "thinking": "", "signature": ""}
        thoughts[event.index] = _Thought()
    elif isinstance(block, RedactedThinkingBlock):
        start = {"type": "redacted_thinking", "data": block.data}
    elif isinstance(block, TextBlock):
        start = {"type": "text", "text": ""}
    else:
        assert isinstance(block, ToolUseBlock)
        start = {"type": "tool_use", "id": block.id, "name": block.name, "input": {}}
    yield {"type": "content_block_start", "index": event.index, "content_block": start}
    if isinstance(block, TextBlock) and block.text:
        yield _delta(event.index, {"type": "text_delta", "text": block.text})
    elif isinstance(block, ThinkingBlock):
        # a block that starts with content shows it as answer_text does, and the deltas
        # after it go on from there (a next summary part after a blank line)
        thought = thoughts[event.index]
        if text := thought.joined.block(block):
            yield _delta(event.index, {"type": "thinking_delta", "thinking": text})
        thought.signature = block.signature or ""


def _delta(index: int, delta: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": delta}


def _get(data: dict[str, Any], key: str, kind: type | tuple[type, ...], path: Path) -> Any:
    if key not in data:
        raise WireFormatError("Field required", (*path, key))
    value = data[key]
    if not isinstance(value, kind) or isinstance(value, bool) and kind is int:
        raise WireFormatError(f"unexpected value {value!r}", (*path, key))
    return value


class _Joining:
    """The blocks of a tool search or an MCP call in an upstream's stream: the use (its
    input streamed as JSON deltas) and then the result (whole in its start), held until the
    result stops and then given as one neutral block."""

    def __init__(self) -> None:
        self.uses: dict[int, tuple[dict[str, Any], list[str]]] = {}  # wire index -> use
        self.stopped: dict[str, tuple[Path, Any]] = {}  # use id -> validated use
        self.results: dict[int, tuple[Path, Any]] = {}  # wire index -> validated result

    def takes(self, kind: str, index: int, data: dict[str, Any], path: Path) -> bool:
        """Whether this event belongs to such a block (and is kept here)."""
        if kind == "content_block_start":
            raw = data.get("content_block")
            if not is_paired_block(raw):
                return False
            assert isinstance(raw, dict)
            if raw["type"] in ("server_tool_use", "mcp_tool_use"):
                self.uses[index] = (raw, [])
            else:
                self.results[index] = ((*path, "content_block"),
                                       upstream_block(raw, (*path, "content_block")))
            return True
        if index in self.uses:
            delta = data.get("delta")
            if kind == "content_block_delta" and isinstance(delta, dict):
                piece = delta.get("partial_json")
                if isinstance(piece, str):
                    self.uses[index][1].append(piece)
            elif kind == "content_block_stop":
                raw, pieces = self.uses.pop(index)
                text = "".join(pieces)
                full = {**raw, "input": tool_input(text, index, str(raw.get("name")))
                        if text.strip() else raw.get("input") or {}}
                use = upstream_block(full, path)
                self.stopped[use.id] = (path, use)
            return True
        return index in self.results

    def done(self, index: int) -> Any:
        """The neutral block whose result stopped at ``index``."""
        path, result = self.results.pop(index)
        use = self.stopped.pop(result.tool_use_id, None)
        if use is None:
            raise WireFormatError(f"a {result.type} block without its use before it", path)
        return pair_blocks([use, (path, result)])[0][1]


def decode_events(events: Iterable[Any]) -> Iterator[StreamEvent]:
    """Messages SSE event payloads (dicts, or JSON text) -> neutral events. ``ping`` is
    skipped; an ``error`` event raises :class:`BackendError`."""
    skipped: set[int] = set()  # indices of server-side blocks, left out
    renumber: dict[int, int] = {}  # index on the wire -> neutral index (contiguous)
    joining = _Joining()  # a tool search's or MCP call's use and result, joined
    for n, raw in enumerate(events):
        data = json.loads(raw) if isinstance(raw, (str, bytes)) else raw
        path: Path = (n,)
        if not isinstance(data, dict):
            raise WireFormatError("stream event must be an object", path)
        kind = data.get("type")
        if kind == "ping":
            continue
        if kind in ("content_block_start", "content_block_delta", "content_block_stop"):
            wire_index = _get(data, "index", int, path)
            if joining.takes(kind, wire_index, data, path):
                if kind == "content_block_stop" and wire_index in joining.results:
                    block = joining.done(wire_index)
                    index = renumber.setdefault(wire_index, len(renumber))
                    yield BlockStart(index=index, block=block)
                    yield BlockStop(index=index)
                continue
            if kind == "content_block_start" and server_side_block(data.get("content_block")):
                skipped.add(wire_index)
            if wire_index in skipped:
                continue
            delta = data.get("delta")
            if kind == "content_block_delta" and isinstance(delta, dict) \
                    and delta.get("type") == "citations_delta":
                continue
            renumber.setdefault(wire_index, len(renumber))
            data = {**data, "index": renumber[wire_index]}
        if kind == "error":
            raise backend_error(data)
        if kind == "message_start":
            message = _get(data, "message", dict, path)
            yield MessageStart(
                id=message.get("id") or "",
                model=message.get("model"),
                usage=decode_usage(message.get("usage")),
            )
        elif kind == "content_block_start":
            index = _get(data, "index", int, path)
            block = _response_block(_get(data, "content_block", dict, path), (*path, "content_block"))
            if isinstance(block, ToolUseBlock):
                yield BlockStart(index=index, block=ToolUseBlock(id=block.id, name=block.name))
                if block.input:
                    yield ToolInputDelta(index=index, partial_json=json.dumps(block.input))
            elif isinstance(block, ThinkingBlock):
                yield BlockStart(index=index, block=ThinkingBlock())
                if block.text:
                    yield ThinkingDelta(index=index, text=block.text)
                if block.signature:
                    yield SignatureDelta(index=index, signature=block.signature)
            elif isinstance(block, RedactedThinkingBlock):
                yield BlockStart(index=index, block=block)
            else:
                yield BlockStart(index=index, block=TextBlock(text=""))
                if block.text:
                    yield TextDelta(index=index, text=block.text)
        elif kind == "content_block_delta":
            index = _get(data, "index", int, path)
            delta = _get(data, "delta", dict, path)
            dtype = delta.get("type")
            if dtype == "text_delta":
                yield TextDelta(index=index, text=_get(delta, "text", str, (*path, "delta")))
            elif dtype == "thinking_delta":
                yield ThinkingDelta(index=index, text=_get(delta, "thinking", str, (*path, "delta")))
            elif dtype == "signature_delta":
                yield SignatureDelta(
                    index=index, signature=_get(delta, "signature", str, (*path, "delta"))
                )
            elif dtype == "input_json_delta":
                yield ToolInputDelta(
                    index=index, partial_json=_get(delta, "partial_json", str, (*path, "delta"))
                )
            else:
                raise WireFormatError(f"unsupported delta type {dtype!r}", (*path, "delta", "type"))
        elif kind == "content_block_stop":
            yield BlockStop(index=_get(data, "index", int, path))
        elif kind == "message_delta":
            delta = data.get("delta") or {}
            yield MessageDelta(
                stop_reason=_stop_reason(delta.get("stop_reason"), (*path, "delta", "stop_reason")),
                stop_sequence=delta.get("stop_sequence"),
                usage=decode_usage(data.get("usage")),
                applied_edits=decode_applied(data.get("context_management")),
            )
        elif kind == "message_stop":
            yield MessageStop()
        else:
            raise WireFormatError(f"unsupported stream event type {kind!r}", (*path, "type"))
