"""Tool search run by the gateway for a backend that has none (a scripted model): deferred
tools out of the prompt, the search tool in, the search answered in each API's own blocks,
whole and streamed, through the official SDKs; the found tools loaded after the others;
a client's history with those blocks understood; the searches counted; the loop bounded."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import httpx2
import openai
import pytest
import tool_catalog as catalog

from tooluse.backends.scripted import ScriptedBackend
from tooluse.messages import Request, Response, TextBlock, ToolResultBlock, ToolUseBlock
from tooluse.server import ServerThread, create_app

SEARCH = {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}
DEFERRED = [{**t, "defer_loading": True} for t in catalog.TOOLS]
ALWAYS = {"name": "ask_user", "description": "Ask the user a question.",
          "input_schema": {"type": "object", "properties": {"question": {"type": "string"}}}}
QUESTION = "What's the weather like in Lisbon right now?"


def searching_model(request: Request) -> Response:
    """Searches with the user's words when its tools cannot do the job, calls
    get_current_weather once it is offered, answers once a client result came back."""
    names = [t.name for t in request.tools]
    last = request.messages[-1]
    search = next((n for n in names if n.startswith("tool_search") or n == "tool_search"), None)
    results = [b for b in last.content if isinstance(b, ToolResultBlock)]
    searched = results and (results[-1].text().startswith(("Found", "No tool"))
                            or results[-1].text().endswith("is now available."))
    if results and not searched:
        return Response(content=[TextBlock(text=f"done: {results[-1].text()}")],
                        stop_reason="end_turn")
    weather = next((n for n in names if n.endswith("get_current_weather")), None)
    if weather is not None:
        return Response(content=[ToolUseBlock(id="toolu_w", name=weather,
                                              input={"city": "Lisbon"})],
                        stop_reason="tool_use")
    if search is not None:
        query = QUESTION if search != "tool_search_tool_regex" else "weather"
        return Response(content=[TextBlock(text="Let me look for a tool."),
                                 ToolUseBlock(id=f"toolu_s{len(request.messages)}", name=search,
                                              input={"query": query})],
                        stop_reason="tool_use")
    return Response(content=[TextBlock(text="no tool")], stop_reason="end_turn")


@pytest.fixture()
def gateway() -> Iterator[tuple[ServerThread, ScriptedBackend]]:
    backend = ScriptedBackend(searching_model, chunk_size=4)
    with ServerThread(create_app(backend)) as srv:
        yield srv, backend


def messages(srv: ServerThread, **body: Any) -> dict[str, Any]:
    response = httpx2.post(srv.url + "/v1/messages", timeout=30, json={
        "model": "m", "max_tokens": 200, "tools": [ALWAYS, SEARCH, *DEFERRED],
        "messages": [{"role": "user", "content": QUESTION}], **body})
    assert response.status_code == 200, response.text
    data: dict[str, Any] = response.json()
    return data


def test_messages_search_then_the_found_tool(gateway: tuple[ServerThread, ScriptedBackend]
                                             ) -> None:
    srv, backend = gateway
    body = messages(srv)
    assert [b["type"] for b in body["content"]] == [
        "text", "server_tool_use", "tool_search_tool_result", "tool_use"]
    use, result, call = body["content"][1:]
    assert use["name"] == "tool_search_tool_bm25" and use["input"] == {"query": QUESTION}
    assert use["id"].startswith("srvtoolu_") and result["tool_use_id"] == use["id"]
    found = [r["tool_name"] for r in result["content"]["tool_references"]]
    assert found[0] == "get_current_weather" and len(found) <= 5
    assert call == {"type": "tool_use", "id": "toolu_w", "name": "get_current_weather",
                    "input": {"city": "Lisbon"}}
    assert body["stop_reason"] == "tool_use"
    assert body["usage"]["server_tool_use"] == {
        "web_search_requests": 0, "web_fetch_requests": 0, "tool_search_requests": 1}
    first, second = backend.requests
    # the prompt holds the tools that are not deferred and the search tool only ...
    assert [t.name for t in first.tools] == ["ask_user", "tool_search_tool_bm25"]
    # ... then the found ones after them, in the order found
    assert [t.name for t in second.tools] == ["ask_user", "tool_search_tool_bm25", *found]
    assert not any(t.deferred for t in second.tools)
    # the search as the model sees it: its call and a result naming the tools
    assert [m.role for m in second.messages] == ["user", "assistant", "user"]
    assert second.messages[1].content[-1] == ToolUseBlock(
        id=use["id"], name="tool_search_tool_bm25", input={"query": QUESTION})
    assert "get_current_weather" in second.messages[2].content[0].text()  # type: ignore[union-attr]
    # usage: both model turns' tokens, added up
    assert body["usage"]["output_tokens"] == sum(
        r.usage.output_tokens for r in (searching_model(first), searching_model(second)))


def test_messages_streamed_through_the_sdk(gateway: tuple[ServerThread, ScriptedBackend]
                                           ) -> None:
    srv, _ = gateway
    whole = messages(srv)
    client = anthropic.Anthropic(base_url=srv.url, api_key="k")
    with client.beta.messages.stream(
            model="m", max_tokens=200, messages=[{"role": "user", "content": QUESTION}],
            tools=[ALWAYS, SEARCH, *DEFERRED]) as stream:  # type: ignore[list-item]
        kinds = [(e.type, getattr(getattr(e, "content_block", None), "type", None))
                 for e in stream]
        final = stream.get_final_message()
    starts = [block for kind, block in kinds if kind == "content_block_start"]
    assert starts == ["text", "server_tool_use", "tool_search_tool_result", "tool_use"]
    streamed = final.model_dump(mode="json", exclude_none=True)
    assert [b["type"] for b in streamed["content"]] == [b["type"] for b in whole["content"]]
    assert streamed["content"][1]["input"] == whole["content"][1]["input"]
    assert streamed["content"][2]["content"]["tool_references"] == \
        whole["content"][2]["content"]["tool_references"]
    assert streamed["content"][3] == whole["content"][3]
    assert final.stop_reason == "tool_use"


def test_messages_history_sent_back_is_understood(gateway: tuple[ServerThread, ScriptedBackend]
                                                  ) -> None:
    srv, backend = gateway
    first = messages(srv)
    history = [{"role": "user", "content": QUESTION},
               {"role": "assistant", "content": first["content"]},
               {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_w",
                                             "content": "21 C, sunny"}]}]
    body = messages(srv, messages=history)
    assert body["content"] == [{"type": "text", "text": "done: 21 C, sunny"}]
    seen = backend.requests[-1]
    found = [r["tool_name"] for r in first["content"][2]["content"]["tool_references"]]
    assert [t.name for t in seen.tools] == ["ask_user", "tool_search_tool_bm25", *found]
    assert [m.role for m in seen.messages] == ["user", "assistant", "user", "assistant", "user"]


def test_a_client_tool_search_loads_by_tool_reference(
        gateway: tuple[ServerThread, ScriptedBackend]) -> None:
    """Claude Code's way: its own ToolSearch tool returns tool_reference blocks; a deferred
    placeholder is never in the model's prompt."""
    srv, backend = gateway
    placeholder = {"name": "DeferredToolPlaceholder", "description": "x", "defer_loading": True,
                   "input_schema": {"type": "object"}}
    tool_search = {"name": "ToolSearch", "description": "find tools",
                   "input_schema": {"type": "object", "properties": {"query": {"type": "string"}}}}
    tools = [tool_search, placeholder, *DEFERRED]
    history = [{"role": "user", "content": QUESTION},
               {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_t",
                                                  "name": "ToolSearch",
                                                  "input": {"query": "weather"}}]},
               {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_t",
                                             "content": [{"type": "tool_reference",
                                                          "tool_name": "get_current_weather"}]}]}]
    body = messages(srv, tools=tools, messages=history)
    assert body["content"][-1]["name"] == "get_current_weather"
    seen = backend.requests[-1]
    assert [t.name for t in seen.tools] == ["ToolSearch", "get_current_weather"]
    result = seen.messages[2].content[0]
    assert isinstance(result, ToolResultBlock)
    assert result.text() == "Tool get_current_weather is now available."


def test_regex_search_and_a_bad_pattern(gateway: tuple[ServerThread, ScriptedBackend]) -> None:
    srv, _ = gateway
    regex = {"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"}
    body = messages(srv, tools=[regex, *DEFERRED])
    found = [r["tool_name"] for r in body["content"][2]["content"]["tool_references"]]
    assert found == ["get_current_weather", "get_weather_forecast"]
    assert body["content"][3]["name"] == "get_current_weather"

    def bad_pattern(request: Request) -> Response:
        return Response(content=[ToolUseBlock(id="toolu_x", name="tool_search_tool_regex",
                                              input={"query": "(unclosed"})],
                        stop_reason="tool_use")

    with ServerThread(create_app(ScriptedBackend(bad_pattern), server_tool_turns=2)) as other:
        body = messages(other, tools=[regex, *DEFERRED])
    assert body["content"][1]["content"] == {"type": "tool_search_tool_result_error",
                                             "error_code": "invalid_tool_input"}
    # two model turns, each a failed search: the gateway's bound ends it, to be sent back
    assert body["stop_reason"] == "pause_turn"
    assert body["usage"]["server_tool_use"] == {
        "web_search_requests": 0, "web_fetch_requests": 0, "tool_search_requests": 2}


def test_a_paused_turn_goes_on_when_sent_back() -> None:
    backend = ScriptedBackend(searching_model)
    with ServerThread(create_app(backend, server_tool_turns=1)) as srv:
        paused = messages(srv)
        assert paused["stop_reason"] == "pause_turn"
        assert paused["content"][-1]["type"] == "tool_search_tool_result"
        body = messages(srv, messages=[{"role": "user", "content": QUESTION},
                                       {"role": "assistant", "content": paused["content"]}])
    assert body["content"][-1]["name"] == "get_current_weather"
    assert body["stop_reason"] == "tool_use"


# -- Responses --------------------------------------------------------------------------------


def responses_tools() -> list[dict[str, Any]]:
    weather = [{"type": "function", "name": t["name"], "description": t["description"],
                "parameters": t["input_schema"], "defer_loading": True}
               for t in catalog.TOOLS if t["name"].startswith("get_")]
    return [{"type": "tool_search"},
            {"type": "namespace", "name": "forecasts", "description": "Weather and prices",
             "tools": weather}]


def test_responses_search_whole_and_streamed(gateway: tuple[ServerThread, ScriptedBackend]
                                             ) -> None:
    srv, backend = gateway
    client = openai.OpenAI(base_url=srv.url + "/v1", api_key="k")
    response = client.responses.create(model="m", input=QUESTION,
                                       tools=responses_tools())  # type: ignore[arg-type]
    kinds = [item.type for item in response.output]
    assert kinds == ["message", "tool_search_call", "tool_search_output", "function_call"]
    call, output, fn = response.output[1:]
    assert call.execution == "server" and call.arguments == {"query": QUESTION}  # type: ignore[union-attr]
    namespace = output.tools[0]  # type: ignore[union-attr]
    assert namespace.type == "namespace" and namespace.name == "forecasts"
    assert namespace.tools[0].name == "get_current_weather"
    assert (fn.name, fn.namespace) == ("get_current_weather", "forecasts")  # type: ignore[union-attr]
    assert [t.name for t in backend.requests[0].tools] == ["tool_search"]
    events = list(client.responses.create(model="m", input=QUESTION, stream=True,
                                          tools=responses_tools()))  # type: ignore[arg-type]
    done = [e.item.type for e in events if e.type == "response.output_item.done"]
    assert done == kinds
    final = events[-1]
    assert final.type == "response.completed"
    assert [i.type for i in final.response.output] == kinds
    # the items sent back as input (stateless): the search is understood
    again = client.responses.create(model="m", store=False, tools=responses_tools(),  # type: ignore[arg-type]
                                    input=[{"role": "user", "content": QUESTION},
                                           *[i.model_dump(exclude_none=True)
                                             for i in response.output],  # type: ignore[misc]
                                           {"type": "function_call_output", "call_id": fn.call_id,  # type: ignore[union-attr]
                                            "output": "21 C"}])
    assert again.output_text == "done: 21 C"
    assert "forecasts__get_current_weather" in [t.name for t in backend.requests[-1].tools]
