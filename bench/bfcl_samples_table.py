"""Markdown tables of the BFCL sample runs (bench/bfcl_samples.sh): accuracy per category and
configuration, validity, median latency (under load).

    python bench/bfcl_samples_table.py bench/results/bfcl-samples heldout
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

CONFIGS = ("baseline", "decide", "decide_score", "parallel", "optional", "retrieval", "copy",
           "enums", "all", "all_copy")


def main(folder: str, slice_: str) -> None:
    runs = {}
    for config in CONFIGS:
        path = Path(folder) / f"{slice_}-{config}.json"
        if path.is_file():
            runs[config] = json.loads(path.read_text())
    categories = sorted({c["category"] for r in runs.values() for c in r["cases"]})
    print("| category | cases | " + " | ".join(runs) + " |")
    print("|---|---:|" + "---:|" * len(runs))
    totals = {k: [0, 0] for k in runs}
    for category in categories:
        cells = []
        n = 0
        for config, run in runs.items():
            cases = [c for c in run["cases"] if c["category"] == category]
            n = max(n, len(cases))
            passed = sum(c["passed"] for c in cases)
            totals[config][0] += passed
            totals[config][1] += len(cases)
            cells.append(f"{passed}/{len(cases)}")
        print(f"| {category} | {n} | " + " | ".join(cells) + " |")
    print("| **all** | | " + " | ".join(f"**{p}/{n}** ({p / n:.0%})" if n else "-"
                                       for p, n in totals.values()) + " |")
    valid = [f"{sum(c['valid'] for c in r['cases'])}/{len(r['cases'])}" for r in runs.values()]
    print("| valid | | " + " | ".join(valid) + " |")
    calls = [f"{sum(c['calls_valid'] for c in r['cases'])}/{sum(c['calls_total'] for c in r['cases'])}"
             for r in runs.values()]
    print("| calls that validate | | " + " | ".join(calls) + " |")
    median = [f"{statistics.median(c['latency'] for c in r['cases']):.1f}" if r["cases"] else "-"
              for r in runs.values()]
    print("| median latency, s (under load) | | " + " | ".join(median) + " |")
    commits = {r["meta"].get("commit") for r in runs.values()}
    print(f"\ncommits: {', '.join(sorted(str(c) for c in commits))}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
