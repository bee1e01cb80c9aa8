"""Running one turn's tool calls: concurrently or one by one, sync or async, with a timeout.

When a model asks for several calls in one turn they are independent by construction (the
model could not see one's result before asking for the next), so running them at the same
time is safe and makes the turn as slow as its slowest call instead of the sum. Results
still go back in call order: each result is matched to its call by id, but keeping the order
makes conversations deterministic and easy to read.

- async driver: async tools are awaited as tasks; sync tools run in worker threads;
- sync driver: every call runs in a thread pool (an async tool gets its own event loop
  there, via :meth:`Tool.call`).

A timed-out call is answered with an ``is_error`` result at once. Python cannot kill a
thread, so a timed-out *sync* function keeps running in the background until it returns;
its late result is dropped. Async tools are cancelled.
"""

from __future__ import annotations

import concurrent.futures
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

import anyio
import anyio.to_thread

from ..errors import ToolInputError
from ..messages import ToolResultBlock
from ..telemetry import OFF, Off
from .core import Invocation, Outcome, invalid_input_text
from .results import error_result, exception_text, result_content

if TYPE_CHECKING:
    from ..telemetry.spans import AgentSpan, ToolSpan

__all__ = ["arun_invocations", "run_invocations"]


def _success(invocation: Invocation, value: object) -> Outcome:
    if isinstance(value, ToolResultBlock):
        # A whole result (an MCP tool's, or a function failing with rich content): its
        # is_error stands; only the id is the runner's to set.
        return Outcome(value.model_copy(update={"tool_use_id": invocation.call.id}))
    try:
        content = result_content(value)
    except TypeError as exc:
        return Outcome(error_result(invocation.call, exception_text(exc)))
    return Outcome(ToolResultBlock(tool_use_id=invocation.call.id, content=content))


def _failure(invocation: Invocation, exc: BaseException) -> Outcome:
    if isinstance(exc, ToolInputError):
        text = invalid_input_text(invocation.tool.name, exc.problems)
        return Outcome(error_result(invocation.call, text), problems=exc.problems)
    return Outcome(error_result(invocation.call, exception_text(exc)))


def _timeout(invocation: Invocation, seconds: float) -> Outcome:
    return Outcome(
        error_result(
            invocation.call,
            f"TimeoutError: tool {invocation.tool.name!r} did not finish within {seconds:g}s",
        )
    )


def _ended(span: ToolSpan | Off, outcome: Outcome, exc: BaseException | None = None, *,
           timeout: bool = False) -> Outcome:
    span.end(outcome.result, exc, timeout=timeout)
    return outcome


def _call(invocation: Invocation, span: ToolSpan | Off = OFF) -> Outcome:
    with span:  # current in this thread, so the tool's own spans are its children
        try:
            value = invocation.tool.call(invocation.call.input)
        except Exception as exc:  # noqa: BLE001 - any tool failure becomes its error result
            return _ended(span, _failure(invocation, exc), exc)
    return _ended(span, _success(invocation, value))


def run_invocations(
    invocations: Sequence[Invocation], *, parallel: bool = True, timeout: float | None = None,
    spans: AgentSpan | Off = OFF,
) -> list[Outcome]:
    """Run the calls from sync code; outcomes in call order. ``spans``: the run's
    ``invoke_agent`` span, each call's ``execute_tool`` span's parent."""
    if not invocations:
        return []

    def span(inv: Invocation) -> ToolSpan | Off:
        return spans.tool(inv.call, inv.tool.description)

    if timeout is None and (not parallel or len(invocations) == 1):
        return [_call(inv, span(inv)) for inv in invocations]
    workers = len(invocations) if parallel else 1
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=min(workers, 32))
    try:
        if parallel:
            start = time.monotonic()
            started = [(inv, span(inv)) for inv in invocations]
            futures = [pool.submit(_call, inv, s) for inv, s in started]
            outcomes = []
            for (inv, s), future in zip(started, futures, strict=True):
                remaining = None if timeout is None else max(0.0, start + timeout - time.monotonic())
                try:
                    outcomes.append(future.result(timeout=remaining))
                except concurrent.futures.TimeoutError:
                    assert timeout is not None
                    outcomes.append(_ended(s, _timeout(inv, timeout), timeout=True))
            return outcomes
        outcomes = []
        for inv in invocations:
            s = span(inv)
            future = pool.submit(_call, inv, s)
            try:
                outcomes.append(future.result(timeout=timeout))
            except concurrent.futures.TimeoutError:
                assert timeout is not None
                outcomes.append(_ended(s, _timeout(inv, timeout), timeout=True))
                # The stuck worker cannot be reused; the next call gets a fresh pool.
                pool.shutdown(wait=False, cancel_futures=True)
                pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
        return outcomes
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


async def _acall(invocation: Invocation, timeout: float | None,
                 spans: AgentSpan | Off = OFF) -> Outcome:
    tool = invocation.tool
    value: object = None
    span = spans.tool(invocation.call, tool.description)
    try:
        with span, anyio.move_on_after(timeout) as scope:
            if tool.is_async:
                value = await tool.acall(invocation.call.input)
            else:
                value = await anyio.to_thread.run_sync(
                    tool.call, invocation.call.input, abandon_on_cancel=True
                )
    except Exception as exc:  # noqa: BLE001 - any tool failure becomes its error result
        return _ended(span, _failure(invocation, exc), exc)
    if scope.cancelled_caught:
        assert timeout is not None
        return _ended(span, _timeout(invocation, timeout), timeout=True)
    return _ended(span, _success(invocation, value))


async def arun_invocations(
    invocations: Sequence[Invocation], *, parallel: bool = True, timeout: float | None = None,
    spans: AgentSpan | Off = OFF,
) -> list[Outcome]:
    """Run the calls from async code; outcomes in call order (``spans``: as
    :func:`run_invocations`)."""
    if not parallel or len(invocations) <= 1:
        return [await _acall(inv, timeout, spans) for inv in invocations]
    outcomes: list[Outcome | None] = [None] * len(invocations)

    async def one(i: int, inv: Invocation) -> None:
        outcomes[i] = await _acall(inv, timeout, spans)

    async with anyio.create_task_group() as tg:
        for i, inv in enumerate(invocations):
            tg.start_soon(one, i, inv)
    return [o for o in outcomes if o is not None]
