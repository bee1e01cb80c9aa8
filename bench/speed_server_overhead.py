"""Per-request cost of the gateway itself, per endpoint, plain and streamed.

The backend answers at once with a fixed tool call (text + one tool_use, streamed as 16-ish
events), so what is measured is the gateway: HTTP parsing, body cap, JSON, codec decode,
neutral model, backend call, codec encode, SSE / event-stream framing, and for streams the
worker-thread hand-over. Sequential requests over one keep-alive connection to uvicorn on
127.0.0.1; the client's own time is included (same for every row).

Run: ``python bench/speed_server_overhead.py [--requests 300]``
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Iterator
from typing import Any

import httpx2

from tooluse.backend import Backend
from tooluse.messages import Request, Response, TextBlock, ToolUseBlock, Usage
from tooluse.server import ServerThread, create_app
from tooluse.stream import events_from_response

ANSWER = Response(
    id="msg_bench",
    model="bench",
    content=[
        TextBlock(text="<thinking>I should look up the weather in Paris.</thinking>"),
        ToolUseBlock(id="toolu_bench", name="get_weather", input={"location": "Paris, France", "unit": "celsius"}),
    ],
    stop_reason="tool_use",
    usage=Usage(input_tokens=400, output_tokens=60),
)


class Instant(Backend):
    name = "instant"

    def complete(self, request: Request) -> Response:
        return ANSWER

    def stream(self, request: Request) -> Iterator[Any]:
        return events_from_response(ANSWER, chunk_size=16)


SCHEMA = {"type": "object", "properties": {"location": {"type": "string"}, "unit": {"type": "string"}},
          "required": ["location"]}
BODIES: dict[str, dict[str, Any]] = {
    "/v1/messages": {"model": "m", "max_tokens": 100, "messages": [{"role": "user", "content": "Weather in Paris?"}],
                     "tools": [{"name": "get_weather", "description": "Get the weather.", "input_schema": SCHEMA}]},
    "/model/m/converse": {"messages": [{"role": "user", "content": [{"text": "Weather in Paris?"}]}],
                          "toolConfig": {"tools": [{"toolSpec": {"name": "get_weather", "description": "Get the weather.",
                                                                 "inputSchema": {"json": SCHEMA}}}]}},
    "/v1/chat/completions": {"model": "m", "messages": [{"role": "user", "content": "Weather in Paris?"}],
                             "tools": [{"type": "function", "function": {"name": "get_weather",
                                                                         "description": "Get the weather.", "parameters": SCHEMA}}]},
}


def measure(client: httpx2.Client, url: str, body: dict[str, Any], n: int, warmup: int = 50) -> list[float]:
    raw = json.dumps(body).encode()
    out = []
    for i in range(n + warmup):
        t = time.perf_counter()
        r = client.post(url, content=raw, headers={"content-type": "application/json"})
        r.read()
        if r.status_code != 200:
            raise SystemExit(f"{url}: {r.status_code} {r.text[:200]}")
        if i >= warmup:
            out.append(time.perf_counter() - t)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--requests", type=int, default=300)
    args = parser.parse_args()
    print("| endpoint | mode | median ms | p90 ms | mean ms |")
    print("| --- | --- | ---: | ---: | ---: |")
    with ServerThread(create_app(Instant())) as server, httpx2.Client(timeout=30) as client:
        for path, body in BODIES.items():
            for mode in ("plain", "stream"):
                url = server.url + (path + "-stream" if mode == "stream" and path.startswith("/model/") else path)
                sent = dict(body, stream=True) if mode == "stream" and not path.startswith("/model/") else body
                times = sorted(measure(client, url, sent, args.requests))
                print(f"| `{path}` | {mode} | {statistics.median(times) * 1000:.2f} | "
                      f"{times[int(len(times) * 0.9)] * 1000:.2f} | {statistics.fmean(times) * 1000:.2f} |")


if __name__ == "__main__":
    main()
