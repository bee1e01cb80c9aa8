"""Fit the call-or-answer decision (prompting.choices.CallDecision) on a tuning run.

    python bench/fit_decision.py bench/results/bfcl-samples/tune-features.json

The run must log the decision's inputs (``bench/bfcl_samples.sh tune features``: decide on,
always call). Label: the case's category expects a call (it has possible answers). A
class-balanced logistic regression on (open, tool, relevance); prints the weights as
``bias,w_open,w_tool,w_rel`` (the ``-o decision=`` form) and the balanced accuracy of the
decision on the tuning cases, for each feature set.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

FEATURES = ("call_open_lp", "call_tool_lp", "call_relevance")


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


def balanced(pred: np.ndarray, y: np.ndarray) -> float:
    return float(((pred == 1) & (y == 1)).sum() / max(1, y.sum()) / 2
                 + ((pred == 0) & (y == 0)).sum() / max(1, (1 - y).sum()) / 2)


def main(path: str) -> None:
    document = json.loads(Path(path).read_text(encoding="utf-8"))
    rules = document["meta"].get("rules", {})
    rows = [c for c in document["cases"] if all(k in c["timings"] for k in FEATURES)]
    x = np.array([[c["timings"][k] for k in FEATURES] for c in rows])
    y = np.array([0.0 if rules.get(c["category"]) == "no_call" else 1.0 for c in rows])
    print(f"{len(rows)} cases, {int(y.sum())} expecting a call")
    for used in ((0,), (0, 2), (0, 1, 2)):
        w = fit(x[:, used], y)
        full = np.zeros(4)
        full[0] = w[0]
        for i, j in enumerate(used):
            full[1 + j] = w[1 + i]
        pred = (full[0] + x @ full[1:] > 0).astype(float)
        names = "+".join(FEATURES[j].removeprefix("call_") for j in used)
        print(f"{names:28s} decision={','.join(f'{v:.4g}' for v in full)} "
              f"balanced acc {balanced(pred, y):.3f} calls {int(pred.sum())}/{len(y)}")


if __name__ == "__main__":
    main(sys.argv[1])
