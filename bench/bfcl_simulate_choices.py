"""Offline ablation on a tuning slice: what the call-or-answer decision and the optional-
parameter filter would have scored, from runs that logged what they need.

    python bench/bfcl_simulate_choices.py TUNE_BASELINE.json TUNE_FEATURES.json [DECISION]

The decision only picks between two answers both runs already hold: the call the model
writes once a call is decided (the features run always decides to call) or the text-only
answer (right exactly where no call is expected). The optional filter is applied to the
baseline run's calls and re-graded with the same checker. DECISION: ``bias,w_open,w_tool,
w_rel`` (default: the en-bfcl preset's DEFAULT_DECISION).
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

from tooluse.presets.en_bfcl import DEFAULT_DECISION
from tooluse.eval import check_calls, load_category
from tooluse.presets.en_bfcl.choices import CallDecision, keep_given_optionals
from tooluse.tools import normalize_schema


def main(baseline_path: str, features_path: str, decision_text: str | None) -> None:
    decision = DEFAULT_DECISION if decision_text is None else CallDecision(
        *(float(x) for x in decision_text.split(",")))
    base = json.loads(Path(baseline_path).read_text())
    feats = json.loads(Path(features_path).read_text())
    rules = feats["meta"]["rules"]
    data_dir = base["meta"]["data_dir"]
    by_id = {c["id"]: c for c in feats["cases"]}
    cases = {}
    for category in rules:
        for case in load_category(data_dir, category):
            cases[case.id] = case
    table: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for row in base["cases"]:
        case = cases[row["id"]]
        cell = table[row["category"]]
        cell[0] += 1
        cell[1] += row["passed"]
        f = by_id.get(row["id"])
        if f is not None:
            t = f["timings"]
            calls = decision.calls(t["call_open_lp"], t["call_tool_lp"], t["call_relevance"])
            cell[2] += f["passed"] if calls else rules[row["category"]] == "no_call"
        question = " ".join(m["content"] for m in case.messages)
        filtered = []
        for got in row["got"]:
            ((name, arguments),) = got.items()
            function = next((fn for fn in case.functions if fn["name"] == name), None)
            schema = normalize_schema(function["parameters"]) if function else {}
            kept, _ = keep_given_optionals(arguments, schema, question)
            filtered.append((name, kept))
        verdict = check_calls(case.category, case.functions, filtered, case.ground_truth,
                              rule=case.rule)
        cell[3] += verdict.passed
    print("| category | cases | baseline | + decide (simulated) | + optional filter (simulated) |")
    print("|---|---:|---:|---:|---:|")
    totals = [0, 0, 0, 0]
    for category, (n, b, d, o) in sorted(table.items()):
        print(f"| {category} | {n} | {b} | {d} | {o} |")
        totals = [x + y for x, y in zip(totals, (n, b, d, o), strict=True)]
    print(f"| all | {totals[0]} | {totals[1]} | {totals[2]} | {totals[3]} |")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None)
