"""Runner(trace=...): one trace per run, a turn per model call (the text model's prompt and
raw output in it, whichever driver runs), stored when the run answers or fails."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from trace_fakes import city_backend

from tooluse import Response, ToolUseBlock
from tooluse.backends.scripted import ScriptedBackend
from tooluse.errors import BackendError
from tooluse.runner import Runner
from tooluse.runner.events import FinalEvent
from tooluse.trace import current_trace
from tooluse.trace.store import TraceStore


def get_weather(city: str, days: int = 1) -> str:
    """Current weather in a city."""
    return f"sunny in {city}"


def _script() -> ScriptedBackend:
    return ScriptedBackend([
        Response(content=[ToolUseBlock(id="t1", name="get_weather", input={"city": "Paris"})],
                 stop_reason="tool_use"),
        "Sunny in Paris.",
    ])


def _only(store: TraceStore) -> dict[str, Any]:
    [item] = store.list()
    trace = store.get(item["id"])
    assert trace is not None
    return trace


def test_a_run_is_one_trace_with_a_turn_per_model_call() -> None:
    store = TraceStore()
    result = Runner(_script(), [get_weather], trace=store).run("Weather in Paris?")
    assert result.text == "Sunny in Paris."
    trace = _only(store)
    assert trace["source"] == "runner" and trace["summary"]["status"] == "ok"
    first, second = trace["turns"]
    assert first["calls"][0]["input"] == {"city": "Paris"} and first["calls"][0]["valid"]
    # The second call carries the tool's result back.
    results = [b for m in second["request"]["messages"] for b in m["content"]
               if b["type"] == "tool_result"]
    assert results[0]["content"][0]["text"] == "sunny in Paris"
    assert second["response"]["content"][0]["text"] == "Sunny in Paris."
    assert set(trace["phases"]) >= {"tools", "model", "tools and loop"}
    assert current_trace() is None  # nothing left current after the run


@pytest.mark.parametrize("driver", ["run", "arun", "stream", "astream"])
def test_every_driver_lets_the_text_model_write_into_its_turn(driver: str) -> None:
    store = TraceStore()
    runner = Runner(city_backend(), [get_weather], tool_choice=["any", "none"], trace=store,
                    max_iterations=2)
    question = "Weather in Lima?"

    async def collect_async() -> None:
        async for event in runner.astream(question):
            if isinstance(event, FinalEvent):
                return

    if driver == "run":
        runner.run(question)
    elif driver == "arun":
        asyncio.run(runner.arun(question))
    elif driver == "stream":
        for _ in runner.stream(question):
            pass
    else:
        asyncio.run(collect_async())
    trace = _only(store)
    first = trace["turns"][0]
    assert first["prompt"][-1]["content"] == question
    assert "<city>Lima</city>" in first["raw"]
    assert first["calls"][0]["input"] == {"city": "Lima"}
    assert first["calls"][0]["span"] is not None
    assert current_trace() is None


def test_a_failing_backend_ends_the_trace_with_its_error() -> None:
    def fail(request: Any) -> Response:
        raise BackendError("the model is down", kind="api")

    store = TraceStore()
    with pytest.raises(BackendError):
        Runner(ScriptedBackend(fail), [get_weather], trace=store).run("Weather?")
    trace = _only(store)
    assert trace["summary"]["status"] == "error"
    assert "the model is down" in trace["error"]
    assert "the model is down" in trace["turns"][0]["error"]
    assert current_trace() is None


def test_no_trace_by_default() -> None:
    runner = Runner(_script(), [get_weather])
    assert runner.trace_store is None
    assert runner.run("Weather in Paris?").text == "Sunny in Paris."
