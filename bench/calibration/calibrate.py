"""Calibrate the local backend's likelihood decisions on the calibration set.

    python bench/calibration/calibrate.py                        # the bundled model
    python bench/calibration/calibrate.py --model /path/m.gguf   # any GGUF
    python bench/calibration/calibrate.py --out scores.jsonl     # also keep each case's scores
    python bench/calibration/calibrate.py --scores scores.jsonl  # the table again, from kept scores

For each case of ``bench/calibration/cases.jsonl`` (never BFCL or the realistic set), the
prompt is built as the local backend builds it and the model is asked for its scores
(:mod:`tooluse.prompting.decide`):

- **the call decision** (the cases whose last turn is the user's request, the turns a
  decision is made on; label: the case expects a call): ``opener``,
  ``contrast`` and ``yes_no``. For each, the AUROC (how well the score alone separates the
  two classes) and the threshold with the best balanced accuracy on the set (the midpoint
  between two neighbouring scores; :func:`best_threshold` says why balanced);
- **one more call** (the cases expecting calls, with the first expected call written in the
  block; label: a second call is expected): ``<invoke>`` against ``</function_calls>``
  after it, with its AUROC and threshold (``more_calls_margin``);
- **an optional parameter** (the cases expecting a call to a tool with optional
  parameters, the call written up to its required ones; label: the expected call gives an
  optional one): the next token ``<`` (another parameter) against ``</`` (closing the
  parameters), the first tokens the decoder weighs there, with its AUROC and threshold
  (``optional_margin``). Only that first point of each call is scored.

It prints a table and the options to pass (``-o call_decision=... -o call_decision_threshold=...``), the
best decision by AUROC then accuracy. A threshold that becomes a default for the bundled
model names this command where it is set (``tooluse.backends.local_options``).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

from tooluse.backends.local import LocalBackend
from tooluse.backends.local_options import LocalOptions
from tooluse.codecs import anthropic as codec
from tooluse.codecs.legacy.render import render_function_calls
from tooluse.messages import ToolUseBlock
from tooluse.prompting.decide import CALL_OPENER, DECIDE_MODES, decides, decision_scores

HERE = Path(__file__).resolve().parent
CASES = HERE / "cases.jsonl"


def auroc(scores: list[float], labels: list[int]) -> float:
    """The probability that a positive case scores above a negative one (ties: half)."""
    pos = [s for s, y in zip(scores, labels, strict=True) if y]
    neg = [s for s, y in zip(scores, labels, strict=True) if not y]
    if not pos or not neg:
        return math.nan
    wins = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def best_threshold(scores: list[float], labels: list[int]) -> tuple[float, float, float]:
    """The threshold (score >= threshold: positive) with the best balanced accuracy (the
    mean of the rates right on each class), it, and the plain accuracy there.

    Balanced, because the classes differ in size (more cases expect a call) and a call
    where none is wanted costs a user more than a text answer: plain accuracy would buy
    calls on the larger class with wrong calls on the smaller."""
    values = sorted(set(scores))
    cuts = [values[0] - 1.0] + [(a + b) / 2 for a, b in itertools.pairwise(values)] \
        + [values[-1] + 1.0]
    pos = max(1, sum(labels))
    neg = max(1, len(labels) - sum(labels))
    best = (cuts[0], -1.0, 0.0)
    for cut in cuts:
        tp = sum(s >= cut and bool(y) for s, y in zip(scores, labels, strict=True))
        tn = sum(s < cut and not y for s, y in zip(scores, labels, strict=True))
        balanced = (tp / pos + tn / neg) / 2
        if balanced > best[1]:
            best = (cut, balanced, (tp + tn) / len(labels))
    return best


def first_call(case: dict[str, Any]) -> ToolUseBlock:
    """The first expected call, each argument at its first listed value (absent if null)."""
    call = case["expected"][0]
    args = {k: v[0] for k, v in call["arguments"].items() if v and v[0] is not None}
    return ToolUseBlock(id="toolu_calibration", name=call["name"], input=args)


def case_scores(backend: LocalBackend, case: dict[str, Any]) -> dict[str, Any]:
    request = codec.decode_request({
        "model": "local", "max_tokens": 256, "system": case["system"], "tools": case["tools"],
        "tool_choice": case["tool_choice"], "messages": case["messages"]})
    messages, prefill, _, _ = backend._prompt(request)
    text = backend.text_model

    def score(msgs: list[dict[str, str]], conts: Any, pre: str = prefill) -> list[float]:
        return text.score_continuations(msgs, conts, prefill=pre)

    row: dict[str, Any] = {"id": case["id"], "category": case["category"],
                           "call": int(bool(case["expected"])), "decides": decides(request)}
    row.update(decision_scores(score, messages))
    if case["expected"]:
        block = render_function_calls([first_call(case)], close=False)
        assert block.startswith(CALL_OPENER.split("\n")[0])
        more, end = score(messages, ["\n<invoke>", "\n</function_calls>"], prefill + block)
        row["more"] = int(len(case["expected"]) > 1)
        row["more_margin"] = more - end
        opened = required_only(case)
        if opened is not None:
            head, wants = opened
            more, end = score(messages, ["<", "</"], prefill + head)
            row["optional"] = int(wants)
            row["optional_margin"] = more - end
    return row


def required_only(case: dict[str, Any]) -> tuple[str, bool] | None:
    """The first expected call written up to its required parameters (ending where the
    decoder chooses between another parameter and ``</parameters>``), and whether the
    expected call gives an optional one; None when its tool has no optional parameter."""
    call = first_call(case)
    tool = next(t for t in case["tools"] if t["name"] == call.name)
    schema = tool["input_schema"]
    required = list(schema.get("required", []))
    optional = [p for p in schema.get("properties", {}) if p not in required]
    if not optional or any(p not in call.input for p in required):
        return None
    written = ToolUseBlock(id=call.id, name=call.name,
                           input={p: call.input[p] for p in required})
    block = render_function_calls([written], close=False)
    return block[: block.index("</parameters>")], any(p in call.input for p in optional)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", help="a GGUF file (default: the bundled model)")
    parser.add_argument("--cases", default=str(CASES))
    parser.add_argument("--out", help="write each case's scores here (JSON lines)")
    parser.add_argument("--scores", help="read the scores a run kept (--out) instead of "
                        "asking the model")
    args = parser.parse_args()
    started = time.perf_counter()
    if args.scores:
        with open(args.scores, encoding="utf-8") as f:
            rows = [json.loads(line) for line in f if line.strip()]
        model = f"scores of {args.scores}"
    else:
        backend = LocalBackend(args.model, LocalOptions(prompt_cache=False))
        model = f"model {backend.model_path.name}"
        with open(args.cases, encoding="utf-8") as f:
            rows = [case_scores(backend, json.loads(line)) for line in f if line.strip()]
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.writelines(json.dumps(row) + "\n" for row in rows)
    secs = time.perf_counter() - started
    scoped = [r for r in rows if r["decides"]]
    labels = [r["call"] for r in scoped]
    cost = "" if args.scores else f", {secs / len(rows):.2f} s per case (all scores)"
    print(f"calibration set: {len(rows)} cases, {model}{cost}")
    print(f"the call decision: {len(scoped)} cases end in the user's request "
          f"({sum(labels)} expect a call); {len(rows) - len(scoped)} end in a tool's result "
          "(left to the model)")
    print(f"{'decision':<14}{'AUROC':>7}{'threshold':>11}{'balanced':>10}{'accuracy':>10}")
    results = []
    for mode in DECIDE_MODES:
        values = [r[mode] for r in scoped]
        area = auroc(values, labels)
        cut, balanced, acc = best_threshold(values, labels)
        results.append((area, balanced, mode, cut))
        print(f"{mode:<14}{area:>7.3f}{cut:>11.3f}{balanced:>9.1%}{acc:>10.1%}")
    more_rows = [r for r in rows if "more_margin" in r]
    more_labels = [r["more"] for r in more_rows]
    margins = [r["more_margin"] for r in more_rows]
    more_area = auroc(margins, more_labels)
    more_cut, more_balanced, more_acc = best_threshold(margins, more_labels)
    print(f"{'more_calls':<14}{more_area:>7.3f}{more_cut:>11.3f}{more_balanced:>9.1%}"
          f"{more_acc:>10.1%}"
          f"   ({len(more_rows)} cases with a call, {sum(more_labels)} expect more)")
    opt_rows = [r for r in rows if "optional_margin" in r]
    opt_labels = [r["optional"] for r in opt_rows]
    opt_margins = [r["optional_margin"] for r in opt_rows]
    opt_cut, opt_balanced, opt_acc = best_threshold(opt_margins, opt_labels) if opt_rows \
        else (math.nan, math.nan, math.nan)
    print(f"{'optional':<14}{auroc(opt_margins, opt_labels):>7.3f}{opt_cut:>11.3f}"
          f"{opt_balanced:>9.1%}{opt_acc:>10.1%}"
          f"   ({len(opt_rows)} calls to a tool with optional parameters, "
          f"{sum(opt_labels)} give one)")
    area, acc, mode, cut = max(results, key=lambda r: (-1.0 if math.isnan(r[0]) else r[0], r[1]))
    print(f"\noptions: -o call_decision={mode} -o call_decision_threshold={cut:.3f} "
          f"-o more_calls_margin={more_cut:.3f} -o optional_margin={opt_cut:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
