"""Part 2: many concurrent streams for a while on the scripted backend — errors, truncated
streams, and the gateway's memory (RSS) at 10 s and at the end."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from typing import Any

import httpx2
from wire import ENDPOINTS, judge, valid_request

__all__ = ["run_soak"]

STREAMS = [("messages", "/v1/messages"), ("converse-stream", ENDPOINTS["converse-stream"].path),
           ("chat", "/v1/chat/completions")]


async def _soak(url: str, gateway: Any, clients: int, seconds: float) -> dict[str, Any]:
    verdicts: Counter[str] = Counter()
    per_api: Counter[str] = Counter()
    problems: list[str] = []
    rss: list[tuple[float, float]] = []
    start = time.monotonic()
    stop_at = start + seconds

    async def client(n: int, http: httpx2.AsyncClient) -> None:
        i = n
        while time.monotonic() < stop_at:
            name, path = STREAMS[i % len(STREAMS)]
            i += 1
            api = ENDPOINTS[name].api
            body = valid_request(api, stream=True)
            chunks: list[bytes] = []
            try:
                async with http.stream("POST", path, json=body) as r:
                    async for chunk in r.aiter_raw():
                        chunks.append(chunk)
                raw = b"".join(chunks)
                verdict = judge(api, r.status_code, {k.lower(): v for k, v in r.headers.items()},
                                raw, r.headers.get("content-type", ""))
                kind = verdict.kind
                if kind == "bad" and len(problems) < 10:
                    problems.append(f"{name}: {verdict.detail}")
            except httpx2.HTTPError as exc:
                # before any byte of an answer (a connection refused or closed under a
                # request, e.g. the keep-alive race) or in the middle of one (a cut stream)
                kind = "transport_error_mid_stream" if chunks else "transport_error_before_answer"
                if len(problems) < 10:
                    problems.append(f"{name}: {kind}: {type(exc).__name__}: {exc}")
            verdicts[kind] += 1
            per_api[name] += 1

    async def sampler() -> None:
        while time.monotonic() < stop_at + 1:
            rss.append((round(time.monotonic() - start, 1), round(gateway.rss_mib(), 1)))
            await asyncio.sleep(1.0)

    # one connection per stream: uvicorn closes a connection idle for 5 s, and on a loaded
    # machine this client can read a finished stream late enough that its next request on
    # the same connection meets that close (a ReadError before any answer: the keep-alive
    # race, which SDKs retry) — a fault of neither the stream nor the gateway
    limits = httpx2.Limits(max_connections=clients, max_keepalive_connections=0)
    async with httpx2.AsyncClient(base_url=url, timeout=60, limits=limits, trust_env=False) as http:
        sample = asyncio.create_task(sampler())
        await asyncio.gather(*(client(n, http) for n in range(clients)))
        await sample
    elapsed = time.monotonic() - start
    at10 = next((m for t, m in rss if t >= 10), rss[0][1] if rss else 0.0)
    end = rss[-1][1] if rss else 0.0
    return {"clients": clients, "seconds": seconds, "elapsed": round(elapsed, 1),
            "streams": sum(verdicts.values()), "per_api": dict(per_api), "verdicts": dict(verdicts),
            "errors": (verdicts["native_error"] + verdicts["stream_error"]
                       + verdicts["transport_error_before_answer"] + verdicts["transport_error_mid_stream"]),
            "truncated": verdicts["bad"] + verdicts["transport_error_mid_stream"], "streams_per_second": round(sum(verdicts.values()) / elapsed, 1),
            "rss_mib_start": rss[0][1] if rss else None, "rss_mib_at_10s": at10, "rss_mib_end": end,
            "rss_growth_10s_to_end_pct": round(100 * (end - at10) / at10, 1) if at10 else None,
            "rss_samples": rss, "problems": problems}


def run_soak(url: str, gateway: Any, *, clients: int, seconds: float) -> dict[str, Any]:
    result = asyncio.run(_soak(url, gateway, clients, seconds))
    print(f"  {result['streams']} streams, errors={result['errors']}, truncated={result['truncated']}, "
          f"RSS {result['rss_mib_at_10s']} MiB at 10 s -> {result['rss_mib_end']} MiB at the end "
          f"({result['rss_growth_10s_to_end_pct']}%)", flush=True)
    return result
