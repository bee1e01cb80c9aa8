"""Which tools ``rank_tools`` and ``plan_tools`` choose on BFCL, without the model.

    python bench/bfcl_tool_plan.py [--data-dir ../shared/bench/bfcl] [--need 2]

For every case of the several-tool categories, the tool the first call is forced to
(:func:`tooluse.presets.en_bfcl.choices.relevance`, the model's likelihood left aside: a tie goes
to the first offered tool here) and the further tools planned after it
(:func:`tooluse.presets.en_bfcl.choices.further_tools`) are compared with the expected calls'
functions, on the even cases (where ``plan_tools``' rule was chosen) and the odd ones
(held out). "first right": the first tool is one of the expected functions; "set exact":
the first and the planned tools are exactly the expected functions.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tooluse.eval.bfcl import build_request, build_toolset, load_category
from tooluse.presets.en_bfcl.choices import further_tools, question_text, relevance

ROOT = Path(__file__).resolve().parents[1]
CATEGORIES = ("multiple", "parallel_multiple")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "bench" / "bfcl"))
    parser.add_argument("--need", type=int, default=2,
                        help="words a further tool must cover (further_tools' default: 2)")
    args = parser.parse_args()
    data = Path(args.data_dir)
    if not (data / "BFCL_v4_multiple.json").is_file():
        print(f"no BFCL data in {data} (the benchmark data lives in ../shared/bench/bfcl)")
        return 0
    print("| category | half | cases | first right | set exact (rank only) "
          "| set exact (rank + plan) |")
    print("|---|---|---:|---:|---:|---:|")
    for category in CATEGORIES:
        cases = load_category(data, category)
        for half, name in ((0, "even (tuning)"), (1, "odd (held out)")):
            total = first_right = rank_exact = plan_exact = 0
            for case in cases[half::2]:
                toolset = build_toolset(case.functions)
                request = build_request(case, toolset, tool_choice="any")
                question = question_text(request)
                tools = request.tools
                best = max(range(len(tools)),
                           key=lambda i: (relevance(question, tools[i], examples=False), -i))
                planned = [best, *further_tools(question, tools, best, need=args.need)]
                names = [toolset.original_name(tools[i].name) for i in planned]
                expected = {next(iter(call)) for call in case.ground_truth or []}
                total += 1
                first_right += names[0] in expected
                rank_exact += {names[0]} == expected
                plan_exact += set(names) == expected
            print(f"| {category} | {name} | {total} | {first_right} | {rank_exact} "
                  f"| {plan_exact} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
