"""The gateway's own CPU per request, in process: the app ``tooluse serve`` builds, driven
through httpx2's ASGI transport (no client socket) in front of the real-socket fake
upstream (``upstream.py``, a process of its own), with ``cProfile`` on or off.

    python bench/gateway/profile_request.py --wire converse --stream           # µs/request
    python bench/gateway/profile_request.py --config routing --wire anthropic   # routed
    python bench/gateway/profile_request.py --wire responses --profile 25       # top 25

It reports the median over ``--rounds`` of the process CPU time per request (µs: the
gateway, the ASGI transport and the upstream client; the upstream's own CPU is another
process's). On a busy machine CPU time still moves less than wall time; ``instructions.py``
counts instructions, steadier still and much slower. ``--config`` as in instructions.py:
a route table file (``{upstream}`` = the fake upstream's URL) or ``routing`` for
routing.py's table; ``--model bench-failover`` then measures its failover.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import canned
import httpx2
from instructions import AWS, SPECS, _config, _upstream
from loadgen import Endpoint


def _app(wire: str, url: str, config: Path | None, model: str):  # type: ignore[no-untyped-def]
    from tooluse.server.workers import build_app

    os.environ.update({"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k", **AWS,
                       "AWS_ENDPOINT_URL_BEDROCK_RUNTIME": url})
    if config is not None:
        return build_app({"config_path": str(config), "config_text": config.read_text(),
                          "app": {}, "backend": "", "options": {},
                          "log_level": "warning"})  # type: ignore[typeddict-item]
    return build_app({"backend": SPECS[wire].format(up=url, model=model), "options": {},
                      "app": {}, "log_level": "warning"})  # type: ignore[typeddict-item]


async def _run(app, endpoint: Endpoint, stream: bool, warmup: int, requests: int,  # type: ignore[no-untyped-def]
               rounds: int, profile: int) -> None:
    body, headers = endpoint.body(stream), endpoint.request_headers()
    path = endpoint.url_path(stream)
    transport = httpx2.ASGITransport(app=app)
    async with app.router.lifespan_context(app), httpx2.AsyncClient(
            transport=transport, base_url="http://gw") as client:
        async def one() -> None:
            response = await client.post(path, content=body, headers=headers)
            if response.status_code != 200:
                raise RuntimeError(f"{response.status_code}: {response.text[:300]}")
            await response.aread()

        for _ in range(warmup):
            await one()
        per: list[float] = []
        profiler = cProfile.Profile(time.thread_time) if profile else None  # CPU, not wall
        for _ in range(rounds):
            if profiler is not None:
                profiler.enable()
            start = time.process_time()
            for _ in range(requests):
                await one()
            per.append((time.process_time() - start) / requests * 1e6)
            if profiler is not None:
                profiler.disable()
        print(f"{endpoint.wire} {'stream' if stream else 'json'} {endpoint.model}: "
              f"{statistics.median(per):.0f} µs CPU per request (median of {rounds} rounds "
              f"of {requests}; each: {', '.join(f'{p:.0f}' for p in per)})", flush=True)
        if profiler is not None:
            pstats.Stats(profiler).sort_stats("tottime").print_stats(profile)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--wire", choices=list(SPECS), default="anthropic")
    parser.add_argument("--stream", action="store_true")
    parser.add_argument("--config", help="a route table file, or 'routing' (routing.py's)")
    parser.add_argument("--model", default=canned.MODEL)
    parser.add_argument("--warmup", type=int, default=100)
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="profile the timed requests and print the top N functions")
    args = parser.parse_args(argv)
    logs = Path(tempfile.mkdtemp(prefix="tooluse-profile-"))
    upstream, url = _upstream(logs, "upstream")
    failing, fail = _upstream(logs, "failing", "--status", "529")
    try:
        upstream.wait_ready(60)
        failing.wait_ready(60)
        config = _config(args.config, url, fail, logs) if args.config else None
        app = _app(args.wire, url, config, args.model)
        endpoint = Endpoint("http://gw", args.wire, args.model)  # type: ignore[arg-type]
        asyncio.run(_run(app, endpoint, args.stream, args.warmup, args.requests,
                         args.rounds, args.profile))
    finally:
        upstream.stop()
        failing.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
