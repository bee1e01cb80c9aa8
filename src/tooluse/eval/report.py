"""Printing and saving evaluation results: a table for people, JSON for analysis."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .harness import CaseResult, CategorySummary

__all__ = ["format_table", "write_json"]


def format_table(summaries: Sequence[CategorySummary]) -> str:
    """One line per category: accuracy, validity, median latency, tokens/s (end to end, and
    of generation alone when the backend reports its timings), top failures."""
    header = (
        f"{'category':<18} {'cases':>5} {'accuracy':>8} {'valid':>7} "
        f"{'median s':>8} {'tok/s':>6} {'dec t/s':>7}  failures"
    )
    lines = [header, "-" * len(header)]
    for s in summaries:
        decode = "-" if s.decode_tokens_per_second is None else f"{s.decode_tokens_per_second:.1f}"
        failures = ", ".join(f"{k} {v}" for k, v in list(s.failures.items())[:4]) or "-"
        lines.append(
            f"{s.category:<18} {s.cases:>5} {100 * s.accuracy:>7.1f}% {100 * s.valid_rate:>6.1f}% "
            f"{s.median_latency:>8.2f} {s.tokens_per_second:>6.1f} {decode:>7}  {failures}"
        )
    return "\n".join(lines)


def write_json(
    path: Path | str,
    meta: Mapping[str, Any],
    summaries: Sequence[CategorySummary],
    results: Sequence[CaseResult],
) -> None:
    """Write ``{"meta", "summary", "cases"}`` atomically, so a file read while a long run
    is still going (or after it was killed) is always complete JSON."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {
        "meta": dict(meta),
        "summary": [s.to_dict() for s in summaries],
        "cases": [r.to_dict() for r in results],
    }
    fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(document, handle, ensure_ascii=False, indent=1, default=repr)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes it private; results are ordinary files
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
