"""The floor under many clients on one local model: llama.cpp's own batched decode.

N sequences of one context (the bundled SmolLM2-135M, loaded as ``tooluse serve --slots``
loads it: ``n_seq_max`` sequences in one unified KV cache, the same threads), each given a
prompt of ``--prompt`` tokens of its own (all in one ``llama_decode``) and then ``--decode``
steps of one token per sequence (one ``llama_decode`` of N tokens per step) — the work of N
requests of the benchmark's shape with nothing else: no Python per token, no grammar, no
HTTP. The wall time for N sequences over that for one is the best that N concurrent
requests can do against one request on this machine, whatever the scheduler.

    python bench/speed_slots_floor.py [--clients 1,2,4,8] [--prompt 60] [--decode 36] [--rounds 3]

Prints one JSON row per N and a table; ``bench/speed_slots.py --configs floor`` runs it in
the same run as the servers.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any


def _decode(llama_cpp: Any, ctx: Any, batch: Any, items: list[tuple[int, int, int]],
            logits_last: bool, threads: Any) -> None:
    """One ``llama_decode`` of ``items`` (token, position, sequence), on the threads the
    slots choose for that many tokens (:class:`tooluse.llama.seq.Threads`)."""
    for n, (token, pos, seq) in enumerate(items):
        batch.token[n] = token
        batch.pos[n] = pos
        batch.n_seq_id[n] = 1
        batch.seq_id[n][0] = seq
        batch.logits[n] = logits_last and (n + 1 == len(items) or items[n + 1][2] != seq)
    batch.n_tokens = len(items)
    threads.fit(len(items))
    code = llama_cpp.llama_decode(ctx, batch)
    if code != 0:
        raise RuntimeError(f"llama_decode returned {code}")


def measure(clients: list[int], prompt: int, decode: int, rounds: int) -> list[dict[str, Any]]:
    import llama_cpp

    from tooluse.llama.model import default_model_path, load_model, model_settings
    from tooluse.llama.seq import Threads

    loaded = load_model(model_settings(default_model_path(), slots=max(clients)))
    llm = loaded.llm
    ctx = llm.ctx
    memory = llama_cpp.llama_get_memory(ctx)
    threads = Threads(ctx)
    batch = llama_cpp.llama_batch_init(max(int(llm.n_batch), prompt * max(clients)), 0, 1)
    rows: list[dict[str, Any]] = []
    one: float | None = None
    try:
        for count in clients:
            walls = []
            for r in range(rounds + 1):  # the first round warms up
                for seq in range(count):
                    llama_cpp.llama_memory_seq_rm(memory, seq, 0, -1)
                started = time.perf_counter()
                # Each sequence's own prompt (another token per sequence), in one decode.
                _decode(llama_cpp, ctx, batch, [
                    (1000 + 37 * seq + k, k, seq) for seq in range(count) for k in range(prompt)],
                    logits_last=True, threads=threads)
                for step in range(decode):
                    _decode(llama_cpp, ctx, batch, [
                        (2000 + 11 * seq + step, prompt + step, seq) for seq in range(count)],
                        logits_last=True, threads=threads)
                if r:
                    walls.append(time.perf_counter() - started)
            wall = statistics.median(walls)
            if count == 1:
                one = wall
            row = {"config": "floor", "workload": "-", "clients": count,
                   "wall_s": round(wall, 3),
                   "x_one": round(wall / one, 2) if one else None,
                   "x_solo": round(wall / one, 2) if one else None,
                   "p50_s": round(wall, 3), "p99_s": round(wall, 3),
                   "tokens_per_s": round(count * decode / wall, 1),
                   "rss_mb": None, "peak_rss_mb": None}
            rows.append(row)
            print(json.dumps(row), flush=True)
    finally:
        llama_cpp.llama_batch_free(batch)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", default="1,2,4,8")
    parser.add_argument("--prompt", type=int, default=60,
                        help="tokens each sequence evaluates of its own (default 60)")
    parser.add_argument("--decode", type=int, default=36,
                        help="tokens each sequence then decodes one at a time (default 36)")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    rows = measure([int(c) for c in args.clients.split(",")], args.prompt, args.decode,
                   args.rounds)
    print("| clients | wall s | × one | decoded tokens/s |\n|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['clients']} | {r['wall_s']} | {r['x_one']} | {r['tokens_per_s']} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
