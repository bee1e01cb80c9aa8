"""Parallel calls that differ: a further ``<invoke>`` may not repeat an earlier call.

A small model asked for the weather "in Paris and in London" writes the Paris call, opens a
second ``<invoke>``, and writes the Paris call again (on BFCL ``parallel`` most answers held
one call because the repeat was dropped: docs/benchmarks/code.md). The decoder keeps the bytes of each call
back until its ``</invoke>``; a call equal to an earlier one is rolled back to the value
the model was least sure of (the smallest margin between its choice and the next allowed
token, among the tokens that start a parameter value, or between a whole value chosen by
scoring — a span copied from the conversation, an enum member — and the next best, in a
call block reopened after the prefill's calls) and that token, or that whole value, is
banned there, so the model writes its next best value instead ("London"). Calls the
prefill holds whole count as earlier ones. After ``max_retries`` rollbacks
of one call the repeat is let through (the prompt backend then drops it and ends the turn,
as before).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..language.words import normal

__all__ = ["Checkpoint", "NoRepeat"]

_OPEN = b"<invoke>"
_CLOSE = b"</invoke>"
_STRUCTURE = (b"<invoke", b"<tool_name", b"<parameters", b"<function_calls")


@dataclass(frozen=True)
class Checkpoint:
    """Where a sampled token was chosen: enough to resume decoding there."""

    position: int  # bytes written (prefill included) before the token
    n_tokens: int  # tokens in the model's context when the token was chosen
    produced: int
    state: Any
    token: int
    gap: float  # logit margin over the next allowed token
    #: A whole value chosen there (copied from the conversation, or scored among an
    #: enum's): a rollback bans the value, not a token.
    value: bytes | None = None


_VALUE = re.compile(rb"<([^<>/\n]+)>([^<\n]*)</\1>\n")
class NoRepeat:
    """Holds each call's bytes until it closes; answers a repeat with a checkpoint.

    With ``conversation`` (the user's text), the number of calls follows the request: where
    the model would close the call block, another call is tried, and kept only if it
    brings a value of the conversation that no earlier call used (``Paris and London``:
    the London call); otherwise decoding goes back and closes the block there."""

    def __init__(self, prefill: bytes, max_retries: int = 2,
                 conversation: str | None = None) -> None:
        self.conversation = f" {normal(conversation)} " if conversation else None
        self.used: set[str] = set()
        #: Where the model chose between closing the block and another call, and whether
        #: closing is banned there ("more") or another call ("close").
        self.choice: Checkpoint | None = None
        self.mode: dict[int, str] = {}
        self.written = bytearray(prefill)
        self.released = len(prefill)
        self.max_retries = max_retries
        self.points: list[Checkpoint] = []
        self.banned: dict[int, set[int]] = {}
        self.banned_values: dict[int, set[bytes]] = {}
        self.calls: set[bytes] = set()
        self.checked = -1
        # Calls the prefill holds whole (a call block reopened after them) are earlier calls.
        for call in re.finditer(re.escape(_OPEN) + b".*?" + re.escape(_CLOSE), prefill,
                                re.DOTALL):
            self.calls.add(call.group())
            self.checked = call.end() - len(_CLOSE)
        #: A call block reopened after calls the model wrote (a further call asked for): its
        #: whole values (copied or scored) may be rolled back as well as its tokens. In a
        #: block the model writes on its own, a repeat is where it would stop, and is
        #: dropped there (values rolled back there too made calls of other spans, and lost
        #: right answers: docs/benchmarks/code.md).
        self.reopened = bool(self.calls)
        self.retries = 0
        self.rollbacks = 0

    def banned_here(self) -> set[int]:
        return self.banned.get(len(self.written), set())

    def banned_values_here(self) -> frozenset[bytes]:
        return frozenset(self.banned_values.get(len(self.written), ()))

    def mode_here(self) -> str | None:
        """"more": closing the call block is banned here; "close": another call is."""
        if self.conversation is None or not self.written.rstrip(b"\n").endswith(_CLOSE):
            return None
        return self.mode.setdefault(len(self.written), "more")

    def _values(self, block: bytes) -> list[str]:
        return [normal(m.group(2).decode("utf-8", "replace"))
                for m in _VALUE.finditer(block) if m.group(1) != b"tool_name"]

    def _brings_new(self, block: bytes) -> bool:
        assert self.conversation is not None
        return any(v and v not in self.used and f" {v} " in self.conversation
                   for v in self._values(block))

    def _starts_value(self, data: bytes) -> bool:
        at = self.written.rfind(b"<")
        if at < 0:
            return False
        tag = bytes(self.written[at:])
        if tag.startswith(b"</") or b"\n" in tag or tag.startswith(_STRUCTURE):
            return False
        return tag.endswith(b">") or data.startswith(b">")

    def push(self, data: bytes, point: Checkpoint | None = None) -> bytes | Checkpoint:
        """Add output bytes; returns the bytes now safe to release, or the checkpoint to
        resume from (the caller restores it; the bytes after it are forgotten)."""
        if point is not None and self._starts_value(data):
            self.points.append(point)
        if point is not None and self.mode.get(len(self.written)) == "more":
            self.choice = point
        self.written += data
        opened = self.written.rfind(_OPEN)
        closed = self.written.rfind(_CLOSE)
        if opened > closed:
            return b""  # inside a call: hold it back
        if closed > self.checked:
            start = self.written.rfind(_OPEN, 0, closed)
            block = bytes(self.written[start: closed + len(_CLOSE)])
            candidates = [p for p in self.points if p.position >= start]
            if block in self.calls and self.retries < self.max_retries and candidates:
                point = min(candidates, key=lambda p: p.gap)
                self.retries += 1
                self.rollbacks += 1
                if point.value is not None:
                    self.banned_values.setdefault(point.position, set()).add(point.value)
                else:
                    self.banned.setdefault(point.position, set()).add(point.token)
                del self.written[point.position:]
                self.points = [p for p in self.points if p.position < point.position]
                return point
            if self.conversation is not None and self.calls and self.choice is not None \
                    and not (block not in self.calls and self._brings_new(block)):
                # A further call that repeats, or brings nothing new: close the block where
                # the model would have closed it.
                point = self.choice
                self.choice = None
                self.mode[point.position] = "close"
                del self.written[point.position:]
                self.points = [p for p in self.points if p.position < point.position]
                self.retries = 0
                self.rollbacks += 1
                return point
            if self.conversation is not None:
                self.used.update(self._values(block))
            self.calls.add(block)
            self.choice = None
            self.checked = closed
            self.retries = 0
            self.points = []
        return self.release()

    def abandon(self) -> bool:
        """At the end of generation: drop a further call that was only being tried (the
        model had chosen to close the block there). True if there was one."""
        if self.choice is None:
            return False
        del self.written[max(self.choice.position, self.released):]
        self.choice = None
        return True

    def release(self, final: bool = False) -> bytes:
        """The bytes safe to pass on: all but a ``<`` after the last accepted call and what
        follows it (it may open a call still to be checked); ``final``: everything."""
        end = len(self.written)
        if not final:
            after = self.checked + len(_CLOSE) if self.checked >= 0 else 0
            tag = self.written.find(b"<", max(after, self.released))
            if tag >= 0:
                end = tag
        out = bytes(self.written[self.released:end])
        self.released = end
        return out
