"""What each after-the-fact rule of the en-bfcl preset does on bench/realistic, without the
model: the calls of a recorded run (the default path's, the model's own), edited and added
to by one rule at a time through the preset's own hooks, then scored again.

    python bench/realistic_replay.py /work/runs/realistic/default.json [--rules a,b]

The rules that act on calls once written are deterministic functions of the request and
the model's calls (``Assist.call_editor``, ``added_calls``, ``edit_together``), so replaying
them on recorded calls gives what the rule alone would have returned, exactly as the
backend applies them (each call edited, then the calls added, edited too, then the block's
calls edited together). The rules that steer decoding or plan the calls (decide,
rank_tools, plan_tools, calls_as_planned, prerequisite_tools' lookup-first, focus_values,
names_not_values, distinct_values, asked_more) need the model: measure those with
``realistic_set.py run --config rule:NAME``.

Per rule: right answers broken, wrong ones fixed, calls added, cases with an edited call,
against the recorded run.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from realistic_set import load_cases, score_case  # noqa: E402

from tooluse.codecs import get_codec  # noqa: E402
from tooluse.messages import Request, ToolUseBlock  # noqa: E402
from tooluse.presets.en_bfcl import RULES, EnBfcl  # noqa: E402
from tooluse.prompting.grammar import GrammarLimits  # noqa: E402

#: The rules that need the model (they steer decoding or plan the calls).
MODEL_RULES = ("decide", "rank_tools", "plan_tools", "calls_as_planned", "focus_values",
               "names_not_values", "distinct_values", "asked_more")
#: The rules replayed here: every other one (prerequisite_tools only as its edit: a
#: parameter takes an earlier lookup's result).
REPLAYED = tuple(r for r in RULES if r not in MODEL_RULES)


def request_of(case: dict[str, Any]) -> Request:
    body = {"model": "local", "max_tokens": 256, "messages": case["messages"],
            "tools": case["tools"], "tool_choice": case["tool_choice"]}
    if case.get("system"):
        body["system"] = case["system"]
    return get_codec("anthropic").decode_request(body)


def replay(rule: str, request: Request, calls: list[dict[str, Any]]) -> list[ToolUseBlock]:
    """The calls the backend would return with ``rule`` alone on, after the model wrote
    ``calls``."""
    assist = EnBfcl(only=(rule,))
    blocks = [ToolUseBlock(id=c["id"], name=c["name"], input=c["input"]) for c in calls]
    editor = assist.call_editor(request)
    if editor is not None:
        blocks = [editor(b)[0] for b in blocks]
    if blocks:
        for block in assist.added_calls(request, blocks, GrammarLimits().max_calls):
            blocks.append(editor(block)[0] if editor is not None else block)
    if assist.holds_calls(request):
        blocks, _ = assist.edit_together(request, blocks)
    return blocks


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", help="a realistic_set.py run JSON (the default path's)")
    parser.add_argument("--rules", default=",".join(REPLAYED))
    args = parser.parse_args(argv)
    cases = {c["id"]: c for c in load_cases()}
    run = json.loads(Path(args.run).read_text())
    rows = []
    for rule in args.rules.split(","):
        broken, fixed, edited_cases = [], [], []
        added = 0
        for record in run["cases"]:
            case = cases[record["id"]]
            blocks = replay(rule, request_of(case), record["calls"])
            new = [{"name": b.name, "input": b.input} for b in blocks]
            right = score_case(new, case["expected"])[0]
            added += sum(b.source == "added" for b in blocks)
            if any(b.source == "edited" for b in blocks):
                edited_cases.append(record["id"])
            if record["right"] and not right:
                broken.append(record["id"])
            elif right and not record["right"]:
                fixed.append(record["id"])
        rows.append((rule, broken, fixed, added, edited_cases))
    print(f"Replayed on {args.run} ({len(run['cases'])} cases, "
          f"{sum(r['right'] for r in run['cases'])} right as recorded)\n")
    print("| rule | broken | fixed | calls added | cases edited | broken cases | fixed cases |")
    print("| --- | ---: | ---: | ---: | ---: | --- | --- |")
    for rule, broken, fixed, added, edited in rows:
        print(f"| `{rule}` | {len(broken)} | {len(fixed)} | {added} | {len(edited)} | "
              f"{', '.join(broken) or '-'} | {', '.join(fixed) or '-'} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
