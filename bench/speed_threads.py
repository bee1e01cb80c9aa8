"""Threads for the default model: prompt evaluation and single-token decoding, alone and
with other processes on the cores.

    python bench/speed_threads.py                 # the table below, ~2 minutes on 2 cores
    python bench/speed_threads.py --json /tmp/threads.json

Each configuration runs in fresh processes (llama.cpp reads OpenMP's settings at import):
load the default GGUF, evaluate a 510-token prompt (the size of the demo's first turn) and
decode 32 tokens one at a time; best of 3 repetitions inside the process. "busy" runs
three such processes at once on the machine (a test suite or a second eval worker beside
the model), and reports their median.

Rows: ``passive`` is tooluse's setting (``OMP_WAIT_POLICY=PASSIVE``, so a busy machine does
not crawl), ``spin`` is OpenMP's default (threads spin before sleeping), each with 1 or 2
decode threads (``n_threads_decode``); prompt evaluation always uses 2 (``n_threads``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
from typing import Any

_CHILD = r"""
import json, sys, time
import llama_cpp
from tooluse.llama.model import default_model_path
decode_threads = int(sys.argv[1])
llm = llama_cpp.Llama(model_path=str(default_model_path()), n_ctx=2048, n_threads=decode_threads,
                      n_threads_batch=2, n_batch=512, verbose=False)
tokens = llm.tokenize(("The quick brown fox jumps over the lazy dog. " * 100).encode())[:510]
prompt, decode = [], []
for _ in range(3):
    llm.reset()
    t0 = time.perf_counter(); llm.eval(tokens); t1 = time.perf_counter()
    for i in range(32):
        llm.eval([tokens[i]])
    t2 = time.perf_counter()
    prompt.append(t1 - t0); decode.append((t2 - t1) / 32)
print(json.dumps({"prompt_tokens_per_s": 510 / min(prompt), "decode_ms": 1000 * min(decode)}))
"""


def _run(policy: str, decode_threads: int, copies: int) -> dict[str, float]:
    env = dict(os.environ)
    env.pop("OMP_WAIT_POLICY", None)
    if policy == "passive":
        env["OMP_WAIT_POLICY"] = "PASSIVE"
    procs = [subprocess.Popen([sys.executable, "-c", _CHILD, str(decode_threads)], env=env,
                              stdout=subprocess.PIPE, text=True) for _ in range(copies)]
    found = [json.loads(p.communicate()[0].strip().splitlines()[-1]) for p in procs]
    return {key: statistics.median(f[key] for f in found) for key in found[0]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args()
    rows: list[dict[str, Any]] = []
    print("| waiting | decode threads | machine | prompt tokens/s | decode ms/token |")
    print("|---|---:|---|---:|---:|")
    for policy in ("passive", "spin"):
        for threads in (1, 2):
            for label, copies in (("quiet", 1), ("busy (3 processes)", 3)):
                found = _run(policy, threads, copies)
                rows.append({"policy": policy, "decode_threads": threads, "machine": label,
                             **found})
                print(f"| {policy} | {threads} | {label} | {found['prompt_tokens_per_s']:.0f} "
                      f"| {found['decode_ms']:.1f} |", flush=True)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
                       "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
