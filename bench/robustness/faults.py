"""Part 3: an upstream failing in each way x each client API x JSON/stream, through the
``anthropic:`` and ``openai:`` backends: what the client gets, and after how long."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import httpx2
from gateways import FAULTS, KINDS
from wire import judge, valid_request

__all__ = ["run_faults"]

CLIENTS = [("messages", "anthropic", "/v1/messages"), ("converse", "bedrock", "/model/bench-model/converse"),
           ("chat", "openai", "/v1/chat/completions")]


def _what(api: str, status: int, headers: dict[str, str], raw: bytes, verdict: str) -> str:
    """A short description of what the client got: the error's type, or how the stream ended."""
    try:
        if verdict == "stream_error":
            if api == "bedrock":
                from botocore.eventstream import EventStreamBuffer

                buffer = EventStreamBuffer()
                buffer.add_data(raw)
                return "in-stream " + str([m.headers.get(":exception-type") for m in buffer][-1])
            last = [b for b in raw.decode().split("\n\n") if b.strip()][-1]
            data = json.loads(last.split("data: ", 1)[1])
            return "in-stream " + str(data["error"].get("type"))
        if status >= 400:
            if api == "bedrock":
                return f"{status} {headers.get('x-amzn-errortype')}"
            body = json.loads(raw)
            return f"{status} {body['error'].get('type')}"
    except Exception as exc:  # noqa: BLE001
        return f"{status} (unreadable: {type(exc).__name__})"
    return f"{status} {verdict}"


async def _one(http: httpx2.AsyncClient, kind: str, fault: str, client: str, api: str, path: str,
               stream: bool, bound: float) -> dict[str, Any]:
    if client == "converse" and stream:
        path = path.replace("/converse", "/converse-stream")
    body = valid_request(api, stream=stream and api != "bedrock")
    started = time.monotonic()
    row: dict[str, Any] = {"upstream": kind, "fault": fault, "api": client, "mode": "stream" if stream else "json"}
    try:
        async with http.stream("POST", f"/{kind}-{fault}{path}", json=body, timeout=bound + 60) as r:
            raw = b"".join([c async for c in r.aiter_raw()])
        headers = {k.lower(): v for k, v in r.headers.items()}
        verdict = judge(api, r.status_code, headers, raw, headers.get("content-type", ""))
        row.update(status=r.status_code, verdict=verdict.kind, detail=verdict.detail,
                   got=_what(api, r.status_code, headers, raw, verdict.kind))
    except httpx2.HTTPError as exc:
        row.update(status=0, verdict="transport_error", detail=f"{type(exc).__name__}: {exc}",
                   got=type(exc).__name__)
    row["seconds"] = round(time.monotonic() - started, 2)
    expected_ok = fault == "ok"
    # a fault must be reported as the upstream's failure: a 400/404 would be our request's
    row["native_in_bound"] = (row["verdict"] == "complete") if expected_ok else (
        row["verdict"] in ("native_error", "stream_error") and row["status"] not in (400, 404)
        and row["seconds"] <= bound)
    row["complete_despite_failure"] = not expected_ok and row["verdict"] == "complete"
    return row


async def _all(url: str, bound: float) -> list[dict[str, Any]]:
    """One fault at a time (its 12 cases at once), so the timings are not those of 100
    requests queued together."""
    rows: list[dict[str, Any]] = []
    limits = httpx2.Limits(max_connections=50)
    async with httpx2.AsyncClient(base_url=url, limits=limits, trust_env=False) as http:
        for fault in FAULTS:
            jobs = [_one(http, kind, fault, client, api, path, stream, bound)
                    for kind in KINDS for client, api, path in CLIENTS for stream in (False, True)]
            rows += await asyncio.gather(*jobs)
    return rows


def run_faults(url: str, upstream_url: str, *, bound: float) -> dict[str, Any]:
    rows = asyncio.run(_all(url, bound))
    stats = httpx2.get(upstream_url + "/stats", timeout=10).json()
    failing = [r for r in rows if r["fault"] != "ok"]
    summary = {
        "bound_seconds": bound, "cases": len(rows), "fault_cases": len(failing),
        "answered_natively_within_bound": sum(r["native_in_bound"] for r in failing),
        "complete_despite_failure": sum(r["complete_despite_failure"] for r in rows),
        "ok_cases_complete": sum(r["native_in_bound"] for r in rows if r["fault"] == "ok"),
        "slowest_seconds": max(r["seconds"] for r in rows),
        "upstream_requests": stats["requests"],
    }
    for r in rows:
        mark = "ok " if r["native_in_bound"] else "BAD"
        print(f"  {mark} {r['upstream']:9} {r['fault']:11} {r['api']:8} {r['mode']:6} -> {r['got']:40} "
              f"{r['seconds']:6.2f}s {r['detail'][:80]}", flush=True)
    print(f"  summary: {summary}", flush=True)
    return {"summary": summary, "rows": rows}
