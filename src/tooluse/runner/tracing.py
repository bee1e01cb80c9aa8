"""A run's trace (``Runner(trace=...)``): one :class:`~tooluse.trace.Trace` per run, one
turn per model call, stored when the run ends (answered, failed or stopped).

:class:`TracedRun` wraps the decisions of :func:`~tooluse.runner.core.conversation` and
sees what the drivers send it: each :class:`~tooluse.runner.core.CallModel` begins a turn,
and the run's trace is the current one (:func:`~tooluse.trace.tracing`) from then until the
driver sends the model's response back, which ends the turn; so the backend call the driver
makes in between (and a text model under it) writes into that turn, whichever of the four
drivers makes it. The time spent running tools is a phase. A backend call that fails
reaches :func:`call_failed` (the drivers' ``_keep_conversation``), which ends the trace.
"""

from __future__ import annotations

from collections.abc import Generator
from contextvars import ContextVar, Token
from types import TracebackType
from typing import Any

from ..messages import Response
from ..trace import Trace, TurnRecord
from ..trace.record import _current
from ..trace.store import TraceStore
from .core import Action, CallModel, RunTools
from .run_result import RunResult

__all__ = ["TracedRun", "call_failed"]

_run: ContextVar[TracedRun | None] = ContextVar("tooluse_traced_run", default=None)


class TracedRun(Generator[Action, Any, RunResult]):
    """``run`` (the core's generator) as it is, traced into ``store``."""

    def __init__(self, run: Generator[Action, Any, RunResult], store: TraceStore,
                 backend: str | None) -> None:
        self._run = run
        self.store = store
        self.trace = Trace(source="runner", api="runner", backend=backend)
        self._turn: TurnRecord | None = None
        self._tools_started: float | None = None
        self._stored = False
        self._tokens: tuple[Token[Trace | None], Token[TracedRun | None]] | None = None

    def send(self, reply: Any) -> Action:
        import time

        self._leave()
        if self._turn is not None and isinstance(reply, Response):
            self._turn.finish(reply)
        self._turn = None
        if self._tools_started is not None:
            self.trace.add_phase("tools", time.perf_counter() - self._tools_started)
            self._tools_started = None
        try:
            action = self._run.send(reply)
        except StopIteration:
            self.end()
            raise
        except BaseException as exc:
            self.end(exc)
            raise
        if isinstance(action, CallModel):
            self._turn = self.trace.begin_turn(action.request)
            self._tokens = (_current.set(self.trace), _run.set(self))
        elif isinstance(action, RunTools):
            self._tools_started = time.perf_counter()
        return action

    def _leave(self) -> None:
        """The model call is over: the trace is no longer current."""
        if self._tokens is None:
            return
        trace_token, run_token = self._tokens
        self._tokens = None
        try:
            _run.reset(run_token)
            _current.reset(trace_token)
        except ValueError:  # reset from another context: it ends with that context
            pass

    def throw(self, typ: Any, val: Any = None, tb: TracebackType | None = None) -> Action:
        return self._run.throw(typ, val, tb)

    def end(self, error: BaseException | str | None = None) -> None:
        """Store the trace (once): the run answered, or failed with ``error``."""
        self._leave()
        if self._stored:
            return
        self._stored = True
        if error is None:
            self.trace.sent(None)
        else:
            if self._turn is not None and self._turn.duration_s is None:
                self._turn.fail(error)
            self.trace.fail(error)
        self.store.add(self.trace)


def call_failed(error: BaseException) -> None:
    """A backend call of the current traced run failed with ``error``: the run ends
    there (nothing when no traced run is making a call here)."""
    run = _run.get()
    if run is not None:
        run.end("the run was stopped by its caller during a model call"
                if isinstance(error, GeneratorExit) else error)
