"""Codec throughput: decode + encode of a seed conversation, and a response stream, per format.

Run: python bench/speed_codecs.py [--n 2000]
Measures what a gateway pays per request for translation (validation included).
"""

from __future__ import annotations

import argparse
import functools
import json
import time
from pathlib import Path
from types import ModuleType

from tooluse.codecs import get_codec
from tooluse.stream import accumulate, events_from_response

SEEDS = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "seeds"


def _rate(n: int, fn: object) -> float:
    start = time.perf_counter()
    for _ in range(n):
        fn()  # type: ignore[operator]
    return n / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=2000)
    args = parser.parse_args()
    anthropic = get_codec("anthropic")
    seed = json.loads((SEEDS / "anthropic_request_stock_price.json").read_text(encoding="utf-8"))
    neutral = anthropic.decode_request(seed)
    resp = anthropic.decode_response(json.loads((SEEDS / "anthropic_response_tool_use.json").read_text(encoding="utf-8")))
    print(f"{'format':10} {'decode req/s':>14} {'encode req/s':>14} {'stream round trips/s':>22}")
    events = list(events_from_response(resp, chunk_size=8))
    for name in ("anthropic", "bedrock", "openai"):
        codec = get_codec(name)
        wire = codec.encode_request(neutral)
        dec = _rate(args.n, functools.partial(codec.decode_request, wire))
        enc = _rate(args.n, functools.partial(codec.encode_request, neutral))

        def stream_trip(codec: ModuleType = codec) -> None:
            accumulate(codec.decode_events(list(codec.encode_events(events))))

        stream = _rate(args.n // 4, stream_trip)
        print(f"{name:10} {dec:14.0f} {enc:14.0f} {stream:22.0f}")


if __name__ == "__main__":
    main()
