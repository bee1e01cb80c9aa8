"""Runner(tool_search=...): the runner's tools deferred, a search tool offered instead, the
searches run by the gateway's own loop (runner.hosted), the found tools offered after."""

from __future__ import annotations

import pytest

from tooluse.backends.scripted import ScriptedBackend
from tooluse.messages import (
    Request,
    Response,
    TextBlock,
    ToolResultBlock,
    ToolSearchBlock,
    ToolUseBlock,
)
from tooluse.runner import Runner


def get_weather(city: str) -> str:
    """Current weather conditions in a city."""
    return f"sunny in {city}"


def send_email(to: str, subject: str) -> str:
    """Send an email."""
    return "sent"


def convert_currency(amount: float, to: str) -> str:
    """Convert an amount of money into another currency."""
    return "converted"


def model(request: Request) -> Response:
    names = [t.name for t in request.tools]
    last = request.messages[-1]
    results = [b for b in last.content if isinstance(b, ToolResultBlock)]
    if results and "sunny" in results[-1].text():
        return Response(content=[TextBlock(text=results[-1].text())], stop_reason="end_turn")
    if "get_weather" in names:
        return Response(content=[ToolUseBlock(id="w", name="get_weather",
                                              input={"city": "Oslo"})], stop_reason="tool_use")
    return Response(content=[ToolUseBlock(id=f"s{len(request.messages)}", name="tool_search",
                                          input={"query": "weather in Oslo"})],
                    stop_reason="tool_use")


@pytest.mark.parametrize("stream", [False, True])
def test_runner_searches_its_deferred_tools(stream: bool) -> None:
    backend = ScriptedBackend(model)
    runner = Runner(backend, [get_weather, send_email, convert_currency], tool_search="bm25",
                    loaded_tools=["send_email"])
    if stream:
        result = list(runner.stream("Weather in Oslo?"))[-1].result  # type: ignore[attr-defined]
    else:
        result = runner.run("Weather in Oslo?")
    assert result.text == "sunny in Oslo"
    first, second, third = backend.requests
    assert [t.name for t in first.tools] == ["send_email", "tool_search"]
    assert [t.name for t in second.tools] == ["send_email", "tool_search", "get_weather"]
    assert third.messages[-1].tool_results[0].text() == "sunny in Oslo"
    search = result.messages[1].content[0]
    assert isinstance(search, ToolSearchBlock) and search.found[0] == "get_weather"
    assert result.usage.server_tool_requests == {"tool_search": 1}


def test_runner_tool_search_options_are_checked() -> None:
    with pytest.raises(ValueError, match="tool_search must be"):
        Runner(ScriptedBackend(model), [get_weather], tool_search="fuzzy")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="loaded_tools"):
        Runner(ScriptedBackend(model), [get_weather], tool_search="bm25", loaded_tools=["nope"])
