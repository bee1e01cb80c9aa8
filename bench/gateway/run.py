"""Gateway benchmark: tooluse's added latency and requests/s next to LiteLLM's proxy.

One command starts everything on 127.0.0.1, measures, prints a Markdown report and writes it
to ``docs/benchmarks/gateway.md``, and stops every process it started::

    python bench/gateway/run.py --litellm /path/to/venv-with-litellm

Paths measured, in the same run, with the same load generator and the same request (one
user question, one ``get_weather`` tool; the answer is a text block plus a ``tool_use``):

* ``direct``            — the client talks to the instant upstream itself (the baseline);
* ``tooluse → upstream`` — ``tooluse serve --backend anthropic:URL#MODEL`` (``openai:`` for
  Chat Completions, ``openai-responses:`` for the Responses API, ``bedrock:MODEL`` with
  ``AWS_ENDPOINT_URL_BEDROCK_RUNTIME`` = the upstream for Converse) in front of the same
  upstream;
* ``LiteLLM → upstream`` — ``litellm --config ...`` with a ``model_list`` entry whose
  ``api_base`` is the same upstream;
* ``tooluse (in-process)`` — the gateway over an in-process backend that answers at once:
  no upstream hop, so its time beyond ``direct`` is the gateway's own work.

``--workers 1 2`` measures the ``tooluse → upstream`` path once per count, ``tooluse serve
--workers N`` (uvicorn worker processes) beside one process: requests/s with 1 and 2
workers in front of the same instant upstream (``--paths tooluse --workers 1 2`` for just
that). The upstream, the load generator and the workers share the machine's cores, so the
gain is bounded by the cores left to the workers.

The report opens with the issue's targets for ``tooluse → upstream``, one row per API and
mode: added p50, requests/s at ``--concurrency`` clients beside LiteLLM's (which serves no
Converse API), and server CPU per request beside an earlier run's (``--before FILE``, that
run's ``--json``).

Added latency = the path's latency − ``direct``'s in the same round. Rounds interleave the
paths (in a rotating order) so that load from other work on the machine spreads over all of
them, and the report gives the median over rounds.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))

import canned  # noqa: E402
import httpx2  # noqa: E402
from loadgen import Endpoint, Wire, latency, percentile, throughput  # noqa: E402
from procs import ServerProcess, StartupError, free_port  # noqa: E402

__all__ = ["main"]

DEFAULT_OUTPUT = REPO / "docs" / "benchmarks" / "gateway.md"
MARK_START = "<!-- gateway-bench:results:start -->"
MARK_END = "<!-- gateway-bench:results:end -->"
#: The key both proxies are configured to require (LiteLLM refuses to start without one).
PROXY_KEY = "sk-bench-0123456789abcdef0123456789abcdef"
UPSTREAM_KEY = "sk-bench-upstream"

WIRE_APIS = {"anthropic": "Anthropic Messages", "openai": "OpenAI Chat Completions",
             "responses": "OpenAI Responses", "converse": "Bedrock Converse"}
#: The issue's targets for the tooluse → upstream path: added p50 (ms) by mode, requests/s
#: against LiteLLM's, server CPU per request against a run before the change (--before).
TARGET_ADDED_MS = {False: 1.0, True: 1.5}
TARGET_RPS_RATIO = 10.0
TARGET_CPU_RATIO = 0.5
#: Environment for boto3 in the gateway: the bench upstream as Bedrock's endpoint, fake keys
#: (the upstream does not check SigV4), no instance-metadata lookups.
BEDROCK_ENV = {"AWS_ACCESS_KEY_ID": "AKIDBENCH", "AWS_SECRET_ACCESS_KEY": "bench-secret",
               "AWS_DEFAULT_REGION": "us-east-1", "AWS_EC2_METADATA_DISABLED": "true"}

PATH_LABELS = {
    "direct": "direct to upstream (baseline)",
    "tooluse": "tooluse gateway → upstream",
    "litellm": "LiteLLM proxy → upstream",
    "tooluse-inproc": "tooluse gateway, in-process backend",
}


# --------------------------------------------------------------------------------------------
# Finding LiteLLM


def worker_key(workers: int) -> str:
    """The path key of ``tooluse serve --workers N`` (``tooluse`` for one process)."""
    return "tooluse" if workers == 1 else f"tooluse-w{workers}"


def add_worker_labels(counts: list[int]) -> None:
    """Labels for the worker counts measured, right after the one-process path's."""
    labels = dict(PATH_LABELS)
    PATH_LABELS.clear()
    for key, label in labels.items():
        if not key.startswith("tooluse-w"):
            PATH_LABELS[key] = label
        if key == "tooluse":
            for n in counts:
                if n > 1:
                    PATH_LABELS[worker_key(n)] = f"tooluse gateway, {n} workers → upstream"


def find_litellm(given: str | None) -> Path | None:
    """The ``litellm`` executable: ``given`` (a file or a venv), ``$LITELLM_BIN``, or PATH."""
    candidates = [given, os.environ.get("LITELLM_BIN"), shutil.which("litellm")]
    for candidate in candidates:
        if not candidate:
            continue
        path = Path(candidate).expanduser()
        if path.is_dir():
            path = path / "bin" / "litellm"
        if path.is_file() and os.access(path, os.X_OK):
            return path
        if candidate == given:
            return None
    return None


LITELLM_MISSING = """\
LiteLLM's proxy was not found{where}.
Install it into a separate virtual environment (it pins its own versions of pydantic, httpx,
openai... which must not replace the project's), then pass that environment:

    python -m venv .venv-litellm
    .venv-litellm/bin/pip install 'litellm[proxy]'
    python bench/gateway/run.py --litellm .venv-litellm

or measure the other paths only: python bench/gateway/run.py --paths tooluse tooluse-inproc
"""


def litellm_config(path: Path, upstream: str) -> None:
    """A proxy config with one model per wire format, both on the bench upstream, no DB."""
    path.write_text(
        f"""model_list:
  - model_name: {canned.MODEL}
    litellm_params:
      model: anthropic/{canned.MODEL}
      api_base: {upstream}
      api_key: {UPSTREAM_KEY}
  - model_name: {canned.MODEL}-openai
    litellm_params:
      model: openai/{canned.MODEL}
      api_base: {upstream}/v1
      api_key: {UPSTREAM_KEY}
litellm_settings:
  telemetry: false
general_settings:
  master_key: {PROXY_KEY}
"""
    )


def quiet_log_config(path: Path) -> None:
    """uvicorn logging with warnings only and no per-request access line."""
    path.write_text(
        json.dumps(
            {
                "version": 1,
                "disable_existing_loggers": False,
                "formatters": {"plain": {"format": "%(levelname)s %(name)s: %(message)s"}},
                "handlers": {
                    "stderr": {"class": "logging.StreamHandler", "formatter": "plain"}
                },
                "loggers": {
                    "uvicorn": {"handlers": ["stderr"], "level": "WARNING", "propagate": False},
                    "uvicorn.error": {"level": "WARNING"},
                    "uvicorn.access": {"handlers": [], "level": "WARNING", "propagate": False},
                },
            }
        )
    )


def _clean_env(extra: dict[str, str]) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k.upper() not in {"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "DATABASE_URL"}
    }
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    env.update(extra)
    return env


# --------------------------------------------------------------------------------------------
# Running


@dataclass
class Target:
    key: str
    wire: Wire
    endpoint: Endpoint
    server: ServerProcess
    forwards: bool  # goes through the upstream (its request counter must move)


@dataclass
class Sample:
    """One path, one mode, one round."""

    p50: float
    p99: float
    ttfb_p50: float
    ttfb_p99: float
    rps: float
    cpu_ms_per_req: float
    errors: int
    first_error: str | None
    requests: int
    forwarded_ok: bool | None
    load: float  # 1-minute load average when the measurement ended


@dataclass
class Results:
    samples: dict[tuple[str, str, bool], list[Sample]] = field(default_factory=dict)

    def add(self, wire: str, key: str, stream: bool, sample: Sample) -> None:
        self.samples.setdefault((wire, key, stream), []).append(sample)


def _upstream_count(url: str, wire: Wire) -> int:
    return int(httpx2.get(f"{url}/stats", timeout=5, trust_env=False).json()[wire])


async def measure(target: Target, stream: bool, args: argparse.Namespace, upstream: str) -> Sample:
    before = _upstream_count(upstream, target.wire) if target.forwards else 0
    lat = await latency(target.endpoint, stream=stream, warmup=args.warmup, requests=args.requests)
    cpu0 = target.server.cpu_seconds()
    thr = await throughput(
        target.endpoint,
        stream=stream,
        concurrency=args.concurrency,
        seconds=args.seconds,
        max_requests=args.max_requests,
    )
    cpu1 = target.server.cpu_seconds()
    sent = args.warmup + args.requests + args.concurrency + thr.completed + thr.errors
    forwarded_ok = None
    if target.forwards:
        forwarded_ok = _upstream_count(upstream, target.wire) - before == sent
    done = thr.completed + thr.errors
    return Sample(
        p50=lat.p(50),
        p99=lat.p(99),
        ttfb_p50=lat.p(50, ttfb=True),
        ttfb_p99=lat.p(99, ttfb=True),
        rps=thr.rps,
        cpu_ms_per_req=(cpu1 - cpu0) * 1000 / done if done else float("nan"),
        errors=lat.errors + thr.errors,
        first_error=lat.first_error or thr.first_error,
        requests=args.requests + done,
        forwarded_ok=forwarded_ok,
        load=os.getloadavg()[0],
    )


def _med(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def _fmt(value: float, digits: int = 2) -> str:
    return "n/a" if value != value else f"{value:.{digits}f}"


def _added(results: Results, wire: str, key: str, stream: bool) -> float:
    samples = results.samples.get((wire, key, stream), [])
    direct = results.samples.get((wire, "direct", stream), [])
    n = min(len(samples), len(direct))
    return _med([samples[i].p50 - direct[i].p50 for i in range(n)])


def read_before(path: Path | None) -> dict[tuple[str, str, bool], float]:
    """Server CPU ms/req per (wire, path, stream) of an earlier run's ``--json`` file."""
    if path is None:
        return {}
    raw = json.loads(path.read_text())
    out = {}
    for name, samples in raw.items():
        wire, key, mode = name.split("|")
        out[(wire, key, mode == "stream")] = _med([s["cpu_ms_per_req"] for s in samples])
    return out


def render_targets(results: Results, args: argparse.Namespace,
                   before: dict[tuple[str, str, bool], float]) -> str:
    """One row per API and mode: each of the issue's targets for ``tooluse → upstream``,
    with the figure measured and whether it is met."""
    head = ("| API | mode | added p50 ms (target) | req/s c={c} | LiteLLM req/s | ratio "
            "(target ≥{r:g}×) | server CPU ms/req | before | ratio (target ≤{cpu:g}) |"
            ).format(c=args.concurrency, r=TARGET_RPS_RATIO, cpu=TARGET_CPU_RATIO)
    out = [head, "|" + "---|" * (head.count("|") - 1)]

    def mark(ok: bool | None) -> str:
        return "" if ok is None else (" ✓" if ok else " ✗")

    for wire in args.wires:
        peer_missing = "not served" if wire == "converse" else "not run"
        for stream in (False, True):
            mine = results.samples.get((wire, "tooluse", stream))
            if not mine:
                continue
            added = _added(results, wire, "tooluse", stream)
            rps = _med([x.rps for x in mine])
            cpu = _med([x.cpu_ms_per_req for x in mine])
            peer = results.samples.get((wire, "litellm", stream))
            peer_rps = _med([x.rps for x in peer]) if peer else float("nan")
            ratio = rps / peer_rps if peer else float("nan")
            was = before.get((wire, "tooluse", stream), float("nan"))
            cpu_ratio = cpu / was if was == was else float("nan")
            target = TARGET_ADDED_MS[stream]
            out.append(
                f"| {WIRE_APIS[wire]} | {'stream' if stream else 'JSON'} | "
                f"{_fmt(added)} (≤{target:g}){mark(added <= target if added == added else None)} | "
                f"{_fmt(rps, 0)} | {_fmt(peer_rps, 0) if peer else peer_missing} | "
                f"{_fmt(ratio, 1) + '×' if peer else '—'}"
                f"{mark(ratio >= TARGET_RPS_RATIO if peer else None)} | {_fmt(cpu)} | "
                f"{_fmt(was)} | {_fmt(cpu_ratio)}"
                f"{mark(cpu_ratio <= TARGET_CPU_RATIO if cpu_ratio == cpu_ratio else None)} |")
    return "\n".join(out)


def render_tables(results: Results, args: argparse.Namespace, keys: list[str]) -> str:
    out: list[str] = []
    for wire in args.wires:
        path = Endpoint("", wire).path
        upstream_api = WIRE_APIS[wire]
        for stream in (False, True):
            direct = results.samples.get((wire, "direct", stream), [])
            title = ("streaming (event-stream frames)" if wire == "converse" else
                     "streaming (SSE)") if stream else "non-streaming"
            out.append(
                f"### `POST {path}` with tools, {title} — every hop speaks {upstream_api}\n"
            )
            head = "| path | "
            if stream:
                head += "TTFB p50 ms | "
            head += (
                "p50 ms | p99 ms | added p50 ms | added p99 ms | "
                f"req/s (c={args.concurrency}) | server CPU ms/req | errors |"
            )
            out.append(head)
            out.append("|" + "---|" * (head.count("|") - 1))
            for key in keys:
                samples = results.samples.get((wire, key, stream))
                if not samples:
                    continue
                n = min(len(samples), len(direct))
                added50 = _med([samples[i].p50 - direct[i].p50 for i in range(n)])
                added99 = _med([samples[i].p99 - direct[i].p99 for i in range(n)])
                row = f"| {PATH_LABELS[key]} | "
                if stream:
                    row += f"{_fmt(_med([s.ttfb_p50 for s in samples]))} | "
                is_direct = key == "direct"
                row += (
                    f"{_fmt(_med([s.p50 for s in samples]))} | "
                    f"{_fmt(_med([s.p99 for s in samples]))} | "
                    f"{'—' if is_direct else _fmt(added50)} | "
                    f"{'—' if is_direct else _fmt(added99)} | "
                    f"{_fmt(_med([s.rps for s in samples]), 0)} | "
                    f"{_fmt(_med([s.cpu_ms_per_req for s in samples]))} | "
                    f"{sum(s.errors for s in samples)} / {sum(s.requests for s in samples)} |"
                )
                out.append(row)
            out.append("")
    return "\n".join(out)


def render_details(results: Results, keys: list[str]) -> str:
    lines = [
        "Per-round figures (p50 / p99 ms of the sequential run; req/s of the concurrent run; "
        "the machine's 1-minute load average at the end of the measurement):",
        "",
        "| wire | mode | path | rounds: p50 / p99 / req/s (load) |",
        "|---|---|---|---|",
    ]
    problems: list[str] = []
    for (wire, key, stream), samples in sorted(results.samples.items(), key=lambda kv: (kv[0][0], kv[0][2], keys.index(kv[0][1]))):
        cells = "; ".join(f"{s.p50:.2f} / {s.p99:.2f} / {s.rps:.0f} ({s.load:.1f})" for s in samples)
        lines.append(f"| {wire} | {'stream' if stream else 'json'} | {PATH_LABELS[key]} | {cells} |")
        for s in samples:
            if s.errors and s.first_error:
                problems.append(f"- {wire} {'stream' if stream else 'json'} {key}: {s.errors} errors, first: `{s.first_error[:300]}`")
            if s.forwarded_ok is False:
                problems.append(f"- {wire} {'stream' if stream else 'json'} {key}: the upstream did not see as many requests as were sent")
    if problems:
        lines += ["", "Problems seen:", "", *sorted(set(problems))]
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# Environment facts for the report


def _version_in(python: Path | str, dist: str) -> str:
    try:
        out = subprocess.run(
            [str(python), "-c", f"import importlib.metadata as m; print(m.version({dist!r}))"],
            capture_output=True, text=True, timeout=60,
        )
        return out.stdout.strip() or "not installed"
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"


def _litellm_python(exe: Path) -> Path:
    first = exe.read_bytes()[:300].split(b"\n", 1)[0]
    if first.startswith(b"#!"):
        return Path(first[2:].decode().strip().split()[0])
    return exe.parent / "python"


def machine_facts() -> dict[str, str]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = "unknown"
    try:
        kib = int(Path("/proc/meminfo").read_text().split("\n", 1)[0].split()[1])
        mem = f"{kib / 1024 / 1024:.1f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    return {
        "cpu": f"{os.cpu_count()} cores ({cpu})",
        "memory": mem,
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
    }


def git_commit() -> str:
    try:
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "--", "src", "bench/gateway"],
            cwd=REPO, capture_output=True, text=True,
        ).stdout.strip()
        return rev + (" (with uncommitted changes in src/ or bench/gateway/)" if dirty else "")
    except OSError:
        return "unknown"


def write_report(path: Path, body: str) -> None:
    """Replace the results section of ``path`` (keeping any text around it), or create it."""
    block = f"{MARK_START}\n{body}\n{MARK_END}"
    if path.exists():
        text = path.read_text()
        if MARK_START in text and MARK_END in text:
            before = text[: text.index(MARK_START)]
            after = text[text.index(MARK_END) + len(MARK_END) :]
            path.write_text(before + block + after)
            return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"# Gateway benchmark: tooluse vs LiteLLM proxy\n\n{block}\n")


# --------------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--litellm", help="the litellm executable, or a venv holding it ($LITELLM_BIN)")
    p.add_argument(
        "--paths", nargs="+", choices=list(PATH_LABELS), default=list(PATH_LABELS),
        help="which paths to measure (default: all; 'direct' is always measured)",
    )
    p.add_argument("--wires", nargs="+", choices=list(WIRE_APIS), default=list(WIRE_APIS))
    p.add_argument(
        "--workers", nargs="+", type=int, default=[1], metavar="N",
        help="the tooluse path with each of these numbers of worker processes "
        "(tooluse serve --workers N), e.g. 1 2 (default: 1)",
    )
    p.add_argument("--warmup", type=int, default=50)
    p.add_argument("--requests", type=int, default=1000, help="sequential timed requests")
    p.add_argument("--concurrency", type=int, default=16)
    p.add_argument("--seconds", type=float, default=5.0, help="duration of the concurrent run")
    p.add_argument("--max-requests", type=int, default=20000, help="cap of the concurrent run")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    p.add_argument("--no-write", action="store_true", help="print only; leave the doc alone")
    p.add_argument("--json", type=Path, help="also write the raw per-round samples here")
    p.add_argument("--before", type=Path,
                   help="an earlier run's --json file: its server CPU per request goes beside "
                   "this run's in the targets table")
    p.add_argument("--startup-timeout", type=float, default=180.0)
    p.add_argument("--logs", type=Path, help="where server logs go (default: a temp dir)")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if any(n < 1 for n in args.workers):
        print("--workers: each count must be at least 1", file=sys.stderr)
        return 2
    add_worker_labels(args.workers)
    litellm_exe: Path | None = None
    if "litellm" in args.paths:
        litellm_exe = find_litellm(args.litellm)
        if litellm_exe is None:
            where = f" at {args.litellm}" if args.litellm else " ($LITELLM_BIN unset, not on PATH)"
            print(LITELLM_MISSING.format(where=where), file=sys.stderr)
            return 2

    work = Path(tempfile.mkdtemp(prefix="tooluse-gwbench-"))
    logs = args.logs or work
    py = sys.executable
    up_port = free_port()
    upstream = f"http://127.0.0.1:{up_port}"
    env = _clean_env({"PYTHONUNBUFFERED": "1"})
    servers: dict[str, ServerProcess] = {
        "upstream": ServerProcess(
            "upstream", [py, str(HERE / "upstream.py"), "--port", str(up_port)],
            ready_url=f"{upstream}/stats", log_path=logs / "upstream.log", env=env,
        )
    }
    targets: list[Target] = []
    for wire in args.wires:
        targets.append(Target("direct", wire, Endpoint(upstream, wire, headers={"authorization": f"Bearer {UPSTREAM_KEY}"}), servers["upstream"], True))

    for wire, workers in [(w, n) for w in args.wires for n in args.workers] if "tooluse" in args.paths else ():
        port = free_port()
        spec = {"anthropic": f"anthropic:{upstream}#{canned.MODEL}",
                "openai": f"openai:{upstream}/v1#{canned.MODEL}",
                "responses": f"openai-responses:{upstream}/v1#{canned.MODEL}",
                "converse": f"bedrock:{canned.MODEL}"}[wire]
        name = f"tooluse-{wire}" + (f"-w{workers}" if workers > 1 else "")
        servers[name] = ServerProcess(
            name,
            [py, "-m", "tooluse.cli", "serve", "--backend", spec, "--host", "127.0.0.1", "--port", str(port), "--api-key", PROXY_KEY, "--log-level", "warning",
             *(["--workers", str(workers)] if workers > 1 else [])],
            ready_url=f"http://127.0.0.1:{port}/", log_path=logs / f"{name}.log",
            env=_clean_env({"ANTHROPIC_API_KEY": UPSTREAM_KEY, "OPENAI_API_KEY": UPSTREAM_KEY, "PYTHONUNBUFFERED": "1",
                            **BEDROCK_ENV, "AWS_ENDPOINT_URL_BEDROCK_RUNTIME": upstream}),
        )
        targets.append(Target(worker_key(workers), wire, Endpoint(f"http://127.0.0.1:{port}", wire, headers={"authorization": f"Bearer {PROXY_KEY}"}), servers[name], True))

    if litellm_exe is not None:
        port = free_port()
        config, log_config = work / "litellm.yaml", work / "litellm-logging.json"
        litellm_config(config, upstream)
        quiet_log_config(log_config)
        servers["litellm"] = ServerProcess(
            "litellm",
            [str(litellm_exe), "--config", str(config), "--host", "127.0.0.1", "--port", str(port),
             "--num_workers", "1", "--log_config", str(log_config)],
            ready_url=f"http://127.0.0.1:{port}/health/liveliness", log_path=logs / "litellm.log",
            env=_clean_env({
                "LITELLM_LOCAL_MODEL_COST_MAP": "True",
                "LITELLM_TELEMETRY": "False",
                "LITELLM_LOG": "ERROR",
                "PYTHONUNBUFFERED": "1",
            }),
            cwd=work,
        )
        for wire in args.wires:
            if wire == "converse":  # LiteLLM's proxy does not serve the Converse API
                continue
            model = canned.MODEL if wire == "anthropic" else f"{canned.MODEL}-openai"
            targets.append(Target("litellm", wire, Endpoint(f"http://127.0.0.1:{port}", wire, model=model, headers={"authorization": f"Bearer {PROXY_KEY}"}), servers["litellm"], True))

    if "tooluse-inproc" in args.paths:
        port = free_port()
        servers["tooluse-inproc"] = ServerProcess(
            "tooluse-inproc",
            [py, str(HERE / "scripted_gateway.py"), "--port", str(port), "--api-key", PROXY_KEY],
            ready_url=f"http://127.0.0.1:{port}/", log_path=logs / "tooluse-inproc.log", env=env,
        )
        for wire in args.wires:
            targets.append(Target("tooluse-inproc", wire, Endpoint(f"http://127.0.0.1:{port}", wire, headers={"authorization": f"Bearer {PROXY_KEY}"}), servers["tooluse-inproc"], False))

    keys = [k for k in PATH_LABELS if any(t.key == k for t in targets)]
    print(f"# server logs in {logs}", file=sys.stderr)
    results = Results()
    load_before = os.getloadavg()
    started = dt.datetime.now(dt.timezone.utc)
    rss: dict[str, float] = {}
    try:
        for server in servers.values():
            server.start()
        for server in servers.values():
            took = server.wait_ready(args.startup_timeout)
            print(f"# {server.name} ready in {took:.1f} s", file=sys.stderr)
        for rnd in range(args.rounds):
            for wire in args.wires:
                wire_targets = [t for t in targets if t.wire == wire]
                shift = rnd % len(wire_targets)
                order = wire_targets[shift:] + wire_targets[:shift]
                for stream in (False, True):
                    for target in order:
                        sample = asyncio.run(measure(target, stream, args, upstream))
                        results.add(wire, target.key, stream, sample)
                        print(
                            f"# round {rnd + 1}/{args.rounds} {wire} {'stream' if stream else 'json'} "
                            f"{target.key}: p50 {sample.p50:.2f} p99 {sample.p99:.2f} ms, "
                            f"{sample.rps:.0f} req/s, cpu {sample.cpu_ms_per_req:.2f} ms/req, "
                            f"errors {sample.errors}",
                            file=sys.stderr, flush=True,
                        )
        rss = {name: s.rss_mib() for name, s in servers.items()}
    except StartupError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    finally:
        for server in servers.values():
            server.stop()
    load_after = os.getloadavg()

    facts = machine_facts()
    litellm_py = _litellm_python(litellm_exe) if litellm_exe else None
    versions = [
        f"tooluse {_version_in(py, 'tooluse')}",
        f"uvicorn {_version_in(py, 'uvicorn')}",
        f"starlette {_version_in(py, 'starlette')}",
        f"httpx2 {_version_in(py, 'httpx2')}",
        f"h11 {_version_in(py, 'h11')}",
    ]
    if litellm_py:
        versions.append(
            f"litellm {_version_in(litellm_py, 'litellm')} (its own venv: uvicorn "
            f"{_version_in(litellm_py, 'uvicorn')}, fastapi {_version_in(litellm_py, 'fastapi')}, "
            f"uvloop {_version_in(litellm_py, 'uvloop')}, httptools {_version_in(litellm_py, 'httptools')})"
        )
    command = "python bench/gateway/run.py " + " ".join(shlex.quote(a) for a in (argv if argv is not None else sys.argv[1:]))
    body = "\n".join([
        f"Measured {started:%Y-%m-%d %H:%M} UTC on {facts['cpu']}, {facts['memory']} RAM, "
        f"{facts['os']}, Python {facts['python']}; git commit {git_commit()}.",
        f"Load average (1 min) {load_before[0]:.2f} before, {load_after[0]:.2f} after: the "
        "machine's 2 cores are shared with other work, so the client, the upstream and the "
        "proxy all compete for them.",
        "",
        f"Versions: {'; '.join(versions)}.",
        "",
        "Command:",
        "",
        "```",
        command,
        "```",
        "",
        f"Each path: {args.warmup} warm-up requests, then {args.requests} sequential requests on "
        f"one keep-alive connection (latency, to the last byte; TTFB = first body byte), then "
        f"{args.concurrency} concurrent workers for {args.seconds:g} s (req/s). "
        f"{args.rounds} interleaved rounds; figures are medians over rounds, errors are totals. "
        "Added = path − direct, per round. Server CPU = user+system CPU of the server's processes "
        "during the concurrent run ÷ requests (the upstream's own CPU is not included for proxies).",
        "",
        "### The targets (tooluse gateway → upstream)",
        "",
        "Added p50 = tooluse − direct to the same upstream; req/s against LiteLLM's in the same "
        "run; server CPU per request against `--before` (an earlier run's `--json`). "
        "✓ met, ✗ not met.",
        "",
        render_targets(results, args, read_before(args.before)),
        "",
        render_tables(results, args, keys),
        "Resident memory at the end (MiB): " + ", ".join(f"{k} {v:.0f}" for k, v in rss.items()) + ".",
        "",
        render_details(results, keys),
    ])
    print(body)
    if not args.no_write:
        write_report(args.output, body)
        print(f"# wrote {args.output}", file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps({f"{w}|{k}|{'stream' if s else 'json'}": [vars(x) for x in v] for (w, k, s), v in results.samples.items()}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
