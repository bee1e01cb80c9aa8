"""The gateway's robustness campaign, in one command:

    python bench/robustness/run.py                 # all four parts, full size (~20-30 min)
    python bench/robustness/run.py --quick         # every part, small (~3 min)
    python bench/robustness/run.py --parts faults disconnect

1. fuzz: >= 10,000 malformed requests per endpoint that takes a body (Messages, Converse,
   ConverseStream, Chat, Responses, count_tokens) from our mutators, plus schemathesis cases
   generated from the gateway's /openapi.json for those and its GET/DELETE paths (models,
   stored responses);
   counts 5xx, answers not in the API's native shape, hangs.
2. soak: 200 concurrent streams for 60 s on the scripted backend: errors, truncated streams,
   RSS at 10 s and at the end.
3. faults: an upstream failing in each way (500, 429, 503, reset, silence, cut stream,
   broken tool JSON, empty stream) x each client API x json/stream, through the anthropic:
   and openai: backends: what the client gets and after how long.
4. disconnect: clients that leave mid-request; the gateway's threads, fds and the upstream's
   open requests go back to baseline, and no request reaches the upstream after they left.

Every server is a subprocess on 127.0.0.1 (free ports), stopped by its process group. The
figures go to ``docs/benchmarks/robustness.json`` and the tables to
``docs/benchmarks/robustness.md`` (between the ``results`` markers).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "gateway"))
from procs import ServerProcess, free_port
from wire import ENDPOINTS

LOGS = Path(os.environ.get("TMPDIR", "/tmp")) / "tooluse-robustness"


def start_gateway(name: str, extra: list[str]) -> tuple[ServerProcess, str]:
    port = free_port()
    health = "/health" if "scripted" in extra else "/anthropic-ok/health"
    proc = ServerProcess(name, [sys.executable, str(HERE / "gateways.py"), "--port", str(port), *extra],
                         ready_url=f"http://127.0.0.1:{port}{health}", log_path=LOGS / f"{name}.log")
    proc.start()
    proc.wait_ready(60)
    return proc, f"http://127.0.0.1:{port}"


def start_upstream() -> tuple[ServerProcess, str]:
    port = free_port()
    proc = ServerProcess("faulty-upstream", [sys.executable, str(HERE / "faulty_upstream.py"), "--port", str(port)],
                         ready_url=f"http://127.0.0.1:{port}/stats", log_path=LOGS / "upstream.log")
    proc.start()
    proc.wait_ready(30)
    return proc, f"http://127.0.0.1:{port}"


def part_fuzz(args: argparse.Namespace) -> dict[str, Any]:
    from fuzz import run_fuzz

    gateway, url = start_gateway("fuzz-gateway", ["--mode", "scripted"])
    try:
        rss_before = gateway.rss_mib()
        results = run_fuzz(url, per_endpoint=args.fuzz_requests, schemathesis_per_endpoint=args.schemathesis,
                           seed=args.seed, concurrency=8, endpoints=args.endpoints)
        alive = gateway.proc is not None and gateway.proc.poll() is None
        return {"endpoints": results, "gateway_alive_after": alive,
                "rss_mib_before": round(rss_before, 1), "rss_mib_after": round(gateway.rss_mib(), 1)}
    finally:
        gateway.stop()


def part_soak(args: argparse.Namespace) -> dict[str, Any]:
    from soak import run_soak

    gateway, url = start_gateway("soak-gateway", ["--mode", "scripted"])
    try:
        return run_soak(url, gateway, clients=args.soak_clients, seconds=args.soak_seconds)
    finally:
        gateway.stop()


def _upstream_gateway(upstream_url: str, args: argparse.Namespace) -> tuple[ServerProcess, str]:
    extra = ["--mode", "upstream", "--upstream", upstream_url]
    for option in args.backend_option:
        extra += ["--backend-option", option]
    return start_gateway("fault-gateway", extra)


def part_faults(args: argparse.Namespace) -> dict[str, Any]:
    from faults import run_faults

    upstream, upstream_url = start_upstream()
    try:
        gateway, url = _upstream_gateway(upstream_url, args)
        try:
            return run_faults(url, upstream_url, bound=args.bound)
        finally:
            gateway.stop()
    finally:
        upstream.stop()


def part_disconnect(args: argparse.Namespace) -> dict[str, Any]:
    from disconnect import run_disconnect

    upstream, upstream_url = start_upstream()
    try:
        gateway, url = _upstream_gateway(upstream_url, args)
        try:
            return run_disconnect(url, upstream_url, gateway, clients=args.disconnect_clients)
        finally:
            gateway.stop()
    finally:
        upstream.stop()


#: The configured bound of the fault runs: the whole call (timeout), the longest silence
#: (read_timeout), retries — what --upstream-timeout/-read-timeout/-retries set.
DEFAULT_OPTIONS = ["timeout=20", "read_timeout=10", "max_retries=2"]

PARTS = {"fuzz": part_fuzz, "soak": part_soak, "faults": part_faults, "disconnect": part_disconnect}


def _commit(*path: str) -> str:
    """The last commit (of everything, or of ``path``); a branch's commit is rewritten when
    rebased, while the last commit of ``src`` names the code measured as it is on main."""
    try:
        return subprocess.run(["git", "log", "-1", "--format=%h", "--", *path], cwd=ROOT,
                              capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--parts", nargs="+", choices=list(PARTS), default=list(PARTS))
    parser.add_argument("--quick", action="store_true", help="small sizes, to check the harness")
    parser.add_argument("--fuzz-requests", type=int, default=10_000, help="mutator requests per endpoint")
    parser.add_argument("--schemathesis", type=int, default=400, help="schemathesis cases per endpoint")
    parser.add_argument("--endpoints", nargs="+", choices=list(ENDPOINTS), default=list(ENDPOINTS))
    parser.add_argument("--soak-clients", type=int, default=200)
    parser.add_argument("--soak-seconds", type=float, default=60.0)
    parser.add_argument("--disconnect-clients", type=int, default=20)
    parser.add_argument("--bound", type=float, default=None,
                        help="seconds within which every upstream fault must be answered "
                             "(default: the backends' timeout + 5 s)")
    parser.add_argument("--backend-option", action="append", default=None,
                        help="KEY=VALUE handed to the anthropic:/openai: backends, as the --upstream-* "
                             "flags of tooluse serve set them (default: " + " ".join(DEFAULT_OPTIONS) + ")")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--json", type=Path, default=ROOT / "docs" / "benchmarks" / "robustness.json")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    if args.backend_option is None:
        args.backend_option = list(DEFAULT_OPTIONS)
    if args.bound is None:
        timeout = next((float(o.split("=", 1)[1]) for o in args.backend_option if o.startswith("timeout=")), 300.0)
        args.bound = timeout + 5.0
    if args.quick:
        args.fuzz_requests, args.schemathesis = 300, 20
        args.soak_clients, args.soak_seconds, args.disconnect_clients = 40, 15.0, 5

    results: dict[str, Any] = {}
    if args.json.exists() and not args.no_write:
        results = json.loads(args.json.read_text())
    meta = {"commit": _commit(), "src_commit": _commit("src"), "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
            "python": platform.python_version(), "load_average": os.getloadavg(),
            "argv": sys.argv[1:]}
    for name in args.parts:
        print(f"== {name}", flush=True)
        started = time.monotonic()
        results[name] = PARTS[name](args)
        results[name]["meta"] = {**meta, "seconds": round(time.monotonic() - started, 1),
                                 "load_average_after": os.getloadavg()}
        if not args.no_write:
            args.json.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n")
    if not args.no_write:
        from report import write_report

        write_report(results, ROOT / "docs" / "benchmarks" / "robustness.md")
    print(json.dumps({k: {kk: vv for kk, vv in v.items() if kk != "endpoints"} for k, v in results.items()},
                     indent=1)[:3000])
    return 0


if __name__ == "__main__":
    sys.exit(main())
