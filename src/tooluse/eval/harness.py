"""Running a backend over BFCL cases and summarising what it got right.

For each case the harness builds the tools and the neutral request (:mod:`.bfcl`), times one
``backend.complete`` call, maps the wire names of the calls back to BFCL's original names,
grades them with the AST checker (:mod:`.checker`) and records everything a person needs to
study a failure (:class:`CaseResult`), including where each call came from (the model, or a
backend rule that edited or added it). A failing backend call is a failed case with its
error as the reason, never a crash: one bad answer must not throw away an hour of results.
"""

from __future__ import annotations

import statistics
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ..backend import Backend
from ..errors import ToolInputError
from ..messages import CallOrigin
from ..tools import ToolSet
from .bfcl import BfclCase, build_request, build_toolset
from .checker import Call, check_calls

__all__ = ["CaseResult", "CategorySummary", "run_case", "run_cases", "summarize"]


@dataclass
class CaseResult:
    """What happened on one case (one line of ``--json`` output)."""

    id: str
    category: str
    passed: bool
    reason: str
    kind: str
    expected: Any
    got: list[dict[str, Any]]
    text: str
    valid: bool
    calls_valid: int
    calls_total: int
    latency: float
    output_tokens: int
    input_tokens: int
    stop_reason: str | None
    invalid: list[str] = field(default_factory=list)
    #: The backend's own timings of this call when it reports them (the local backend's
    #: ``last_end.timings``: ``prompt_s``, ``generate_s``...), else empty.
    timings: dict[str, float] = field(default_factory=dict)
    #: Where each call of ``got`` came from, in the same order: its
    #: :class:`~tooluse.messages.CallOrigin` as JSON (``source`` ``model``, ``edited`` with
    #: its ``changes``, or ``added`` with its ``rule``; ``steered_by``).
    origins: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def calls_edited(self) -> int:
        return sum(o.get("source") == "edited" for o in self.origins)

    @property
    def calls_added(self) -> int:
        return sum(o.get("source") == "added" for o in self.origins)


@dataclass
class CategorySummary:
    """Aggregates of one category. Rates are fractions in [0, 1]."""

    category: str
    cases: int
    passed: int
    accuracy: float
    valid_rate: float
    calls_valid: int
    calls_total: int
    median_latency: float
    output_tokens: int
    total_latency: float
    tokens_per_second: float
    failures: dict[str, int]
    #: Output tokens per second of generation alone (prompt processing excluded), from the
    #: backend's own timings; None when the backend does not report them.
    decode_tokens_per_second: float | None = None
    #: Calls a backend rule edited after the model wrote them, and calls it added.
    calls_edited: int = 0
    calls_added: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _validate(toolset: ToolSet, name: str, arguments: Any) -> str | None:
    """Does one call parse and validate against its tool? Returns the problem or None."""
    tool = toolset.get(name)
    if tool is None:
        return f"{name}: no such tool"
    if not isinstance(arguments, dict):
        return f"{name}: input is not an object"
    try:
        tool.validate(arguments)
    except ToolInputError as exc:
        return f"{name}: {exc}"
    return None


def _backend_timings(backend: Backend) -> dict[str, float]:
    """Timings the backend kept of its last call (duck-typed: only some backends do)."""
    end = getattr(backend, "last_end", None)
    timings = getattr(end, "timings", None)
    if not isinstance(timings, dict):
        return {}
    return {str(k): float(v) for k, v in timings.items() if isinstance(v, (int, float))}


def run_case(
    backend: Backend, case: BfclCase, *, max_tokens: int = 512, tool_choice: str = "auto"
) -> CaseResult:
    """Ask ``backend`` one case and grade its answer."""
    toolset = build_toolset(case.functions)
    request = build_request(case, toolset, max_tokens=max_tokens, tool_choice=tool_choice)
    start = time.perf_counter()
    try:
        response = backend.complete(request)
    except Exception as exc:  # noqa: BLE001 - a backend failure fails this case, not the run
        latency = time.perf_counter() - start
        return CaseResult(
            id=case.id,
            category=case.category,
            passed=False,
            reason=f"backend error: {type(exc).__name__}: {exc}",
            kind="backend_error",
            expected=case.ground_truth,
            got=[],
            text="",
            valid=False,
            calls_valid=0,
            calls_total=0,
            latency=latency,
            output_tokens=0,
            input_tokens=0,
            stop_reason=None,
        )
    latency = time.perf_counter() - start
    timings = _backend_timings(backend)
    calls: list[Call] = []
    got: list[dict[str, Any]] = []
    invalid: list[str] = []
    origins: list[dict[str, Any]] = []
    for block in response.tool_uses:
        original = toolset.original_name(block.name) if toolset.get(block.name) else block.name
        calls.append((original, block.input))
        got.append({original: block.input})
        origins.append((block.origin or CallOrigin()).model_dump(mode="json"))
        problem = _validate(toolset, block.name, block.input)
        if problem:
            invalid.append(problem)
    verdict = check_calls(case.category, case.functions, calls, case.ground_truth,
                          rule=case.rule)
    expects_calls = case.ground_truth is not None or case.rule == "some_call"
    # Valid: the answer has the shape the category asks for and every call validates.
    valid = (bool(calls) if expects_calls else True) and not invalid
    return CaseResult(
        id=case.id,
        category=case.category,
        passed=verdict.passed,
        reason=verdict.reason,
        kind=verdict.kind,
        expected=case.ground_truth,
        got=got,
        text=response.text(),
        valid=valid,
        calls_valid=len(calls) - len(invalid),
        calls_total=len(calls),
        latency=latency,
        output_tokens=response.usage.output_tokens,
        input_tokens=response.usage.prompt_tokens,  # the whole prompt, cached or not
        stop_reason=response.stop_reason,
        invalid=invalid,
        timings=timings,
        origins=origins,
    )


def run_cases(
    backend: Backend,
    cases: Iterable[BfclCase],
    *,
    max_tokens: int = 512,
    tool_choice: str = "auto",
    on_result: Callable[[CaseResult], None] | None = None,
) -> list[CaseResult]:
    """Run every case in order; ``on_result`` sees each result as it arrives (progress bars,
    incremental saving)."""
    results: list[CaseResult] = []
    for case in cases:
        result = run_case(backend, case, max_tokens=max_tokens, tool_choice=tool_choice)
        results.append(result)
        if on_result is not None:
            on_result(result)
    return results


def summarize(category: str, results: Sequence[CaseResult]) -> CategorySummary:
    """Accuracy, validity rate, median latency and generation speed of one category."""
    n = len(results)
    passed = sum(r.passed for r in results)
    tokens = sum(r.output_tokens for r in results)
    total_latency = sum(r.latency for r in results)
    timed = [r for r in results if "generate_s" in r.timings]
    generate_s = sum(r.timings["generate_s"] for r in timed)
    decode = sum(r.output_tokens for r in timed) / generate_s if timed and generate_s > 0 else None
    return CategorySummary(
        category=category,
        cases=n,
        passed=passed,
        accuracy=passed / n if n else 0.0,
        valid_rate=sum(r.valid for r in results) / n if n else 0.0,
        calls_valid=sum(r.calls_valid for r in results),
        calls_total=sum(r.calls_total for r in results),
        median_latency=statistics.median(r.latency for r in results) if n else 0.0,
        output_tokens=tokens,
        total_latency=total_latency,
        tokens_per_second=tokens / total_latency if total_latency > 0 else 0.0,
        failures=dict(Counter(r.kind for r in results if not r.passed).most_common()),
        decode_tokens_per_second=decode,
        calls_edited=sum(r.calls_edited for r in results),
        calls_added=sum(r.calls_added for r in results),
    )
