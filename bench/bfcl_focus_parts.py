"""How well ``focus_values`` parts BFCL questions among their tools, without the model.

    python bench/bfcl_focus_parts.py [--data-dir DIR] [--category parallel_multiple] [-v]

For each question with several tools that :func:`tooluse.presets.en_bfcl.focus.value_focus`
parts, against BFCL's expected calls: the expected values the question writes that a
tool's part leaves out (**missed**: the value copier would not offer them to that tool's
call) and the values of the other tools' expected calls that a tool's part keeps out
(**kept out**: what the parts are for). A change to the parting rules should lower the
first without lowering the second much. ``-v`` lists the questions with a missed value.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tooluse.eval.bfcl import build_request, build_toolset, load_category
from tooluse.presets.en_bfcl.choices import question_text
from tooluse.presets.en_bfcl.focus import value_focus
from tooluse.language.words import given_by

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "bench" / "bfcl"


def _leaves(value: Any) -> Iterator[str]:
    """The strings and numbers inside an expected value, as text."""
    if isinstance(value, list):
        for item in value:
            yield from _leaves(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _leaves(item)
    elif isinstance(value, (int, float, str)) and not isinstance(value, bool) and value != "":
        yield str(value)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", type=Path, default=DATA)
    parser.add_argument("--category", action="append")
    parser.add_argument("-v", dest="verbose", action="store_true")
    args = parser.parse_args()
    if not args.data_dir.is_dir():
        print(f"no BFCL data at {args.data_dir} (../shared/bench/bfcl beside the checkout)",
              file=sys.stderr)
        return 2
    print("| category | questions parted | expected values missed (questions) | others' "
          "values kept out |")
    print("|---|---:|---:|---:|")
    for category in args.category or ["parallel_multiple", "multiple"]:
        parted = missed = kept_out = 0
        missing: list[str] = []
        for case in load_category(args.data_dir, category):
            if not case.ground_truth:
                continue
            request = build_request(case, build_toolset(case.functions))
            wire = {f["name"]: t.name for f, t in zip(case.functions, request.tools,
                                                      strict=True)}
            question = question_text(request)
            focus = value_focus(question, request.tools)
            if focus is None:
                continue
            parted += 1
            values: dict[str, set[str]] = {}
            for call in case.ground_truth:
                for name, arguments in call.items():
                    for answers in arguments.values():
                        values.setdefault(wire[name], set()).update(
                            _leaves(answers[0] if answers else None))
            every = set().union(*values.values())
            here = 0
            for tool, own in values.items():
                here += sum(given_by(v, question) and not focus.allows(tool, v) for v in own)
                kept_out += sum(given_by(v, question) and not focus.allows(tool, v)
                                for v in every - own)
            missed += here
            if here:
                missing.append(case.id)
        print(f"| {category} | {parted} | {missed} ({len(missing)}) | {kept_out} |")
        if args.verbose and missing:
            print("  " + " ".join(missing), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
