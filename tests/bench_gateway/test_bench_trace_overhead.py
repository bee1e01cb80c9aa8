"""bench/gateway/trace_overhead.py runs end to end (a few requests; not for numbers): both
gateways start, every answer is checked, the traced one stores a trace per request."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "gateway" / "trace_overhead.py"


@pytest.mark.slow
def test_trace_overhead_bench_smoke() -> None:
    done = subprocess.run([sys.executable, str(SCRIPT), "--rounds", "2", "--requests", "5",
                           "--warmup", "1"], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    assert "| untraced |" in done.stdout and "| traced |" in done.stdout
    assert "the traced gateway stored 12 traces of 12 requests" in done.stdout
    assert done.stderr.count("round ") == 2
