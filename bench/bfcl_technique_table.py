"""One table of what each technique adds on BFCL and what it costs in time per case: runs of
`bench/bfcl_eval.sh` (one folder each), every one compared with a baseline run on the cases
both hold (a run stopped early, or a sparser sample, is compared on what it has).

    python bench/bfcl_technique_table.py BASELINE_DIR NAME=DIR [NAME=DIR ...]

Per run and category: cases passed of those compared, the cases it gained and lost against
the baseline, the calls that do not validate, and the median latency per case of the run and
of the baseline on the same cases (their ratio is the time cost; on a busy machine the
ratio means more than either figure), and the tokens the model wrote against the baseline's
(every sample drawn included: a cost the machine's load does not change).
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any

ORDER = ["simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance",
         "live_simple"]


def load(folder: str) -> dict[str, dict[str, Any]]:
    """Every case of the run's JSON files, by id."""
    cases: dict[str, dict[str, Any]] = {}
    for path in sorted(Path(folder).glob("*.json")):
        for case in json.loads(path.read_text())["cases"]:
            cases[case["id"]] = case
    return cases


def row(name: str, run: dict[str, dict[str, Any]], base: dict[str, dict[str, Any]],
        category: str | None) -> str | None:
    ids = [i for i in run if i in base and (category is None or run[i]["category"] == category)]
    if not ids:
        return None
    passed = sum(run[i]["passed"] for i in ids)
    before = sum(base[i]["passed"] for i in ids)
    gained = sum(run[i]["passed"] and not base[i]["passed"] for i in ids)
    lost = sum(base[i]["passed"] and not run[i]["passed"] for i in ids)
    invalid = sum(run[i]["calls_total"] - run[i]["calls_valid"] for i in ids)
    t_run = statistics.median(run[i]["latency"] for i in ids)
    t_base = statistics.median(base[i]["latency"] for i in ids)
    w_run = sum(written(run[i]) for i in ids)
    w_base = sum(written(base[i]) for i in ids)
    return (f"| {name} | {category or '**all**'} | {len(ids)} | {passed} ({before}) | +{gained} "
            f"-{lost} | {invalid} | {t_run:.1f} ({t_base:.1f}) | "
            f"{t_run / t_base:.1f}x | {w_run / max(1, w_base):.2f}x |")


def written(case: dict[str, Any]) -> float:
    """The tokens the model wrote for a case, every answer drawn included (self-consistency's
    samples): a cost that does not depend on the machine's load."""
    timings = case.get("timings") or {}
    return float(timings.get("self_consistency_tokens", case.get("output_tokens") or 0))


def main(argv: list[str]) -> None:
    if len(argv) < 2:
        raise SystemExit(__doc__)
    base = load(argv[0])
    print("| run | category | cases | passed (baseline) | gained, lost | invalid calls "
          "| median s per case (baseline) | time | tokens written |")
    print("|---|---|---:|---:|---|---|---:|---:|---:|")
    for spec in argv[1:]:
        name, _, folder = spec.partition("=")
        run = load(folder)
        categories = [c for c in ORDER if any(v["category"] == c for v in run.values())]
        for category in [*categories, None]:
            line = row(name, run, base, category)
            if line:
                print(line)


if __name__ == "__main__":
    main(sys.argv[1:])
