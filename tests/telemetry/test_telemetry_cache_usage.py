"""Prompt-cache counts in the spans: ``gen_ai.usage.input_tokens`` is the whole prompt (the
conventions count cache reads and writes in it), the reads and writes have their own
attributes, on each ``chat`` span and summed on the run's ``invoke_agent`` span."""

from __future__ import annotations

import pytest

pytest.importorskip("opentelemetry.sdk", reason="needs the [otel] extra: pip install 'tooluse[otel]'")
from otel_spans import Spans

from tooluse import Runner
from tooluse.backends.scripted import ScriptedBackend
from tooluse.messages import Response, TextBlock, ToolUseBlock, Usage


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def test_cache_counts_are_span_attributes(spans: Spans) -> None:
    script = [
        Response(model="m", stop_reason="tool_use",
                 content=[ToolUseBlock(id="c1", name="add", input={"a": 1, "b": 2})],
                 usage=Usage(input_tokens=10, output_tokens=4, cache_creation_input_tokens=900)),
        Response(model="m", stop_reason="end_turn", content=[TextBlock(text="3")],
                 usage=Usage(input_tokens=20, output_tokens=1, cache_read_input_tokens=900)),
    ]
    Runner(ScriptedBackend(script), [add], model="m").run("1+2?")
    first, second = sorted(spans.named("chat m"), key=lambda s: s.start_time or 0)
    assert dict(first.attributes or {})["gen_ai.usage.input_tokens"] == 910
    assert dict(first.attributes or {})["gen_ai.usage.cache_creation.input_tokens"] == 900
    assert "gen_ai.usage.cache_read.input_tokens" not in dict(first.attributes or {})
    assert dict(second.attributes or {})["gen_ai.usage.cache_read.input_tokens"] == 900
    run = dict(spans.one("invoke_agent").attributes or {})
    assert (run["gen_ai.usage.input_tokens"], run["gen_ai.usage.output_tokens"]) == (1830, 5)
    assert run["gen_ai.usage.cache_read.input_tokens"] == 900
    assert run["gen_ai.usage.cache_creation.input_tokens"] == 900
