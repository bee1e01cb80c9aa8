"""Parsing time grows linearly with the input, whatever the input (SPEC §2 safety).

CPU time per KB at 32 KB and at 512 KB must stay within a small factor: a quadratic parser
would be ~16x slower per KB at the larger size. CPU time (not wall time) because the test
machine is shared."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from tooluse.codecs.legacy import LegacyParser
from tooluse.messages import ToolSpec

TOOL = ToolSpec(name="t", input_schema={"type": "object", "properties": {
    "s": {"type": "string"}, "a": {"type": "array"}}})
OPEN = "<function_calls>\n<invoke>\n<tool_name>t</tool_name>\n<parameters>\n"


def _fill(unit: str, size: int, prefix: str = "") -> str:
    return prefix + unit * ((size - len(prefix)) // len(unit) + 1)


INPUTS: dict[str, Callable[[int], str]] = {
    "prose": lambda n: _fill("Weather is mild, a < b & c > d. ", n),
    "lt flood": lambda n: "<" * n,
    "unclosed tag flood": lambda n: _fill("<a", n),
    "tags outside": lambda n: _fill("<x>", n),
    "tags in a value": lambda n: _fill("<x>", n, OPEN + "<s>"),
    "unclosed invokes": lambda n: _fill("<invoke>\n", n, "<function_calls>\n"),
    "valid calls": lambda n: _fill(
        "<invoke>\n<tool_name>t</tool_name>\n<parameters>\n<s>v</s>\n</parameters>\n</invoke>\n",
        n, "<function_calls>\n"),
    "deep json": lambda n: OPEN + "<a>" + "[" * (n // 2) + "</a>",
    "one endless tag": lambda n: "<" + "a" * n,
    "endless tag in a value": lambda n: OPEN + "<s><" + "a" * n,
}


def _cpu(fn: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return max(best, 1e-4)


def _parse(text: str, chunk: int) -> None:
    parser = LegacyParser([TOOL])
    if chunk:
        for i in range(0, len(text), chunk):
            parser.feed(text[i:i + chunk])
    else:
        parser.feed(text)
    parser.close()


@pytest.mark.parametrize("chunk", [0, 7], ids=["whole", "chunked"])
@pytest.mark.parametrize("kind", list(INPUTS))
def test_time_per_kb_does_not_grow(kind: str, chunk: int) -> None:
    small, large = INPUTS[kind](32 * 1024), INPUTS[kind](512 * 1024)
    per_kb_small = _cpu(lambda: _parse(small, chunk)) / len(small)
    per_kb_large = _cpu(lambda: _parse(large, chunk)) / len(large)
    # Timer resolution makes tiny totals noisy; linear code gives ~1x, quadratic ~16x.
    assert per_kb_large < 4 * per_kb_small + 2e-8, (per_kb_small, per_kb_large)
