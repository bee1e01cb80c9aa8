"""What the gateway enforces: that the backend can serve a request, and
``disable_parallel_tool_use`` on a backend's answer.

Before a request runs, :func:`check_servable` refuses (400, naming the field) what the
backend would otherwise silently leave out: tools that only the vendor of the client's own
API runs on its servers (web search, code execution...) or that only that API knows
(``Request.passthrough.required``, each entry ``"PATH: TYPE: what the vendor does"`` or,
for a type the gateway does not know, ``"PATH: TYPE"``), and structured
output on a backend that cannot guarantee it.

Backends are *asked* through the neutral :class:`~tooluse.messages.ToolChoice` (the local
backend builds its prompt and grammar from it; a remote API passes it on), but a prompted
model can still write two ``<invoke>`` blocks. A client that asked for at most one call
is entitled to rely on it, so the gateway keeps the **first** tool call and drops later
ones, both in a finished response and in a stream (where the dropped blocks' events are
skipped and the blocks after them renumbered so indices stay contiguous, as every wire
format requires). The other choices (``any``, ``tool``, ``none``) are the backend's to
honour: the gateway cannot invent a call the model did not make, and it does not rewrite
text; the drop is logged so it is visible.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from typing import Any

from ..backend import Backend
from ..messages import Request, Response, ToolUseBlock
from ..stream import (
    BlockStart,
    BlockStop,
    SignatureDelta,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolInputDelta,
)
from .errors import GatewayError

__all__ = ["check_servable", "limit_response_calls", "limit_stream_calls", "max_tool_calls"]

log = logging.getLogger("tooluse.server")


def check_servable(request: Request, backend: Backend,
                   schema_field: tuple[str | int, ...] = ()) -> None:
    """Raise a 400 :class:`GatewayError` for what ``backend`` cannot serve in ``request``,
    naming the field in the client's API (``schema_field``: where its API holds the
    answer's JSON schema, which the neutral request does not remember)."""
    passthrough = request.passthrough
    forwarded = passthrough is not None and passthrough.api in backend.forwards
    if passthrough is not None and passthrough.required and not forwarded:
        where, _, what = passthrough.required[0].partition(": ")
        what, _, why = what.partition(": ")
        path = tuple(int(p) if p.isdigit() else p for p in where.split("."))
        if why:  # a tool the vendor runs, and what it does there
            message = (f"{where}: tool type {what!r} runs on the {passthrough.api} API's own "
                       f"servers ({why}), not in the client; this gateway's backend "
                       f"({backend.name}) cannot run it")
        else:  # a type this gateway does not know: who runs it is not claimed
            message = (f"{where}: tool type {what!r} is not known to this gateway: only the "
                       f"{passthrough.api} API takes it, and this gateway's backend "
                       f"({backend.name}) is not that API")
        raise GatewayError(message, "invalid_request", path=path)
    if request.response_schema is not None and not (forwarded or backend.structured_output):
        where = ".".join(map(str, schema_field))
        raise GatewayError(
            f"{where + ': ' if where else ''}structured output (a JSON schema for the answer) "
            f"is not supported by this gateway's backend ({backend.name})",
            "invalid_request",
            path=schema_field,
        )


def max_tool_calls(request: Request) -> int | None:
    """1 when the request disabled parallel tool use, else no limit."""
    choice = request.tool_choice
    if choice is not None and choice.disable_parallel_tool_use:
        return 1
    return None


def limit_response_calls(response: Response, limit: int | None) -> Response:
    """``response`` with at most ``limit`` tool_use blocks (the first ones)."""
    if limit is None or len(response.tool_uses) <= limit:
        return response
    kept: list[Any] = []
    calls = 0
    for block in response.content:
        if isinstance(block, ToolUseBlock):
            calls += 1
            if calls > limit:
                log.warning("dropped tool call %r: the request disabled parallel tool use", block.name)
                continue
        kept.append(block)
    return response.model_copy(update={"content": kept})


def limit_stream_calls(
    events: Iterable[StreamEvent], limit: int | None
) -> Iterator[StreamEvent]:
    """The stream with tool_use blocks past the first ``limit`` removed and indices renumbered."""
    if limit is None:
        yield from events
        return
    calls = 0
    renumber: dict[int, int] = {}  # original index -> index on the way out
    dropped: set[int] = set()
    for event in events:
        if isinstance(event, BlockStart):
            if isinstance(event.block, ToolUseBlock):
                calls += 1
                if calls > limit:
                    log.warning(
                        "dropped tool call %r: the request disabled parallel tool use",
                        event.block.name,
                    )
                    dropped.add(event.index)
                    continue
            renumber[event.index] = len(renumber)
            yield _reindex(event, renumber[event.index])
        elif isinstance(event, (TextDelta, ToolInputDelta, ThinkingDelta, SignatureDelta,
                                BlockStop)):
            if event.index in dropped:
                continue
            yield _reindex(event, renumber.get(event.index, event.index))
        else:
            yield event


def _reindex(event: Any, index: int) -> Any:
    return event if event.index == index else event.model_copy(update={"index": index})
