"""What routing costs per request, in process: ``Router.plan`` and the planned backend's
call, over routing.py's route table (six routes, a glob, a fallback) and over ``--backend``'s
table of one, every deployment an instant natively async backend (no HTTP, no app: only the
route lookup, the plan, the failover and balancing layers, the accounting).

    python bench/gateway/routing_overhead.py              # µs per request, JSON and stream
    python bench/gateway/routing_overhead.py --profile 30 --stream   # where the routed time goes

Thread CPU time, best of ``--rounds`` rounds of ``--requests``: steadier than wall time on a
busy machine. The socket benchmark of the same paths is routing.py.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import pstats
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import canned
import routing as routing_bench

from tooluse.backend import Backend
from tooluse.messages import Message, Request, Response, TextBlock, Usage
from tooluse.server.route_config import parse_config
from tooluse.server.routes import RouteTable
from tooluse.server.routing import Router
from tooluse.stream import StreamEvent, events_from_response

ANSWER = Response(id="msg_bench", model="up", content=[TextBlock(text=canned.TEXT)],
                  stop_reason="end_turn", usage=Usage(input_tokens=412, output_tokens=58))
REQUEST = Request(model=canned.MODEL, messages=[Message(role="user", content="hi")],
                  max_tokens=64)


class Instant(Backend):
    """Answers at once, natively async (an HTTP backend's shape, without the HTTP)."""

    name = "instant"
    model = "up"

    async def acomplete(self, request: Request) -> Response:
        return ANSWER

    async def astream(self, request: Request) -> AsyncIterator[StreamEvent]:
        for event in events_from_response(ANSWER, chunk_size=16):
            yield event

    def complete(self, request: Request) -> Response:
        return ANSWER

    def stream(self, request: Request) -> Iterator[StreamEvent]:
        return events_from_response(ANSWER, chunk_size=16)


def routers() -> tuple[Router, Router]:
    """``--backend``'s router and routing.py's, every deployment :class:`Instant`."""
    path = Path(tempfile.mkdtemp(prefix="tooluse-routing-")) / "routes.toml"
    routing_bench.tooluse_config(path, "http://127.0.0.1:9", "http://127.0.0.1:9")
    table = RouteTable.build(parse_config(path.read_text(), str(path)))
    for route in table.routes:
        for deployment in getattr(route.backend, "_deployments", ()):
            deployment.backend = Instant()
    return Router(RouteTable.single(Instant())), Router(table)


async def one(router: Router, stream: bool) -> None:
    plan = await router.plan(REQUEST, {})
    if stream:
        async for _ in plan.backend.astream(REQUEST):
            pass
    else:
        await plan.backend.acomplete(REQUEST)
    plan.answered()


async def cost(router: Router, stream: bool, requests: int, rounds: int) -> float:
    for _ in range(requests // 10):
        await one(router, stream)
    best = float("inf")
    for _ in range(rounds):
        start = time.thread_time()
        for _ in range(requests):
            await one(router, stream)
        best = min(best, (time.thread_time() - start) / requests * 1e6)
    return best


async def run(args: argparse.Namespace) -> None:
    simple, routed = routers()
    modes = [args.stream] if args.profile else [False, True]
    print("| mode | --backend µs | routed µs | routing's cost µs |\n|---|---:|---:|---:|")
    for stream in modes:
        base = await cost(simple, stream, args.requests, args.rounds)
        with_routes = await cost(routed, stream, args.requests, args.rounds)
        print(f"| {'stream' if stream else 'JSON'} | {base:.1f} | {with_routes:.1f} | "
              f"{with_routes - base:.1f} |", flush=True)
    if args.profile:
        profiler = cProfile.Profile(time.thread_time)
        profiler.enable()
        for _ in range(args.requests):
            await one(routed, args.stream)
        profiler.disable()
        pstats.Stats(profiler).sort_stats("tottime").print_stats(args.profile)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--stream", action="store_true", help="with --profile: the stream")
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="profile the routed requests and print the top N functions")
    asyncio.run(run(parser.parse_args(argv)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
