"""The runner's OpenTelemetry spans, caught in memory: a run is an
``invoke_agent`` span whose children are a ``chat {model}`` span per model turn and an
``execute_tool {tool}`` span per call the runner executes, in all four ways to run."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk", reason="needs the [otel] extra: pip install 'tooluse[otel]'")
from opentelemetry import trace
from opentelemetry.trace import SpanKind, StatusCode
from otel_spans import Spans

from tooluse import Runner
from tooluse.backends.scripted import ScriptedBackend
from tooluse.messages import CallOrigin, Response, TextBlock, ToolUseBlock, Usage, ValueChange

EDITED = CallOrigin(source="edited", changes=[ValueChange(
    parameter="city", before="paris", after="Paris", rule="capitalize")])


def get_weather(city: str) -> str:
    """Current weather in a city."""
    inner = trace.get_current_span()  # the tool runs inside its execute_tool span
    return f"18C in {city}" + (" (traced)" if inner.get_span_context().is_valid else "")


def explode(x: int) -> str:
    """Always fails."""
    raise ValueError("no luck")


def slow(x: int) -> str:
    """Takes too long."""
    time.sleep(0.5)
    return "late"


def _script() -> list[Response]:
    return [
        Response(model="scripted-1", stop_reason="tool_use",
                 usage=Usage(input_tokens=10, output_tokens=4),
                 content=[ToolUseBlock(id="c1", name="get_weather", input={"city": "Paris"},
                                       origin=EDITED),
                          ToolUseBlock(id="c2", name="explode", input={"x": 1})]),
        Response(model="scripted-1", stop_reason="end_turn",
                 usage=Usage(input_tokens=20, output_tokens=3),
                 content=[TextBlock(text="It is 18C.")]),
    ]


def _run(mode: str, runner: Runner) -> Any:
    if mode == "run":
        return runner.run("Weather in Paris?")
    if mode == "arun":
        return asyncio.run(runner.arun("Weather in Paris?"))
    if mode == "stream":
        return list(runner.stream("Weather in Paris?"))[-1].result

    async def consume() -> Any:
        events = [e async for e in runner.astream("Weather in Paris?")]
        return events[-1].result

    return asyncio.run(consume())


@pytest.mark.parametrize("mode", ["run", "arun", "stream", "astream"])
def test_a_run_is_an_agent_span_over_its_chat_and_tool_spans(spans: Spans, mode: str) -> None:
    result = _run(mode, Runner(ScriptedBackend(_script()), [get_weather, explode],
                               model="scripted-1", temperature=0.5))
    agent = spans.one("invoke_agent")
    assert agent.parent is None and agent.kind is SpanKind.INTERNAL
    attrs = dict(agent.attributes or {})
    assert attrs["gen_ai.operation.name"] == "invoke_agent"
    assert attrs["gen_ai.provider.name"] == "tooluse.scripted"
    assert attrs["gen_ai.request.model"] == "scripted-1"
    assert (attrs["gen_ai.usage.input_tokens"], attrs["gen_ai.usage.output_tokens"]) == (30, 7)
    assert attrs["tooluse.run.iterations"] == result.iterations == 2
    assert attrs["gen_ai.response.finish_reasons"] == ("stop",)
    children = spans.children(agent)
    assert [c.name for c in sorted(children, key=lambda s: s.start_time or 0)] == [
        "chat scripted-1", "execute_tool get_weather", "execute_tool explode", "chat scripted-1"]
    assert {c.context.trace_id for c in children if c.context} == {agent.context.trace_id}  # type: ignore[union-attr]
    first_chat = min(spans.named("chat scripted-1"), key=lambda s: s.start_time or 0)
    chat = dict(first_chat.attributes or {})
    assert chat["gen_ai.request.temperature"] == 0.5
    assert chat["gen_ai.response.finish_reasons"] == ("tool_call",)
    assert chat["gen_ai.usage.input_tokens"] == 10
    assert chat.get("gen_ai.request.stream") is (True if "stream" in mode else None)
    weather = dict(spans.one("execute_tool get_weather").attributes or {})
    assert weather == {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.type": "function",
                       "gen_ai.tool.name": "get_weather", "gen_ai.tool.call.id": "c1",
                       "gen_ai.tool.description": "Current weather in a city.",
                       "tooluse.call.origin": "edited",
                       "tooluse.call.origin_detail": "edited: city \"paris\" -> \"Paris\" "
                                                     "(capitalize)"}
    assert spans.one("execute_tool get_weather").status.status_code is StatusCode.UNSET
    # the tool saw its span as the current one
    assert "(traced)" in result.messages[2].content[0].content[0].text
    failed = spans.one("execute_tool explode")
    assert failed.attributes is not None and failed.attributes["error.type"] == "ValueError"
    assert failed.status.status_code is StatusCode.ERROR
    assert "no luck" in (failed.status.description or "")


@pytest.mark.parametrize("mode", ["run", "arun"])
def test_a_timed_out_call_ends_its_span_as_a_timeout(spans: Spans, mode: str) -> None:
    script = [Response(stop_reason="tool_use", content=[
                  ToolUseBlock(id="s1", name="slow", input={"x": 1}),
                  ToolUseBlock(id="s2", name="get_weather", input={"city": "Rome"})]),
              Response(stop_reason="end_turn", content=[TextBlock(text="ok")])]
    _run(mode, Runner(ScriptedBackend(script), [slow, get_weather], tool_timeout=0.1))
    late = spans.one("execute_tool slow")
    assert late.attributes is not None and late.attributes["error.type"] == "timeout"
    assert late.end_time is not None and late.start_time is not None
    assert (late.end_time - late.start_time) / 1e9 < 0.45  # ended at the timeout, not after
    assert "error.type" not in (spans.one("execute_tool get_weather").attributes or {})


def test_a_failed_run_ends_its_spans_as_failed(spans: Spans) -> None:
    from tooluse.errors import BackendError

    runner = Runner(ScriptedBackend([BackendError("down", kind="unavailable")]), [get_weather])
    with pytest.raises(BackendError):
        runner.run("hi")
    agent, chat = spans.one("invoke_agent"), spans.one("chat scripted")
    for span in (agent, chat):
        assert span.attributes is not None and span.attributes["error.type"] == "unavailable"
        assert span.status.status_code is StatusCode.ERROR


def test_a_stream_left_early_ends_its_spans(spans: Spans) -> None:
    stream = Runner(ScriptedBackend(_script()), [get_weather, explode]).stream("hi")
    next(stream)
    stream.close()
    agent = spans.one("invoke_agent")
    assert agent.attributes is not None and agent.attributes["error.type"] == "cancelled"
    assert spans.one("chat scripted").attributes["error.type"] == "cancelled"  # type: ignore[index]


def test_tool_arguments_and_results_only_when_opted_in(
        spans: Spans, monkeypatch: pytest.MonkeyPatch) -> None:
    Runner(ScriptedBackend(_script()), [get_weather, explode]).run("hi")
    assert "gen_ai.tool.call.arguments" not in (spans.one("execute_tool get_weather").attributes
                                                or {})
    spans.exporter.clear()
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "SPAN_ONLY")
    Runner(ScriptedBackend(_script()), [get_weather, explode]).run("hi")
    attrs = dict(spans.one("execute_tool get_weather").attributes or {})
    assert json.loads(attrs["gen_ai.tool.call.arguments"]) == {"city": "Paris"}
    assert json.loads(attrs["gen_ai.tool.call.result"]).startswith("18C in Paris")
    # a failed call's error is its status, not a result
    assert "gen_ai.tool.call.result" not in (spans.one("execute_tool explode").attributes or {})
    agent = dict(spans.one("invoke_agent").attributes or {})
    assert [t["name"] for t in json.loads(agent["gen_ai.tool.definitions"])] == [
        "get_weather", "explode"]
