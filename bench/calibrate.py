"""Calibrate the local backend's likelihood decisions on the calibration set.

    python bench/calibrate.py                        # the bundled model
    python bench/calibrate.py --model /path/m.gguf   # any GGUF
    python bench/calibrate.py --out scores.jsonl     # also keep each case's scores

For each case of ``bench/calibration/cases.jsonl`` (never BFCL or the realistic set), the
prompt is built as the local backend builds it and the model is asked for its scores
(:mod:`tooluse.prompting.decide`):

- **the call decision** (every case; label: the case expects a call): ``opener``,
  ``contrast`` and ``yes_no``. For each, the AUROC (how well the score alone separates the
  two classes) and the threshold with the best accuracy on the set (the midpoint between
  two neighbouring scores; ties go to the lower threshold, i.e. toward calling);
- **one more call** (the cases expecting calls, with the first expected call written in the
  block; label: a second call is expected): ``<invoke>`` against ``</function_calls>``
  after it, with its AUROC and threshold (``more_calls_margin``).

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
from tooluse.prompting.decide import CALL_OPENER, DECIDE_MODES, decision_scores

HERE = Path(__file__).resolve().parent
CASES = HERE / "calibration" / "cases.jsonl"


def auroc(scores: list[float], labels: list[int]) -> float:
    """The probability that a positive case scores above a negative one (ties: half)."""
    pos = [s for s, y in zip(scores, labels, strict=True) if y]
    neg = [s for s, y in zip(scores, labels, strict=True) if not y]
    if not pos or not neg:
        return math.nan
    wins = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def best_threshold(scores: list[float], labels: list[int]) -> tuple[float, float]:
    """The threshold (score >= threshold: positive) with the best accuracy, and it."""
    values = sorted(set(scores))
    cuts = [values[0] - 1.0] + [(a + b) / 2 for a, b in itertools.pairwise(values)] \
        + [values[-1] + 1.0]
    best = (cuts[0], -1.0)
    for cut in cuts:
        acc = sum((s >= cut) == bool(y) for s, y in zip(scores, labels, strict=True)) \
            / len(scores)
        if acc > best[1]:
            best = (cut, acc)
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
                           "call": int(bool(case["expected"]))}
    row.update(decision_scores(score, messages))
    if case["expected"]:
        block = render_function_calls([first_call(case)], close=False)
        assert block.startswith(CALL_OPENER.split("\n")[0])
        more, end = score(messages, ["\n<invoke>", "\n</function_calls>"], prefill + block)
        row["more"] = int(len(case["expected"]) > 1)
        row["more_margin"] = more - end
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", help="a GGUF file (default: the bundled model)")
    parser.add_argument("--cases", default=str(CASES))
    parser.add_argument("--out", help="write each case's scores here (JSON lines)")
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()
    backend = LocalBackend(args.model, LocalOptions(n_threads=args.threads or 0,
                                                    prompt_cache=False)
                           if args.threads else LocalOptions(prompt_cache=False))
    with open(args.cases, encoding="utf-8") as f:
        cases = [json.loads(line) for line in f if line.strip()]
    rows = []
    started = time.perf_counter()
    for case in cases:
        rows.append(case_scores(backend, case))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.writelines(json.dumps(row) + "\n" for row in rows)
    secs = time.perf_counter() - started
    labels = [r["call"] for r in rows]
    print(f"calibration set: {len(rows)} cases ({sum(labels)} expect a call), "
          f"model {backend.model_path.name}, {secs / len(rows):.2f} s per case (all scores)")
    print(f"{'decision':<14}{'AUROC':>7}{'threshold':>11}{'accuracy':>10}")
    results = []
    for mode in DECIDE_MODES:
        values = [r[mode] for r in rows]
        area = auroc(values, labels)
        cut, acc = best_threshold(values, labels)
        results.append((area, acc, mode, cut))
        print(f"{mode:<14}{area:>7.3f}{cut:>11.3f}{acc:>9.1%}")
    more_rows = [r for r in rows if "more_margin" in r]
    more_labels = [r["more"] for r in more_rows]
    margins = [r["more_margin"] for r in more_rows]
    more_area = auroc(margins, more_labels)
    more_cut, more_acc = best_threshold(margins, more_labels)
    print(f"{'more_calls':<14}{more_area:>7.3f}{more_cut:>11.3f}{more_acc:>9.1%}"
          f"   ({len(more_rows)} cases with a call, {sum(more_labels)} expect more)")
    area, acc, mode, cut = max(results, key=lambda r: (-1.0 if math.isnan(r[0]) else r[0], r[1]))
    print(f"\noptions: -o call_decision={mode} -o call_decision_threshold={cut:.3f} "
          f"-o more_calls_margin={more_cut:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
