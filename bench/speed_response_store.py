"""The Responses stores' write time as they fill: ``put`` at 10 rows and at 10,000.

A stored Responses stream ends with one ``put`` (the response, its input items, the
conversation so far). Its cost must not grow with the number of responses kept: this fills
each store to ``--fill`` rows (bodies of a realistic size), then times ``--puts`` more writes
one after another, and again with ``--threads`` writers at once (streams ending together).
The store is bounded at 10,000 (the default), so at 10,000 rows every write also evicts one.

    python bench/speed_response_store.py                       # SQLite in memory and on disk
    python bench/speed_response_store.py --postgres postgresql://user@127.0.0.1:5432/db

Run it with ``PYTHONPATH=<another checkout>/src`` to measure another version's stores.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from tooluse.server.stores.responses import ResponseStore, SqliteResponseStore

TEXT = "The weather in Paris is 18 C and sunny, with a light breeze from the west. " * 8


def _row(k: int) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]:
    body = {"id": f"resp_{k}", "object": "response", "status": "completed",
            "output": [{"type": "message", "content": [{"type": "output_text", "text": TEXT}]}]}
    items = [{"id": f"msg_{k}", "type": "message", "role": "user",
              "content": [{"type": "input_text", "text": "What is the weather in Paris?"}]}]
    context = {"system": [], "messages": [{"role": "user", "content": [{"type": "text", "text": TEXT}]},
                                          {"role": "assistant", "content": [{"type": "text", "text": TEXT}]}]}
    return body, items, context


def _fill(store: ResponseStore, rows: int) -> None:
    for k in range(rows):
        store.put(f"fill_{k}_{uuid.uuid4().hex[:8]}", *_row(k))


def _time_puts(store: ResponseStore, puts: int, threads: int) -> tuple[float, float]:
    """(median ms per put, puts per second) with ``threads`` writers."""
    times: list[float] = []
    lock = threading.Lock()

    def writer(n: int) -> None:
        for k in range(n):
            row = _row(k)
            start = time.perf_counter()
            store.put(f"bench_{uuid.uuid4().hex}", *row)
            took = time.perf_counter() - start
            with lock:
                times.append(took)

    started = time.perf_counter()
    workers = [threading.Thread(target=writer, args=(puts // threads,)) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    elapsed = time.perf_counter() - started
    return statistics.median(times) * 1000, len(times) / elapsed


def _stores(args: argparse.Namespace, work: Path) -> list[tuple[str, Any]]:
    makers: list[tuple[str, Any]] = [
        ("SQLite, in memory", lambda: SqliteResponseStore(":memory:")),
        ("SQLite, file (WAL)", lambda: SqliteResponseStore(work / f"{uuid.uuid4().hex}.db")),
    ]
    if args.postgres:
        from tooluse.server.stores.responses_pg import PostgresResponseStore

        makers.append(("PostgreSQL", lambda: PostgresResponseStore(
            args.postgres, table=f"bench_{uuid.uuid4().hex[:12]}", pool_size=args.threads)))
    return makers


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--fill", type=int, nargs="+", default=[10, 10_000])
    parser.add_argument("--puts", type=int, default=400)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--postgres", help="a postgresql:// URL to measure that store too")
    args = parser.parse_args(argv)
    print("| store | rows kept | put p50 ms (1 writer) | puts/s (1 writer) | "
          f"put p50 ms ({args.threads} writers) | puts/s ({args.threads} writers) |")
    print("|---|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory(prefix="tooluse-store-bench-") as tmp:
        for name, make in _stores(args, Path(tmp)):
            for rows in args.fill:
                store = make()
                try:
                    _fill(store, rows)
                    one = _time_puts(store, args.puts, 1)
                    many = _time_puts(store, args.puts, args.threads)
                finally:
                    store.close()
                print(f"| {name} | {rows:,} | {one[0]:.3f} | {one[1]:.0f} | {many[0]:.3f} | "
                      f"{many[1]:.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
