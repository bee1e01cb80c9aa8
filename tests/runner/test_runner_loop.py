"""The tool loop over the scripted backend: every path a run can take."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import anyio
import pytest
from pydantic import BaseModel

from tooluse.backends.scripted import ScriptedBackend
from tooluse.messages import (
    ImageBlock,
    JsonBlock,
    Message,
    Response,
    TextBlock,
    ToolChoice,
    ToolUseBlock,
    Usage,
)
from tooluse.runner import (
    IncompleteToolCall,
    MaxIterationsExceeded,
    Runner,
    ToolError,
    ToolRetriesExhausted,
)


def calls(*items: tuple[str, str, dict[str, Any]], text: str | None = None) -> Response:
    content: list[Any] = [TextBlock(text=text)] if text else []
    content += [ToolUseBlock(id=i, name=n, input=a) for i, n, a in items]
    return Response(content=content, stop_reason="tool_use", usage=Usage(input_tokens=3, output_tokens=2))


def get_weather(city: str, unit: str = "celsius") -> dict[str, Any]:
    """Current weather in a city.

    Args:
        city: The city name, e.g. "Paris".
        unit: "celsius" or "fahrenheit".
    """
    return {"city": city, "temperature": 21, "unit": unit}


def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: first
        b: second
    """
    return a + b


def last_results(backend: ScriptedBackend, request: int = -1) -> list[Any]:
    return backend.requests[request].messages[-1].tool_results


def test_success_runs_tool_and_returns_answer() -> None:
    backend = ScriptedBackend([calls(("t1", "get_weather", {"city": "Paris"})), "It is 21°C."])
    result = Runner(backend, [get_weather], system="Be brief.", model="m").run("Weather in Paris?")
    assert result.text == "It is 21°C."
    assert result.iterations == 2
    assert result.stop_reason == "end_turn"
    (res,) = last_results(backend)
    assert res.tool_use_id == "t1" and not res.is_error
    assert res.content == [JsonBlock(value={"city": "Paris", "temperature": 21, "unit": "celsius"})]
    first = backend.requests[0]
    assert first.system_text() == "Be brief." and first.model == "m"
    assert [t.name for t in first.tools] == ["get_weather"]
    assert first.max_tokens == 1024
    assert [m.role for m in result.messages] == ["user", "assistant", "user", "assistant"]
    assert result.usage.input_tokens == 3


def test_parallel_calls_keep_order_and_run_concurrently() -> None:
    def slow(name: str, seconds: float) -> str:
        """Sleep, then echo.

        Args:
            name: echoed
            seconds: how long
        """
        time.sleep(seconds)
        return name

    turn = calls(("a", "slow", {"name": "first", "seconds": 1.0}), ("b", "slow", {"name": "second", "seconds": 0.5}))
    backend = ScriptedBackend([turn, "done"])
    start = time.monotonic()
    Runner(backend, [slow]).run("go")
    elapsed = time.monotonic() - start
    results = last_results(backend)
    assert [r.tool_use_id for r in results] == ["a", "b"]
    assert [r.text() for r in results] == ["first", "second"]
    assert 1.0 <= elapsed < 1.35, elapsed  # ~max (1.0 s), not the sum (1.5 s)

    backend = ScriptedBackend([turn, "done"])
    start = time.monotonic()
    Runner(backend, [slow], parallel=False).run("go")
    assert time.monotonic() - start >= 1.5
    assert [r.text() for r in last_results(backend)] == ["first", "second"]


def test_async_run_gathers_async_and_sync_tools() -> None:
    async def aslow(seconds: float) -> str:
        """Async sleep.

        Args:
            seconds: how long
        """
        await asyncio.sleep(seconds)
        return f"async {seconds}"

    def sslow(seconds: float) -> str:
        """Sync sleep.

        Args:
            seconds: how long
        """
        time.sleep(seconds)
        return f"sync {seconds}"

    turn = calls(("a", "aslow", {"seconds": 0.5}), ("b", "sslow", {"seconds": 0.5}), ("c", "aslow", {"seconds": 0.1}))
    backend = ScriptedBackend([turn, "done"])
    start = time.monotonic()
    result = anyio.run(Runner(backend, [aslow, sslow]).arun, "go")
    assert time.monotonic() - start < 0.9
    assert result.text == "done"
    assert [r.text() for r in last_results(backend)] == ["async 0.5", "sync 0.5", "async 0.1"]


def test_sync_run_calls_async_tools() -> None:
    async def hello(name: str) -> str:
        """Greet.

        Args:
            name: who
        """
        await asyncio.sleep(0)
        return f"hello {name}"

    backend = ScriptedBackend([calls(("a", "hello", {"name": "x"})), "ok"])
    Runner(backend, [hello]).run("go")
    assert last_results(backend)[0].text() == "hello x"


def test_validation_error_then_corrected_retry() -> None:
    backend = ScriptedBackend(
        [
            calls(("t1", "add", {"a": "one", "c": 2})),
            calls(("t2", "add", {"a": 1, "b": 2})),
            "3",
        ]
    )
    result = Runner(backend, [add]).run("1+2?")
    bad = last_results(backend, 1)[0]
    assert bad.is_error
    text = bad.text()
    assert "Invalid input for tool 'add'" in text
    # every problem is named: the wrong type of 'a' and the missing 'b'
    assert "'a'" in text and "'b'" in text
    good = last_results(backend, 2)[0]
    assert not good.is_error and good.text() == "3"
    assert result.text == "3"


def test_unknown_tool_lists_available_tools() -> None:
    backend = ScriptedBackend([calls(("t1", "get_wether", {"city": "X"})), "sorry"])
    Runner(backend, [get_weather, add]).run("?")
    res = last_results(backend)[0]
    assert res.is_error
    assert res.text() == "Unknown tool 'get_wether'. Available tools: get_weather, add."


def test_exception_becomes_type_and_message_only() -> None:
    def broken(x: int) -> str:
        """Always fails.

        Args:
            x: ignored
        """
        raise ValueError(f"bad value {x}")

    def polite(x: int) -> str:
        """Fails politely.

        Args:
            x: ignored
        """
        raise ToolError("no data for that day")

    backend = ScriptedBackend([calls(("t1", "broken", {"x": 3}), ("t2", "polite", {"x": 1})), "ok"])
    Runner(backend, [broken, polite]).run("?")
    r1, r2 = last_results(backend)
    assert r1.is_error and r1.text() == "ValueError: bad value 3"
    assert "Traceback" not in r1.text()
    assert r2.is_error and r2.text() == "no data for that day"


def test_retry_budget_exhausted() -> None:
    backend = ScriptedBackend([calls((f"t{i}", "add", {"a": 1})) for i in range(5)])
    with pytest.raises(ToolRetriesExhausted) as info:
        Runner(backend, [add], max_validation_retries=3).run("?")
    err = info.value
    assert err.tool == "add"
    assert "3 times in a row" in str(err)
    assert any("'b'" in p for p in err.problems)
    assert len(backend.requests) == 3
    # The conversation is complete: every call has its (error) result.
    assert err.messages[-1].role == "user" and err.messages[-1].tool_results[0].is_error


def test_budget_resets_after_a_valid_call() -> None:
    script = [
        calls(("t1", "add", {"a": 1})),
        calls(("t2", "add", {"a": 1})),
        calls(("t3", "add", {"a": 1, "b": 1})),
        calls(("t4", "add", {"a": 1})),
        calls(("t5", "add", {"a": 1})),
        "done",
    ]
    result = Runner(ScriptedBackend(script), [add], max_validation_retries=3).run("?")
    assert result.text == "done"


def test_max_iterations() -> None:
    backend = ScriptedBackend(lambda req: calls((f"t{len(req.messages)}", "add", {"a": 1, "b": 2})))
    with pytest.raises(MaxIterationsExceeded) as info:
        Runner(backend, [add], max_iterations=4).run("loop forever")
    assert len(backend.requests) == 4
    assert "max_iterations=4" in str(info.value)
    assert len(info.value.messages) == 1 + 2 * 4


def test_max_tokens_cut_tool_call_is_retried_with_more_tokens() -> None:
    cut = Response(
        content=[TextBlock(text="Let me check."), ToolUseBlock(id="t1", name="get_weather", input={})],
        stop_reason="max_tokens",
    )
    backend = ScriptedBackend([cut, calls(("t1", "get_weather", {"city": "Rome"})), "sunny"])
    result = Runner(backend, [get_weather], max_tokens=100).run("?")
    assert [r.max_tokens for r in backend.requests] == [100, 400, 100]
    assert result.text == "sunny"
    # the cut turn is not part of the conversation
    assert all(
        b.input for m in result.messages for b in m.content if isinstance(b, ToolUseBlock)
    )

    backend = ScriptedBackend([cut, cut])
    with pytest.raises(IncompleteToolCall):
        Runner(backend, [get_weather], max_tokens=100, retry_max_tokens=150).run("?")
    assert [r.max_tokens for r in backend.requests] == [100, 150]

    backend = ScriptedBackend([cut])
    with pytest.raises(IncompleteToolCall):
        Runner(backend, [get_weather], max_tokens=100, retry_max_tokens=0).run("?")
    assert len(backend.requests) == 1


def test_max_tokens_on_text_is_returned_not_retried() -> None:
    backend = ScriptedBackend([Response(content=[TextBlock(text="a long ans")], stop_reason="max_tokens")])
    result = Runner(backend, [add]).run("?")
    assert result.stop_reason == "max_tokens" and result.text == "a long ans"


def test_tool_choice_forced_first_turn_then_auto() -> None:
    backend = ScriptedBackend([calls(("t1", "add", {"a": 1, "b": 2})), "3"])
    Runner(backend, [add, get_weather], tool_choice="add").run("?")
    assert backend.requests[0].tool_choice == ToolChoice(type="tool", name="add")
    assert backend.requests[1].tool_choice == ToolChoice(type="auto")

    backend = ScriptedBackend([calls(("t1", "add", {"a": 1, "b": 2})), "3"])
    Runner(backend, [add], tool_choice="any", disable_parallel_tool_use=True).run("?")
    assert backend.requests[0].tool_choice == ToolChoice(type="any", disable_parallel_tool_use=True)
    assert backend.requests[1].tool_choice == ToolChoice(type="auto", disable_parallel_tool_use=True)

    backend = ScriptedBackend(["no tools"])
    Runner(backend, [add], tool_choice="none").run("?")
    assert backend.requests[0].tool_choice == ToolChoice(type="none")

    backend = ScriptedBackend(["x"])
    Runner(backend, [add]).run("?")
    assert backend.requests[0].tool_choice is None

    with pytest.raises(ValueError, match="not one of the tools"):
        Runner(ScriptedBackend(), [add], tool_choice="nope")


def test_tool_choice_plan_gives_each_turn_its_choice() -> None:
    backend = ScriptedBackend([calls(("t1", "add", {"a": 1, "b": 2})),
                               calls(("t2", "get_weather", {"city": "Paris"})),
                               calls(("t3", "add", {"a": 3, "b": 4})), "done"])
    result = Runner(backend, [add, get_weather],
                    tool_choice=["add", {"type": "tool", "name": "get_weather"}, "any"]).run("?")
    assert [r.tool_choice for r in backend.requests] == [
        ToolChoice(type="tool", name="add"), ToolChoice(type="tool", name="get_weather"),
        ToolChoice(type="any"), ToolChoice(type="auto")]  # after the plan: auto
    assert result.text == "done"

    backend = ScriptedBackend([calls(("t1", "add", {"a": 1, "b": 2})), "3"])
    Runner(backend, [add], tool_choice=("add", "none")).run("?")
    assert [r.tool_choice for r in backend.requests] == [
        ToolChoice(type="tool", name="add"), ToolChoice(type="none")]

    with pytest.raises(ValueError, match="empty list"):
        Runner(ScriptedBackend(), [add], tool_choice=[])
    with pytest.raises(ValueError, match="not one of the tools"):
        Runner(ScriptedBackend(), [add], tool_choice=["add", "nope"])


def test_return_values_become_result_content() -> None:
    class Point(BaseModel):
        x: int
        y: int

    png = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8

    def kinds(kind: str) -> Any:
        """Return a value of some kind.

        Args:
            kind: which
        """
        return {
            "none": None,
            "text": "plain",
            "list": [1, 2],
            "model": Point(x=1, y=2),
            "float": 38.5,
            "png": png,
            "bytes": b"\x00\x01",
            "object": object(),
        }[kind]

    names = ["none", "text", "list", "model", "float", "png", "bytes", "object"]
    backend = ScriptedBackend([calls(*[(n, "kinds", {"kind": n}) for n in names]), "ok"])
    Runner(backend, [kinds]).run("?")
    by_id = {r.tool_use_id: r for r in last_results(backend)}
    assert by_id["none"].content == [] and not by_id["none"].is_error
    assert by_id["text"].content == [TextBlock(text="plain")]
    assert by_id["list"].content == [JsonBlock(value=[1, 2])]
    assert by_id["model"].content == [JsonBlock(value={"x": 1, "y": 2})]
    assert by_id["float"].content == [TextBlock(text="38.5")]
    (image,) = by_id["png"].content
    assert isinstance(image, ImageBlock) and image.media_type == "image/png"
    assert by_id["bytes"].is_error and "not a PNG" in by_id["bytes"].text()
    assert by_id["object"].is_error and by_id["object"].text().startswith("TypeError:")


def test_tool_timeout_sync_and_async() -> None:
    def sleepy(seconds: float) -> str:
        """Sleep.

        Args:
            seconds: how long
        """
        time.sleep(seconds)
        return "woke"

    turn = calls(("a", "sleepy", {"seconds": 2.0}), ("b", "sleepy", {"seconds": 0.0}))
    backend = ScriptedBackend([turn, "ok"])
    start = time.monotonic()
    Runner(backend, [sleepy], tool_timeout=0.3).run("?")
    assert time.monotonic() - start < 1.5
    slow, fast = last_results(backend)
    assert slow.is_error and slow.text().startswith("TimeoutError:") and "0.3s" in slow.text()
    assert fast.text() == "woke"

    async def asleepy(seconds: float) -> str:
        """Sleep.

        Args:
            seconds: how long
        """
        await asyncio.sleep(seconds)
        return "woke"

    backend = ScriptedBackend([calls(("a", "asleepy", {"seconds": 5.0})), "ok"])
    start = time.monotonic()
    anyio.run(Runner(backend, [asleepy], tool_timeout=0.2).arun, "?")
    assert time.monotonic() - start < 1.0
    assert last_results(backend)[0].text().startswith("TimeoutError:")


def test_tool_raising_its_own_timeout_error_is_an_exception_not_a_timeout() -> None:
    async def net() -> str:
        """Network call."""
        raise TimeoutError("upstream slow")

    backend = ScriptedBackend([calls(("a", "net", {})), "ok"])
    anyio.run(Runner(backend, [net]).arun, "?")
    assert last_results(backend)[0].text() == "TimeoutError: upstream slow"


def test_resume_saved_conversation() -> None:
    backend = ScriptedBackend([calls(("t1", "add", {"a": 2, "b": 2})), "4"])
    first = Runner(backend, [add]).run("2+2?")
    saved = [m.model_dump(mode="json") for m in first.messages]

    backend2 = ScriptedBackend(["8"])
    second = Runner(backend2, [add]).run("and doubled?", messages=saved)
    sent = backend2.requests[0].messages
    assert [m.role for m in sent] == ["user", "assistant", "user", "assistant", "user"]
    assert sent[-1].text() == "and doubled?"
    assert second.messages[:4] == first.messages

    # A conversation saved with unanswered calls has them run first.
    pending = first.messages[:2]
    backend3 = ScriptedBackend(["4 again"])
    third = Runner(backend3, [add]).run(messages=pending)
    assert backend3.requests[0].messages[-1].tool_results[0].text() == "4"
    assert third.text == "4 again"


def test_prompt_merges_into_trailing_user_turn() -> None:
    backend = ScriptedBackend(["ok"])
    Runner(backend).run("second", messages=[Message(role="user", content="first")])
    (only,) = backend.requests[0].messages
    assert [b.text for b in only.content if isinstance(b, TextBlock)] == ["first", "second"]


def test_to_wire_through_codec() -> None:
    backend = ScriptedBackend([calls(("toolu_1", "add", {"a": 1, "b": 2})), "3"])
    result = Runner(backend, [add], system="sys").run("1+2?")
    wire = result.to_wire("anthropic")
    assert wire["system"] == "sys" or wire["system"][0]["text"] == "sys"
    assert wire["tools"][0]["name"] == "add"
    roles = [m["role"] for m in wire["messages"]]
    assert roles == ["user", "assistant", "user", "assistant"]
    tool_use = wire["messages"][1]["content"][0]
    assert tool_use == {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"a": 1, "b": 2}}
    assert wire["messages"][2]["content"][0]["tool_use_id"] == "toolu_1"


def test_runner_options_are_checked() -> None:
    with pytest.raises(ValueError):
        Runner(ScriptedBackend(), [add], max_iterations=0)
    with pytest.raises(TypeError, match="unknown options"):
        Runner(ScriptedBackend(), [add], temprature=0.5)
    backend = ScriptedBackend(["x"])
    Runner(backend, [add], temperature=0.2, stop_sequences=["END"]).run("?")
    assert backend.requests[0].temperature == 0.2
    assert backend.requests[0].stop_sequences == ["END"]


def test_backend_spec_string() -> None:
    result = Runner("scripted:hello there").run("hi")
    assert result.text == "hello there"


def test_conversation_in_every_wire_format_and_resumed_from_one() -> None:
    from tooluse.codecs import get_codec

    def fails(x: int) -> str:
        """Fails.

        Args:
            x: ignored
        """
        raise RuntimeError("down")

    backend = ScriptedBackend([calls(("toolu_1", "add", {"a": 1, "b": 2}), ("toolu_2", "fails", {"x": 1})), "3"])
    result = Runner(backend, [add, fails]).run("1+2?")

    bedrock = result.to_wire("bedrock")
    assert "toolConfig" in bedrock
    results = bedrock["messages"][2]["content"]
    assert results[1]["toolResult"]["status"] == "error"

    openai = result.to_wire("openai", strict=False)
    tool_messages = [m for m in openai["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_messages] == ["toolu_1", "toolu_2"]
    assert "RuntimeError: down" in tool_messages[1]["content"]

    wire = result.to_wire("anthropic")
    restored = get_codec("anthropic").decode_request(wire).messages
    backend2 = ScriptedBackend(["ok"])
    Runner(backend2, [add, fails]).run("thanks", messages=restored)
    sent = backend2.requests[0].messages
    assert sent[1].tool_uses == result.messages[1].tool_uses
    assert sent[2].tool_results[1].is_error


def test_backend_failure_mid_run_keeps_the_conversation() -> None:
    from tooluse.errors import BackendError

    backend = ScriptedBackend([calls(("t1", "add", {"a": 1, "b": 2})), BackendError("overloaded", kind="overloaded")])
    with pytest.raises(BackendError) as info:
        Runner(backend, [add]).run("1+2?")
    saved = info.value.messages  # type: ignore[attr-defined]
    assert [m.role for m in saved] == ["user", "assistant", "user"]
    assert saved[-1].tool_results[0].text() == "3"
    resumed = Runner(ScriptedBackend(["3"]), [add]).run(messages=saved)
    assert resumed.text == "3"

    backend = ScriptedBackend([calls(("t1", "add", {"a": 1, "b": 2})), BackendError("down", kind="unavailable")])
    with pytest.raises(BackendError) as info:
        list(Runner(backend, [add]).stream("1+2?"))
    assert len(info.value.messages) == 3  # type: ignore[attr-defined]


def test_async_stream_raises_the_backend_error_itself() -> None:
    from tooluse.errors import BackendError

    backend = ScriptedBackend([BackendError("busy", kind="overloaded")])

    async def main() -> None:
        async for _ in Runner(backend, [add]).astream("?"):
            pass

    with pytest.raises(BackendError, match="busy") as info:
        anyio.run(main)
    assert info.value.messages[0].text() == "?"  # type: ignore[attr-defined]
