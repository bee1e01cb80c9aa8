"""Where the calls of a gateway answer came from, told without touching the wire body.

Every API's body stays exactly to its spec, so the calls' origins
(:class:`~tooluse.messages.CallOrigin`: the model's own, edited by a rule, added by a rule)
go beside it: a response header on JSON answers, :data:`ORIGINS_HEADER`, and one log line
(logger ``tooluse.server``) per answer holding a call that is not the model's as written,
streamed or not. A backend that records no origin (a native-tool upstream) gives calls
that are all ``model``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence

from ...messages import Response, ToolUseBlock
from ...stream import BlockStart, StreamEvent

__all__ = ["ORIGINS_HEADER", "header_value", "log_origins", "logged_stream", "response_headers"]

log = logging.getLogger("tooluse.server")

#: ``ID=SOURCE[:RULE+RULE...]`` per call, joined by ``", "``: SOURCE is ``model``,
#: ``edited`` or ``added``; the rules are those that made, changed or steered the call.
ORIGINS_HEADER = "x-tooluse-call-origins"


def _rules(block: ToolUseBlock) -> list[str]:
    origin = block.origin
    if origin is None:
        return []
    rules = [origin.rule] if origin.rule else []
    rules += [c.rule for c in origin.changes]
    rules += origin.steered_by
    return list(dict.fromkeys(rules))


def header_value(calls: Sequence[ToolUseBlock]) -> str | None:
    """The :data:`ORIGINS_HEADER` value for ``calls`` (None when there is none)."""
    if not calls:
        return None
    items = []
    for block in calls:
        rules = _rules(block)
        items.append(f"{block.id}={block.source}" + (f":{'+'.join(rules)}" if rules else ""))
    return ", ".join(items)


def log_origins(api: str, request_id: str | None, calls: Sequence[ToolUseBlock]) -> None:
    """One log line for an answer whose calls are not all the model's as written."""
    touched = [b for b in calls if b.origin is not None
               and (b.source != "model" or b.origin.steered_by)]
    if not touched:
        return
    log.info("%s %s: %d of %d calls not the model's as written: %s", api, request_id or "-",
             sum(b.source != "model" for b in calls), len(calls),
             "; ".join(f"{b.id} {b.name}: {b.origin.describe()}" for b in touched
                       if b.origin is not None))


def response_headers(api: str, request_id: str | None, response: Response) -> dict[str, str]:
    """The header (and the log line) of a JSON answer's call origins."""
    calls = response.tool_uses
    log_origins(api, request_id, calls)
    value = header_value(calls)
    return {ORIGINS_HEADER: value} if value is not None else {}


def logged_stream(events: Iterator[StreamEvent], api: str,
                  request_id: str | None) -> Iterator[StreamEvent]:
    """``events`` as they are; once they end, the log line of the calls' origins (a stream's
    headers are sent before its calls are known)."""
    calls: list[ToolUseBlock] = []
    for event in events:
        if isinstance(event, BlockStart) and isinstance(event.block, ToolUseBlock):
            calls.append(event.block)
        yield event
    log_origins(api, request_id, calls)
