"""Tool sources (e.g. MCP servers) inside a ToolSet and a Runner, without any server: a
source's tools join the set; a name two tools share is qualified with the source's name."""

from __future__ import annotations

import pytest

from tooluse.backends.scripted import ScriptedBackend
from tooluse.errors import ToolDefinitionError
from tooluse.messages import Response, TextBlock, ToolResultBlock, ToolUseBlock
from tooluse.runner import Runner
from tooluse.tools import Tool, ToolSet, ToolSource


class Source:
    def __init__(self, name: str, *tools: Tool) -> None:
        self.source_name = name
        self._tools = list(tools)
        self.asked = 0

    def get_tools(self) -> list[Tool]:
        self.asked += 1
        return list(self._tools)


def search(query: str) -> str:
    """Search the web."""
    return f"web: {query}"


def _tool(name: str, reply: str) -> Tool:
    return Tool(name, "a source's tool", {"type": "object", "properties": {"q": {"type": "string"}}},
                lambda **kw: reply)


def test_a_source_is_a_tool_source() -> None:
    assert isinstance(Source("s"), ToolSource)
    assert not isinstance(search, ToolSource)


def test_tools_join_the_set_and_only_colliding_names_are_qualified() -> None:
    docs = Source("docs", _tool("search", "docs hit"), _tool("open", "opened"))
    wiki = Source("wiki", _tool("search", "wiki hit"))
    tools = ToolSet([search, docs, wiki])
    assert tools.names == ["search", "docs_search", "open", "wiki_search"]
    assert tools.original_name("docs_search") == "docs.search"
    assert tools.original_name("search") == "search"  # the user's own function keeps its name
    assert tools["wiki_search"].call({"q": "x"}) == "wiki hit"
    assert tools["docs_search"].call({"q": "x"}) == "docs hit"


def test_runner_takes_a_source_alone_and_keeps_a_returned_result_whole() -> None:
    rich = ToolResultBlock(tool_use_id="", content=[TextBlock(text="denied")], is_error=True)
    source = Source("s", Tool("guarded", "", None, lambda: rich))
    backend = ScriptedBackend([
        Response(content=[ToolUseBlock(id="toolu_9", name="guarded", input={})],
                 stop_reason="tool_use"),
        "ok",
    ])
    result = Runner(backend, source).run("go")
    (_, answer), = result.tool_calls
    assert answer == ToolResultBlock(tool_use_id="toolu_9", content=[TextBlock(text="denied")],
                                     is_error=True)
    assert source.asked == 1


def test_duplicate_names_within_one_source_are_still_an_error() -> None:
    twice = Source("s", _tool("a", "1"), _tool("a", "2"))
    with pytest.raises(ToolDefinitionError):
        ToolSet([twice, search])
