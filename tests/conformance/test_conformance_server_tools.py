"""The answers that hold the server tools the gateway runs (or hands to the client) validate
against the vendors' schemas, whole and streamed:

- Messages, strict anthropic SDK types: a tool search's ``server_tool_use`` and
  ``tool_search_tool_result`` (``Message``, ``RawMessageStreamEvent``: the search is in the
  GA types), an MCP server's ``mcp_tool_use`` and ``mcp_tool_result`` and a context-edited
  answer's ``context_management`` (``BetaMessage``, ``BetaRawMessageStreamEvent``: the
  beta types, where those blocks are);
- Responses, OpenAI's OpenAPI document: ``tool_search_call`` and ``tool_search_output``,
  ``mcp_list_tools``, ``mcp_call``, ``mcp_approval_request`` (and the ``response.mcp_*``
  events), ``local_shell_call``, ``shell_call`` and ``apply_patch_call``.

The MCP server is a real one (the official ``mcp`` SDK over streamable HTTP on 127.0.0.1)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from anthropic import types
from anthropic.types import beta
from conformance_backends import sse_events
from conformance_openai import Document
from conformance_tally import Tally
from conformance_vendor_types import anthropic_errors, anthropic_version
from test_conformance_responses import check_response, check_stream

from tooluse.backends.scripted import ScriptedBackend, from_spec
from tooluse.messages import Request, Response, TextBlock, ToolResultBlock, ToolUseBlock
from tooluse.server import ServerThread, create_app

pytest.importorskip("mcp", reason="needs the mcp extra")

VERSION = anthropic_version()
DEFERRED = [{"name": n, "description": d, "defer_loading": True,
             "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}
            for n, d in [("get_weather", "The current weather in a city"),
                         ("get_time", "The local time in a city"),
                         ("book_flight", "Book a flight to a city")]]


def model(request: Request) -> Response:
    """Searches (``weather in a city``) while it has a search tool and no weather tool, calls
    ``get_weather`` once it is offered, ``add`` (2 + 3) once an MCP server offers it, and
    answers a result of ``add`` (or anything else) with text."""
    names = [t.name for t in request.tools]
    results = [b for b in request.messages[-1].content if isinstance(b, ToolResultBlock)]
    if "get_weather" in names:
        return Response(content=[ToolUseBlock(id="toolu_w", name="get_weather",
                                              input={"city": "Lisbon"})], stop_reason="tool_use")
    if "add" in names and not results:
        return Response(content=[ToolUseBlock(id="toolu_a", name="add", input={"a": 2, "b": 3})],
                        stop_reason="tool_use")
    search = next((n for n in names if n.startswith("tool_search")), None)
    if search is not None and not results:
        return Response(content=[TextBlock(text="Searching."), ToolUseBlock(
            id="toolu_s", name=search, input={"query": "weather in a city"})],
            stop_reason="tool_use")
    said = results[-1].text() if results else "nothing"
    return Response(content=[TextBlock(text=f"got {said}")], stop_reason="end_turn")


def mcp_app() -> Any:
    from mcp.server.mcpserver import MCPServer

    sdk = MCPServer("calc")

    @sdk.tool()
    def add(a: int, b: int) -> str:
        """Add two numbers."""
        return str(a + b)

    return sdk.streamable_http_app()


@pytest.fixture(scope="module")
def mcp_url() -> Iterator[str]:
    with ServerThread(mcp_app()) as server:
        yield server.url + "/mcp"


@pytest.fixture(scope="module")
def gateway() -> Iterator[ServerThread]:
    with ServerThread(create_app(ScriptedBackend(model, chunk_size=4),
                                 allow_mcp_hosts=["127.0.0.1"])) as srv:
        yield srv


def _both(url: str, path: str, body: dict[str, Any], **headers: str
          ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The whole answer to ``body`` and the events of the streamed one."""
    whole = httpx2.post(url + path, json=body, timeout=60, headers=headers)
    assert whole.status_code == 200, whole.text
    events = sse_events(httpx2.post(url + path, json={**body, "stream": True}, timeout=60,
                                    headers=headers))
    return whole.json(), events


# -- Messages -----------------------------------------------------------------------------------


def _errors(kind: Any, value: Any) -> list[str]:
    """:func:`anthropic_errors`, but for ``usage.server_tool_use.tool_search_requests``:
    the tool search documentation shows that count, the SDK's ``ServerToolUsage`` types
    (anthropic 2.14) have only ``web_search_requests`` and ``web_fetch_requests`` (both
    required, and written) - the types are behind the documentation there."""
    return [e for e in anthropic_errors(kind, value)
            if not e.endswith(tuple(".server_tool_use.tool_search_requests: not a field of "
                               f"{prefix}ServerToolUsage" for prefix in ("", "Beta")))]


def check_messages(tally: Tally, kind: str, message: Any, events: list[dict[str, Any]],
                   message_type: Any, event_type: Any, event_name: str) -> None:
    tally.check("messages", kind, message_type.__name__, VERSION, message,
                lambda v: _errors(message_type, v))
    assert events[-1]["type"] == "message_stop", events[-1]
    for event in events:
        if event["type"] != "ping":
            tally.check("messages", f"{kind} stream event", event_name, VERSION, event,
                        lambda v: _errors(event_type, v))


def test_messages_tool_search_conforms(gateway: ServerThread, tally: Tally) -> None:
    body = {"model": "m", "max_tokens": 200, "messages": [
        {"role": "user", "content": "What's the weather in Lisbon?"}],
        "tools": [{"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"},
                  *DEFERRED]}
    message, events = _both(gateway.url, "/v1/messages", body)
    assert [b["type"] for b in message["content"]] == [
        "text", "server_tool_use", "tool_search_tool_result", "tool_use"]
    check_messages(tally, "tool search", message, events, types.Message,
                   types.RawMessageStreamEvent, "RawMessageStreamEvent")
    # the beta types read it too (the SDK's beta client parses it with them)
    check_messages(tally, "tool search (beta)", message, events, beta.BetaMessage,
                   beta.BetaRawMessageStreamEvent, "BetaRawMessageStreamEvent")


def test_messages_mcp_connector_conforms(gateway: ServerThread, tally: Tally,
                                         mcp_url: str) -> None:
    body = {"model": "m", "max_tokens": 200, "messages": [
        {"role": "user", "content": "What is 2 + 3?"}],
        "mcp_servers": [{"type": "url", "url": mcp_url, "name": "calc"}],
        "tools": [{"type": "mcp_toolset", "mcp_server_name": "calc"}]}
    message, events = _both(gateway.url, "/v1/messages", body,
                            **{"anthropic-beta": "mcp-client-2025-11-20"})
    assert [b["type"] for b in message["content"]] == ["mcp_tool_use", "mcp_tool_result", "text"]
    check_messages(tally, "mcp", message, events, beta.BetaMessage,
                   beta.BetaRawMessageStreamEvent, "BetaRawMessageStreamEvent")


def test_messages_context_management_conforms(gateway: ServerThread, tally: Tally) -> None:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "research this"}]
    for i in range(4):
        messages += [
            {"role": "assistant", "content": [{"type": "tool_use", "id": f"toolu_{i}",
                                               "name": "get_time", "input": {"city": "x" * 40}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{i}",
                                          "content": f"result {i} " * 40}]}]
    body = {"model": "m", "max_tokens": 100, "messages": messages,
            "tools": [{**DEFERRED[1], "defer_loading": False}],
            "context_management": {"edits": [
                {"type": "clear_tool_uses_20250919",
                 "trigger": {"type": "input_tokens", "value": 50},
                 "keep": {"type": "tool_uses", "value": 1}}]}}
    message, events = _both(gateway.url, "/v1/messages", body,
                            **{"anthropic-beta": "context-management-2025-06-27"})
    assert message["context_management"]["applied_edits"][0]["cleared_tool_uses"] == 3
    check_messages(tally, "context management", message, events, beta.BetaMessage,
                   beta.BetaRawMessageStreamEvent, "BetaRawMessageStreamEvent")


# -- Responses ----------------------------------------------------------------------------------


def check_both(doc: Document, tally: Tally, kind: str, response: dict[str, Any],
               events: list[dict[str, Any]]) -> list[str]:
    check_response(doc, tally, response, kind)
    check_stream(doc, tally, events)
    return [item["type"] for item in response["output"]]


def test_responses_tool_search_conforms(gateway: ServerThread, tally: Tally,
                                        openai_doc: Document) -> None:
    tools = [{"type": "function", "name": t["name"], "description": t["description"],
              "parameters": t["input_schema"], "defer_loading": True} for t in DEFERRED]
    response, events = _both(gateway.url, "/v1/responses", {
        "model": "m", "input": "What's the weather in Lisbon?",
        "tools": [{"type": "tool_search"}, *tools]})
    kinds = check_both(openai_doc, tally, "tool search response", response, events)
    assert kinds == ["message", "tool_search_call", "tool_search_output", "function_call"]


@pytest.mark.parametrize("approval", ["never", "always"])
def test_responses_mcp_conforms(gateway: ServerThread, tally: Tally, openai_doc: Document,
                                mcp_url: str, approval: str) -> None:
    response, events = _both(gateway.url, "/v1/responses", {
        "model": "m", "input": "What is 2 + 3?", "tools": [
            {"type": "mcp", "server_label": "calc", "server_url": mcp_url,
             "require_approval": approval}]})
    kinds = check_both(openai_doc, tally, f"mcp response ({approval})", response, events)
    if approval == "never":
        assert kinds == ["mcp_list_tools", "mcp_call", "message"]
    else:
        assert kinds == ["mcp_list_tools", "mcp_approval_request"]
    assert any(e["type"].startswith("response.mcp_") for e in events)


@pytest.mark.parametrize(("tool", "item"), [({"type": "local_shell"}, "local_shell_call"),
                                            ({"type": "shell"}, "shell_call"),
                                            ({"type": "apply_patch"}, "apply_patch_call")])
def test_responses_client_run_tools_conform(tally: Tally, openai_doc: Document,
                                            tool: dict[str, str], item: str) -> None:
    with ServerThread(create_app(from_spec("call"))) as srv:
        response, events = _both(srv.url, "/v1/responses",
                                 {"model": "m", "input": "go", "tools": [tool]})
    assert check_both(openai_doc, tally, f"{item} response", response, events) == [item]
