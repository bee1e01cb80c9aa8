"""The ablation table (bench/bfcl_ablation.sh): cases passed per category and configuration,
and, against the configuration ``all``, the cases gained and lost on the cases both ran.

    python bench/bfcl_ablation_table.py bench/results/bfcl-ablation
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ORDER = ("simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance",
         "live_simple")


def main(folder: str) -> None:
    runs = {p.stem.removeprefix("abl-"): {c["id"]: c for c in json.loads(p.read_text())["cases"]}
            for p in sorted(Path(folder).glob("abl-*.json"))}
    ref = runs.get("all", {})
    print("| configuration | " + " | ".join(ORDER) + " | passed | valid calls | vs all: + / - |")
    print("|---|" + "---:|" * (len(ORDER) + 3))
    for name, cases in runs.items():
        cells = []
        for category in ORDER:
            mine = [c for c in cases.values() if c["category"] == category]
            cells.append(f"{sum(c['passed'] for c in mine)}/{len(mine)}" if mine else "-")
        shared = [i for i in cases if i in ref]
        gained = sum(cases[i]["passed"] and not ref[i]["passed"] for i in shared)
        lost = sum(ref[i]["passed"] and not cases[i]["passed"] for i in shared)
        valid = sum(c["calls_valid"] for c in cases.values())
        total = sum(c["calls_total"] for c in cases.values())
        print(f"| {name} | " + " | ".join(cells)
              + f" | {sum(c['passed'] for c in cases.values())}/{len(cases)} | {valid}/{total}"
              + f" | +{gained} / -{lost} of {len(shared)} |")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "bench/results/bfcl-ablation")
