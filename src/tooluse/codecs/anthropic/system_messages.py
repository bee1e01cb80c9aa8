"""Mid-conversation ``role: "system"`` messages and their per-message fields.

The neutral model has one system prompt and alternating turns, so a system message inside
``messages`` is carried twice:

- **applied**: its text joins the end of ``Request.system`` (its position is not kept), except
  with ``clear_at: "next_user_message"`` once a later user message exists (the API shows it
  no longer then); its ``output_config.effort`` applies from that turn on, so the last one
  given is the request's reasoning effort (:func:`turn_effort`);
- **forwarded**: the message itself, verbatim, with where it stood
  (:class:`~tooluse.messages.PlacedMessage` in ``Passthrough.messages``), so an Anthropic
  upstream gets it back in its place, ``output_config`` and ``clear_at`` included, and its
  text not a second time in ``system`` (:func:`top_system`, :func:`interleave`).

``output_config.timing`` (a turn's "now") has no neutral field: forwarded, ignored elsewhere.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from ...messages import PlacedMessage, Request, TextBlock
from ._wire import _SystemMessage

__all__ = ["interleave", "place", "remap", "top_system", "turn_effort"]

log = logging.getLogger("tooluse.codecs.anthropic")


def place(turns: Sequence[Sequence[Any]], body: dict[str, Any], system: int) -> PlacedMessage:
    """Where a system message read after ``turns`` (each a turn's blocks so far) stands: after
    the last turn's blocks, so that a message that joins that turn comes after it."""
    if not turns:
        return PlacedMessage(turn=0, block=0, body=body, system=system)
    return PlacedMessage(turn=len(turns) - 1, block=len(turns[-1]), body=body, system=system)


def turn_effort(messages: Sequence[_SystemMessage], default: str | None) -> str | None:
    """The effort in force for the next answer: the last system message's
    ``output_config.effort``, else the request's own (``default``)."""
    for msg in reversed(messages):
        if msg.output_config is not None and msg.output_config.effort is not None:
            return msg.output_config.effort
    return default


def top_system(request: Request, placed: Sequence[PlacedMessage]) -> tuple[list[TextBlock], bool]:
    """The request's top-level system blocks (``Request.system`` less what ``placed`` added
    to its end) and whether the placed messages can go back in their place: not when
    ``Request.system`` no longer ends with their text (then they stay in ``system`` only,
    with a log line, rather than be sent twice)."""
    added = sum(p.system for p in placed)
    if not placed:
        return list(request.system), False
    head, tail = request.system[:len(request.system) - added], request.system[
        len(request.system) - added:]
    if len(tail) == added and [b.text for b in tail] == [
            t for p in placed if p.system for t in _texts(p.body)]:
        return list(head), True
    log.warning("messages: the system prompt no longer ends with the mid-conversation system "
                "messages' text; they are sent in system, not in their place")
    return list(request.system), False


def _texts(body: dict[str, Any]) -> list[str]:
    content = body.get("content")
    if isinstance(content, str):
        return [content] if content else []
    return [b["text"] for b in content or [] if isinstance(b, dict) and b.get("text")]


def interleave(turns: Sequence[tuple[str, Sequence[Sequence[dict[str, Any]]]]],
               placed: Sequence[PlacedMessage],
               content: Callable[[list[dict[str, Any]]], Any]) -> list[dict[str, Any]]:
    """The Messages ``messages`` list: each turn's encoded blocks (per neutral block, its
    wire blocks: none for a block left out, two for a server tool's use and result, so
    indices stay the neutral ones) with ``placed`` put back where they stood. A turn a
    placed message splits becomes two messages of its role, as the client sent them;
    ``content`` writes a message's blocks (the string shorthand where it fits)."""
    at: dict[tuple[int, int], list[dict[str, Any]]] = {}
    for p in placed:
        turn = min(p.turn, len(turns))
        block = min(p.block, len(turns[turn][1])) if turn < len(turns) else 0
        at.setdefault((turn, block), []).append(p.body)
    out: list[dict[str, Any]] = []
    for i, (role, blocks) in enumerate(turns):
        pieces: list[dict[str, Any]] = []
        wrote = False
        for j in range(len(blocks) + 1):
            bodies = at.get((i, j), [])
            if bodies and pieces:
                out.append({"role": role, "content": content(pieces)})
                pieces, wrote = [], True
            out.extend(bodies)
            if j < len(blocks):
                pieces.extend(blocks[j])
        if pieces or not wrote:
            out.append({"role": role, "content": content(pieces)})
    out.extend(at.get((len(turns), 0), []))
    return out


def remap(placed: Sequence[PlacedMessage], kept: Sequence[Sequence[int] | None]
          ) -> list[PlacedMessage]:
    """``placed`` after blocks or turns were left out of the conversation: ``kept[i]`` is
    the indices of turn ``i``'s blocks that stay, None when the whole turn goes (a message
    that stood in it then stands at the end of the turn before)."""
    new_index: list[int | None] = []
    n = 0
    for blocks in kept:
        new_index.append(None if blocks is None else n)
        n += blocks is not None
    out = []
    for p in placed:
        if p.turn >= len(kept):
            turn, block = n, 0
        elif (blocks := kept[p.turn]) is not None:
            turn, block = new_index[p.turn] or 0, sum(1 for j in blocks if j < p.block)
        else:
            before = [i for i in range(p.turn) if kept[i] is not None]
            turn = new_index[before[-1]] or 0 if before else 0
            block = len(kept[before[-1]] or ()) if before else 0
        out.append(p.model_copy(update={"turn": turn, "block": block}))
    return out
