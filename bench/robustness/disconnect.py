"""Part 4: clients that leave mid-request. The gateway's threads and open fds, and the
upstream's open requests, must go back to their baseline, and no request may reach the
upstream after the clients left (no retries on behalf of nobody)."""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

import httpx2
from wire import valid_request

__all__ = ["run_disconnect"]

#: (upstream behaviour, client API path): silent upstream (clients leave while the gateway
#: waits), and a slow stream (clients leave in the middle of it).
#: Clients leave once the upstream holds all their requests open (or after 20 s).
SCENARIOS = [
    ("silence", "anthropic", "/v1/messages", "anthropic", True),
    ("silence", "openai", "/v1/chat/completions", "openai", False),
    ("silence", "anthropic", "/model/bench-model/converse-stream", "bedrock", True),
    ("slow", "anthropic", "/v1/messages", "anthropic", True),
    ("slow", "openai", "/model/bench-model/converse-stream", "bedrock", True),
    ("slow", "openai", "/v1/chat/completions", "openai", True),
]


def _threads_fds(pid: int) -> tuple[int, int]:
    threads = 0
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("Threads:"):
                threads = int(line.split()[1])
    return threads, len(os.listdir(f"/proc/{pid}/fd"))


def _upstream(upstream_url: str) -> dict[str, Any]:
    return httpx2.get(upstream_url + "/stats", timeout=10, trust_env=False).json()


async def _leave_all(url: str, upstream_url: str, path: str, api: str, stream: bool, clients: int) -> float:
    """Start ``clients`` requests, wait until the upstream holds all of them open (at most
    20 s: on a loaded machine some may not get there), then hang up on all at once.
    Returns how long the clients waited."""
    body = valid_request(api, stream=stream and api != "bedrock")
    limits = httpx2.Limits(max_connections=clients)
    async with httpx2.AsyncClient(base_url=url, trust_env=False, timeout=60, limits=limits) as http, \
            httpx2.AsyncClient(base_url=upstream_url, trust_env=False, timeout=10) as stats:
        base = (await stats.get("/stats")).json()["open"]

        async def go() -> None:
            async with http.stream("POST", path, json=body) as r:
                async for _ in r.aiter_raw():
                    pass

        tasks = [asyncio.create_task(go()) for _ in range(clients)]
        started = time.monotonic()
        while time.monotonic() - started < 20:
            await asyncio.sleep(0.25)
            if (await stats.get("/stats")).json()["open"] - base >= clients:
                break
        await asyncio.sleep(0.5)  # slow streams: some events flow first
        waited = time.monotonic() - started
        for task in tasks:
            task.cancel()  # closes each connection: the client is gone
        await asyncio.gather(*tasks, return_exceptions=True)
    return waited


async def _warm(url: str, clients: int) -> None:
    async with httpx2.AsyncClient(base_url=url, trust_env=False, timeout=60) as http:
        await asyncio.gather(*(http.post("/anthropic-ok/v1/messages", json=valid_request("anthropic", True))
                               for _ in range(clients)))


def run_disconnect(url: str, upstream_url: str, gateway: Any, *, clients: int, settle: float = 30.0) -> dict[str, Any]:
    pid = gateway.proc.pid
    asyncio.run(_warm(url, clients))  # thread pools and connection pools at their working size
    time.sleep(2)
    base_threads, base_fds = _threads_fds(pid)
    base_up = _upstream(upstream_url)
    rows = []
    for fault, kind, path, api, stream in SCENARIOS:
        before = _upstream(upstream_url)["total"]
        t0 = time.monotonic()
        waited = asyncio.run(_leave_all(url, upstream_url, f"/{kind}-{fault}{path}", api, stream, clients))
        left = _upstream(upstream_url)
        peak_threads, peak_fds = _threads_fds(pid)
        deadline = time.monotonic() + settle
        while True:
            threads, fds = _threads_fds(pid)
            now = _upstream(upstream_url)
            if (threads <= base_threads and fds <= base_fds and now["open"] == 0) or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        time.sleep(3)  # anything still scheduled (a retry) would show now
        final = _upstream(upstream_url)
        threads, fds = _threads_fds(pid)
        row = {"upstream": f"{kind}/{fault}", "path": path, "clients": clients, "left_after_seconds": round(waited, 1),
               "upstream_requests": left["total"] - before,
               "requests_after_clients_left": final["total"] - left["total"],
               "upstream_open_at_leave": left["open"], "upstream_open_after": final["open"],
               "threads_peak": peak_threads, "threads_after": threads, "fds_peak": peak_fds, "fds_after": fds,
               "settled_seconds": round(time.monotonic() - t0 - 3, 1)}
        row["back_to_baseline"] = (threads <= base_threads and fds <= base_fds and final["open"] == 0
                                   and row["requests_after_clients_left"] == 0)
        print(f"  {row}", flush=True)
        rows.append(row)
    return {"baseline": {"threads": base_threads, "fds": base_fds, "upstream_open": base_up["open"]},
            "rows": rows, "all_back_to_baseline": all(r["back_to_baseline"] for r in rows)}
