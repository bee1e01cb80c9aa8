"""The Messages request surface, row by row of the policy table in docs/server.md: each field
is applied, accepted and ignored, passed through to an Anthropic upstream, or refused with a
clean 400 naming it. The upstream is an :class:`AnthropicBackend` whose transport records
what it would have sent."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx2
import pytest

from tooluse.backends.anthropic import AnthropicBackend
from tooluse.backends.scripted import ScriptedBackend
from tooluse.messages import Request, Response, TextBlock, ToolUseBlock
from tooluse.runner.context_edits import CLEARED
from tooluse.server import ServerThread, create_app

TOOL = {"name": "get_weather", "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}
BASE: dict[str, Any] = {"model": "m", "max_tokens": 50, "messages": [{"role": "user", "content": "hi"}]}

_ANSWER = {
    "id": "msg_up", "type": "message", "role": "assistant", "model": "m",
    "content": [{"type": "text", "text": "from upstream"}], "stop_reason": "end_turn",
    "stop_sequence": None, "usage": {"input_tokens": 3, "output_tokens": 2},
}


class Upstream:
    """What an Anthropic upstream received: bodies and headers."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        self.bodies.append(json.loads(request.content))
        self.headers.append(dict(request.headers))
        return httpx2.Response(200, json=_ANSWER)

    async def ahandle(self, request: httpx2.Request) -> httpx2.Response:
        await request.aread()
        return self.handle(request)


@pytest.fixture()
def scripted() -> Iterator[tuple[ServerThread, ScriptedBackend]]:
    backend = ScriptedBackend(lambda request: "ok")
    with ServerThread(create_app(backend)) as srv:
        yield srv, backend


@pytest.fixture()
def upstream() -> Iterator[tuple[ServerThread, Upstream]]:
    seen = Upstream()
    backend = AnthropicBackend(
        "m", base_url="http://upstream.invalid", api_key="k", max_retries=0,
        transport=httpx2.MockTransport(seen.handle),
        async_transport=httpx2.MockTransport(seen.ahandle),
    )
    with ServerThread(create_app(backend)) as srv:
        yield srv, seen


def post(url: str, body: dict[str, Any], headers: dict[str, str] | None = None,
         path: str = "/v1/messages") -> httpx2.Response:
    return httpx2.post(url + path, json=body, headers=headers or {}, timeout=20)


def error_of(response: httpx2.Response) -> dict[str, Any]:
    assert response.status_code == 400, response.text
    body = response.json()
    assert body["type"] == "error" and body["error"]["type"] == "invalid_request_error"
    return dict(body["error"])


# -- top level ------------------------------------------------------------------------------


@pytest.mark.parametrize("thinking", [
    {"type": "enabled", "budget_tokens": 2048},
    {"type": "enabled", "budget_tokens": 2048, "display": "summarized"},
    {"type": "adaptive"},
    {"type": "adaptive", "display": "omitted"},
    {"type": "disabled"},
])
def test_thinking_is_forwarded_unchanged_and_read_elsewhere(
    upstream: Any, scripted: Any, thinking: dict[str, Any]
) -> None:
    srv, seen = upstream
    response = post(srv.url, {**BASE, "thinking": thinking})
    assert response.status_code == 200, response.text
    assert seen.bodies[-1]["thinking"] == thinking
    other, backend = scripted
    assert post(other.url, {**BASE, "thinking": thinking}).status_code == 200
    reasoning = backend.requests[-1].reasoning
    assert reasoning is not None and reasoning.mode == thinking["type"]
    assert reasoning.budget_tokens == thinking.get("budget_tokens")


def test_thinking_is_validated(scripted: Any) -> None:
    srv, _ = scripted
    error = error_of(post(srv.url, {**BASE, "thinking": {"type": "enabled", "budget_tokens": 10}}))
    assert error["message"].startswith("thinking.budget_tokens")
    error = error_of(post(srv.url, {**BASE, "thinking": {"type": "sometimes"}}))
    assert error["message"].startswith("thinking.type")


CONTEXT_EDITS = {"edits": [
    {"type": "clear_thinking_20251015", "keep": "all"},
    {"type": "clear_tool_uses_20250919", "trigger": {"type": "tool_uses", "value": 1},
     "keep": {"type": "tool_uses", "value": 0}, "clear_tool_inputs": True},
]}
#: A history whose one tool result the clear_tool_uses edit above would clear.
TOOL_HISTORY = [
    {"role": "user", "content": "weather?"},
    {"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Oslo"}}]},
    {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "12C and rain"}]},
]


def test_context_management_is_forwarded_to_an_anthropic_upstream(upstream: Any) -> None:
    srv, seen = upstream
    body = {**BASE, "tools": [TOOL], "messages": TOOL_HISTORY, "context_management": CONTEXT_EDITS}
    assert post(srv.url, body).status_code == 200
    assert seen.bodies[-1]["context_management"] == CONTEXT_EDITS
    assert seen.bodies[-1]["messages"] == TOOL_HISTORY  # the upstream applies the edits


def test_context_management_is_applied_for_other_backends(scripted: Any) -> None:
    """The written policy: for a backend that is not the Messages API the gateway applies
    the edits itself (tests/server/test_server_context_editing.py has the details)."""
    srv, backend = scripted
    body = {**BASE, "tools": [TOOL], "messages": TOOL_HISTORY, "context_management": CONTEXT_EDITS}
    response = post(srv.url, body)
    assert response.status_code == 200
    seen = backend.requests[-1]
    assert seen.messages[1].tool_uses[0].input == {}
    assert seen.messages[2].tool_results[0].text() == CLEARED
    assert response.json()["context_management"]["applied_edits"][0]["cleared_tool_uses"] == 1


def test_context_management_is_validated(scripted: Any) -> None:
    error = error_of(post(scripted[0].url, {**BASE, "context_management": {"edits": "all"}}))
    assert error["message"].startswith("context_management.edits")


@pytest.mark.parametrize(("field", "value"), [
    ("output_config", {"effort": "high"}),
    ("service_tier", "auto"),
    ("inference_geo", "us"),
    ("container", "container_011"),
    ("cache_control", {"type": "ephemeral", "ttl": "1h"}),
])
def test_forwarded_fields_reach_an_anthropic_upstream_and_are_ignored_elsewhere(
    upstream: Any, scripted: Any, field: str, value: Any
) -> None:
    srv, seen = upstream
    assert post(srv.url, {**BASE, field: value}).status_code == 200
    assert seen.bodies[-1][field] == value
    other, backend = scripted
    assert post(other.url, {**BASE, field: value}).json()["content"][0]["text"] == "ok"
    assert backend.requests[-1].passthrough is not None  # kept, and ignored by the backend


def test_service_tier_is_validated(scripted: Any) -> None:
    error = error_of(post(scripted[0].url, {**BASE, "service_tier": "premium"}))
    assert error["message"].startswith("service_tier")


def test_metadata_user_id_is_any_string(scripted: Any) -> None:
    srv, backend = scripted
    user_id = json.dumps({"device_id": "abc", "session_id": "s"})
    assert post(srv.url, {**BASE, "metadata": {"user_id": user_id}}).status_code == 200
    assert backend.requests[-1].metadata == {"user_id": user_id}


def test_unknown_top_level_fields_stay_errors(scripted: Any) -> None:
    error = error_of(post(scripted[0].url, {**BASE, "frobnicate": True}))
    assert error["message"] == "frobnicate: Extra inputs are not permitted"


# -- structured output -----------------------------------------------------------------------

FORMAT = {"type": "json_schema", "schema": {"type": "object", "properties": {"n": {"type": "integer"}},
                                            "required": ["n"], "additionalProperties": False}}


def test_output_format_is_forwarded_to_an_anthropic_upstream(upstream: Any) -> None:
    srv, seen = upstream
    assert post(srv.url, {**BASE, "output_config": {"format": FORMAT}}).status_code == 200
    assert seen.bodies[-1]["output_config"] == {"format": FORMAT}


def test_output_format_is_refused_where_it_cannot_be_guaranteed(scripted: Any) -> None:
    error = error_of(post(scripted[0].url, {**BASE, "output_config": {"format": FORMAT}}))
    assert "structured output" in error["message"] and "scripted" in error["message"]


def test_output_format_schema_is_checked(scripted: Any) -> None:
    bad = {"type": "json_schema", "schema": {"type": "nonsense"}}
    error = error_of(post(scripted[0].url, {**BASE, "output_config": {"format": bad}}))
    assert error["message"].startswith("output_config.format.schema")


# -- messages and blocks ----------------------------------------------------------------------


def test_system_role_messages_join_the_system_prompt(scripted: Any) -> None:
    srv, backend = scripted
    body = {**BASE, "system": "base", "messages": [
        {"role": "user", "content": "hi"},
        {"role": "system", "content": [{"type": "text", "text": "mid-conversation note"}]},
        {"role": "user", "content": "again"},
    ]}
    assert post(srv.url, body).status_code == 200
    seen = backend.requests[-1]
    assert [b.text for b in seen.system] == ["base", "mid-conversation note"]
    assert len(seen.messages) == 1 and seen.messages[0].text() == "hiagain"


def test_text_documents_and_search_results_are_carried_as_text(scripted: Any) -> None:
    srv, backend = scripted
    content = [
        {"type": "document", "title": "Notes", "source": {"type": "text", "media_type": "text/plain",
                                                          "data": "the sky is green"}},
        {"type": "search_result", "source": "https://example.com/a", "title": "A",
         "content": [{"type": "text", "text": "result text"}]},
        {"type": "text", "text": "what colour?"},
    ]
    assert post(srv.url, {**BASE, "messages": [{"role": "user", "content": content}]}).status_code == 200
    texts = [b.text for b in backend.requests[-1].messages[0].content if isinstance(b, TextBlock)]
    assert texts[0] == "Notes\n\nthe sky is green"
    assert texts[1] == "A\nhttps://example.com/a\n\nresult text"


def test_pdf_documents_are_refused_naming_the_source(scripted: Any) -> None:
    content = [{"type": "document", "source": {"type": "base64", "media_type": "application/pdf",
                                               "data": "JVBERi0="}}]
    error = error_of(post(scripted[0].url, {**BASE, "messages": [{"role": "user", "content": content}]}))
    assert error["message"].startswith("messages.0.content.0.source.type")


THINKING_HISTORY = [
    {"role": "user", "content": "hi"},
    {"role": "assistant", "content": [
        {"type": "thinking", "thinking": "hmm", "signature": "EqQBCkgIARAB+/sig=="},
        {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/Laf=="},
        {"type": "text", "text": "hello"},
    ]},
    {"role": "user", "content": "more"},
]


def test_thinking_blocks_in_history_are_carried_and_forwarded_unchanged(
    upstream: Any, scripted: Any
) -> None:
    srv, seen = upstream
    assert post(srv.url, {**BASE, "messages": THINKING_HISTORY}).status_code == 200
    assert seen.bodies[-1]["messages"] == THINKING_HISTORY
    other, backend = scripted
    assert post(other.url, {**BASE, "messages": THINKING_HISTORY}).status_code == 200
    assistant = backend.requests[-1].messages[1]
    assert [b.type for b in assistant.content] == ["thinking", "redacted_thinking", "text"]
    assert assistant.thinking[0].signature == "EqQBCkgIARAB+/sig=="  # type: ignore[union-attr]


def test_unsigned_history_thinking_is_not_sent_to_an_anthropic_upstream(upstream: Any) -> None:
    """A thinking block without a signature (another vendor's reasoning) would make the API
    refuse the request: it is dropped (logged), the rest goes on."""
    srv, seen = upstream
    history = [THINKING_HISTORY[0], {**THINKING_HISTORY[1], "content": [
        {"type": "thinking", "thinking": "from a local model", "signature": ""},
        {"type": "text", "text": "hello"}]}, THINKING_HISTORY[2]]
    assert post(srv.url, {**BASE, "messages": history}).status_code == 200
    assert seen.bodies[-1]["messages"][1]["content"] == "hello"


# -- tools -----------------------------------------------------------------------------------

TOOL_EXTRAS = {
    "type": "custom", "strict": True, "defer_loading": True,
    "input_examples": [{"city": "Paris"}], "eager_input_streaming": True,
    "allowed_callers": ["direct"], "cache_control": {"type": "ephemeral", "ttl": "5m"},
}


def test_tool_fields_are_accepted_and_forwarded(upstream: Any, scripted: Any) -> None:
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
              "properties": {"city": {"type": "string"}}, "additionalProperties": False}
    tool = {**TOOL, **TOOL_EXTRAS, "input_schema": schema}
    srv, seen = upstream
    assert post(srv.url, {**BASE, "tools": [tool]}).status_code == 200
    assert seen.bodies[-1]["tools"] == [{k: v for k, v in tool.items() if k != "type"}]
    other, backend = scripted
    assert post(other.url, {**BASE, "tools": [tool]}).status_code == 200
    assert backend.requests[-1].tools == []  # deferred, and nothing loaded it
    loaded = {k: v for k, v in tool.items() if k != "defer_loading"}
    assert post(other.url, {**BASE, "tools": [loaded]}).status_code == 200
    spec = backend.requests[-1].tools[0]
    assert spec.strict is True and spec.input_schema == schema
    assert spec.input_examples == [{"city": "Paris"}]


SERVER_TOOL = {"type": "web_search_20250305", "name": "web_search", "max_uses": 3}


def test_server_tools_are_refused_where_no_upstream_runs_them(scripted: Any) -> None:
    error = error_of(post(scripted[0].url, {**BASE, "tools": [TOOL, SERVER_TOOL]}))
    assert error["message"].startswith("tools.1: tool type 'web_search_20250305'")


def test_server_tools_are_passed_to_an_anthropic_upstream(upstream: Any) -> None:
    srv, seen = upstream
    bash = {"type": "bash_20250124", "name": "bash"}
    assert post(srv.url, {**BASE, "tools": [TOOL, SERVER_TOOL, bash]}).status_code == 200
    assert seen.bodies[-1]["tools"][1:] == [SERVER_TOOL, bash]


def test_a_tool_without_a_versioned_type_is_refused(scripted: Any) -> None:
    error = error_of(post(scripted[0].url, {**BASE, "tools": [{"type": "websearch", "name": "w"}]}))
    assert error["message"].startswith("tools.0.type")


# -- betas, headers, query strings -------------------------------------------------------------


def test_thread_is_refused_with_the_error_code_sdks_fall_back_on(scripted: Any) -> None:
    error = error_of(post(scripted[0].url, {**BASE, "thread": {"type": "create"}}))
    assert error["details"] == {"error_code": "thread_unsupported_request", "unsupported": []}
    assert error["message"].startswith("thread:")


def test_bad_or_unreachable_mcp_servers_are_refused(scripted: Any) -> None:
    servers = [{"type": "url", "url": "https://127.0.0.1:9/mcp", "name": "x"}]
    error = error_of(post(scripted[0].url, {**BASE, "mcp_servers": [{**servers[0], "x": 1}]}))
    assert error["message"].startswith("mcp_servers.0.x:")
    error = error_of(post(scripted[0].url, {**BASE, "mcp_servers": servers}))
    assert error["message"].startswith("MCP server 'x':")
    assert "not a public address" in error["message"]  # loopback: refused unless allowed


def test_beta_header_is_forwarded_verbatim_and_query_strings_ignored(upstream: Any) -> None:
    srv, seen = upstream
    betas = "claude-code-20250219,some-future-beta-2027-01-01"
    response = post(srv.url, BASE, {"anthropic-beta": betas}, path="/v1/messages?beta=true")
    assert response.status_code == 200
    assert seen.headers[-1]["anthropic-beta"] == betas


def test_head_root_answers_200(scripted: Any) -> None:
    assert httpx2.head(scripted[0].url + "/", timeout=10).status_code == 200


# -- the real SDK ------------------------------------------------------------------------------


def test_sdk_thinking_and_output_config_requests(scripted: Any) -> None:
    srv, _ = scripted
    client = anthropic.Anthropic(base_url=srv.url, api_key="k", max_retries=0)
    msg = client.messages.create(
        model="m", max_tokens=100, messages=[{"role": "user", "content": "hi"}],
        thinking={"type": "enabled", "budget_tokens": 1024},
        extra_body={"output_config": {"effort": "low"}},
    )
    assert msg.content[0].type == "text" and msg.content[0].text == "ok"
    with client.beta.messages.stream(
        model="m", max_tokens=100, messages=[{"role": "user", "content": "hi"}],
        thinking={"type": "adaptive"}, betas=["interleaved-thinking-2025-05-14"],
    ) as stream:
        assert stream.get_final_message().content[0].text == "ok"  # type: ignore[union-attr]


def test_sdk_tool_runner_completes() -> None:
    """``beta.messages.tool_runner`` first sends ``thread``; the gateway's
    ``thread_unsupported_request`` makes it go on without, and the loop completes."""

    def script(request: Request) -> Response:
        results = request.messages[-1].tool_results
        if results:
            return Response(content=[TextBlock(text=f"it is {results[0].text()}")], stop_reason="end_turn")
        return Response(content=[ToolUseBlock(id="toolu_1", name="get_weather", input={"city": "Oslo"})],
                        stop_reason="tool_use")

    backend = ScriptedBackend(script)
    calls: list[str] = []

    @anthropic.beta_tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        calls.append(city)
        return "sunny"

    app = create_app(backend)
    statuses: list[int] = []

    async def recording(scope: Any, receive: Any, send: Any) -> None:
        async def record(message: Any) -> None:
            if message["type"] == "http.response.start":
                statuses.append(message["status"])
            await send(message)

        await app(scope, receive, record if scope["type"] == "http" else send)

    with ServerThread(recording) as srv:
        client = anthropic.Anthropic(base_url=srv.url, api_key="k", max_retries=0)
        runner = client.beta.messages.tool_runner(
            model="m", max_tokens=100, tools=[get_weather],
            messages=[{"role": "user", "content": "weather in Oslo?"}],
        )
        final = runner.until_done()
    assert calls == ["Oslo"]
    assert final.content[0].text == "it is sunny"  # type: ignore[union-attr]
    assert statuses == [400, 200, 200]  # the threaded try, then the loop without a thread


# -- a server tool's answer from an Anthropic upstream -------------------------------------------

_SEARCH_BLOCKS = [
    {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "x"}},
    {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1",
     "content": [{"type": "web_search_result", "url": "https://e.com", "title": "E",
                  "encrypted_content": "abc"}]},
    {"type": "text", "text": "It is sunny.",
     "citations": [{"type": "web_search_result_location", "url": "https://e.com", "title": "E",
                    "encrypted_index": "i", "cited_text": "sunny"}]},
]


def _sse(events: list[dict[str, Any]]) -> bytes:
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def _search_stream() -> bytes:
    events: list[dict[str, Any]] = [{"type": "message_start", "message": {
        "id": "msg_s", "type": "message", "role": "assistant", "model": "m", "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 5, "output_tokens": 0}}}]
    events += [
        {"type": "content_block_start", "index": 0, "content_block": {**_SEARCH_BLOCKS[0], "input": {}}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": '{"query": "x"}'}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": _SEARCH_BLOCKS[1]},
        {"type": "content_block_stop", "index": 1},
        {"type": "content_block_start", "index": 2, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 2, "delta": {"type": "citations_delta", "citation": {"type": "web_search_result_location"}}},
        {"type": "content_block_delta", "index": 2, "delta": {"type": "text_delta", "text": "It is sunny."}},
        {"type": "content_block_stop", "index": 2},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None}, "usage": {"output_tokens": 9}},
        {"type": "message_stop"},
    ]
    return _sse(events)


def test_a_server_tool_answer_from_the_upstream_reaches_the_client() -> None:
    """The upstream runs web search; its own blocks are left out (the neutral model cannot
    carry them) and the client gets the answer, whole or streamed."""

    def handle(request: httpx2.Request) -> httpx2.Response:
        if json.loads(request.content).get("stream"):
            return httpx2.Response(200, content=_search_stream(), headers={"content-type": "text/event-stream"})
        return httpx2.Response(200, json={**_ANSWER, "content": _SEARCH_BLOCKS})

    async def ahandle(request: httpx2.Request) -> httpx2.Response:
        await request.aread()
        return handle(request)

    backend = AnthropicBackend("m", base_url="http://upstream.invalid", api_key="k", max_retries=0,
                               transport=httpx2.MockTransport(handle),
                               async_transport=httpx2.MockTransport(ahandle))
    with ServerThread(create_app(backend)) as srv:
        client = anthropic.Anthropic(base_url=srv.url, api_key="k", max_retries=0)
        ask: dict[str, Any] = {"model": "m", "max_tokens": 100, "tools": [SERVER_TOOL],
                               "messages": [{"role": "user", "content": "weather?"}]}
        whole = client.messages.create(**ask)
        with client.messages.stream(**ask) as stream:
            streamed = stream.get_final_message()
    for message in (whole, streamed):
        assert [b.type for b in message.content] == ["text"]
        assert message.content[0].text == "It is sunny."  # type: ignore[union-attr]
        assert message.stop_reason == "end_turn"
