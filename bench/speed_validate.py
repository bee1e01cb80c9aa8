"""Benchmark: Tool.validate() per call, with the cached compiled validator vs without.

What is compared, per call, on the same inputs:

* ``tool.validate``       - tooluse: validator compiled once at tool creation (cached by the
                            schema's canonical JSON), problems worded only when there are any;
* ``compile + iter``      - a fresh ``Draft202012Validator(schema)`` per call (no cache);
* ``jsonschema.validate`` - the one-liner most code uses: checks the schema against the
                            metaschema *and* compiles a validator, every call;
* ``jsonschema_rs``       - only when the optional ``jsonschema_rs`` package is importable:
                            its compiled validator's ``is_valid`` (raw speed, no wording).

Workloads: a small weather schema (valid and invalid input), a function-derived order schema
with nested models, and every BFCL ground-truth call (needs ../shared/bench/bfcl).

Run:  python bench/speed_validate.py [--bfcl DIR] [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
from jsonschema import Draft202012Validator
from pydantic import BaseModel, Field

from tooluse.errors import ToolInputError
from tooluse.eval import ground_truth_input
from tooluse.tools import Tool, bfcl_toolset


def per_call_us(fn: Callable[[], Any], calls: int, repeat: int) -> float:
    """Best-of-``repeat`` mean CPU time per call, in microseconds. CPU time of this process
    (not wall time) and best-of, because the 2 cores are shared with other jobs: waiting for
    a core is not the validator's cost."""
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        for _ in range(calls):
            fn()
        best = min(best, (time.process_time() - start) / calls)
    return best * 1e6


WEATHER = {
    "type": "object",
    "properties": {
        "location": {"type": "string", "description": "City and state."},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        "days": {"type": "integer", "minimum": 1, "maximum": 10},
    },
    "required": ["location"],
    "additionalProperties": False,
}


class Line(BaseModel):
    sku: str = Field(min_length=1)
    qty: int = Field(ge=1)
    price: float | None = None


def place_order(lines: list[Line], express: bool = False, note: str | None = None) -> None:
    """Place an order.

    Args:
        lines: What to order.
        express: Ship fast.
        note: For the courier.
    """


def rs_validator(schema: dict[str, Any]) -> Callable[[Any], bool] | None:
    try:
        import jsonschema_rs  # type: ignore[import-not-found]
    except ImportError:
        return None
    return jsonschema_rs.Draft202012Validator(schema).is_valid  # type: ignore[no-any-return]


def workload(
    label: str, tool: Tool, inputs: list[Any], calls: int, repeat: int
) -> dict[str, Any]:
    schema = tool.input_schema
    rows: dict[str, Any] = {"workload": label, "inputs": len(inputs)}

    def each(f: Callable[[Any], Any]) -> Callable[[], None]:
        def run() -> None:
            for value in inputs:
                f(value)

        return run

    n = max(1, calls // len(inputs))
    scale = 1 / len(inputs)
    rows["tool.validate"] = per_call_us(each(swallow_arg(tool.validate)), n, repeat) * scale
    rows["compile + iter"] = (
        per_call_us(each(lambda v: list(Draft202012Validator(schema).iter_errors(v))), n, repeat)
        * scale
    )
    rows["jsonschema.validate"] = (
        per_call_us(each(swallow_arg(lambda v: jsonschema.validate(v, schema))), max(1, n // 4), repeat)
        * scale
    )
    rs = rs_validator(schema)
    if rs is not None:
        rows["jsonschema_rs is_valid"] = per_call_us(each(rs), n, repeat) * scale
    return rows


def swallow_arg(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def run(value: Any) -> Any:
        try:
            return fn(value)
        except (ToolInputError, jsonschema.ValidationError):
            return None

    return run


def bfcl_workloads(bfcl_dir: Path, repeat: int) -> dict[str, Any] | None:
    """Every BFCL ground-truth call against its own tool, timed as one batch."""
    if not bfcl_dir.is_dir():
        return None
    pairs: list[tuple[Tool, dict[str, Any]]] = []
    for questions in sorted(bfcl_dir.glob("BFCL_v4_*.json")):
        category = questions.name[len("BFCL_v4_") : -len(".json")]
        answers = bfcl_dir / f"possible_answer_{category}.json"
        if not answers.exists():
            continue
        sets = {
            q["id"]: bfcl_toolset(q["function"])
            for q in map(json.loads, questions.read_text(encoding="utf-8").splitlines())
        }
        for a in map(json.loads, answers.read_text(encoding="utf-8").splitlines()):
            ts = sets[a["id"]]
            for call in a["ground_truth"]:
                for name, params in call.items():
                    tool = ts[ts.wire_name(name)]
                    truth = ground_truth_input(params, tool.input_schema)
                    if truth.schema == tool.input_schema:  # leave out the 3 relaxed calls
                        pairs.append((tool, truth.input))

    def cached() -> None:
        for tool, value in pairs:
            tool.validate(value)

    def uncached() -> None:
        for tool, value in pairs:
            list(Draft202012Validator(tool.input_schema).iter_errors(value))

    def one_liner() -> None:
        for tool, value in pairs:
            jsonschema.validate(value, tool.input_schema)

    row: dict[str, Any] = {"workload": "BFCL ground truth (each call, own tool)", "inputs": len(pairs)}
    row["tool.validate"] = per_call_us(cached, 1, repeat) / len(pairs)
    row["compile + iter"] = per_call_us(uncached, 1, repeat) / len(pairs)
    row["jsonschema.validate"] = per_call_us(one_liner, 1, max(1, repeat // 2)) / len(pairs)
    if rs_validator({"type": "object"}) is not None:
        compiled = [(rs_validator(t.input_schema), v) for t, v in pairs]

        def rs_run() -> None:
            for check, value in compiled:
                assert check is not None
                check(value)

        row["jsonschema_rs is_valid"] = per_call_us(rs_run, 1, repeat) / len(pairs)
    return row


def tool_creation(bfcl_dir: Path) -> float | None:
    """Mean cost of making one BFCL tool (normalise + check + compile), in microseconds."""
    files = sorted(bfcl_dir.glob("BFCL_v4_*.json")) if bfcl_dir.is_dir() else []
    if not files:
        return None
    questions = [json.loads(line) for line in files[0].read_text(encoding="utf-8").splitlines()]
    from tooluse.tools import validation

    validation.clear_cache()
    start = time.process_time()
    count = 0
    for q in questions:
        count += len(bfcl_toolset(q["function"]))
    return (time.process_time() - start) / count * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bfcl", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "bench" / "bfcl")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--calls", type=int, default=4000)
    args = parser.parse_args()

    weather = Tool.from_schema("get_weather", "Weather.", WEATHER)
    order = Tool.from_function(place_order)
    rows = [
        workload("weather, valid input", weather, [{"location": "Paris", "unit": "celsius", "days": 3}], args.calls, args.repeat),
        workload("weather, invalid input (4 problems)", weather, [{"unit": "kelvin", "days": "5", "foo": 1}], args.calls, args.repeat),
        workload(
            "order (function-derived, nested models), valid, 20 lines",
            order,
            [{"lines": [{"sku": f"A{i}", "qty": i + 1, "price": 2.5} for i in range(20)], "express": True}],
            args.calls // 4,
            args.repeat,
        ),
    ]
    bfcl = bfcl_workloads(args.bfcl, args.repeat)
    if bfcl is not None:
        rows.append(bfcl)
    columns = ["tool.validate", "compile + iter", "jsonschema.validate", "jsonschema_rs is_valid"]
    columns = [c for c in columns if any(c in r for r in rows)]
    rs = _version("jsonschema_rs") if rs_validator({"type": "object"}) else "not installed"
    print(f"python {platform.python_version()}, jsonschema {_version('jsonschema')}, "
          f"jsonschema_rs {rs}, {platform.machine()}, CPU time, best of {args.repeat}")
    print("| workload | inputs | " + " | ".join(f"{c} (µs/call)" for c in columns) + " | cached vs jsonschema.validate |")
    print("|---|---:|" + "---:|" * len(columns) + "---:|")
    for r in rows:
        cells = [f"{r[c]:.1f}" if c in r else "-" for c in columns]
        speedup = r["jsonschema.validate"] / r["tool.validate"]
        print(f"| {r['workload']} | {r['inputs']} | " + " | ".join(cells) + f" | {speedup:.0f}x |")
    created = tool_creation(args.bfcl)
    if created is not None:
        print(f"\nmaking one BFCL tool (normalise + check_schema + compile, cache cleared): {created:.0f} µs")


def _version(name: str) -> str:
    from importlib.metadata import version

    return version(name)


if __name__ == "__main__":
    sys.exit(main())
