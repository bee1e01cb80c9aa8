"""How the gateway's cost grows as the work grows: four curves, each a table and a PNG.

The gateway (``tooluse serve --backend anthropic:URL``) runs in front of the instant fake
upstream of ``bench/gateway`` (``upstream.py``: it answers every Messages request with the
same canned ``get_weather`` call at once, whatever it was sent), so what grows is the
gateway's and the library's own work: decoding the client's body into the neutral model
(checking every tool's schema), encoding the upstream's body, and back. No model is run:
a local model's prompt grows with the same inputs, and that cost is the model's, measured in
``bench/speed_local.py``, not here.

Curves (Messages API; every answer checked for the call):

* **tools offered** — 10, 100, 500 tools in the request (each with a small schema);
* **turns** — 1, 10, 50 earlier turns of a tool loop (user, tool call, tool result);
* **tool-result size** — one tool result of 1 KB, 100 KB, 1 MB of text;
* **concurrent streams** — 1, 10, 100 streams at once, the upstream sending each stream's
  16 events ``--gap-ms`` apart (so they stay open together).

For each point: the added latency (p50 through the gateway − p50 straight to the upstream
with the same body), the gateway's CPU per request, and its resident memory (peak, from
``/proc``). Run::

    python bench/speed_cost_curves.py            # writes docs/benchmarks/cost_curves.md and 4 PNGs
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE / "gateway"))

import canned
import httpx2
from procs import ServerProcess, free_port

OUT = REPO / "docs" / "benchmarks"
KEY = "sk-bench-cost"
HEADERS = {"content-type": "application/json", "anthropic-version": "2023-06-01",
           "authorization": f"Bearer {KEY}", "accept-encoding": "identity"}


def _tool(k: int) -> dict[str, Any]:
    return {"name": f"tool_{k:03d}", "description": f"Tool number {k}: looks something up.",
            "input_schema": {"type": "object", "properties": {
                "query": {"type": "string", "description": "What to look up"},
                "limit": {"type": "integer", "minimum": 1, "maximum": 50},
                "unit": {"type": "string", "enum": ["metric", "imperial"]}},
                "required": ["query"]}}


def _request(*, tools: int = 1, turns: int = 1, result_bytes: int = 0,
             stream: bool = False) -> dict[str, Any]:
    """A Messages request: ``tools`` tools (the first is ``get_weather``), ``turns - 1``
    earlier rounds of a tool loop, and a last tool result of ``result_bytes`` bytes."""
    body = canned.anthropic_request(stream=stream)
    body["tools"] = body["tools"] + [_tool(k) for k in range(tools - 1)]
    messages: list[dict[str, Any]] = []
    rounds = turns - 1 + (1 if result_bytes else 0)
    for k in range(rounds):
        last = k == rounds - 1 and result_bytes
        messages.append({"role": "user", "content": f"Question {k}: the weather in city {k}?"})
        messages.append({"role": "assistant", "content": [
            {"type": "text", "text": "Let me look."},
            {"type": "tool_use", "id": f"toolu_{k:04d}", "name": canned.TOOL_NAME,
             "input": {"location": f"City {k}", "unit": "celsius"}}]})
        text = ("x" * (result_bytes - 1) + "\n") if last else f"18 C and sunny in city {k}."
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"toolu_{k:04d}", "content": text}]})
        if not last:
            messages.append({"role": "assistant", "content": f"It is 18 C in city {k}."})
    body["messages"] = messages + body["messages"] if not result_bytes else messages
    return body


def _ok(body: bytes, stream: bool) -> bool:
    return b'"get_weather"' in body and (b"message_stop" in body if stream else True)


async def _timed(client: httpx2.AsyncClient, url: str, body: bytes, stream: bool) -> float:
    start = time.perf_counter()
    response = await client.post(url, content=body, headers=HEADERS)
    took = time.perf_counter() - start
    if response.status_code != 200 or not _ok(response.content, stream):
        raise RuntimeError(f"{url}: HTTP {response.status_code}: {response.content[:300]!r}")
    return took * 1000


async def _sequential(url: str, body: bytes, n: int, stream: bool = False) -> float:
    async with httpx2.AsyncClient(timeout=120, trust_env=False) as client:
        for _ in range(3):
            await _timed(client, url, body, stream)
        return statistics.median([await _timed(client, url, body, stream) for _ in range(n)])


async def _concurrent(url: str, body: bytes, streams: int, rounds: int) -> float:
    """Median stream time with ``streams`` at once (``rounds`` times)."""
    limits = httpx2.Limits(max_connections=streams, max_keepalive_connections=streams)
    async with httpx2.AsyncClient(timeout=300, trust_env=False, limits=limits) as client:
        times: list[float] = []
        for _ in range(rounds):
            times += await asyncio.gather(*(_timed(client, url, body, True)
                                            for _ in range(streams)))
        return statistics.median(times)


def _start(name: str, argv: list[str], ready: str, logs: Path) -> ServerProcess:
    env = {**{k: v for k, v in os.environ.items() if "proxy" not in k.lower()},
           "ANTHROPIC_API_KEY": "sk-upstream", "PYTHONUNBUFFERED": "1"}
    server = ServerProcess(name, argv, ready_url=ready, log_path=logs / f"{name}.log", env=env)
    server.start()
    server.wait_ready(120)
    return server


def run_curve(name: str, points: list[Any], make: Callable[[Any], dict[str, Any]],
              args: argparse.Namespace, logs: Path, *, concurrent: bool = False
              ) -> list[dict[str, Any]]:
    """One curve, on a fresh upstream and gateway (so each curve's peak memory is its own)."""
    py = sys.executable
    up_port, gw_port = free_port(), free_port()
    upstream_url = f"http://127.0.0.1:{up_port}"
    gap = ["--stream-gap-ms", str(args.gap_ms)] if concurrent else []
    upstream = _start(f"upstream-{name}", [py, str(HERE / "gateway" / "upstream.py"), "--port",
                                           str(up_port), *gap], f"{upstream_url}/stats", logs)
    gateway = _start(f"gateway-{name}", [
        py, "-m", "tooluse.cli", "serve", "--backend", f"anthropic:{upstream_url}#{canned.MODEL}",
        "--host", "127.0.0.1", "--port", str(gw_port), "--api-key", KEY, "--log-level", "warning"],
        f"http://127.0.0.1:{gw_port}/", logs)
    rows = []
    try:
        # the gateway's first requests import and build what later ones reuse: not counted
        warm = json.dumps(_request(stream=concurrent)).encode()
        asyncio.run(_sequential(f"http://127.0.0.1:{gw_port}/v1/messages", warm, 20, concurrent))
        for point in points:
            body = json.dumps(make(point)).encode()
            direct_url = f"{upstream_url}/v1/messages"
            via_url = f"http://127.0.0.1:{gw_port}/v1/messages"
            if concurrent:
                # at least --stream-requests streams per point: CPU time is counted in 10 ms
                # ticks, which a few streams alone would not fill
                rounds = max(args.rounds, -(-args.stream_requests // point))
                direct = asyncio.run(_concurrent(direct_url, body, point, rounds))
                cpu0 = gateway.cpu_seconds()
                via = asyncio.run(_concurrent(via_url, body, point, rounds))
                count = point * rounds
            else:
                n = max(5, int(args.requests / max(1, len(body) // 50_000)))
                direct = asyncio.run(_sequential(direct_url, body, n))
                cpu0 = gateway.cpu_seconds()
                via = asyncio.run(_sequential(via_url, body, n))
                count = n + 3
            cpu = (gateway.cpu_seconds() - cpu0) * 1000 / count
            rows.append({"point": point, "body_kib": len(body) / 1024, "direct_ms": direct,
                         "via_ms": via, "added_ms": via - direct, "cpu_ms": cpu,
                         "peak_rss_mib": gateway.peak_rss_mib()})
            print(f"# {name} {point}: {rows[-1]}", file=sys.stderr, flush=True)
    finally:
        gateway.stop()
        upstream.stop()
    return rows


CURVES: list[dict[str, Any]] = [
    {"name": "tools", "title": "Tools offered", "points": [10, 100, 500], "unit": "tools",
     "make": lambda n: _request(tools=n)},
    {"name": "turns", "title": "Turns in the conversation", "points": [1, 10, 50],
     "unit": "turns", "make": lambda n: _request(turns=n)},
    {"name": "result_size", "title": "Tool-result size", "points": [1024, 100 * 1024, 1024 * 1024],
     "unit": "bytes", "make": lambda n: _request(result_bytes=n)},
    {"name": "streams", "title": "Concurrent streams", "points": [1, 10, 100], "unit": "streams",
     "make": lambda n: _request(stream=True), "concurrent": True},
]


def _label(curve: dict[str, Any], point: int) -> str:
    if curve["unit"] == "bytes":
        return f"{point // 1024 // 1024} MB" if point >= 1024 * 1024 else f"{point // 1024} KB"
    return f"{point} {curve['unit']}"


def plot(curve: dict[str, Any], rows: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = [r["point"] for r in rows]
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.4))
    left.plot(xs, [r["added_ms"] for r in rows], "o-", label="added p50 (ms)")
    left.plot(xs, [r["cpu_ms"] for r in rows], "s--", label="gateway CPU / request (ms)")
    left.set_xlabel(curve["title"])
    left.set_ylabel("ms")
    left.legend(fontsize=8)
    right.plot(xs, [r["peak_rss_mib"] for r in rows], "o-", color="tab:green")
    right.set_xlabel(curve["title"])
    right.set_ylabel("gateway peak RSS (MiB)")
    for axis in (left, right):
        axis.set_ylim(bottom=0)  # from zero: growth shown at its true scale
        axis.set_xscale("log")
        axis.set_xticks(xs, [_label(curve, x) for x in xs])
        axis.minorticks_off()
        axis.grid(alpha=0.3)
    fig.suptitle(f"tooluse gateway → instant upstream: {curve['title'].lower()}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def table(curve: dict[str, Any], rows: list[dict[str, Any]]) -> str:
    lines = [(f"| {curve['title'].lower()} | request body KiB | direct p50 ms | via gateway p50 ms "
              "| added p50 ms | gateway CPU ms/req | gateway peak RSS MiB |"),
             "|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {_label(curve, r['point'])} | {r['body_kib']:.1f} | {r['direct_ms']:.2f} | "
                     f"{r['via_ms']:.2f} | {r['added_ms']:.2f} | {r['cpu_ms']:.2f} | "
                     f"{r['peak_rss_mib']:.0f} |")
    return "\n".join(lines)


MARK_START = "<!-- cost-curves:results:start -->"
MARK_END = "<!-- cost-curves:results:end -->"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--requests", type=int, default=200, help="timed requests per point")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the concurrent streams")
    parser.add_argument("--stream-requests", type=int, default=40,
                        help="streams at least per point of the concurrent-streams curve")
    parser.add_argument("--gap-ms", type=float, default=20.0,
                        help="ms between a stream's events in the concurrent-streams curve")
    parser.add_argument("--curves", nargs="+", default=[c["name"] for c in CURVES],
                        choices=[c["name"] for c in CURVES])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    logs = Path(tempfile.mkdtemp(prefix="tooluse-cost-"))
    started = dt.datetime.now(dt.UTC)
    load = os.getloadavg()[0]
    parts = [f"Measured {started:%Y-%m-%d %H:%M} UTC, load average {load:.2f} at the start; "
             f"command: `python bench/speed_cost_curves.py "
             + " ".join(argv if argv is not None else sys.argv[1:]) + "`.", ""]
    for curve in CURVES:
        if curve["name"] not in args.curves:
            continue
        rows = run_curve(curve["name"], curve["points"], curve["make"], args, logs,
                         concurrent=bool(curve.get("concurrent")))
        png = f"cost_{curve['name']}.png"
        if not args.no_write:
            plot(curve, rows, args.out / png)
        parts += [f"### {curve['title']}", "", f"![{curve['title']}]({png})", "",
                  table(curve, rows), ""]
    body = "\n".join(parts)
    print(body)
    if not args.no_write:
        doc = args.out / "cost_curves.md"
        text = doc.read_text() if doc.exists() else ""
        block = f"{MARK_START}\n{body}\n{MARK_END}"
        if MARK_START in text and MARK_END in text:
            text = text[: text.index(MARK_START)] + block + text[text.index(MARK_END) + len(MARK_END):]
        else:
            text = text + "\n" + block + "\n"
        doc.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
