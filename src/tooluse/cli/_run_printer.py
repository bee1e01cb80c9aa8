"""Printing a run step by step, as ``tooluse demo`` and ``tooluse run`` show it: each model
turn (its tool choice, how long it took, the calls it asked for with their input, each call
the backend changed or added marked with one line per change, its text), each approval
decision, each tool result with its time, then a summary line that counts the calls that
ended in an error."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Iterable
from typing import Any, TextIO

from ..messages import CallOrigin
from ..runner import (
    ApprovalDecisionEvent,
    FinalEvent,
    MessageEvent,
    RunEvent,
    RunResult,
    ToolCallEvent,
    ToolResultEvent,
)

__all__ = [
    "StepPrinter",
    "args_text",
    "origin_lines",
    "plan_steps",
    "short",
    "token_note",
    "turn_choice",
]


def short(value: Any, limit: int = 200) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def args_text(call: Any) -> str:
    """A call's input as ``key="value", n=1``."""
    return ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in call.input.items())


def origin_lines(origin: CallOrigin | None) -> list[str]:
    """How a call that is not the model's own is marked: one line per change of an edited
    call (``edited  unit "cm" -> "meters" (stated_units)``), one line for an added call
    (``ADDED   by rule fan_out: the model did not write this call``), one for the rules that
    steered its decoding. A call as the model wrote it has none."""
    if origin is None:
        return []
    lines: list[str] = []
    if origin.source == "added":
        lines.append(f"ADDED   by rule {origin.rule or '(unknown)'}: "
                     "the model did not write this call")
    elif origin.source == "edited":
        for change in origin.changes:
            one = CallOrigin(source="edited", changes=[change]).describe()
            lines.append(f"edited  {one.removeprefix('edited: ')}")
        if not origin.changes:
            lines.append("edited  (the backend recorded no change)")
    if origin.steered_by:
        lines.append(f"steered by {', '.join(origin.steered_by)}")
    return lines


def plan_steps(tool_choice: str) -> list[str]:
    """``"a,b,none"`` -> ``["a", "b", "none"]`` (``any`` when empty)."""
    return [step.strip() for step in tool_choice.split(",") if step.strip()] or ["any"]


def turn_choice(plan: list[str], turn: int) -> str:
    """The tool choice of model turn ``turn`` (1-based) under ``plan``, as the runner
    applies it: the plan's entries in order, then auto (none stays none)."""
    if turn <= len(plan):
        return plan[turn - 1]
    return "none" if plan[-1] == "none" else "auto"


def token_note(backend: Any) -> str:
    """The local backend's token counts of its last turn, or nothing."""
    end = getattr(backend, "last_end", None)
    if end is None:
        return ""
    return (f" ({end.input_tokens} prompt tokens, {end.cached_tokens} reused from cache, "
            f"{end.output_tokens} generated)")


class StepPrinter:
    """Consumes a run's events (:meth:`~tooluse.runner.Runner.stream`) and prints each step
    to ``out``; afterwards ``final`` holds the :class:`~tooluse.runner.RunResult`, ``turns``
    the number of model turns, ``calls_by_turn`` each turn's calls, ``errors`` the number
    of calls whose result is an error (``denied`` of them for want of approval).
    ``unasked_hint`` ends the line of a call denied because no one could be asked."""

    def __init__(self, out: TextIO | None = None, *, plan: list[str] | None = None,
                 note: Callable[[], str] = lambda: "", unasked_hint: str = "") -> None:
        self.out = out or sys.stdout
        self.plan = plan
        self.note = note
        self.unasked_hint = unasked_hint
        self.turns = 0
        self.calls_by_turn: list[list[Any]] = []
        self.errors = 0
        self.denied = 0
        self.final: RunResult | None = None
        self.started = time.perf_counter()
        self._step_start = self.started

    def restart_clock(self) -> None:
        """Time from now (after the preamble is printed)."""
        self.started = self._step_start = time.perf_counter()

    def say(self, text: str = "") -> None:
        print(text, file=self.out, flush=True)

    def run(self, events: Iterable[RunEvent]) -> RunResult | None:
        """Print every event; returns the final result (or None if there was none)."""
        for event in events:
            self.feed(event)
        return self.final

    def feed(self, event: RunEvent) -> None:
        now = time.perf_counter()
        if isinstance(event, ToolCallEvent):
            while len(self.calls_by_turn) <= self.turns:
                self.calls_by_turn.append([])
            self.calls_by_turn[self.turns].append(event.call)
        elif isinstance(event, MessageEvent):
            self.turns += 1
            choice = f" tool_choice={turn_choice(self.plan, self.turns)}" if self.plan else ""
            self.say()
            self.say(f"[model turn {self.turns}]{choice}: {now - self._step_start:.2f} s"
                     f"{self.note()}")
            for call in event.response.tool_uses:
                self.say(f"  call    {call.name}({args_text(call)})")
                for line in origin_lines(call.origin):
                    self.say(f"    {line}")
            text = event.response.text().strip()
            if text:
                label = "answer " if not event.response.tool_uses else "text   "
                self.say(f"  {label} {short(text, 400)}")
            while len(self.calls_by_turn) < self.turns:
                self.calls_by_turn.append([])
            self._step_start = now
        elif isinstance(event, ApprovalDecisionEvent):
            if event.approved:
                self.say(f"  approved {event.tool}: the user approved this call")
            elif event.asked:
                self.denied += 1
                self.say(f"  denied  {event.tool}: the user denied this call; it is not run")
            else:
                self.denied += 1
                self.say(f"  denied  {event.tool}: it needs approval and no one was asked; "
                         f"it is not run{self.unasked_hint}")
            self._step_start = time.perf_counter()
        elif isinstance(event, ToolResultEvent):
            if event.result.is_error:
                self.errors += 1
            status = "error " if event.result.is_error else "result"
            self.say(f"  {status}  {event.call.name} -> {short(_result_text(event.result))}"
                     f"  ({(now - self._step_start) * 1000:.1f} ms)")
            self._step_start = time.perf_counter()
        elif isinstance(event, FinalEvent):
            self.final = event.result

    def summary(self) -> None:
        """``Done in ...`` with the number of calls that ended in an error, a line counting
        the calls the model did not write as they ran, and the final answer."""
        total = time.perf_counter() - self.started
        calls = [c for turn in self.calls_by_turn for c in turn]
        self.say()
        self.say(f"Done in {total:.2f} s: {self.turns} model turn(s), {len(calls)} tool "
                 f"call(s){self._errors_text(len(calls))}.")
        edited = sum(c.source == "edited" for c in calls)
        added = sum(c.source == "added" for c in calls)
        if edited or added:
            self.say(f"Not as the model wrote them: {edited} call(s) edited, {added} call(s) "
                     "added by rules (marked above).")
        if self.final is not None:
            self.say(f"Final answer: {self.final.text.strip() or '(empty)'}")


    def _errors_text(self, n_calls: int) -> str:
        if not n_calls:
            return ""
        if not self.errors:
            return ", none ended in an error"
        denied = f", {self.denied} of them denied approval" if self.denied else ""
        return f", {self.errors} ended in an error{denied} (the error lines above)"


def _result_text(result: Any) -> str:
    """A result's text, with its non-text parts named (an image is not silently dropped)."""
    text: str = result.text()
    images = [p for p in result.content if getattr(p, "type", None) == "image"]
    if images:
        kinds = ", ".join(p.media_type or "url" for p in images)
        text = (text + " " if text else "") + f"[{len(images)} image(s): {kinds}]"
    return text
