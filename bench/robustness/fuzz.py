"""Part 1: malformed requests per endpoint — our mutators and schemathesis — counting 5xx,
answers that are not in the API's native shape, and hangs."""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from collections.abc import Iterable
from typing import Any

import httpx2
from mutators import mutants
from wire import ENDPOINTS, Endpoint, judge, valid_request

__all__ = ["run_fuzz", "schemathesis_cases"]

HANG_SECONDS = 15.0


def schemathesis_cases(base_url: str, endpoint: Endpoint, count: int, seed: int) -> list[tuple[str, str, dict[str, str], bytes]]:
    """``count`` requests schemathesis generates from the gateway's ``/openapi.json`` for the
    endpoint's operation, half negative (violating the schema), half positive."""
    import schemathesis
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hseed
    from hypothesis.errors import Unsatisfiable
    from schemathesis import GenerationMode

    raw = httpx2.get(base_url + "/openapi.json", timeout=10).json()
    schema = schemathesis.openapi.from_dict(raw)
    operation = schema[endpoint.template or endpoint.path][endpoint.method]
    out: list[tuple[str, str, dict[str, str], bytes]] = []
    for mode in (GenerationMode.NEGATIVE, GenerationMode.POSITIVE):
        label = f"schemathesis-{mode.value}"

        @hseed(seed)
        @settings(max_examples=count // 2, database=None, deadline=None, phases=[Phase.generate],
                  suppress_health_check=list(HealthCheck))
        @given(operation.as_strategy(generation_mode=mode))
        def collect(case: Any) -> None:
            kw = case.as_transport_kwargs(base_url="")
            if "json" in kw:
                body = json.dumps(kw["json"]).encode()
            else:
                data = kw.get("data") or b""
                body = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
            headers = {k: str(v) for k, v in kw.get("headers", {}).items()
                       if k.lower() in ("content-type", "accept", "x-api-key", "authorization")}
            out.append((label, kw["url"], headers, body))  # noqa: B023 - used at once

        try:
            collect()
        except Unsatisfiable:  # nothing to violate (GET /v1/models takes no parameter)
            continue
    return out


async def _send_all(base_url: str, endpoint: Endpoint, requests: Iterable[tuple[str, str, dict[str, str], bytes]],
                    concurrency: int) -> dict[str, Any]:
    statuses: Counter[int] = Counter()
    verdicts: Counter[str] = Counter()
    by_source: Counter[str] = Counter()
    problems: list[dict[str, Any]] = []
    queue: asyncio.Queue[tuple[str, str, dict[str, str], bytes] | None] = asyncio.Queue(maxsize=concurrency * 4)
    started = time.monotonic()

    async def worker(client: httpx2.AsyncClient) -> None:
        while True:
            item = await queue.get()
            if item is None:
                return
            source, url, headers, body = item
            by_source[source.split("+")[0] if source.startswith("schemathesis") else "mutator"] += 1
            try:
                r = await asyncio.wait_for(client.request(endpoint.method, url, content=body or None,
                                                          headers=headers), HANG_SECONDS)
                verdict = judge(endpoint.api, r.status_code, {k.lower(): v for k, v in r.headers.items()},
                                r.content, r.headers.get("content-type", ""), endpoint.answer)
                statuses[r.status_code] += 1
                kind = "5xx" if r.status_code >= 500 else verdict.kind
            except (TimeoutError, httpx2.TimeoutException):
                kind, verdict = "hang", None
            except httpx2.HTTPError as exc:
                kind, verdict = "transport_error", None
                statuses[0] += 1
                source += f" ({type(exc).__name__})"
            verdicts[kind] += 1
            if kind in ("5xx", "bad", "hang", "transport_error") and len(problems) < 20:
                problems.append({"kind": kind, "source": source, "url": url,
                                 "detail": verdict.detail if verdict else "",
                                 "body": body[:300].decode("utf-8", "replace")})

    async with httpx2.AsyncClient(base_url=base_url, timeout=HANG_SECONDS + 5, trust_env=False) as client:
        workers = [asyncio.create_task(worker(client)) for _ in range(concurrency)]
        for item in requests:
            await queue.put(item)
        for _ in workers:
            await queue.put(None)
        await asyncio.gather(*workers)
    return {"endpoint": endpoint.name, "requests": sum(verdicts.values()), "by_source": dict(by_source),
            "verdicts": dict(verdicts), "statuses": {str(k): v for k, v in sorted(statuses.items())},
            "5xx": verdicts["5xx"], "non_native": verdicts["bad"], "hangs": verdicts["hang"],
            "transport_errors": verdicts["transport_error"], "seconds": round(time.monotonic() - started, 1),
            "problems": problems}


def stored_cases(base_url: str, endpoint: Endpoint) -> list[tuple[str, str, dict[str, str], bytes]]:
    """Odd queries on a response that exists (schemathesis' random ids only meet 404s): a
    response is stored first, and its paths get every bad ``limit``, ``order``, ``after``,
    ``before`` and ``stream`` value, and good ones."""
    created = httpx2.post(base_url + "/v1/responses", json=valid_request("responses"), timeout=30).json()
    path = endpoint.path.replace("resp_x", created["id"])
    queries = ["", "?stream=true", "?stream=1", "?stream=false"]
    if path.endswith("/input_items"):
        items = httpx2.get(base_url + path, timeout=30).json()["data"]
        first = items[0]["id"] if items else "x"
        queries = [f"?{key}={value}" for key, values in (
            ("limit", ["0", "1", "100", "101", "-1", "abc", "1e3", "", "%00", "9" * 40]),
            ("order", ["asc", "desc", "up", "", "ASC"]),
            ("after", [first, "nope", ""]), ("before", [first, "nope", ""]),
        ) for value in values] + [f"?after={first}&before={first}&limit=2&order=asc", "?limit=1&limit=2"]
    return [("stored", path + q, {}, b"") for q in queries]


def run_fuzz(base_url: str, *, per_endpoint: int, schemathesis_per_endpoint: int, seed: int,
             concurrency: int, endpoints: list[str]) -> list[dict[str, Any]]:
    results = []
    for name in endpoints:
        endpoint = ENDPOINTS[name]
        streaming = name in ("messages", "chat", "responses")  # half of their mutants ask for a stream
        requests: list[tuple[str, str, dict[str, str], bytes]] = [
            (label, endpoint.path, {"content-type": "application/json"}, body)
            for label, body in mutants(endpoint.api, per_endpoint, seed, streaming=streaming)
        ] if endpoint.mutated else []
        if endpoint.answer == "stored":
            requests += stored_cases(base_url, endpoint)
        if schemathesis_per_endpoint:
            t = time.monotonic()
            requests += schemathesis_cases(base_url, endpoint, schemathesis_per_endpoint, seed)
            print(f"  schemathesis generated {schemathesis_per_endpoint} cases for {name} "
                  f"in {time.monotonic() - t:.0f} s", flush=True)
        result = asyncio.run(_send_all(base_url, endpoint, requests, concurrency))
        print(f"  {name}: {result['requests']} requests, 5xx={result['5xx']}, "
              f"non-native={result['non_native']}, hangs={result['hangs']}, "
              f"verdicts={result['verdicts']}", flush=True)
        results.append(result)
    return results
