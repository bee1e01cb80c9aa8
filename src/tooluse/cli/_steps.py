"""Printing a run step by step, as ``tooluse demo`` and ``tooluse run`` show it: each model
turn (its tool choice, how long it took, the calls it asked for with their input, its text),
each tool result with its time, then a summary line."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Iterable
from typing import Any, TextIO

from ..runner import (
    FinalEvent,
    MessageEvent,
    RunEvent,
    RunResult,
    ToolCallEvent,
    ToolResultEvent,
)

__all__ = ["StepPrinter", "args_text", "plan_steps", "short", "token_note", "turn_choice"]


def short(value: Any, limit: int = 200) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def args_text(call: Any) -> str:
    """A call's input as ``key="value", n=1``."""
    return ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in call.input.items())


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
    the number of model turns and ``calls_by_turn`` each turn's calls."""

    def __init__(self, out: TextIO | None = None, *, plan: list[str] | None = None,
                 note: Callable[[], str] = lambda: "") -> None:
        self.out = out or sys.stdout
        self.plan = plan
        self.note = note
        self.turns = 0
        self.calls_by_turn: list[list[Any]] = []
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
            text = event.response.text().strip()
            if text:
                label = "answer " if not event.response.tool_uses else "text   "
                self.say(f"  {label} {short(text, 400)}")
            while len(self.calls_by_turn) < self.turns:
                self.calls_by_turn.append([])
            self._step_start = now
        elif isinstance(event, ToolResultEvent):
            status = "error " if event.result.is_error else "result"
            self.say(f"  {status}  {event.call.name} -> {short(_result_text(event.result))}"
                     f"  ({(now - self._step_start) * 1000:.1f} ms)")
            self._step_start = time.perf_counter()
        elif isinstance(event, FinalEvent):
            self.final = event.result

    def summary(self) -> None:
        """``Done in ...`` and the final answer."""
        total = time.perf_counter() - self.started
        n_calls = sum(len(c) for c in self.calls_by_turn)
        self.say()
        self.say(f"Done in {total:.2f} s: {self.turns} model turn(s), {n_calls} tool call(s).")
        if self.final is not None:
            self.say(f"Final answer: {self.final.text.strip() or '(empty)'}")


def _result_text(result: Any) -> str:
    """A result's text, with its non-text parts named (an image is not silently dropped)."""
    text: str = result.text()
    images = [p for p in result.content if getattr(p, "type", None) == "image"]
    if images:
        kinds = ", ".join(p.media_type or "url" for p in images)
        text = (text + " " if text else "") + f"[{len(images)} image(s): {kinds}]"
    return text
