"""Re-run the default local model on some BFCL cases and compare with a recorded run.

    python bench/bfcl_probe_cases.py RUN_DIR IDS_FILE [--choice any] [-o KEY=VALUE ...]

``IDS_FILE`` holds one ``<category> <case id>`` per line (e.g. the cases a technique acts
on); ``RUN_DIR`` a recorded run of ``tooluse eval bfcl`` (``grammar_<choice>_<category>
.json``, from ``bench/bfcl_eval.sh``). Each case is run with the en-bfcl preset (the rules
the probes study; ``-o preset=none`` for the default path) and the ``-o`` options (``-o
names_not_values=0`` turns one of its rules off) and graded as ``tooluse
eval bfcl`` does (``tooluse.eval.harness.run_case``); the cases whose verdict differs from
the recorded one are listed: a measure of what a change to the model's side
(``copy_values``' spans, a new option) does on the cases it touches, without a full run. Run it twice, with and without a technique, to isolate it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from tooluse.backends.local import from_spec
from tooluse.eval.bfcl import load_category
from tooluse.eval.harness import run_case


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("run_dir")
    parser.add_argument("ids_file")
    parser.add_argument("--choice", default="any", choices=("auto", "any"))
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("-o", dest="options", action="append", default=[],
                        metavar="KEY=VALUE", help="backend option, repeatable")
    args = parser.parse_args()
    wanted: dict[str, set[str]] = {}
    for line in Path(args.ids_file).read_text(encoding="utf-8").splitlines():
        if line.strip():
            category, case_id = line.split()
            wanted.setdefault(category, set()).add(case_id)
    options: dict[str, Any] = {"preset": "en-bfcl",
                               **dict(o.split("=", 1) for o in args.options)}
    backend = from_spec("", n_threads=2, **options)
    data_dir = None
    before = now = 0
    changed: list[str] = []
    for category, ids in wanted.items():
        recorded_path = Path(args.run_dir) / f"grammar_{args.choice}_{category}.json"
        document = json.loads(recorded_path.read_text(encoding="utf-8"))
        data_dir = data_dir or document["meta"]["data_dir"]
        recorded = {c["id"]: c["passed"] for c in document["cases"]}
        for case in load_category(data_dir, category):
            if case.id not in ids:
                continue
            result = run_case(backend, case, max_tokens=args.max_tokens,
                              tool_choice=args.choice)
            passed = result.passed
            before += recorded[case.id]
            now += passed
            if passed != recorded[case.id]:
                changed.append(f"{'+' if passed else '-'} {case.id} "
                               f"{json.dumps(result.got)[:200]}")
            print(f"{case.id} {passed}", file=sys.stderr, flush=True)
    print("\n".join(changed))
    print(f"recorded {before}, now {now}: +{sum(c[0] == '+' for c in changed)} "
          f"−{sum(c[0] == '-' for c in changed)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
