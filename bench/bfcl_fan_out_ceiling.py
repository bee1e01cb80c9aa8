"""How far ``fan_out`` and ``restate`` can go on BFCL, and where they fire by mistake,
without the model.

    python bench/bfcl_fan_out_ceiling.py [--data-dir ../shared/bench/bfcl] [-v CATEGORY ...]

For every case with a ground truth, the expected *first* call is taken as the model's (its
first allowed value per parameter), :func:`tooluse.presets.en_bfcl.fan_out.fan_out` adds what the
question's lists ask for, then :func:`tooluse.presets.en_bfcl.restate.restatements` what its
clauses restate, and the result is compared with the expected calls (names and values, any
order). In a several-call category the count of exact answers is the ceiling with a right
first call; in a single-call category every case where a call is added is a false fire.
``-v CATEGORY`` prints the cases of that category that end wrong (with both).

The last two columns start instead from the expected first call of *each* tool the answer
calls, and go through :func:`tooluse.presets.en_bfcl.call_edits.fanned_out` as the backend does
(where the calls name several tools, ``restate`` restates each from the clauses it owns):
the ceiling of ``parallel_multiple`` with a right first call of every tool.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from bfcl_replay_edits import fanned  # bench/, first on the path when run as a script

from tooluse.eval.bfcl import build_request, build_toolset, load_category
from tooluse.presets.en_bfcl.fan_out import fan_out
from tooluse.presets.en_bfcl.restate import restatements

ROOT = Path(__file__).resolve().parents[1]
CATEGORIES = ("parallel", "parallel_multiple", "simple_python", "multiple", "live_simple")


def _first(value: Any) -> Any:
    return value[0] if isinstance(value, list) and value else value


def _matches(call: tuple[str, dict[str, Any]], expected: dict[str, Any]) -> bool:
    ((name, arguments),) = expected.items()
    if call[0] != name:
        return False
    for key, allowed in arguments.items():
        allowed = allowed if isinstance(allowed, list) else [allowed]
        if key not in call[1]:
            if "" not in allowed:
                return False
            continue
        got = call[1][key]
        if not any(got == a or (isinstance(a, str) and isinstance(got, str)
                                and got.lower() == a.lower()) for a in allowed):
            return False
    return True


def _exact(calls: list[tuple[str, dict[str, Any]]], expected: list[dict[str, Any]]) -> bool:
    return len(calls) == len(expected) and all(
        any(_matches(c, e) for c in calls) for e in expected)


def _each_tool(data: Path, category: str) -> tuple[int, int]:
    """Exact answers from the expected first call of each tool: with ``fan_out``, and with
    ``fan_out`` then ``restate`` (:func:`~tooluse.presets.en_bfcl.call_edits.fanned_out`)."""
    exact = [0, 0]
    for case in load_category(data, category):
        if not case.ground_truth:
            continue
        request = build_request(case, build_toolset(case.functions))
        firsts: dict[str, dict[str, Any]] = {}
        for expected in case.ground_truth:
            ((name, arguments),) = expected.items()
            firsts.setdefault(name, {k: _first(v) for k, v in arguments.items()
                                     if _first(v) != ""})
        names = [f["name"] for f in case.functions]
        for i, clauses in enumerate((False, True)):
            added = fanned(request, names, list(firsts.items()), clauses=clauses)
            exact[i] += _exact([*firsts.items(), *added], case.ground_truth)
    return exact[0], exact[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "bench" / "bfcl"))
    parser.add_argument("-v", dest="verbose", nargs="*", default=[])
    args = parser.parse_args()
    data = Path(args.data_dir)
    if not (data / "BFCL_v4_parallel.json").is_file():
        print(f"no BFCL data in {data} (the benchmark data lives in ../shared/bench/bfcl)")
        return 0
    print("| category | cases | fan_out adds calls | exact with the expected first call "
          "| restate adds calls | exact with both | each tool's first call: exact with fan_out "
          "| with both |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for category in CATEGORIES:
        answers = data / f"possible_answer_{category}.json"
        if not answers.is_file():
            continue
        truth = {a["id"]: a["ground_truth"] for a in map(json.loads, answers.open())}
        cases = fired = exact = restated = both = 0
        for line in (data / f"BFCL_v4_{category}.json").open():
            case = json.loads(line)
            expected = truth.get(case["id"])
            if not expected:
                continue
            cases += 1
            question = " ".join(t["content"] for t in case["question"][0] if t["role"] == "user")
            schemas = {f["name"]: f["parameters"] for f in case["function"]}
            ((name, arguments),) = expected[0].items()
            first = (name, {k: _first(v) for k, v in arguments.items() if _first(v) != ""})
            added = fan_out([first], question, schemas, limit=8, valid=lambda n, a: True)
            fired += bool(added)
            calls = [first, *added]
            exact += _exact(calls, expected)
            more = restatements(calls, question, schemas, limit=8, valid=lambda n, a: True)
            restated += bool(more)
            ok = _exact([*calls, *more], expected)
            both += ok
            if category in args.verbose and not ok:
                print(f"  {case['id']}: {question[:120]}\n    got {[*calls, *more][:4]}",
                      file=sys.stderr)
        each_lists, each_both = _each_tool(data, category)
        print(f"| {category} | {cases} | {fired} | {exact} | {restated} | {both} "
              f"| {each_lists} | {each_both} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
