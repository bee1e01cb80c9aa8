"""Benchmark of the legacy (prompt-based XML) parser.

Two questions:

1. What does reading a model's call cost? Parse a realistic completion (reasoning text plus a
   ``<function_calls>`` block) and validate each call against its tool's schema.
2. Is parsing linear whatever the input? Parse adversarial inputs (deep nesting, thousands of
   unclosed tags, ``<`` floods, long values...) at 10 KB, 100 KB and 1 MB, fed whole and in
   16-character chunks (a token stream), and report time per KB at each size: linear growth
   shows as a flat time per KB.

Run:  python bench/speed_legacy_parser.py            (writes nothing; prints Markdown tables)
      python bench/speed_legacy_parser.py --quick    (fewer repeats)
"""

from __future__ import annotations

import argparse
import platform
import re
import sys
import time
from collections.abc import Callable
from typing import Any

from tooluse.codecs.legacy import LegacyParser, parse_completion, render_function_calls
from tooluse.messages import ToolSpec, ToolUseBlock

SIZES = {"10 KB": 10 * 1024, "100 KB": 100 * 1024, "1 MB": 1024 * 1024}
CHUNK = 16

WEATHER = ToolSpec(
    name="get_weather",
    description="Current weather for a place.",
    input_schema={
        "type": "object",
        "properties": {
            "location": {"type": "string"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            "days": {"type": "integer", "minimum": 1, "maximum": 14},
            "fields": {"type": "array", "items": {"type": "string"}},
            "options": {"type": "object", "properties": {"hourly": {"type": "boolean"}}},
        },
        "required": ["location"],
    },
)
TOOLS = [WEATHER]


def _validator() -> tuple[str, Callable[[dict[str, Any]], Any]]:
    """Validation as the runner does it: ``Tool.validate`` when the tools package has it,
    otherwise jsonschema directly."""
    try:
        from tooluse.tools import Tool

        tool = Tool.from_schema(WEATHER.name, WEATHER.description, WEATHER.input_schema)
        return "tooluse.tools.Tool.validate", tool.validate
    except ImportError:  # pragma: no cover - fallback while the tools package is not there
        import jsonschema

        validator = jsonschema.Draft202012Validator(WEATHER.input_schema)
        return "jsonschema Draft202012Validator", validator.validate


def _completion(n_calls: int) -> str:
    calls = [
        ToolUseBlock(
            id=f"t{i}",
            name="get_weather",
            input={"location": f"City {i}, Country", "unit": "celsius", "days": 3,
                   "fields": ["temp", "wind"], "options": {"hourly": True}},
        )
        for i in range(n_calls)
    ]
    thinking = "<thinking>The user asks for the weather; I will call get_weather.</thinking>\n\n"
    return thinking + render_function_calls(calls, close=False)


def _best_of(fn: Callable[[], object], repeats: int) -> float:
    """Best CPU time (``time.process_time``) of ``repeats`` runs.

    CPU time rather than wall time: the benchmark machine is shared, and wall time then
    measures the neighbours more than the parser."""
    times = []
    for _ in range(repeats):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return min(times)


def bench_calls(repeats: int) -> list[str]:
    name, validate = _validator()
    rows = [
        f"Validation: `{name}`.",
        "",
        "| calls in completion | completion size | parse | parse + validate | per call |",
        "|---:|---:|---:|---:|---:|",
    ]
    for n in (1, 5, 50):
        text = _completion(n)

        def parse(text: str = text) -> None:
            parse_completion(text, TOOLS)

        def parse_validate(text: str = text) -> None:
            for call in parse_completion(text, TOOLS).tool_uses:
                validate(call.input)

        parsed = parse_completion(text, TOOLS)
        assert len(parsed.tool_uses) == n and not parsed.problems
        t_parse = _best_of(parse, repeats * 20)
        t_all = _best_of(parse_validate, repeats * 20)
        rows.append(
            f"| {n} | {len(text)} B | {t_parse * 1e6:.0f} µs | {t_all * 1e6:.0f} µs | "
            f"{t_all / n * 1e6:.0f} µs |"
        )
    return rows


def _repeat_to(unit: str, size: int, prefix: str = "", suffix: str = "") -> str:
    body = size - len(prefix) - len(suffix)
    return prefix + (unit * (body // len(unit) + 1))[:body] + suffix


CALL_OPEN = "<function_calls>\n<invoke>\n<tool_name>get_weather</tool_name>\n<parameters>\n"
ADVERSARIAL: dict[str, Callable[[int], str]] = {
    "plain prose": lambda n: _repeat_to("The weather is mild today, a < b & c > d. ", n),
    "many valid calls": lambda n: _completion(max(1, n // 260)),
    "`<` flood": lambda n: "<" * n,
    "`<a` flood (tag never closes)": lambda n: _repeat_to("<a", n),
    "unclosed `<x>` tags outside": lambda n: _repeat_to("<x>", n),
    "nested tags in a value": lambda n: _repeat_to(
        "<x>", n, CALL_OPEN + "<location>", "</location>\n</parameters>\n</invoke>\n"),
    "thousands of unclosed `<invoke>`": lambda n: _repeat_to("<invoke>\n", n, "<function_calls>\n"),
    "repeated `<function_calls>` opens": lambda n: _repeat_to("<function_calls>", n),
    "`<function_call` prefixes": lambda n: _repeat_to("<function_call", n),
    "deep JSON nesting in an array value": lambda n: CALL_OPEN + "<fields>"
    + "[" * ((n - 200) // 2) + "]" * ((n - 200) // 2) + "</fields>\n</parameters>\n</invoke>\n",
    "one long string value": lambda n: _repeat_to(
        "lorem ipsum ", n, CALL_OPEN + "<location>", "</location>\n</parameters>\n</invoke>\n"),
    "long value never closed": lambda n: _repeat_to("lorem ipsum ", n, CALL_OPEN + "<location>"),
    "long attribute-like tag": lambda n: _repeat_to('<parameter name="' + "x" * 900 + " ", n),
}


def _parse_whole(text: str) -> int:
    parser = LegacyParser(TOOLS)
    return len(parser.feed(text) + parser.close())


def _parse_chunked(text: str) -> int:
    parser = LegacyParser(TOOLS)
    count = 0
    for i in range(0, len(text), CHUNK):
        count += len(parser.feed(text[i:i + CHUNK]))
    return count + len(parser.close())


def bench_adversarial(repeats: int) -> list[str]:
    header = "| input | mode | " + " | ".join(f"{s} (µs/KB)" for s in SIZES) + \
        " | 1 MB total | growth 10 KB→1 MB (per-KB ratio) |"
    rows = [header, "|---|---|" + "---:|" * len(SIZES) + "---:|---:|"]
    for label, make in ADVERSARIAL.items():
        texts = {s: make(n) for s, n in SIZES.items()}
        for mode, fn in (("whole", _parse_whole), (f"{CHUNK}-char chunks", _parse_chunked)):
            per_kb = []
            total = 0.0
            for text in texts.values():
                reps = repeats if len(text) > 200_000 else repeats * 3
                t = _best_of(lambda fn=fn, text=text: fn(text), reps)
                per_kb.append(t / (len(text) / 1024) * 1e6)
                total = t
            ratio = per_kb[-1] / per_kb[0]
            rows.append(
                f"| {label} | {mode} | " + " | ".join(f"{v:.1f}" for v in per_kb)
                + f" | {total * 1e3:.0f} ms | {ratio:.2f} |"
            )
    return rows


_NAIVE_INVOKE = re.compile(r"<invoke>(.*?)</invoke>", re.DOTALL)


def _parse_naive(text: str) -> int:
    """The common shortcut this parser avoids: keep a buffer and, on every chunk, run a
    non-greedy regex over all of it. Shown only to make the difference measurable."""
    buffer = ""
    found = 0
    for i in range(0, len(text), CHUNK):
        buffer += text[i:i + CHUNK]
        found = len(_NAIVE_INVOKE.findall(buffer))
    return found


def bench_naive(repeats: int) -> list[str]:
    rows = [
        "| input | parser | 10 KB (µs/KB) | 100 KB (µs/KB) | growth (per-KB ratio) |",
        "|---|---|---:|---:|---:|",
    ]
    for label in ("plain prose", "many valid calls"):
        texts = [ADVERSARIAL[label](n) for n in (SIZES["10 KB"], SIZES["100 KB"])]
        for name, fn in (("LegacyParser", _parse_chunked), ("naive regex re-scan", _parse_naive)):
            per_kb = [_best_of(lambda fn=fn, t=t: fn(t), repeats) / (len(t) / 1024) * 1e6
                      for t in texts]
            rows.append(f"| {label} | {name} | {per_kb[0]:.1f} | {per_kb[1]:.1f} | "
                        f"{per_kb[1] / per_kb[0]:.1f} |")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repeats")
    args = ap.parse_args()
    repeats = 1 if args.quick else 3
    print(f"Python {sys.version.split()[0]} on {platform.platform()}, "
          f"{platform.processor() or platform.machine()}")
    print()
    print("## Parse + validate per call (best CPU time)")
    print()
    print("\n".join(bench_calls(repeats)))
    print()
    print(f"## Adversarial inputs (best CPU time of {repeats}; chunked = fed {CHUNK} characters "
          "at a time)")
    print()
    print("\n".join(bench_adversarial(repeats)))
    print()
    print(f"## For contrast: a naive streaming parser ({CHUNK}-char chunks, regex over the whole "
          "buffer per chunk)")
    print()
    print("\n".join(bench_naive(repeats)))


if __name__ == "__main__":
    main()
