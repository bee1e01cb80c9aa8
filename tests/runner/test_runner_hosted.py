"""The server-side loop without I/O (runner.hosted) and the history a model without server
tools sees (runner.server_history.lower)."""

from __future__ import annotations

from typing import Any

from tooluse.messages import (
    MCPApprovalBlock,
    MCPCallBlock,
    MCPListToolsBlock,
    MCPServerSpec,
    Message,
    Request,
    Response,
    TextBlock,
    ToolReferenceBlock,
    ToolResultBlock,
    ToolSearchBlock,
    ToolSearchSpec,
    ToolSpec,
    ToolUseBlock,
)
from tooluse.runner.core import CallModel, RunTools
from tooluse.runner.hosted import Catalog, Emit, Limits, MCPTool, server_turns
from tooluse.runner.server_history import lower
from tooluse.tools import Tool


def name_of(server: str, name: str) -> str:
    return f"{server}__{name}"


def test_lower_splits_turns_at_server_blocks() -> None:
    history = [
        Message(role="user", content="hi"),
        Message(role="assistant", content=[
            TextBlock(text="looking"),
            ToolSearchBlock(id="s1", name="tool_search", input={"query": "x"}, found=["a"]),
            MCPListToolsBlock(id="l", server="srv"),
            MCPCallBlock(id="m1", server="srv", name="echo", input={"t": 1},
                         content=[TextBlock(text="1")], is_error=True),
            TextBlock(text="done")]),
        Message(role="user", content=[TextBlock(text="thanks")])]
    lowered = lower(history, name_of)
    assert [m.role for m in lowered] == ["user", "assistant", "user", "assistant", "user",
                                         "assistant", "user"]
    assert lowered[1].content == [TextBlock(text="looking"),
                                  ToolUseBlock(id="s1", name="tool_search", input={"query": "x"})]
    result = lowered[2].content[0]
    assert isinstance(result, ToolResultBlock) and "Found a." in result.text()
    assert lowered[3].content == [ToolUseBlock(id="m1", name="srv__echo", input={"t": 1})]
    assert lowered[4].content == [ToolResultBlock(tool_use_id="m1", content=[TextBlock(text="1")],
                                                  is_error=True)]
    assert lowered[5].content == [TextBlock(text="done")]


def test_lower_answers_a_waiting_call_with_its_approval() -> None:
    waiting = MCPCallBlock(id="r1", server="srv", name="add", input={"a": 1})
    ran = MCPCallBlock(id="m2", server="srv", name="add", input={"a": 1},
                       content=[TextBlock(text="2")], approval_request_id="r1")
    approved = lower([Message(role="user", content="q"),
                      Message(role="assistant", content=[waiting]),
                      Message(role="user", content=[MCPApprovalBlock(request_id="r1",
                                                                     approve=True)]),
                      Message(role="assistant", content=[ran, TextBlock(text="two")])], name_of)
    assert [m.role for m in approved] == ["user", "assistant", "user", "assistant"]
    assert approved[2].content == [ToolResultBlock(tool_use_id="r1",
                                                   content=[TextBlock(text="2")])]
    assert approved[3].content == [TextBlock(text="two")]
    denied = lower([Message(role="user", content="q"),
                    Message(role="assistant", content=[waiting]),
                    Message(role="user", content=[MCPApprovalBlock(
                        request_id="r1", approve=False, reason="no")])], name_of)
    result = denied[2].content[0]
    assert isinstance(result, ToolResultBlock) and result.is_error
    assert result.text() == "The user denied this call of tool 'add' (no), so it was not run."
    references = lower([Message(role="user", content=[ToolResultBlock(
        tool_use_id="t", content=[ToolReferenceBlock(name="get_weather")])])], name_of)
    assert references[0].content[0].text() == "Tool get_weather is now available."  # type: ignore[union-attr]


def drive(generator: Any, answer: Any) -> tuple[list[Any], Any]:
    actions: list[Any] = []
    reply: Any = None
    while True:
        try:
            action = generator.send(reply)
        except StopIteration as stop:
            return actions, stop.value
        actions.append(action)
        reply = answer(action)


def searching(action: Any) -> Any:
    if isinstance(action, CallModel):
        return Response(content=[ToolUseBlock(id="c", name="tool_search",
                                              input={"query": "weather"})],
                        stop_reason="tool_use")
    return None


def test_the_loop_stops_at_its_time_bound() -> None:
    request = Request(messages=[Message(role="user", content="weather?")],
                      tools=[ToolSpec(name="get_weather", description="weather", deferred=True)])
    catalog = Catalog(search=ToolSearchSpec(name="tool_search"))
    now = [0.0]

    def clock() -> float:
        now[0] += 40.0  # each look at the clock: 40 s later
        return now[0]

    actions, ended = drive(server_turns(request, catalog, Limits(max_turns=10, timeout=100),
                                        clock), searching)
    # the deadline is 140 s; turns start at 80 s and 120 s; at 160 s the loop stops
    assert ended.stop_reason == "pause_turn"
    assert sum(isinstance(a, CallModel) for a in actions) == 2
    assert ended.usage.server_tool_requests == {"tool_search": 2}
    emitted = [a.block for a in actions if isinstance(a, Emit)]
    assert isinstance(emitted[0], ToolSearchBlock) and emitted[0].found == ["get_weather"]


def test_an_mcp_call_with_bad_input_is_an_error_without_running() -> None:
    tool = Tool("srv__add", "add", {"type": "object", "properties": {"a": {"type": "integer"}},
                                    "required": ["a"]}, lambda a: a)
    server = MCPServerSpec(name="srv", url="https://example.org/mcp")
    catalog = Catalog(mcp={"srv__add": MCPTool(server=server, name="add", tool=tool,
                                               spec=tool.spec)})
    request = Request(messages=[Message(role="user", content="add")])
    turns = iter([Response(content=[ToolUseBlock(id="c", name="srv__add", input={"a": "x"})],
                           stop_reason="tool_use"),
                  Response(content=[TextBlock(text="bad")], stop_reason="end_turn")])

    def answer(action: Any) -> Any:
        assert not isinstance(action, RunTools)
        return next(turns) if isinstance(action, CallModel) else None

    actions, ended = drive(server_turns(request, catalog, Limits(), lambda: 0.0), answer)
    call = next(a.block for a in actions if isinstance(a, Emit))
    assert isinstance(call, MCPCallBlock) and call.is_error and call.name == "add"
    assert "Invalid input" in call.content[0].text  # type: ignore[index,union-attr]
    assert ended.stop_reason == "end_turn"
