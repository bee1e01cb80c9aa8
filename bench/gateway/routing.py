"""Routing benchmark: what tooluse's routing and a failover add, in the same run as LiteLLM's
router configured with the same routes and fallbacks.

One command starts everything on 127.0.0.1, measures, prints a Markdown report and writes it
to ``docs/benchmarks/routing.md``, and stops every process it started::

    python bench/gateway/routing.py --litellm /path/to/venv-with-litellm

Processes: the instant upstream of the gateway benchmark (``upstream.py``), the same with
``--status 529`` (a failing upstream: every request answered at once with Anthropic's
``overloaded_error``), ``tooluse serve --backend anthropic:UPSTREAM#MODEL`` (no routing),
``tooluse serve --config`` with six routes (globs, fallbacks; the benchmarked name matched by
the sixth, a glob), and ``litellm --config`` with the same six routes and fallbacks
(``num_retries: 0``, no cooldowns), one worker each.

Paths timed, Messages API (``POST /v1/messages`` with one tool), JSON and streamed, one
request at a time on a kept-alive connection:

* ``direct``: the client to the upstream (the baseline);
* ``failed attempt``: the client to the failing upstream (its 529: what one failed try
  costs, at least, whoever makes it);
* ``tooluse --backend``, ``tooluse routed``: the same upstream through tooluse without and
  with the route table; their difference is what routing adds;
* ``tooluse failover``: a name whose route is the failing upstream, with the healthy one as
  its fallback (``cooldown = 0``, so every request fails over); minus ``tooluse routed``, what
  a failover adds, to compare with the failed attempt's own time;
* ``LiteLLM routed``, ``LiteLLM failover``: the same two names through LiteLLM.

Rounds interleave the paths in a rotating order; the report gives medians over rounds of the
per-round p50s and differences.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import os
import shlex
import statistics
import sys
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))

import canned  # noqa: E402
import run as gateway_bench  # noqa: E402
from loadgen import Endpoint, _one, percentile  # noqa: E402
from procs import ServerProcess, StartupError, free_port  # noqa: E402

__all__ = ["main"]

DEFAULT_OUTPUT = REPO / "docs" / "benchmarks" / "routing.md"
KEY = gateway_bench.PROXY_KEY
UPSTREAM_KEY = gateway_bench.UPSTREAM_KEY
ROUTED = canned.MODEL            # "bench-model": matched by the "bench-*" route, the sixth
FAILOVER = "bench-failover"      # the failing upstream first, then "bench-spare"

PATHS = {
    "direct": "direct to upstream (baseline)",
    "failed": "failed attempt: direct to the failing upstream (529)",
    "tooluse-backend": "tooluse --backend (no routing)",
    "tooluse-routed": "tooluse --config, routed (6 routes, a glob)",
    "tooluse-failover": "tooluse --config, failover (529, then the fallback)",
    "litellm-routed": "LiteLLM router, routed (same routes)",
    "litellm-failover": "LiteLLM router, failover (same fallbacks)",
}


def tooluse_config(path: Path, up: str, fail: str) -> None:
    path.write_text(f"""
[[models]]
name = "claude-opus-*"
backend = "anthropic:{up}#claude-opus-up"
fallbacks = ["bench-spare"]

[[models]]
name = "claude-haiku-*"
backend = "anthropic:{up}#claude-haiku-up"

[[models]]
name = "gpt-*"
backend = "openai:{up}/v1#gpt-up"

[[models]]
name = "{FAILOVER}"
backend = "anthropic:{fail}#{canned.MODEL}"
fallbacks = ["bench-spare"]
cooldown = 0

[[models]]
name = "bench-spare"
backend = "anthropic:{up}#{canned.MODEL}"

[[models]]
name = "bench-*"
backend = "anthropic:{up}#{canned.MODEL}"
fallbacks = ["bench-spare"]
""")


def litellm_config(path: Path, up: str, fail: str) -> None:
    def entry(name: str, model: str, base: str) -> str:
        return (f'  - model_name: "{name}"\n    litellm_params:\n      model: {model}\n'
                f"      api_base: {base}\n      api_key: {UPSTREAM_KEY}\n      max_retries: 0\n")

    path.write_text(
        "model_list:\n"
        + entry("claude-opus-*", "anthropic/claude-opus-up", up)
        + entry("claude-haiku-*", "anthropic/claude-haiku-up", up)
        + entry("gpt-*", "openai/gpt-up", f"{up}/v1")
        + entry(FAILOVER, f"anthropic/{canned.MODEL}", fail)
        + entry("bench-spare", f"anthropic/{canned.MODEL}", up)
        + entry("bench-*", f"anthropic/{canned.MODEL}", up)
        + "router_settings:\n  num_retries: 0\n  disable_cooldowns: true\n  fallbacks:\n"
        + f'    - {{"claude-opus-*": ["bench-spare"]}}\n    - {{"{FAILOVER}": ["bench-spare"]}}\n'
        + '    - {"bench-*": ["bench-spare"]}\n'
        + "litellm_settings:\n  telemetry: false\n  num_retries: 0\n"
        + f"general_settings:\n  master_key: {KEY}\n")


@dataclass
class Sample:
    p50: float
    p99: float
    errors: int
    first_error: str | None
    #: The server's CPU per timed request (ms; NaN for the upstreams, not a proxy).
    cpu_ms: float = float("nan")
    #: p50 of the time the failed tries took, as the gateway's x-tooluse-attempts says.
    failed_try_ms: float = float("nan")


def _failed_try_ms(headers: Mapping[str, str]) -> float | None:
    """The time of the tries that did not answer, from ``x-tooluse-attempts``."""
    value = headers.get("x-tooluse-attempts")
    if not value:
        return None
    return sum(float(item.rsplit(" ", 1)[1].removesuffix("ms")) for item in value.split(", "))


async def timed(endpoint: Endpoint, stream: bool, warmup: int, requests: int,
                expect: int = 200, cpu: Callable[[], float] | None = None) -> Sample:
    """``requests`` sequential requests after ``warmup``; an answer counts when it is the
    canned one (or, with ``expect`` other than 200, an answer with that status)."""
    import httpx2

    body, headers = endpoint.body(stream), endpoint.request_headers()
    totals: list[float] = []
    tries: list[float] = []
    errors, first = 0, None
    cpu_start = 0.0
    async with httpx2.AsyncClient(base_url=endpoint.base_url, timeout=60, trust_env=False,
                                  headers={"accept-encoding": "identity"},
                                  limits=httpx2.Limits(max_connections=1)) as client:
        for n in range(warmup + requests):
            if n == warmup and cpu is not None:
                cpu_start = cpu()
            seen: list[Mapping[str, str]] = []
            total, _, problem = await _one(client, endpoint, body, headers, stream, seen)
            if expect != 200 and problem is not None and problem.startswith(f"HTTP {expect}:"):
                problem = None
            if n < warmup:
                continue
            if problem is None:
                totals.append(total * 1000)
                took = _failed_try_ms(seen[0]) if seen else None
                if took is not None:
                    tries.append(took)
            else:
                errors += 1
                first = first or problem
        cpu_ms = (cpu() - cpu_start) * 1000 / requests if cpu is not None else float("nan")
    totals.sort()
    tries.sort()
    return Sample(percentile(totals, 50), percentile(totals, 99), errors, first, cpu_ms,
                  percentile(tries, 50))


def _med(values: list[float]) -> float:
    values = [v for v in values if v == v]
    return statistics.median(values) if values else float("nan")


def _f(value: float) -> str:
    return "n/a" if value != value else f"{value:.3f}"


def report(results: dict[tuple[str, bool], list[Sample]], keys: list[str]) -> str:
    out: list[str] = []
    for stream in (False, True):
        rounds = len(results.get(("direct", stream), []))
        out += [f"### `POST /v1/messages`, {'streamed (SSE)' if stream else 'JSON'}", "",
                "| path | p50 ms | p99 ms | added p50 ms (vs direct) | server CPU ms/req | "
                "errors |", "|---|---|---|---|---|---|"]
        direct = results.get(("direct", stream), [])
        for key in keys:
            samples = results.get((key, stream), [])
            if not samples:
                continue
            added = _med([s.p50 - d.p50 for s, d in zip(samples, direct, strict=False)])
            out.append(f"| {PATHS[key]} | {_f(_med([s.p50 for s in samples]))} | "
                       f"{_f(_med([s.p99 for s in samples]))} | "
                       f"{'—' if key in ('direct', 'failed') else _f(added)} | "
                       f"{_f(_med([s.cpu_ms for s in samples]))} | "
                       f"{sum(s.errors for s in samples)} |")

        def diff(a: str, b: str) -> float:
            pa, pb = results.get((a, stream), []), results.get((b, stream), [])
            return _med([x.p50 - y.p50 for x, y in zip(pa, pb, strict=False)])

        def cpu_diff(a: str, b: str) -> float:
            pa, pb = results.get((a, stream), []), results.get((b, stream), [])
            return _med([x.cpu_ms - y.cpu_ms for x, y in zip(pa, pb, strict=False)])

        failed_direct = _med([s.p50 for s in results.get(("failed", stream), [])])
        failed_own = _med([s.failed_try_ms for s in results.get(("tooluse-failover", stream), [])])
        out += ["", f"Per round, then the median of {rounds} rounds:", ""]
        routing = diff("tooluse-routed", "tooluse-backend")
        out.append(f"- **routing adds {_f(routing)} ms p50** (tooluse routed − tooluse "
                   f"--backend; target ≤ 0.1); server CPU "
                   f"{_f(cpu_diff('tooluse-routed', 'tooluse-backend'))} ms per request")
        failover = diff("tooluse-failover", "tooluse-routed")
        out.append(f"- **a failover adds {_f(failover)} ms p50** (tooluse failover − tooluse "
                   f"routed); the failed attempt's own time, as the gateway timed it "
                   f"(x-tooluse-attempts), is {_f(failed_own)} ms p50 (target: the failover adds "
                   f"no more than it; beyond it: {_f(failover - failed_own)} ms); a client's "
                   f"request straight to the failing upstream takes {_f(failed_direct)} ms p50")
        if ("litellm-routed", stream) in results:
            out.append(f"- LiteLLM: routed adds {_f(diff('litellm-routed', 'direct'))} ms over "
                       f"direct; a failover adds {_f(diff('litellm-failover', 'litellm-routed'))}"
                       " ms")
        problems = {f"{key}: {s.first_error}" for (key, st), samples in results.items()
                    if st == stream for s in samples if s.first_error}
        if problems:
            out += ["", "Errors seen:", "", *sorted(f"- `{p[:300]}`" for p in problems)]
        out.append("")
    return "\n".join(out)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--litellm", help="the litellm executable, or a venv holding it ($LITELLM_BIN)")
    p.add_argument("--no-litellm", action="store_true", help="measure tooluse's paths only")
    p.add_argument("--warmup", type=int, default=50)
    p.add_argument("--requests", type=int, default=500, help="sequential timed requests")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    p.add_argument("--no-write", action="store_true", help="print only; leave the doc alone")
    p.add_argument("--startup-timeout", type=float, default=180.0)
    p.add_argument("--note", default="", help="a line put above the figures (the machine's state)")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    litellm = None
    if not args.no_litellm:
        litellm = gateway_bench.find_litellm(args.litellm)
        if litellm is None:
            where = f" at {args.litellm}" if args.litellm else " ($LITELLM_BIN unset, not on PATH)"
            print(gateway_bench.LITELLM_MISSING.format(where=where), file=sys.stderr)
            return 2
    work = Path(tempfile.mkdtemp(prefix="tooluse-routing-bench-"))
    py = sys.executable
    env = gateway_bench._clean_env({"PYTHONUNBUFFERED": "1"})
    up_port, fail_port = free_port(), free_port()
    up, fail = f"http://127.0.0.1:{up_port}", f"http://127.0.0.1:{fail_port}"
    servers = {
        "upstream": ServerProcess("upstream", [py, str(HERE / "upstream.py"), "--port",
                                               str(up_port)], ready_url=f"{up}/stats",
                                  log_path=work / "upstream.log", env=env),
        "failing": ServerProcess("failing", [py, str(HERE / "upstream.py"), "--port",
                                             str(fail_port), "--status", "529"],
                                 ready_url=f"{fail}/stats", log_path=work / "failing.log",
                                 env=env),
    }
    tooluse_env = gateway_bench._clean_env({"ANTHROPIC_API_KEY": UPSTREAM_KEY,
                                            "OPENAI_API_KEY": UPSTREAM_KEY,
                                            "PYTHONUNBUFFERED": "1"})
    auth = {"authorization": f"Bearer {KEY}"}
    targets: dict[str, Endpoint] = {
        "direct": Endpoint(up, "anthropic", headers={"authorization": f"Bearer {UPSTREAM_KEY}"}),
        "failed": Endpoint(fail, "anthropic", headers={"authorization": f"Bearer {UPSTREAM_KEY}"}),
    }
    common = ["--host", "127.0.0.1", "--api-key", KEY, "--log-level", "warning"]
    port = free_port()
    servers["tooluse-backend"] = ServerProcess(
        "tooluse-backend", [py, "-m", "tooluse.cli", "serve", "--backend",
                            f"anthropic:{up}#{canned.MODEL}", "--port", str(port), *common],
        ready_url=f"http://127.0.0.1:{port}/", log_path=work / "tooluse-backend.log",
        env=tooluse_env)
    targets["tooluse-backend"] = Endpoint(f"http://127.0.0.1:{port}", "anthropic", headers=auth)
    port = free_port()
    tooluse_config(work / "routes.toml", up, fail)
    servers["tooluse-config"] = ServerProcess(
        "tooluse-config", [py, "-m", "tooluse.cli", "serve", "--config",
                           str(work / "routes.toml"), "--port", str(port), *common],
        ready_url=f"http://127.0.0.1:{port}/", log_path=work / "tooluse-config.log",
        env=tooluse_env)
    targets["tooluse-routed"] = Endpoint(f"http://127.0.0.1:{port}", "anthropic", headers=auth)
    targets["tooluse-failover"] = Endpoint(f"http://127.0.0.1:{port}", "anthropic",
                                           model=FAILOVER, headers=auth)
    if litellm is not None:
        port = free_port()
        litellm_config(work / "litellm.yaml", up, fail)
        gateway_bench.quiet_log_config(work / "litellm-logging.json")
        servers["litellm"] = ServerProcess(
            "litellm", [str(litellm), "--config", str(work / "litellm.yaml"), "--host",
                        "127.0.0.1", "--port", str(port), "--num_workers", "1",
                        "--log_config", str(work / "litellm-logging.json")],
            ready_url=f"http://127.0.0.1:{port}/health/liveliness",
            log_path=work / "litellm.log",
            env=gateway_bench._clean_env({"LITELLM_LOCAL_MODEL_COST_MAP": "True",
                                          "LITELLM_TELEMETRY": "False", "LITELLM_LOG": "ERROR",
                                          "PYTHONUNBUFFERED": "1"}), cwd=work)
        targets["litellm-routed"] = Endpoint(f"http://127.0.0.1:{port}", "anthropic",
                                             headers=auth)
        targets["litellm-failover"] = Endpoint(f"http://127.0.0.1:{port}", "anthropic",
                                               model=FAILOVER, headers=auth)
    keys = [k for k in PATHS if k in targets]
    owner = {"direct": "upstream", "failed": "failing", "tooluse-backend": "tooluse-backend",
             "tooluse-routed": "tooluse-config", "tooluse-failover": "tooluse-config",
             "litellm-routed": "litellm", "litellm-failover": "litellm"}
    results: dict[tuple[str, bool], list[Sample]] = {}
    print(f"# logs in {work}", file=sys.stderr)
    started = dt.datetime.now(dt.UTC)
    load_before = os.getloadavg()
    try:
        for server in servers.values():
            server.start()
        for server in servers.values():
            print(f"# {server.name} ready in {server.wait_ready(args.startup_timeout):.1f} s",
                  file=sys.stderr)
        for rnd in range(args.rounds):
            order = keys[rnd % len(keys):] + keys[:rnd % len(keys)]
            for stream in (False, True):
                for key in order:
                    server = servers[owner[key]]
                    sample = asyncio.run(timed(
                        targets[key], stream, args.warmup, args.requests,
                        expect=529 if key == "failed" else 200,
                        cpu=None if key in ("direct", "failed") else server.cpu_seconds))
                    results.setdefault((key, stream), []).append(sample)
                    print(f"# round {rnd + 1} {'stream' if stream else 'json'} {key}: p50 "
                          f"{sample.p50:.3f} ms, p99 {sample.p99:.3f} ms, errors {sample.errors}",
                          file=sys.stderr, flush=True)
    except StartupError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    finally:
        for server in servers.values():
            server.stop()
    load_after = os.getloadavg()
    facts = gateway_bench.machine_facts()
    versions = f"tooluse {gateway_bench._version_in(py, 'tooluse')}"
    if litellm is not None:
        versions += (f"; litellm {gateway_bench._version_in(gateway_bench._litellm_python(litellm), 'litellm')}"
                     " (its own venv)")
    command = "python bench/gateway/routing.py " + " ".join(
        shlex.quote(a) for a in (argv if argv is not None else sys.argv[1:]))
    body = "\n".join([
        f"Measured {started:%Y-%m-%d %H:%M} UTC on {facts['cpu']}, {facts['memory']} RAM, "
        f"{facts['os']}, Python {facts['python']}; git commit {gateway_bench.git_commit()}; "
        f"{versions}.",
        f"Load average (1 min) {load_before[0]:.2f} before, {load_after[0]:.2f} after.",
        *([args.note] if args.note else []),
        "", "```", command, "```", "",
        f"Each path: {args.warmup} warm-up requests, then {args.requests} sequential requests "
        f"on one kept-alive connection, timed to the last byte; {args.rounds} interleaved "
        "rounds, medians over rounds; errors are totals.", "",
        report(results, keys),
    ])
    print(body)
    if not args.no_write:
        gateway_bench.write_report(args.output, body)
        print(f"# wrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
