"""Fit the call-or-answer decision (presets.en_bfcl.choices.CallDecision) on BFCL runs.

    python bench/bfcl_fit_decision.py [--against=B,O,T,R[,N]] [--recompute] RUN.json [RUN.json ...]

Each run is a ``tooluse eval bfcl`` JSON made under ``auto`` with ``decide`` on (every case
logs the decision's inputs in its timings, whatever was decided), e.g. the six categories
of ``TOOL_CHOICE=auto bench/bfcl_eval.sh``. Label: the case's category expects a call.

The fit uses the **even** cases of each category only (a class-balanced logistic
regression); its bias is then lowered as far as the even irrelevance cases allow without
calling in more of them than the decision ``--against`` does (default: the backend's
``DEFAULT_DECISION``; a wrong call there costs a case for sure, a call in a call category
gains one only when it is right).
Printed for each feature set, on the even and the **odd** (held-out) cases: the calls made
per category, and the irrelevance cases answered without a call. The weights are printed in
the ``-o decision=bias,w_open,w_tool,w_rel,w_name`` form.

``name`` (:func:`~tooluse.presets.en_bfcl.choices.name_coverage`) is taken from the run when it
logged it, else computed from the BFCL data the run names. With ``--recompute``, ``rel``
and ``name`` are computed again from that data by the current code (to see what a change to
them, e.g. to the stemmer, does to the decision without running the model again); ``open``
and ``tool`` are the model's and always come from the run.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from tooluse.presets.en_bfcl import DEFAULT_DECISION
from tooluse.eval.bfcl import build_request, build_toolset, load_category
from tooluse.presets.en_bfcl.choices import name_coverage, question_text, relevance

FEATURES = ("open", "tool", "rel", "name")
KEYS = {"open": "call_open_lp", "tool": "call_tool_lp", "rel": "call_relevance",
        "name": "call_name_coverage"}


def fit(x: np.ndarray, y: np.ndarray, l2: float = 1e-2, steps: int = 20000) -> np.ndarray:
    mean, std = x.mean(0), x.std(0) + 1e-9
    z = np.hstack([np.ones((len(x), 1)), (x - mean) / std])
    weight = np.where(y == 1, 0.5 / y.mean(), 0.5 / (1 - y.mean()))
    w = np.zeros(z.shape[1])
    for _ in range(steps):
        p = 1 / (1 + np.exp(-z @ w))
        grad = z.T @ ((p - y) * weight) / len(y) + l2 * np.r_[0, w[1:]]
        w -= 0.5 * grad
    # back to raw features: bias + sum(w_i * x_i)
    raw = w[1:] / std
    return np.r_[w[0] - (raw * mean).sum(), raw]


def _rows(paths: list[str], recompute: bool = False) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for path in paths:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
        meta = document["meta"]
        rules = meta.get("rules", {})
        by_id = {c["id"]: c for c in document["cases"]}
        for category in sorted({c["category"] for c in document["cases"]}):
            cases = load_category(meta["data_dir"], category)
            for index, case in enumerate(cases):
                row = by_id.get(case.id)
                if row is None or "call_open_lp" not in row["timings"]:
                    continue
                timings = row["timings"]
                name = timings.get("call_name_coverage")
                rel = timings["call_relevance"]
                if name is None or recompute:
                    request = build_request(case, build_toolset(case.functions))
                    question = question_text(request)
                    name = name_coverage(question, request.tools)
                    if recompute:
                        rel = relevance(question, request.tools)
                rule = rules.get(category, case.rule)
                rows.append({"category": category, "even": index % 2 == 0,
                             "y": 0.0 if rule == "no_call" else 1.0,
                             "open": timings["call_open_lp"], "tool": timings["call_tool_lp"],
                             "rel": rel, "name": name})
    return rows


def _weights(w: np.ndarray, used: tuple[str, ...]) -> np.ndarray:
    full = np.zeros(1 + len(FEATURES))
    full[0] = w[0]
    for i, feature in enumerate(used):
        full[1 + FEATURES.index(feature)] = w[1 + i]
    return full


def _calls(full: np.ndarray, rows: list[dict[str, Any]]) -> np.ndarray:
    x = np.array([[r[f] for f in FEATURES] for r in rows])
    return (full[0] + x @ full[1:] > 0).astype(int)


def _report(label: str, full: np.ndarray, rows: list[dict[str, Any]]) -> None:
    for half, name in ((True, "even"), (False, "odd ")):
        part = [r for r in rows if r["even"] == half]
        calls = _calls(full, part)
        cells = []
        for category in sorted({r["category"] for r in part}):
            picked = [c for c, r in zip(calls, part, strict=True) if r["category"] == category]
            if all(r["y"] == 0 for r in part if r["category"] == category):
                cells.append(f"{category} no call {len(picked) - sum(picked)}/{len(picked)}")
            else:
                cells.append(f"{category} {sum(picked)}/{len(picked)}")
        print(f"  {label:22s} {name}: " + ", ".join(cells))


def main(paths: list[str], against: str | None = None, recompute: bool = False) -> None:
    rows = _rows(paths, recompute)
    even = [r for r in rows if r["even"]]
    print(f"{len(rows)} cases ({len(even)} even, for the fit), "
          f"{int(sum(r['y'] for r in rows))} expecting a call")
    current = np.array([DEFAULT_DECISION.bias, DEFAULT_DECISION.w_open, DEFAULT_DECISION.w_tool,
                        DEFAULT_DECISION.w_rel, DEFAULT_DECISION.w_name])
    if against:
        given = [float(v) for v in against.split(",")]
        current = np.array(given + [0.0] * (5 - len(given)))
    print(f"against: decision={','.join(f'{v:.4g}' for v in current)}")
    _report("against", current, rows)
    negatives = [r for r in even if r["y"] == 0]
    allowed = int(_calls(current, negatives).sum())
    for used in (("open",), ("open", "rel"), ("open", "rel", "name"),
                 ("open", "tool", "rel", "name")):
        x = np.array([[r[f] for f in used] for r in even])
        full = _weights(fit(x, np.array([r["y"] for r in even])), used)
        for shift in np.linspace(5.0, -5.0, 2001):  # as many calls as the negatives allow
            moved = full.copy()
            moved[0] += shift
            if _calls(moved, negatives).sum() <= allowed:
                full = moved
                break
        print(f"{'+'.join(used)}: decision={','.join(f'{v:.4g}' for v in full)}")
        _report("+".join(used), full, rows)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__)
        sys.exit(2)
    options = [a for a in sys.argv[1:] if a.startswith("--against=")]
    main([a for a in sys.argv[1:] if a not in options and a != "--recompute"],
         options[0].split("=", 1)[1] if options else None, "--recompute" in sys.argv[1:])
