"""Where each call came from reaches the runner's users: the result's calls keep their
``origin`` (and :attr:`RunResult.call_origins` lists them), and the stream's tool-call events
carry it. The scripted backend stands in for a backend that edited or added calls."""

from __future__ import annotations

from typing import Any

import anyio

from tooluse.backends.scripted import ScriptedBackend
from tooluse.messages import CallOrigin, Response, ToolUseBlock, ValueChange
from tooluse.runner import FinalEvent, Runner, ToolCallEvent, ToolCallStartEvent

EDITED = CallOrigin(source="edited", changes=[
    ValueChange(parameter="minutes", before=15, after=10, rule="restate")])
ADDED = CallOrigin(source="added", rule="fan_out")
STEERED = CallOrigin(steered_by=["rank_tools"])


def set_timer(minutes: int) -> str:
    """Start a timer."""
    return f"timer set for {minutes} minutes"


def get_weather(city: str) -> str:
    """Current weather in a city."""
    return f"sunny in {city}"


def three_calls() -> ScriptedBackend:
    return ScriptedBackend([
        Response(content=[
            ToolUseBlock(id="a", name="set_timer", input={"minutes": 5}),
            ToolUseBlock(id="b", name="set_timer", input={"minutes": 10}, origin=EDITED),
            ToolUseBlock(id="c", name="get_weather", input={"city": "Paris"}, origin=ADDED),
        ], stop_reason="tool_use"),
        Response(content=[ToolUseBlock(id="d", name="get_weather", input={"city": "Oslo"},
                                       origin=STEERED)], stop_reason="tool_use"),
        "Done.",
    ])


def runner() -> Runner:
    return Runner(three_calls(), [set_timer, get_weather])


def test_the_result_keeps_each_calls_origin() -> None:
    result = runner().run("Set a 5 minute timer")
    calls = [call for call, _ in result.tool_calls]
    assert [c.origin for c in calls] == [None, EDITED, ADDED, STEERED]
    assert [c.source for c in calls] == ["model", "edited", "added", "model"]
    # added calls run like any other: the origin is there to say so
    assert all(res is not None and not res.is_error for _, res in result.tool_calls)


def test_call_origins_lines_up_with_tool_calls() -> None:
    origins = runner().run("Set a 5 minute timer").call_origins
    assert origins == [CallOrigin(), EDITED, ADDED, STEERED]
    assert [o.describe() for o in origins] == [
        "model", "edited: minutes 15 -> 10 (restate)", "added (fan_out)",
        "model (steered: rank_tools)"]


def test_origins_survive_saving_and_resuming() -> None:
    result = runner().run("Set a 5 minute timer")
    saved = [m.model_dump(mode="json") for m in result.messages]
    resumed = Runner(ScriptedBackend(["Again."]), [set_timer, get_weather]).run(
        "And now?", messages=saved)
    assert resumed.call_origins[:4] == [CallOrigin(), EDITED, ADDED, STEERED]


def _origins(events: list[Any]) -> tuple[list[Any], list[Any]]:
    starts = [e.origin for e in events if isinstance(e, ToolCallStartEvent)]
    calls = [e.call.origin for e in events if isinstance(e, ToolCallEvent)]
    return starts, calls


def test_stream_events_carry_the_origin() -> None:
    events = list(runner().stream("Set a 5 minute timer"))
    expected = [None, EDITED, ADDED, STEERED]
    assert _origins(events) == (expected, expected)
    final = events[-1]
    assert isinstance(final, FinalEvent)
    assert final.result.call_origins == [CallOrigin(), EDITED, ADDED, STEERED]


def test_astream_events_carry_the_origin() -> None:
    async def collect() -> list[Any]:
        return [e async for e in runner().astream("Set a 5 minute timer")]

    expected = [None, EDITED, ADDED, STEERED]
    assert _origins(anyio.run(collect)) == (expected, expected)
