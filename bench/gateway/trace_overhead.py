"""What ``--trace`` adds to the gateway's latency on the JSON path (the target: at most
+0.5 ms p50).

Two gateways, the same app ``tooluse serve`` builds (:func:`tooluse.server.create_app`) over
the benchmark's instant in-process backend (:func:`scripted_gateway.build_backend`: the
canned ``get_weather`` answer at once, no upstream hop), one with ``trace=`` a SQLite file and
one without, each in its own process under uvicorn. The same load generator
(:mod:`loadgen`) sends them the same Messages request (``stream: false``) one at a time;
rounds interleave the two in alternating order so other load on the machine falls on both,
and the report gives, per gateway, the median over rounds of each round's p50 and p99, and
the traced one's p50 minus the untraced one's.

Run on a quiet machine (numbers from a busy one mean nothing)::

    python bench/gateway/trace_overhead.py                 # 15 rounds of 400 requests
    python bench/gateway/trace_overhead.py --rounds 1 --requests 50   # a smoke run

It checks as it goes that every answer is the canned one, and at the end that the traced
gateway stored a trace per request it served (up to the store's bound).
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from loadgen import Endpoint, latency
from procs import ServerProcess, free_port

TARGET_MS = 0.5


def serve(port: int, trace: str | None) -> int:
    """The gateway process: the benchmark's instant backend, traced into ``trace`` or not."""
    import uvicorn
    from scripted_gateway import build_backend

    from tooluse.server import create_app

    app = create_app(build_backend(), trace=trace) if trace else create_app(build_backend())
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)
    return 0


def _start(name: str, trace: str | None, logs: Path) -> tuple[ServerProcess, str]:
    port = free_port()
    argv = [sys.executable, str(Path(__file__).resolve()), "--serve", "--port", str(port)]
    if trace:
        argv += ["--trace", trace]
    url = f"http://127.0.0.1:{port}"
    process = ServerProcess(name, argv, ready_url=url + "/health", log_path=logs / f"{name}.log")
    process.start()
    process.wait_ready(60)
    return process, url


def measure(rounds: int, requests: int, warmup: int) -> int:
    with tempfile.TemporaryDirectory(prefix="trace-bench-") as tmp:
        db = str(Path(tmp) / "traces.db")
        plain, plain_url = _start("untraced", None, Path(tmp))
        try:
            traced, traced_url = _start("traced", db, Path(tmp))
        except BaseException:
            plain.stop()
            raise
        try:
            paths = {"untraced": Endpoint(plain_url, "anthropic"),
                     "traced": Endpoint(traced_url, "anthropic")}
            p50: dict[str, list[float]] = {name: [] for name in paths}
            p99: dict[str, list[float]] = {name: [] for name in paths}
            sent = 0
            for number in range(rounds):
                order = list(paths) if number % 2 == 0 else list(paths)[::-1]
                for name in order:
                    result = asyncio.run(latency(paths[name], stream=False, warmup=warmup,
                                                 requests=requests))
                    if result.errors:
                        print(f"{name}: {result.errors} bad answers, first: {result.first_error}",
                              file=sys.stderr)
                        return 1
                    p50[name].append(result.p(50))
                    p99[name].append(result.p(99))
                sent += warmup + requests
                print(f"round {number + 1}/{rounds}: " + ", ".join(
                    f"{n} p50 {p50[n][-1]:.3f} ms" for n in paths), file=sys.stderr)
        finally:
            traced.stop()
            plain.stop()
        with sqlite3.connect(db) as conn:
            (stored,) = conn.execute("SELECT count(*) FROM traces").fetchone()
    medians = {name: statistics.median(values) for name, values in p50.items()}
    added = medians["traced"] - medians["untraced"]
    print(f"\n{rounds} rounds of {requests} sequential JSON requests (Messages API) per gateway")
    print("| gateway | p50 (median of rounds) | p99 (median of rounds) |")
    print("|---|---:|---:|")
    for name in paths:
        print(f"| {name} | {medians[name]:.3f} ms | {statistics.median(p99[name]):.3f} ms |")
    verdict = "within" if added <= TARGET_MS else "OVER"
    print(f"\n--trace adds {added:+.3f} ms at p50 ({verdict} the +{TARGET_MS} ms target); "
          f"the traced gateway stored {stored} traces of {sent} requests")
    if stored < min(sent, 1000):  # the store's default bound is 1000 traces
        print("the traced gateway did not store a trace per request", file=sys.stderr)
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--requests", type=int, default=400, help="timed requests per round")
    parser.add_argument("--warmup", type=int, default=50, help="untimed requests per round")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--trace", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        return serve(args.port, args.trace)
    if min(args.rounds, args.requests) < 1 or args.warmup < 0:
        parser.error("--rounds and --requests must be at least 1, --warmup at least 0")
    return measure(args.rounds, args.requests, args.warmup)


if __name__ == "__main__":
    sys.exit(main())
