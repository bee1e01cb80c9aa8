"""The runner's four drivers over one core: :meth:`Runner.run` and ``await``
:meth:`Runner.arun` return the same result, :meth:`Runner.stream` and
:meth:`Runner.astream` yield the same events (and end with that result), and where a run
fails, all four fail with the same error, on the same scripted conversations.

Every scenario builds fresh tools and a fresh scripted backend for each driver, so what a
driver sees (the calls it runs, the requests it sends, the approvals it asks) is compared
too, not only what it returns."""

from __future__ import annotations

import asyncio
import copy
import dataclasses
from collections.abc import Callable
from typing import Any

import pytest

from tooluse.backends.scripted import ScriptedBackend
from tooluse.errors import BackendError
from tooluse.messages import (
    Response,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    Usage,
)
from tooluse.runner import Runner, RunResult, ToolError
from tooluse.runner.events import FinalEvent, MessageEvent, ToolResultEvent
from tooluse.tools import Tool


def calls(*items: tuple[str, str, dict[str, Any]], text: str | None = None,
          stop: str = "tool_use") -> Response:
    content: list[Any] = [TextBlock(text=text)] if text else []
    content += [ToolUseBlock(id=i, name=n, input=a) for i, n, a in items]
    return Response(content=content, stop_reason=stop,  # type: ignore[arg-type]
                    usage=Usage(input_tokens=5, output_tokens=3))


def answer(text: str) -> Response:
    return Response(content=[TextBlock(text=text)], stop_reason="end_turn",
                    usage=Usage(input_tokens=7, output_tokens=2))


class World:
    """One driver's tools, with a log of what ran and what was asked."""

    def __init__(self) -> None:
        self.log: list[str] = []

    def tools(self) -> list[Any]:
        log = self.log

        def get_weather(city: str, unit: str = "celsius") -> dict[str, Any]:
            """Current weather in a city.

            Args:
                city: The city.
                unit: celsius or fahrenheit.
            """
            log.append(f"weather {city}")
            return {"city": city, "temperature": 21, "unit": unit}

        async def get_time(zone: str) -> str:
            """The time in a time zone.

            Args:
                zone: An IANA zone.
            """
            await asyncio.sleep(0)
            log.append(f"time {zone}")
            return "14:00"

        def add(a: int, b: int) -> int:
            """Add two integers.

            Args:
                a: first
                b: second
            """
            log.append(f"add {a} {b}")
            return a + b

        def refuse(reason: str) -> str:
            """Always fails.

            Args:
                reason: why
            """
            log.append("refuse")
            raise ToolError(f"refused: {reason}")

        def crash(x: int) -> int:
            """Raises an unexpected error.

            Args:
                x: anything
            """
            log.append("crash")
            raise KeyError(x)

        def transfer(amount: int, to: str) -> str:
            """Send money.

            Args:
                amount: euros
                to: who
            """
            log.append(f"transfer {amount} {to}")
            return "sent"

        money = Tool.from_function(transfer, requires_approval=True)
        return [get_weather, get_time, add, refuse, crash, money]

    def approve_sync(self, call: ToolUseBlock, tool: Any) -> bool:
        self.log.append(f"asked {call.input['amount']}")
        return bool(call.input["amount"] < 100)

    async def approve_async(self, call: ToolUseBlock, tool: Any) -> bool:
        await asyncio.sleep(0)
        return self.approve_sync(call, tool)


#: name -> (script, runner options, prompt). A script item is a Response, a text, or an
#: exception to raise; "approve" in the options is "sync", "async" or None.
SCENARIOS: dict[str, tuple[list[Any], dict[str, Any]]] = {
    "two calls in one turn, a sync and an async tool": (
        [calls(("c1", "get_weather", {"city": "Paris"}), ("c2", "get_time", {"zone": "UTC"}),
               text="Let me look."), answer("21°C at 14:00.")], {}),
    "the same, one call after the other": (
        [calls(("c1", "get_weather", {"city": "Paris"}), ("c2", "get_time", {"zone": "UTC"})),
         answer("Done.")], {"parallel": False}),
    "a chain of turns with thinking": (
        [Response(content=[ThinkingBlock(text="First the sum.", signature="sig"),
                           ToolUseBlock(id="c1", name="add", input={"a": 2, "b": 3})],
                  stop_reason="tool_use"),
         calls(("c2", "add", {"a": 5, "b": 10})), answer("15")],
        {"reasoning": {"effort": "low"}}),
    "a tool's own error and an unexpected one": (
        [calls(("c1", "refuse", {"reason": "no"}), ("c2", "crash", {"x": 1})),
         answer("Both failed.")], {}),
    "invalid input, then corrected": (
        [calls(("c1", "add", {"a": "one"})), calls(("c2", "add", {"a": 1, "b": 2})),
         answer("3")], {}),
    "an unknown tool": (
        [calls(("c1", "get_wether", {"city": "Rome"})), answer("Sorry.")], {}),
    "validation retries run out": (
        [calls((f"c{i}", "add", {"a": 1})) for i in range(4)], {"max_validation_retries": 2}),
    "too many turns": (
        [calls((f"c{i}", "add", {"a": i, "b": 1})) for i in range(5)], {"max_iterations": 3}),
    "a tool call cut by max_tokens is asked again": (
        [calls(("c1", "get_weather", {"city": "Ro"}), stop="max_tokens"),
         calls(("c2", "get_weather", {"city": "Rome"})), answer("Sunny.")], {}),
    "cut again after the retry": (
        [calls(("c1", "get_weather", {"city": "Ro"}), stop="max_tokens"),
         calls(("c2", "get_weather", {"city": "Ro"}), stop="max_tokens")], {}),
    "approval asked of a sync callback": (
        [calls(("c1", "transfer", {"amount": 50, "to": "Ann"}),
               ("c2", "transfer", {"amount": 500, "to": "Bob"})), answer("Ann paid.")],
        {"approve": "sync"}),
    "approval asked of an async callback": (
        [calls(("c1", "transfer", {"amount": 50, "to": "Ann"}),
               ("c2", "transfer", {"amount": 500, "to": "Bob"})), answer("Ann paid.")],
        {"approve": "async"}),
    "no callback: denied unasked": (
        [calls(("c1", "transfer", {"amount": 5, "to": "Ann"})), answer("Not paid.")], {}),
    "a plan of tool choices": (
        [calls(("c1", "add", {"a": 1, "b": 1})), calls(("c2", "get_time", {"zone": "UTC"})),
         answer("2 at 14:00")], {"tool_choice": ["add", "get_time", "none"]}),
    "the backend fails on the second turn": (
        [calls(("c1", "add", {"a": 1, "b": 1})),
         BackendError("upstream overloaded", kind="overloaded", status=529)], {}),
    "the script runs out": ([calls(("c1", "add", {"a": 1, "b": 1}))], {}),
    "the answer ends on a stop sequence": (
        [calls(("c1", "add", {"a": 2, "b": 2})),
         Response(content=[TextBlock(text="4, then ")], stop_reason="stop_sequence",
                  stop_sequence="###", usage=Usage(input_tokens=7, output_tokens=2))],
        {"stop_sequences": ["###"]}),
}


def _runner(name: str, world: World) -> tuple[Runner, ScriptedBackend]:
    script, options = SCENARIOS[name]
    options = dict(options)
    approve = options.pop("approve", None)
    backend = ScriptedBackend(copy.deepcopy(script), chunk_size=4)
    runner = Runner(backend, world.tools(), max_tokens=64,
                    approve={"sync": world.approve_sync, "async": world.approve_async,
                             None: None}[approve], **options)
    return runner, backend


def _outcome(call: Callable[[], Any]) -> tuple[str, Any]:
    try:
        return "result", call()
    except Exception as exc:  # noqa: BLE001 - the error is what is compared
        return "error", (type(exc), str(exc), getattr(exc, "messages", None))


def _ran(name: str, log: list[str]) -> list[str]:
    """What ran: in order where one turn's calls run one after the other, as a sorted list
    where they run concurrently (their order is the threads')."""
    return log if SCENARIOS[name][1].get("parallel", True) is False else sorted(log)


def _result_view(result: RunResult) -> dict[str, Any]:
    return {"messages": [m.model_dump() for m in result.messages],
            "response": result.response.model_dump(), "iterations": result.iterations,
            "usage": result.usage.model_dump(), "output": result.output}


def _whole(name: str, driver: str) -> tuple[Any, list[str], list[Any]]:
    world = World()
    runner, backend = _runner(name, world)
    if driver == "run":
        kind, value = _outcome(lambda: runner.run("Go."))
    else:
        kind, value = _outcome(lambda: asyncio.run(runner.arun("Go.")))
    shown = _result_view(value) if kind == "result" else value
    return (kind, shown), _ran(name, world.log), [r.model_dump() for r in backend.requests]


def _streamed(name: str, driver: str) -> tuple[Any, list[str], list[Any]]:
    world = World()
    runner, backend = _runner(name, world)
    events: list[Any] = []

    def view(event: Any) -> Any:
        if isinstance(event, FinalEvent):
            return ("final", _result_view(event.result))
        # a deep copy now: ToolInputDeltaEvent.input is the parser's live object
        return (type(event).__name__, copy.deepcopy(dataclasses.asdict(event)))

    def sync() -> None:
        for event in runner.stream("Go."):
            events.append(view(event))

    async def collect() -> None:
        async for event in runner.astream("Go."):
            events.append(view(event))

    kind, value = _outcome(sync if driver == "stream" else lambda: asyncio.run(collect()))
    return (kind, value, events), _ran(name, world.log), [r.model_dump() for r in backend.requests]


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_run_and_arun_give_the_same_result(name: str) -> None:
    assert _whole(name, "run") == _whole(name, "arun")


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_stream_and_astream_give_the_same_events(name: str) -> None:
    sync, asynchronous = _streamed(name, "stream"), _streamed(name, "astream")
    assert sync == asynchronous
    (kind, _, events), _, _ = sync
    assert events, "a run yields at least one event"
    if kind == "result":
        assert events[-1][0] == "final"


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_a_streamed_run_ends_as_a_whole_one(name: str) -> None:
    """The stream's final result (or its error) is the one :meth:`Runner.run` gives, and
    both ran the same tools and sent the same requests."""
    (kind, value), log, requests = _whole(name, "run")
    (skind, svalue, events), slog, srequests = _streamed(name, "stream")
    assert (skind, log, requests) == (kind, slog, srequests)
    if kind == "result":
        assert events[-1] == ("final", value)
    else:
        assert svalue == value


def _stopped(name: str, driver: str, after: type) -> tuple[Any, list[str], list[Any]]:
    """The stream read until its first ``after`` event, then left (the consumer stops it:
    ``break``, then the generator closed as a ``for`` / ``async for`` leaves it)."""
    world = World()
    runner, backend = _runner(name, world)
    events: list[Any] = []

    def sync() -> None:
        stream = runner.stream("Go.")
        for event in stream:
            events.append(type(event).__name__)
            if isinstance(event, after):
                break
        stream.close()

    async def collect() -> None:
        stream = runner.astream("Go.")
        async for event in stream:
            events.append(type(event).__name__)
            if isinstance(event, after):
                break
        await stream.aclose()  # type: ignore[attr-defined]

    kind, value = _outcome(sync if driver == "stream" else lambda: asyncio.run(collect()))
    return (kind, value, events), _ran(name, world.log), [r.model_dump() for r in backend.requests]


@pytest.mark.parametrize(("name", "after"), [
    ("two calls in one turn, a sync and an async tool", MessageEvent),
    ("a chain of turns with thinking", ToolResultEvent),
    ("a tool's own error and an unexpected one", ToolResultEvent),
])
def test_a_stream_stopped_by_its_consumer_stops_alike(name: str, after: type) -> None:
    """Stopped after the model's first turn, neither driver runs a tool; stopped after the
    first tool result, both ran that turn's tools and asked the model nothing more."""
    sync, asynchronous = _stopped(name, "stream", after), _stopped(name, "astream", after)
    assert sync == asynchronous
    (kind, _, events), log, requests = sync
    assert kind == "result" and events[-1] == after.__name__
    assert "FinalEvent" not in events
    assert len(requests) == 1
    if after is MessageEvent:
        assert log == []
    else:
        assert log


def test_the_scenarios_reach_every_ending() -> None:
    """The set is not all happy paths: it holds answers, each kind of error, retries and
    approvals (so a driver that drifted on any of them fails above)."""
    endings = {name: _whole(name, "run")[0][0] for name in SCENARIOS}
    errors = {name: _whole(name, "run")[0][1][0].__name__ for name, kind in endings.items()
              if kind == "error"}
    assert set(errors.values()) >= {"ToolRetriesExhausted", "MaxIterationsExceeded",
                                    "IncompleteToolCall", "BackendError", "ScriptExhausted"}
    assert sum(kind == "result" for kind in endings.values()) >= 8
    _, log, _ = _whole("approval asked of a sync callback", "run")
    assert log == ["asked 50", "asked 500", "transfer 50 Ann"]
    _, log, _ = _whole("the same, one call after the other", "run")
    assert log == ["weather Paris", "time UTC"]
