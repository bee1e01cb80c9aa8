"""The server tools' shapes in the Messages and Responses codecs: tool search, the MCP
connector / the ``mcp`` tool, Anthropic-defined client tools, deferred tools and tool
references, both ways, whole and streamed."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tooluse.codecs import anthropic, responses
from tooluse.errors import WireFormatError
from tooluse.messages import (
    MCPApprovalBlock,
    MCPCallBlock,
    MCPListToolsBlock,
    Response,
    TextBlock,
    ToolReferenceBlock,
    ToolResultBlock,
    ToolSearchBlock,
    ToolUseBlock,
    Usage,
)
from tooluse.stream import accumulate, events_from_response
from tooluse.trace.record import REDACTED, redact_body

WEATHER = {"name": "get_weather", "description": "Weather of a city",
           "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
           "defer_loading": True, "input_examples": [{"city": "Paris"}]}
SEARCH_USE = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "tool_search_tool_bm25",
              "input": {"query": "weather"}}
SEARCH_RESULT = {"type": "tool_search_tool_result", "tool_use_id": "srvtoolu_1",
                 "content": {"type": "tool_search_tool_search_result", "tool_references": [
                     {"type": "tool_reference", "tool_name": "get_weather"}]}}
MCP_USE = {"type": "mcp_tool_use", "id": "mcptoolu_1", "name": "echo", "server_name": "ex",
           "input": {"text": "hi"}}
MCP_RESULT = {"type": "mcp_tool_result", "tool_use_id": "mcptoolu_1", "is_error": False,
              "content": [{"type": "text", "text": "hi"}]}


def messages_request(**extra: Any) -> dict[str, Any]:
    return {"model": "m", "max_tokens": 100, "messages": [{"role": "user", "content": "hi"}],
            **extra}


# -- Messages: tools ----------------------------------------------------------------------------


def test_search_tool_and_deferred_tools() -> None:
    req = anthropic.decode_request(messages_request(tools=[
        {"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"}, WEATHER]))
    assert req.server_tools is not None and req.server_tools.search is not None
    assert (req.server_tools.search.name, req.server_tools.search.mode) == (
        "tool_search_tool_regex", "regex")
    assert [(t.name, t.deferred, t.input_examples) for t in req.tools] == [
        ("get_weather", True, [{"city": "Paris"}])]
    assert req.passthrough is not None and not req.passthrough.required
    # an Anthropic upstream gets both as sent, in the client's order
    assert anthropic.encode_request(req)["tools"] == [
        {"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"}, WEATHER]


@pytest.mark.parametrize(("tool", "where"), [
    ({"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_regex"}, "tools.0.name"),
    ({"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25",
      "defer_loading": True}, "tools.0.defer_loading"),
])
def test_bad_search_tools_are_refused(tool: dict[str, Any], where: str) -> None:
    with pytest.raises(WireFormatError) as info:
        anthropic.decode_request(messages_request(tools=[tool]))
    assert ".".join(map(str, info.value.path)) == where


def test_anthropic_defined_tools_become_their_schemas() -> None:
    tools = [{"type": "bash_20250124", "name": "bash"},
             {"type": "text_editor_20250728", "name": "str_replace_based_edit_tool",
              "max_characters": 500},
             {"type": "memory_20250818", "name": "memory"},
             {"type": "computer_20250124", "name": "computer", "display_width_px": 1024,
              "display_height_px": 768}]
    req = anthropic.decode_request(messages_request(tools=tools))
    assert [t.name for t in req.tools] == ["bash", "str_replace_based_edit_tool", "memory",
                                           "computer"]
    schemas = {t.name: t.input_schema for t in req.tools}
    assert set(schemas["bash"]["properties"]) == {"command", "restart"}
    assert schemas["str_replace_based_edit_tool"]["properties"]["command"]["enum"] == [
        "view", "create", "str_replace", "insert"]
    assert "insert_text" not in schemas["str_replace_based_edit_tool"]["properties"]
    assert schemas["memory"]["properties"]["command"]["enum"] == [
        "view", "create", "str_replace", "insert", "delete", "rename"]
    assert "scroll" in schemas["computer"]["properties"]["action"]["enum"]
    assert "1024x768" in next(t for t in req.tools if t.name == "computer").description
    assert req.passthrough is not None and not req.passthrough.required
    assert anthropic.encode_request(req)["tools"] == tools  # as sent, to an Anthropic upstream


_EDITOR = {"command", "path", "file_text", "old_str", "new_str", "insert_line", "view_range"}
_CLICKS = ["key", "type", "mouse_move", "left_click", "left_click_drag", "right_click",
           "middle_click", "double_click", "screenshot", "cursor_position"]
_CLICKS_2025 = [*_CLICKS, "triple_click", "left_mouse_down", "left_mouse_up", "scroll",
                "hold_key", "wait"]
_COMPUTER_2025 = {"action", "coordinate", "text", "start_coordinate", "scroll_direction",
                  "scroll_amount", "duration"}


@pytest.mark.parametrize(("tool", "enum", "properties"), [
    # the input each tool version documents (its commands or actions, and its parameters)
    ({"type": "bash_20241022", "name": "bash"}, None, {"command", "restart"}),
    ({"type": "bash_20250124", "name": "bash"}, None, {"command", "restart"}),
    ({"type": "text_editor_20241022", "name": "str_replace_editor"},
     ["view", "create", "str_replace", "insert", "undo_edit"], _EDITOR),
    ({"type": "text_editor_20250124", "name": "str_replace_editor"},
     ["view", "create", "str_replace", "insert", "undo_edit"], _EDITOR),
    ({"type": "text_editor_20250429", "name": "str_replace_based_edit_tool"},
     ["view", "create", "str_replace", "insert"], _EDITOR),
    ({"type": "text_editor_20250728", "name": "str_replace_based_edit_tool"},
     ["view", "create", "str_replace", "insert"], _EDITOR),
    ({"type": "memory_20250818", "name": "memory"},
     ["view", "create", "str_replace", "insert", "delete", "rename"],
     {"command", "path", "view_range", "file_text", "old_str", "new_str", "insert_line",
      "insert_text", "old_path", "new_path"}),
    ({"type": "computer_20241022", "name": "computer", "display_width_px": 800,
      "display_height_px": 600}, _CLICKS, {"action", "coordinate", "text"}),
    ({"type": "computer_20250124", "name": "computer", "display_width_px": 800,
      "display_height_px": 600}, _CLICKS_2025, _COMPUTER_2025),
    ({"type": "computer_20251124", "name": "computer", "display_width_px": 800,
      "display_height_px": 600}, _CLICKS_2025, _COMPUTER_2025),
    ({"type": "computer_20251124", "name": "computer", "display_width_px": 800,
      "display_height_px": 600, "enable_zoom": True},
     [*_CLICKS_2025, "zoom"], {*_COMPUTER_2025, "region"}),
])
def test_each_defined_tool_version_has_its_documented_input(
        tool: dict[str, Any], enum: list[str] | None, properties: set[str]) -> None:
    (spec,) = anthropic.decode_request(messages_request(tools=[tool])).tools
    assert spec.name == tool["name"]
    schema = spec.input_schema
    assert set(schema["properties"]) == properties
    key = "command" if "command" in properties else "action"
    if enum is not None:  # bash's command is optional (a restart takes none)
        assert schema["properties"][key]["enum"] == enum
        assert key in schema["required"]


def test_vendor_run_tools_stay_required_with_the_reason() -> None:
    req = anthropic.decode_request(messages_request(tools=[
        {"type": "web_search_20250305", "name": "web_search"}]))
    assert req.passthrough is not None
    assert req.passthrough.required == [
        "tools.0: web_search_20250305: Anthropic searches the web for the model"]


def test_mcp_servers_and_toolsets() -> None:
    req = anthropic.decode_request(messages_request(
        mcp_servers=[{"type": "url", "url": "https://a.example/mcp", "name": "a",
                      "authorization_token": "sekrit"},
                     {"type": "url", "url": "https://b.example/mcp", "name": "b",
                      "tool_configuration": {"allowed_tools": ["x"]}}],
        tools=[{"type": "mcp_toolset", "mcp_server_name": "a",
                "default_config": {"enabled": False, "defer_loading": True},
                "configs": {"keep": {"enabled": True, "defer_loading": False}}}]))
    assert req.server_tools is not None
    a, b = req.server_tools.mcp_servers
    assert a.headers["Authorization"].get_secret_value() == "Bearer sekrit"
    assert "sekrit" not in repr(a) and "sekrit" not in a.model_dump_json()
    assert a.offers("keep", False) and not a.offers("other", False)
    assert a.defers("other") and not a.defers("keep")
    assert b.offers("x", False) and not b.offers("y", False) and not b.headers
    assert req.passthrough is not None and req.passthrough.fields["mcp_servers"][0][
        "authorization_token"] == "sekrit"  # forwarded to an Anthropic upstream as sent


@pytest.mark.parametrize(("extra", "where"), [
    ({"tools": [{"type": "mcp_toolset", "mcp_server_name": "nope"}]}, "tools.0.mcp_server_name"),
    ({"mcp_servers": [{"type": "url", "url": "u", "name": "a"},
                      {"type": "url", "url": "u", "name": "a"}]}, "mcp_servers.1.name"),
    ({"mcp_servers": [{"type": "stdio", "url": "u", "name": "a"}]}, "mcp_servers.0.type"),
])
def test_bad_mcp_configs_are_refused(extra: dict[str, Any], where: str) -> None:
    with pytest.raises(WireFormatError) as info:
        anthropic.decode_request(messages_request(**extra))
    assert ".".join(map(str, info.value.path)) == where


# -- Messages: blocks ---------------------------------------------------------------------------


def history(*blocks: dict[str, Any], after: Any = None) -> dict[str, Any]:
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": list(blocks)}]
    if after is not None:
        messages.append({"role": "user", "content": after})
    return messages_request(messages=messages, tools=[WEATHER])


def test_history_server_blocks_join_their_use_and_result() -> None:
    call = {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "P"}}
    req = anthropic.decode_request(history(
        SEARCH_USE, SEARCH_RESULT, MCP_USE, MCP_RESULT, call,
        after=[{"type": "tool_result", "tool_use_id": "toolu_1",
                "content": [{"type": "tool_reference", "tool_name": "get_weather"}]}]))
    assert req.messages[1].content == [
        ToolSearchBlock(id="srvtoolu_1", name="tool_search_tool_bm25", input={"query": "weather"},
                        found=["get_weather"]),
        MCPCallBlock(id="mcptoolu_1", server="ex", name="echo", input={"text": "hi"},
                     content=[TextBlock(text="hi")]),
        ToolUseBlock(id="toolu_1", name="get_weather", input={"city": "P"})]
    assert req.messages[2].content == [ToolResultBlock(
        tool_use_id="toolu_1", content=[ToolReferenceBlock(name="get_weather")])]
    body = anthropic.encode_request(req)
    assert body["messages"][1]["content"] == [SEARCH_USE, SEARCH_RESULT, MCP_USE, MCP_RESULT,
                                              call]
    assert body["messages"][2]["content"][0]["content"] == [
        {"type": "tool_reference", "tool_name": "get_weather"}]


@pytest.mark.parametrize("blocks", [[SEARCH_USE], [SEARCH_RESULT], [MCP_USE, SEARCH_RESULT],
                                    [SEARCH_USE, SEARCH_USE, SEARCH_RESULT]])
def test_unpaired_server_blocks_are_refused(blocks: list[dict[str, Any]]) -> None:
    with pytest.raises(WireFormatError):
        anthropic.decode_request(history(*blocks))


def test_server_blocks_belong_to_assistant_turns() -> None:
    with pytest.raises(WireFormatError, match="not allowed in user messages"):
        anthropic.decode_request(messages_request(messages=[
            {"role": "user", "content": [SEARCH_USE, SEARCH_RESULT]}]))


ANSWER = Response(id="msg_1", model="m", stop_reason="tool_use", content=[
    TextBlock(text="Let me look."),
    ToolSearchBlock(id="srvtoolu_2", name="tool_search_tool_bm25", input={"query": "weather"},
                    found=["get_weather", "get_forecast"]),
    ToolSearchBlock(id="srvtoolu_3", name="tool_search_tool_regex", input={"query": "("},
                    error="invalid_tool_input"),
    MCPCallBlock(id="mcptoolu_2", server="ex", name="echo", input={"text": "x"},
                 content=[TextBlock(text="boom")], is_error=True),
    ToolUseBlock(id="toolu_2", name="get_weather", input={"city": "Oslo"})],
    usage=Usage(input_tokens=10, output_tokens=5, server_tool_requests={"tool_search": 2}))


def test_answer_blocks_whole() -> None:
    body = anthropic.encode_response(ANSWER)
    assert [b["type"] for b in body["content"]] == [
        "text", "server_tool_use", "tool_search_tool_result", "server_tool_use",
        "tool_search_tool_result", "mcp_tool_use", "mcp_tool_result", "tool_use"]
    assert body["content"][2]["content"]["tool_references"] == [
        {"type": "tool_reference", "tool_name": "get_weather"},
        {"type": "tool_reference", "tool_name": "get_forecast"}]
    assert body["content"][4]["content"] == {"type": "tool_search_tool_result_error",
                                             "error_code": "invalid_tool_input"}
    assert body["content"][6] == {"type": "mcp_tool_result", "tool_use_id": "mcptoolu_2",
                                  "is_error": True, "content": [{"type": "text", "text": "boom"}]}
    assert body["usage"]["server_tool_use"] == {
        "web_search_requests": 0, "web_fetch_requests": 0, "tool_search_requests": 2}
    assert anthropic.decode_response(body) == ANSWER  # an Anthropic upstream's, read back


def test_answer_blocks_streamed() -> None:
    events = list(anthropic.encode_events(events_from_response(ANSWER, chunk_size=3)))
    starts = [(e["index"], e["content_block"]["type"]) for e in events
              if e["type"] == "content_block_start"]
    assert starts == [(0, "text"), (1, "server_tool_use"), (2, "tool_search_tool_result"),
                      (3, "server_tool_use"), (4, "tool_search_tool_result"),
                      (5, "mcp_tool_use"), (6, "mcp_tool_result"), (7, "tool_use")]
    stops = [e["index"] for e in events if e["type"] == "content_block_stop"]
    assert stops == list(range(8))
    use = next(e for e in events if e["type"] == "content_block_start" and e["index"] == 1)
    assert use["content_block"]["input"] == {}
    delta = next(e for e in events if e["type"] == "content_block_delta" and e["index"] == 1)
    assert json.loads(delta["delta"]["partial_json"]) == {"query": "weather"}
    assert accumulate(anthropic.decode_events(events)) == ANSWER


def test_an_mcp_listing_has_no_messages_form() -> None:
    answer = Response(id="m", content=[MCPListToolsBlock(id="l", server="ex"),
                                       TextBlock(text="hi")], stop_reason="end_turn")
    assert [b["type"] for b in anthropic.encode_response(answer)["content"]] == ["text"]
    events = list(anthropic.encode_events(events_from_response(answer)))
    assert [e["index"] for e in events if "index" in e] == [0, 0, 0]


# -- Responses ------------------------------------------------------------------------------


MCP_TOOL = {"type": "mcp", "server_label": "ex", "server_url": "https://ex.example/mcp",
            "authorization": "sekrit", "headers": {"X-Key": "also-sekrit"},
            "allowed_tools": {"tool_names": ["echo", "add"]},
            "require_approval": {"never": {"tool_names": ["echo"]}}}


def responses_request(**extra: Any) -> dict[str, Any]:
    return {"model": "m", "input": "hi", **extra}


def test_responses_tools() -> None:
    req = responses.decode_request(responses_request(tools=[
        {"type": "tool_search"},
        {"type": "function", "name": "f", "parameters": {"type": "object"}, "defer_loading": True},
        {"type": "namespace", "name": "crm", "description": "The CRM", "tools": [
            {"type": "function", "name": "find", "defer_loading": True}]},
        MCP_TOOL]))
    assert req.server_tools is not None and req.server_tools.search is not None
    assert [(t.name, t.deferred) for t in req.tools] == [("f", True), ("crm__find", True)]
    (spec,) = req.server_tools.mcp_servers
    assert {k: v.get_secret_value() for k, v in spec.headers.items()} == {
        "X-Key": "also-sekrit", "Authorization": "Bearer sekrit"}
    assert spec.offers("echo", False) and not spec.offers("drop", False)
    assert not spec.needs_approval("echo", False) and spec.needs_approval("add", False)
    echoed = responses.echo_fields(responses_request(tools=[MCP_TOOL]))["tools"][0]
    assert "authorization" not in echoed and echoed["headers"] == {"X-Key": "[redacted]"}


def test_responses_mcp_approval_defaults_to_always() -> None:
    req = responses.decode_request(responses_request(tools=[
        {"type": "mcp", "server_label": "ex", "server_url": "https://ex.example/mcp"}]))
    assert req.server_tools is not None
    assert req.server_tools.mcp_servers[0].needs_approval("anything", True)


def test_responses_connectors_and_client_search_are_refused() -> None:
    req = responses.decode_request(responses_request(tools=[
        {"type": "mcp", "server_label": "g", "connector_id": "connector_gmail"}]))
    assert req.passthrough is not None and req.passthrough.required[0].startswith(
        "tools.0: mcp (connector_id)")
    req = responses.decode_request(responses_request(tools=[
        {"type": "mcp", "server_label": "t", "tunnel_id": "tunnel_1"}]))
    assert req.passthrough is not None and req.passthrough.required[0].startswith(
        "tools.0: mcp (tunnel_id)")
    with pytest.raises(WireFormatError) as info:
        responses.decode_request(responses_request(tools=[
            {"type": "tool_search", "execution": "client"}]))
    assert info.value.path == ("tools", 0, "execution")


def test_responses_history_items() -> None:
    req = responses.decode_request(responses_request(input=[
        {"role": "user", "content": "hi"},
        {"type": "tool_search_call", "id": "tsc_1", "call_id": "call_s", "execution": "server",
         "arguments": {"query": "crm"}, "status": "completed"},
        {"type": "tool_search_output", "id": "tso_1", "call_id": "call_s", "execution": "server",
         "status": "completed", "tools": [{"type": "namespace", "name": "crm", "description": "",
                                           "tools": [{"type": "function", "name": "find"}]}]},
        {"type": "mcp_list_tools", "id": "mcpl_1", "server_label": "ex",
         "tools": [{"name": "echo", "input_schema": {"type": "object"}}]},
        {"type": "mcp_call", "id": "mcp_1", "server_label": "ex", "name": "echo",
         "arguments": '{"text": "a"}', "output": "a", "status": "completed"},
        {"type": "mcp_approval_request", "id": "mcpr_1", "server_label": "ex", "name": "add",
         "arguments": '{"a": 1}'},
        {"type": "mcp_approval_response", "approval_request_id": "mcpr_1", "approve": False,
         "reason": "no"}]))
    assistant, user = req.messages[1:]
    assert assistant.content == [
        ToolSearchBlock(id="call_s", name="tool_search", input={"query": "crm"},
                        found=["crm__find"]),
        MCPListToolsBlock(id="mcpl_1", server="ex",
                          tools=[{"name": "echo", "input_schema": {"type": "object"}}]),
        MCPCallBlock(id="mcp_1", server="ex", name="echo", input={"text": "a"},
                     content=[TextBlock(text="a")]),
        MCPCallBlock(id="mcpr_1", server="ex", name="add", input={"a": 1})]
    assert user.content == [MCPApprovalBlock(request_id="mcpr_1", approve=False, reason="no")]
    items = responses.encode_request(req)["input"]
    assert [i["type"] for i in items[1:]] == [
        "tool_search_call", "tool_search_output", "mcp_list_tools", "mcp_call",
        "mcp_approval_request", "mcp_approval_response"]


RESPONSES_ANSWER = Response(id="resp_1", model="m", stop_reason="end_turn", content=[
    MCPListToolsBlock(id="x", server="ex", tools=[{"name": "echo", "input_schema": {
        "type": "object"}, "annotations": {"readOnlyHint": True}}]),
    ToolSearchBlock(id="call_s", name="tool_search", input={"query": "f"}, found=["f"]),
    MCPCallBlock(id="y", server="ex", name="echo", input={"text": "a"},
                 content=[TextBlock(text="no such tool")], is_error=True),
    MCPCallBlock(id="mcpr_9", server="ex", name="add", input={"a": 2}),
    TextBlock(text="ok")])


def test_responses_answer_items_whole_and_streamed() -> None:
    req = responses.decode_request(responses_request(tools=[
        {"type": "tool_search"},
        {"type": "function", "name": "f", "description": "F", "parameters": {"type": "object"},
         "defer_loading": True}]))
    body = responses.encode_response(RESPONSES_ANSWER, request=req)
    assert [i["type"] for i in body["output"]] == [
        "mcp_list_tools", "tool_search_call", "tool_search_output", "mcp_call",
        "mcp_approval_request", "message"]
    listing, call, output, mcp, approval, _ = body["output"]
    assert listing["tools"][0]["annotations"] == {"readOnlyHint": True}
    assert call["arguments"] == {"query": "f"} and call["execution"] == "server"
    assert output["tools"] == [{"type": "function", "name": "f", "description": "F",
                                "parameters": {"type": "object"}, "strict": True,
                                "defer_loading": True}]
    assert mcp["status"] == "failed" and mcp["output"] is None
    assert mcp["error"] == {"type": "mcp_tool_execution_error",
                            "content": [{"type": "text", "text": "no such tool"}]}
    assert approval["id"] == "mcpr_9" and approval["arguments"] == '{"a": 2}'
    encoder = responses.StreamEncoder(request=req, response_id="resp_1")
    events = list(encoder.encode(events_from_response(RESPONSES_ANSWER)))
    kinds = [e["type"] for e in events]
    assert kinds[2:7] == ["response.output_item.added", "response.mcp_list_tools.in_progress",
                          "response.mcp_list_tools.completed", "response.output_item.done",
                          "response.output_item.added"]
    assert "response.mcp_call.failed" in kinds and "response.mcp_call_arguments.done" in kinds
    assert encoder.final is not None and encoder.final["output"] == body["output"]
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    # an upstream's answer read back, whole and streamed
    blocks = [b for b in RESPONSES_ANSWER.content]
    assert [b.type for b in responses.decode_response(body).content] == [b.type for b in blocks]
    assert [b.type for b in accumulate(responses.decode_events(events)).content] == [
        b.type for b in blocks]


def test_trace_bodies_lose_the_mcp_credentials() -> None:
    body = json.dumps({"mcp_servers": [{"name": "a", "authorization_token": "sekrit"}],
                       "tools": [MCP_TOOL]}).encode()
    redacted = redact_body(body)
    assert redacted is not None and b"sekrit" not in redacted
    data = json.loads(redacted)
    assert data["mcp_servers"][0]["authorization_token"] == REDACTED
    assert data["tools"][0]["headers"] == {"X-Key": REDACTED}
    assert redact_body(b'{"model": "m"}') == b'{"model": "m"}'


# -- client-run Responses tools -----------------------------------------------------------------


def test_responses_client_run_tools_both_ways() -> None:
    req = responses.decode_request(responses_request(
        tools=[{"type": "local_shell"}, {"type": "shell", "environment": {"type": "local"}},
               {"type": "apply_patch"},
               {"type": "shell", "environment": {"type": "container_auto"}}],
        input=[{"role": "user", "content": "go"},
               {"type": "local_shell_call", "id": "lsh_1", "call_id": "c1", "status": "completed",
                "action": {"type": "exec", "command": ["ls"], "env": {}}},
               {"type": "local_shell_call_output", "id": "c1", "output": "a.txt"},
               {"type": "shell_call", "call_id": "c2", "action": {"commands": ["pwd"]}},
               {"type": "shell_call_output", "call_id": "c2", "output": [
                   {"stdout": "/", "stderr": "", "outcome": {"type": "exit", "exit_code": 0}}]},
               {"type": "apply_patch_call", "call_id": "c3", "status": "completed",
                "operation": {"type": "delete_file", "path": "x"}},
               {"type": "apply_patch_call_output", "call_id": "c3", "status": "failed",
                "output": "no such file"}]))
    assert [t.name for t in req.tools] == ["local_shell", "shell", "apply_patch"]
    assert req.passthrough is not None and req.passthrough.required == [
        "tools.3: shell (container_auto): OpenAI runs the commands in its own container"]
    calls = [b for m in req.messages for b in m.content if isinstance(b, ToolUseBlock)]
    assert [(c.name, c.input) for c in calls] == [
        ("local_shell", {"command": ["ls"], "env": {}}), ("shell", {"commands": ["pwd"]}),
        ("apply_patch", {"type": "delete_file", "path": "x"})]
    results = [b for m in req.messages for b in m.content if isinstance(b, ToolResultBlock)]
    assert results[2].is_error and results[2].text() == "no such file"
    body = responses.encode_request(req)  # a Responses upstream gets them as they were
    assert [i["type"] for i in body["input"][1:]] == [
        "local_shell_call", "local_shell_call_output", "shell_call", "shell_call_output",
        "apply_patch_call", "apply_patch_call_output"]
    assert body["input"][4]["output"][0]["stdout"] == "/"
    assert body["input"][6]["status"] == "failed"
    assert body["tools"][:3] == [{"type": "local_shell"},
                                 {"type": "shell", "environment": {"type": "local"}},
                                 {"type": "apply_patch"}]
    answer = Response(id="resp_1", stop_reason="tool_use", content=[
        ToolUseBlock(id="c9", name="apply_patch",
                     input={"type": "create_file", "path": "a.py", "diff": "+x"}),
        ToolUseBlock(id="c8", name="shell", input={"commands": ["make test"]})])
    out = responses.encode_response(answer, request=req)["output"]
    assert [(i["type"], i["call_id"]) for i in out] == [("apply_patch_call", "c9"),
                                                        ("shell_call", "c8")]
    assert out[0]["operation"] == {"type": "create_file", "path": "a.py", "diff": "+x"}
    encoder = responses.StreamEncoder(request=req, response_id="resp_1")
    list(encoder.encode(events_from_response(answer, chunk_size=3)))
    assert encoder.final is not None and encoder.final["output"] == out
