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
against the recorded run; then all of them together, and each one's share of that
(leave-one-out), since the rules interact (an added call breaks an answer only once another
rule has made the model's own call right).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from realistic_set import load_cases, score_case

from tooluse.codecs import get_codec
from tooluse.messages import Request, ToolUseBlock
from tooluse.presets.en_bfcl import RULES, EnBfcl
from tooluse.grammar.tool_calls import GrammarLimits

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


def replay(rules: tuple[str, ...], request: Request,
           calls: list[dict[str, Any]]) -> list[ToolUseBlock]:
    """The calls the backend would return with ``rules`` on, after the model wrote
    ``calls``."""
    assist = EnBfcl(only=rules)
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


def _effect(rules: tuple[str, ...], cases: dict[str, Any],
            run: dict[str, Any]) -> tuple[dict[str, bool], int, list[str]]:
    """Each case's verdict with ``rules`` on, the calls they added, the cases they edited."""
    verdicts: dict[str, bool] = {}
    added, edited = 0, []
    for record in run["cases"]:
        case = cases[record["id"]]
        blocks = replay(rules, request_of(case), record["calls"])
        verdicts[record["id"]] = score_case([{"name": b.name, "input": b.input} for b in blocks],
                                            case["expected"])[0]
        added += sum(b.source == "added" for b in blocks)
        if any(b.source == "edited" for b in blocks):
            edited.append(record["id"])
    return verdicts, added, edited


def _row(name: str, base: dict[str, bool], after: dict[str, bool], added: int,
         edited: list[str]) -> str:
    broken = [k for k in base if base[k] and not after[k]]
    fixed = [k for k in base if after[k] and not base[k]]
    return (f"| {name} | {len(broken)} | {len(fixed)} | {added} | {len(edited)} | "
            f"{', '.join(broken) or '-'} | {', '.join(fixed) or '-'} |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", help="a realistic_set.py run JSON (the default path's)")
    parser.add_argument("--rules", default=",".join(REPLAYED))
    args = parser.parse_args(argv)
    cases = {c["id"]: c for c in load_cases()}
    run = json.loads(Path(args.run).read_text())
    rules = tuple(args.rules.split(","))
    recorded = {r["id"]: bool(r["right"]) for r in run["cases"]}
    header = ("| rule | broken | fixed | calls added | cases edited | broken cases | "
              "fixed cases |\n| --- | ---: | ---: | ---: | ---: | --- | --- |")
    print(f"Replayed on {args.run} ({len(run['cases'])} cases, "
          f"{sum(recorded.values())} right as recorded)\n")
    print("Each rule alone, against the recorded calls:\n")
    print(header)
    for rule in rules:
        print(_row(f"`{rule}`", recorded, *_effect((rule,), cases, run)))
    every, added, edited = _effect(rules, cases, run)
    print("\nAll of them together, against the recorded calls; then each one's share: all "
          "of them against all but that one (what it breaks or fixes among the others):\n")
    print(header)
    print(_row("all", recorded, every, added, edited))
    for rule in rules:
        others, _, _ = _effect(tuple(r for r in rules if r != rule), cases, run)
        changed = [k for k in every if every[k] != others[k]]
        if changed:
            print(_row(f"`{rule}` (leave-one-out)", others, every, 0, []))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
