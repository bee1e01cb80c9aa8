"""The load generator: one async httpx2 client, the same for every target.

Each request is timed from just before it is sent to the last byte of the body, and to the
first body byte (time to first byte, which for a stream is when the first event arrives).
The body is read only after the timer stops — but every response *is* checked: a request
counts as successful only if it carries the ``get_weather`` call with exactly the canned
input (for streams: the tool input reassembled from its partial-JSON deltas, the stop reason
and the end-of-stream marker). A proxy that answers quickly with an error, or loses streamed
tool arguments, shows up in the ``errors`` column instead of improving its latency.

Two measurements per target and mode:

* :func:`latency` — requests one after another on one keep-alive connection (p50, p99);
* :func:`throughput` — ``concurrency`` workers sending back to back for a fixed time
  (requests per second).
"""

from __future__ import annotations

import asyncio
import json
import math
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import httpx2

sys.path.insert(0, str(Path(__file__).resolve().parent))
import canned  # noqa: E402
import canned_converse  # noqa: E402
import canned_responses  # noqa: E402

__all__ = [
    "Endpoint",
    "LatencyResult",
    "ThroughputResult",
    "check_body",
    "latency",
    "percentile",
    "throughput",
]

Wire = Literal["anthropic", "openai", "responses", "converse"]

_PATHS = {"anthropic": "/v1/messages", "openai": "/v1/chat/completions",
          "responses": "/v1/responses", "converse": "/model/{model}/converse"}
_REQUESTS = {"anthropic": canned.anthropic_request, "openai": canned.openai_request,
             "responses": canned_responses.responses_request,
             "converse": canned_converse.converse_request}


@dataclass(frozen=True)
class Endpoint:
    """Where to send the benchmark request and in which wire format."""

    base_url: str
    wire: Wire
    model: str = canned.MODEL
    headers: Mapping[str, str] = field(default_factory=dict)

    @property
    def path(self) -> str:
        return _PATHS[self.wire].format(model=self.model)

    def url_path(self, stream: bool) -> str:
        """The path a request goes to (Converse streams have a path of their own)."""
        return self.path + ("-stream" if stream and self.wire == "converse" else "")

    def body(self, stream: bool) -> bytes:
        return json.dumps(_REQUESTS[self.wire](self.model, stream=stream)).encode()

    def request_headers(self) -> dict[str, str]:
        headers = {"content-type": "application/json"}
        if self.wire == "anthropic":
            headers["anthropic-version"] = "2023-06-01"
        headers.update(self.headers)
        return headers


def percentile(sorted_values: list[float], q: float) -> float:
    """Nearest-rank percentile (``q`` in 0..100) of already sorted values."""
    if not sorted_values:
        return math.nan
    rank = max(1, math.ceil(q / 100 * len(sorted_values)))
    return sorted_values[min(rank, len(sorted_values)) - 1]


def _sse_data(body: bytes) -> list[tuple[str | None, str]]:
    """``(event, data)`` pairs of an SSE body (enough of the format for checking answers)."""
    out: list[tuple[str | None, str]] = []
    for block in body.decode().replace("\r\n", "\n").split("\n\n"):
        event: str | None = None
        data: list[str] = []
        for line in block.split("\n"):
            if line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].lstrip(" ") if line[5:6] == " " else line[5:])
        if data:
            out.append((event, "\n".join(data)))
    return out


def check_body(wire: Wire, stream: bool, status: int, body: bytes) -> str | None:
    """``None`` if ``body`` carries the canned tool call, else what is wrong with it."""
    if status != 200:
        return f"HTTP {status}: {body[:200]!r}"
    try:
        if wire == "responses":
            return canned_responses.check(stream, body, _sse_data(body) if stream else [])
        if wire == "converse":
            return canned_converse.check(stream, body)
        if wire == "anthropic" and not stream:
            data = json.loads(body)
            calls = [b for b in data.get("content", []) if b.get("type") == "tool_use"]
            if data.get("stop_reason") != "tool_use":
                return f"stop_reason {data.get('stop_reason')!r}"
            if len(calls) != 1 or calls[0].get("name") != canned.TOOL_NAME:
                return f"tool_use blocks {calls!r}"
            if calls[0].get("input") != canned.TOOL_INPUT:
                return f"tool input {calls[0].get('input')!r}"
            return None
        if wire == "anthropic":
            events = [json.loads(d) for _, d in _sse_data(body)]
            tool_index = None
            parts: list[str] = []
            stop_reason = None
            for ev in events:
                kind = ev.get("type")
                if kind == "content_block_start" and ev["content_block"].get("type") == "tool_use":
                    if ev["content_block"].get("name") != canned.TOOL_NAME:
                        return f"tool name {ev['content_block'].get('name')!r}"
                    tool_index = ev["index"]
                elif kind == "content_block_delta" and ev.get("index") == tool_index:
                    parts.append(ev["delta"].get("partial_json", ""))
                elif kind == "message_delta":
                    stop_reason = ev["delta"].get("stop_reason")
                elif kind == "error":
                    return f"stream error {ev!r}"
            if tool_index is None:
                return "no tool_use block in the stream"
            if json.loads("".join(parts)) != canned.TOOL_INPUT:
                return f"streamed tool input {''.join(parts)!r}"
            if stop_reason != "tool_use":
                return f"stop_reason {stop_reason!r}"
            if not events or events[-1].get("type") != "message_stop":
                return "stream did not end with message_stop"
            return None
        if not stream:
            data = json.loads(body)
            choice = data["choices"][0]
            calls = choice["message"].get("tool_calls") or []
            if choice.get("finish_reason") != "tool_calls":
                return f"finish_reason {choice.get('finish_reason')!r}"
            if len(calls) != 1 or calls[0]["function"]["name"] != canned.TOOL_NAME:
                return f"tool_calls {calls!r}"
            if json.loads(calls[0]["function"]["arguments"]) != canned.TOOL_INPUT:
                return f"tool arguments {calls[0]['function']['arguments']!r}"
            return None
        frames = _sse_data(body)
        if not frames or frames[-1][1] != "[DONE]":
            return "stream did not end with data: [DONE]"
        name, args, finish = None, [], None
        for _, payload in frames[:-1]:
            chunk = json.loads(payload)
            for choice in chunk.get("choices") or []:
                for call in choice.get("delta", {}).get("tool_calls") or []:
                    fn = call.get("function") or {}
                    name = fn.get("name") or name
                    args.append(fn.get("arguments") or "")
                finish = choice.get("finish_reason") or finish
        if name != canned.TOOL_NAME:
            return f"tool name {name!r}"
        if json.loads("".join(args)) != canned.TOOL_INPUT:
            return f"streamed tool arguments {''.join(args)!r}"
        if finish != "tool_calls":
            return f"finish_reason {finish!r}"
        return None
    except (ValueError, KeyError, TypeError, IndexError, AttributeError) as exc:
        return f"unreadable answer ({type(exc).__name__}: {exc}): {body[:200]!r}"


async def _one(
    client: httpx2.AsyncClient, endpoint: Endpoint, body: bytes, headers: dict[str, str], stream: bool,
    answer_headers: list[Mapping[str, str]] | None = None,
) -> tuple[float, float, str | None]:
    """Send one request; return (seconds to last byte, seconds to first byte, problem). The
    answer's headers are appended to ``answer_headers`` when it is given."""
    chunks: list[bytes] = []
    start = time.perf_counter()
    first = math.nan
    try:
        async with client.stream("POST", endpoint.url_path(stream), content=body,
                                 headers=headers) as resp:
            async for chunk in resp.aiter_raw():
                if not chunks:
                    first = time.perf_counter()
                chunks.append(chunk)
            end = time.perf_counter()
            status = resp.status_code
            encoding = resp.headers.get("content-encoding")
            if answer_headers is not None:
                answer_headers.append(resp.headers)
    except httpx2.HTTPError as exc:
        return math.nan, math.nan, f"{type(exc).__name__}: {exc}"
    if encoding not in (None, "identity"):
        return end - start, first - start, f"unexpected content-encoding {encoding!r}"
    return end - start, first - start, check_body(endpoint.wire, stream, status, b"".join(chunks))


@dataclass
class LatencyResult:
    """Sequential latencies in milliseconds (successful requests only)."""

    total_ms: list[float]
    ttfb_ms: list[float]
    errors: int
    first_error: str | None

    def p(self, q: float, ttfb: bool = False) -> float:
        return percentile(sorted(self.ttfb_ms if ttfb else self.total_ms), q)


@dataclass
class ThroughputResult:
    """Requests per second over a fixed window with ``concurrency`` workers."""

    completed: int
    errors: int
    seconds: float
    concurrency: int
    first_error: str | None
    total_ms: list[float]

    @property
    def rps(self) -> float:
        return self.completed / self.seconds if self.seconds > 0 else math.nan


def _client(endpoint: Endpoint, connections: int) -> httpx2.AsyncClient:
    return httpx2.AsyncClient(
        base_url=endpoint.base_url,
        timeout=httpx2.Timeout(60.0),
        limits=httpx2.Limits(max_connections=connections, max_keepalive_connections=connections),
        headers={"accept-encoding": "identity"},
        trust_env=False,
    )


async def latency(endpoint: Endpoint, *, stream: bool, warmup: int, requests: int) -> LatencyResult:
    """``warmup`` untimed requests, then ``requests`` timed ones, one at a time."""
    body, headers = endpoint.body(stream), endpoint.request_headers()
    totals: list[float] = []
    ttfbs: list[float] = []
    errors, first_error = 0, None
    async with _client(endpoint, 1) as client:
        for _ in range(warmup):
            await _one(client, endpoint, body, headers, stream)
        for _ in range(requests):
            total, ttfb, problem = await _one(client, endpoint, body, headers, stream)
            if problem is None:
                totals.append(total * 1000)
                ttfbs.append(ttfb * 1000)
            else:
                errors += 1
                first_error = first_error or problem
    return LatencyResult(totals, ttfbs, errors, first_error)


async def throughput(
    endpoint: Endpoint, *, stream: bool, concurrency: int, seconds: float, max_requests: int
) -> ThroughputResult:
    """``concurrency`` workers send back to back for ``seconds`` (or ``max_requests`` in all).

    Connections are opened and warmed before the clock starts, so the figure is steady-state
    requests per second rather than connection set-up.
    """
    body, headers = endpoint.body(stream), endpoint.request_headers()
    totals: list[float] = []
    counters = {"done": 0, "errors": 0, "sent": 0}
    first_error: list[str] = []
    async with _client(endpoint, concurrency) as client:
        await asyncio.gather(
            *(_one(client, endpoint, body, headers, stream) for _ in range(concurrency))
        )
        deadline = time.perf_counter() + seconds

        async def worker() -> None:
            while time.perf_counter() < deadline and counters["sent"] < max_requests:
                counters["sent"] += 1
                total, _, problem = await _one(client, endpoint, body, headers, stream)
                if problem is None:
                    counters["done"] += 1
                    totals.append(total * 1000)
                else:
                    counters["errors"] += 1
                    if not first_error:
                        first_error.append(problem)

        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        elapsed = time.perf_counter() - start
    return ThroughputResult(
        counters["done"], counters["errors"], elapsed, concurrency,
        first_error[0] if first_error else None, totals,
    )


def _main() -> None:  # pragma: no cover - manual use
    import argparse

    parser = argparse.ArgumentParser(description="Time one endpoint (manual use; run.py does all).")
    parser.add_argument("base_url")
    parser.add_argument("--wire", choices=["anthropic", "openai", "responses", "converse"],
                        default="anthropic")
    parser.add_argument("--model", default=canned.MODEL)
    parser.add_argument("--key", default=None)
    parser.add_argument("--stream", action="store_true")
    parser.add_argument("--requests", type=int, default=200)
    args = parser.parse_args()
    headers = {"authorization": f"Bearer {args.key}"} if args.key else {}
    endpoint = Endpoint(args.base_url, args.wire, args.model, headers)
    result = asyncio.run(latency(endpoint, stream=args.stream, warmup=20, requests=args.requests))
    print(
        f"p50 {result.p(50):.3f} ms  p99 {result.p(99):.3f} ms  ttfb p50 {result.p(50, True):.3f} ms"
        f"  errors {result.errors} {result.first_error or ''}"
    )


if __name__ == "__main__":  # pragma: no cover
    _main()
