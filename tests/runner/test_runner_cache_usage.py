"""A run's usage adds up every turn's cache counts, as it adds the input and output."""

from __future__ import annotations

from tooluse.backends.scripted import ScriptedBackend
from tooluse.messages import Response, TextBlock, ToolUseBlock, Usage
from tooluse.runner import Runner


def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: first
        b: second
    """
    return a + b


def test_a_runs_usage_sums_the_cache_counts_of_its_turns() -> None:
    first = Response(content=[ToolUseBlock(id="t1", name="add", input={"a": 1, "b": 2})],
                     stop_reason="tool_use",
                     usage=Usage(input_tokens=3, output_tokens=2, cache_creation_input_tokens=900,
                                 cache_creation_by_ttl={"1h": 900}))
    second = Response(content=[TextBlock(text="3")], stop_reason="end_turn",
                      usage=Usage(input_tokens=5, output_tokens=1, cache_read_input_tokens=900,
                                  cache_creation_input_tokens=40, cache_creation_by_ttl={"5m": 40}))
    result = Runner(ScriptedBackend([first, second]), [add]).run("1+2?")
    assert result.usage == Usage(input_tokens=8, output_tokens=3, cache_read_input_tokens=900,
                                 cache_creation_input_tokens=940,
                                 cache_creation_by_ttl={"1h": 900, "5m": 40})
