"""Partial JSON of a streamed tool input: incremental parser vs re-parsing the buffer.

A streamed tool call's input arrives as JSON fragments; a UI wants the value parsed so far
after every fragment. Two ways to get it:

- ``incremental``: tooluse.partial_json.IncrementalJSONParser — feed each fragment, ask
  ``value()``; state persists between fragments, so each character is read once;
- ``jiter-reparse``: append the fragment to a buffer and parse the whole buffer again with
  ``jiter.from_json(buf, partial_mode="trailing-strings")`` (what re-parsing libraries do);
- ``json.loads-at-end``: no partial views at all, one parse of the complete text (the floor).

Run: python bench/speed_partial_json.py [--size 100000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import time
from collections.abc import Callable
from typing import Any

import jiter

from tooluse.partial_json import IncrementalJSONParser


def make_input(size: int, seed: int = 7) -> str:
    """A realistic large tool input: an object holding a list of records (strings with
    escapes and unicode, numbers, booleans, nested lists), grown until ``size`` bytes."""
    rng = random.Random(seed)
    words = ["lamp", "table", "chair", "sofa", "naïve", "café", 'say "hi"', "tab\there", "日本"]
    records: list[dict[str, Any]] = []
    doc: dict[str, Any] = {"query": "inventory export", "records": records, "complete": True}
    while len(json.dumps(doc, ensure_ascii=False).encode()) < size:
        records.append(
            {
                "id": len(records),
                "name": " ".join(rng.choice(words) for _ in range(4)),
                "price": round(rng.uniform(1, 500), 2),
                "in_stock": rng.random() > 0.3,
                "tags": [rng.choice(words) for _ in range(3)],
                "notes": "".join(rng.choice("abcdefghij klmnop\n") for _ in range(40)),
            }
        )
    return json.dumps(doc, ensure_ascii=False)


def chunks_of(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def incremental(chunks: list[str]) -> Any:
    parser = IncrementalJSONParser()
    for chunk in chunks:
        parser.feed(chunk)
        parser.value()
    return parser.close()


def jiter_reparse(chunks: list[str]) -> Any:
    buf = bytearray()
    value = None
    for chunk in chunks:
        buf += chunk.encode()
        value = jiter.from_json(bytes(buf), partial_mode="trailing-strings")
    return value


def loads_at_end(chunks: list[str]) -> Any:
    return json.loads("".join(chunks))


def best_of(fn: Callable[[list[str]], Any], chunks: list[str], repeat: int) -> tuple[float, Any]:
    best, value = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        value = fn(chunks)
        best = min(best, time.perf_counter() - start)
    return best, value


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=int, default=100_000, help="input size in bytes")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--chunks", default="16,64,256,1024", help="fragment sizes (characters)")
    args = ap.parse_args()
    text = make_input(args.size)
    expected = json.loads(text)
    print(f"python {platform.python_version()}, jiter {jiter.__version__}")
    print(f"input: {len(text.encode())} bytes UTF-8, {len(text)} characters")
    print(f"{'fragment':>8} {'fragments':>9} {'incremental':>12} {'jiter-reparse':>14} {'loads-at-end':>13} {'speed-up':>9}")
    for size in (int(s) for s in args.chunks.split(",")):
        chunks = chunks_of(text, size)
        t_inc, v_inc = best_of(incremental, chunks, args.repeat)
        t_jit, v_jit = best_of(jiter_reparse, chunks, args.repeat)
        t_end, _ = best_of(loads_at_end, chunks, args.repeat)
        assert v_inc == expected and v_jit == expected
        print(
            f"{size:>8} {len(chunks):>9} {t_inc * 1000:>10.1f}ms {t_jit * 1000:>12.1f}ms "
            f"{t_end * 1000:>11.2f}ms {t_jit / t_inc:>8.1f}x"
        )


if __name__ == "__main__":
    main()
