"""MCP servers run by the gateway for a backend that has none (a scripted model), through
the clients that send them: the anthropic SDK's beta ``mcp_servers``, the openai SDK's
Responses ``mcp`` tool with and without approval, openai-agents' ``HostedMCPTool``, and
pydantic-ai's ``MCPServerTool`` on its Anthropic and OpenAI Responses models. The MCP server
is a real one, built by the test with the official ``mcp`` SDK and served over streamable
HTTP (and SSE) on 127.0.0.1, which the gateway is allowed to reach (``allow_mcp_hosts``)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx2
import openai
import pytest

pytestmark = pytest.mark.slow

pytest.importorskip("mcp", reason="needs the mcp extra")
from mcp.server.mcpserver import MCPServer as SDKServer
from mcp.server.mcpserver.exceptions import ToolError

from tooluse.backends.scripted import ScriptedBackend
from tooluse.messages import Request, Response, TextBlock, ToolResultBlock, ToolUseBlock
from tooluse.server import ServerThread, create_app

TOKEN = "mcp-t0ken"
QUESTION = "What is 2 + 3?"


def calc_app() -> Any:
    """The MCP server: ``add`` (read-only), ``fail``, behind a bearer token; streamable HTTP
    at /mcp, SSE at /sse."""
    sdk = SDKServer("calc")

    @sdk.tool(annotations={"readOnlyHint": True})
    def add(a: int, b: int) -> str:
        """Add two numbers."""
        return str(a + b)

    @sdk.tool()
    def fail(reason: str) -> str:
        """Always fails."""
        raise ToolError(f"refused: {reason}")

    http = sdk.streamable_http_app()
    sse = sdk.sse_app()

    async def guarded(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            auth = dict(scope["headers"]).get(b"authorization", b"")
            if auth != f"Bearer {TOKEN}".encode():
                await send({"type": "http.response.start", "status": 401, "headers": []})
                await send({"type": "http.response.body", "body": b"bad token"})
                return
            app = sse if scope["path"].startswith(("/sse", "/messages")) else http
            await app(scope, receive, send)
        else:
            await http(scope, receive, send)

    return guarded


def calc_model(request: Request) -> Response:
    """Calls ``add`` (or ``fail`` when asked to) once offered; answers with the result."""
    last = request.messages[-1]
    results = [b for b in last.content if isinstance(b, ToolResultBlock)]
    if results:
        prefix = "error" if results[-1].is_error else "sum"
        return Response(content=[TextBlock(text=f"{prefix}: {results[-1].text()}")],
                        stop_reason="end_turn")
    names = [t.name for t in request.tools]
    wanted = "fail" if "fail" in last.text() else "add"
    if wanted in names:
        given = {"a": 2, "b": 3} if wanted == "add" else {"reason": "asked"}
        return Response(content=[ToolUseBlock(id="toolu_c", name=wanted, input=given)],
                        stop_reason="tool_use")
    return Response(content=[TextBlock(text=f"no tool; offered: {names}")],
                    stop_reason="end_turn")


@pytest.fixture(scope="module")
def mcp_url() -> Iterator[str]:
    with ServerThread(calc_app()) as server:
        yield server.url


@pytest.fixture()
def gateway() -> Iterator[tuple[ServerThread, ScriptedBackend]]:
    backend = ScriptedBackend(calc_model)
    with ServerThread(create_app(backend, allow_mcp_hosts=["127.0.0.1"])) as srv:
        yield srv, backend


# -- Messages: the anthropic SDK's beta mcp_servers ----------------------------------------------


def server(mcp_url: str, path: str = "/mcp", token: str = TOKEN) -> dict[str, Any]:
    return {"type": "url", "url": mcp_url + path, "name": "calc", "authorization_token": token}


def test_anthropic_sdk_mcp_connector(gateway: Any, mcp_url: str) -> None:
    srv, backend = gateway
    client = anthropic.Anthropic(base_url=srv.url, api_key="k", max_retries=0)
    message = client.beta.messages.create(
        model="m", max_tokens=100, messages=[{"role": "user", "content": QUESTION}],
        mcp_servers=[server(mcp_url)],  # type: ignore[list-item]
        tools=[{"type": "mcp_toolset", "mcp_server_name": "calc"}],  # type: ignore[list-item]
        betas=["mcp-client-2025-11-20"])
    kinds = [b.type for b in message.content]
    assert kinds == ["mcp_tool_use", "mcp_tool_result", "text"]
    use, result, text = message.content
    assert (use.name, use.server_name, use.input) == ("add", "calc", {"a": 2, "b": 3})  # type: ignore[union-attr]
    assert result.tool_use_id == use.id and result.is_error is False  # type: ignore[union-attr]
    assert [c.text for c in result.content] == ["5"]  # type: ignore[union-attr]
    assert text.text == "sum: 5"  # type: ignore[union-attr]
    assert message.stop_reason == "end_turn"
    assert [t.name for t in backend.requests[0].tools] == ["add", "fail"]
    # streamed, through the SDK's own accumulation
    with client.beta.messages.stream(
            model="m", max_tokens=100, messages=[{"role": "user", "content": QUESTION}],
            mcp_servers=[server(mcp_url)],  # type: ignore[list-item]
            betas=["mcp-client-2025-04-04"]) as stream:
        final = stream.get_final_message()
    assert [b.type for b in final.content] == kinds
    assert final.content[0].input == {"a": 2, "b": 3}  # type: ignore[union-attr]


def test_messages_allow_and_deny_lists_and_tool_errors(gateway: Any, mcp_url: str) -> None:
    srv, backend = gateway

    def post(text: str, **extra: Any) -> dict[str, Any]:
        response = httpx2.post(srv.url + "/v1/messages", timeout=30, json={
            "model": "m", "max_tokens": 100, "messages": [{"role": "user", "content": text}],
            **extra})
        assert response.status_code == 200, response.text
        data: dict[str, Any] = response.json()
        return data

    post(QUESTION, mcp_servers=[server(mcp_url)], tools=[
        {"type": "mcp_toolset", "mcp_server_name": "calc", "configs": {"add": {"enabled": False}}}])
    assert [t.name for t in backend.requests[-1].tools] == ["fail"]
    post(QUESTION, mcp_servers=[{**server(mcp_url), "tool_configuration": {
        "allowed_tools": ["add"]}}])
    assert [t.name for t in backend.requests[-1].tools] == ["add"]
    body = post("please fail", mcp_servers=[server(mcp_url)])
    assert body["content"][1] == {"type": "mcp_tool_result", "tool_use_id": body["content"][0]["id"],
                                  "is_error": True, "content": [
                                      {"type": "text",
                                       "text": "Error executing tool fail: refused: asked"}]}
    assert body["content"][2]["text"] == "error: Error executing tool fail: refused: asked"
    # deferred MCP tools: not in the prompt until a search finds them
    post(QUESTION, mcp_servers=[server(mcp_url)], tools=[
        {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"},
        {"type": "mcp_toolset", "mcp_server_name": "calc", "default_config": {"defer_loading": True}}])
    assert [t.name for t in backend.requests[-1].tools] == ["tool_search_tool_bm25"]


def test_messages_refuses_what_it_cannot_reach(gateway: Any, mcp_url: str) -> None:
    srv, _ = gateway
    for servers in ([server(mcp_url, token="wrong")],
                    [{**server(mcp_url), "url": "file:///etc/passwd"}]):
        response = httpx2.post(srv.url + "/v1/messages", timeout=30, json={
            "model": "m", "max_tokens": 100, "mcp_servers": servers,
            "messages": [{"role": "user", "content": QUESTION}]})
        assert response.status_code == 400
        assert response.json()["error"]["message"].startswith("MCP server 'calc':")


def test_sse_transport(gateway: Any, mcp_url: str) -> None:
    srv, _ = gateway
    client = anthropic.Anthropic(base_url=srv.url, api_key="k", max_retries=0)
    message = client.beta.messages.create(
        model="m", max_tokens=100, messages=[{"role": "user", "content": QUESTION}],
        mcp_servers=[server(mcp_url, path="/sse")],  # type: ignore[list-item]
        betas=["mcp-client-2025-04-04"])
    assert message.content[-1].text == "sum: 5"  # type: ignore[union-attr]


# -- Responses: the openai SDK's mcp tool --------------------------------------------------------


def mcp_tool(mcp_url: str, approval: str = "never") -> dict[str, Any]:
    return {"type": "mcp", "server_label": "calc", "server_url": mcp_url + "/mcp",
            "authorization": TOKEN, "require_approval": approval}


def test_openai_responses_mcp_without_approval(gateway: Any, mcp_url: str) -> None:
    srv, _ = gateway
    client = openai.OpenAI(base_url=srv.url + "/v1", api_key="k", max_retries=0)
    response = client.responses.create(model="m", input=QUESTION,
                                       tools=[mcp_tool(mcp_url)])  # type: ignore[list-item]
    assert [i.type for i in response.output] == ["mcp_list_tools", "mcp_call", "message"]
    listing, call, _ = response.output
    assert [t.name for t in listing.tools] == ["add", "fail"]  # type: ignore[union-attr]
    assert listing.tools[0].annotations == {"readOnlyHint": True}  # type: ignore[union-attr]
    assert (call.name, call.arguments, call.output) == ("add", '{"a": 2, "b": 3}', "5")  # type: ignore[union-attr]
    assert response.output_text == "sum: 5"
    assert response.tools[0].to_dict().get("authorization") is None  # never echoed
    events = list(client.responses.create(model="m", input=QUESTION, stream=True,
                                          tools=[mcp_tool(mcp_url)]))  # type: ignore[list-item]
    kinds = [e.type for e in events]
    for kind in ("response.mcp_list_tools.completed", "response.mcp_call_arguments.done",
                 "response.mcp_call.completed"):
        assert kind in kinds
    final = events[-1]
    assert final.type == "response.completed" and final.response.output_text == "sum: 5"
    # a listing already in the conversation is not listed again in the answer
    again = client.responses.create(model="m", previous_response_id=response.id,
                                    input="And again?", tools=[mcp_tool(mcp_url)])  # type: ignore[list-item]
    assert [i.type for i in again.output] == ["mcp_call", "message"]


def test_openai_responses_mcp_with_approval(gateway: Any, mcp_url: str) -> None:
    srv, backend = gateway
    client = openai.OpenAI(base_url=srv.url + "/v1", api_key="k", max_retries=0)
    tools = [mcp_tool(mcp_url, "always")]
    asked = client.responses.create(model="m", input=QUESTION, tools=tools)  # type: ignore[arg-type]
    assert [i.type for i in asked.output] == ["mcp_list_tools", "mcp_approval_request"]
    request = asked.output[1]
    assert (request.name, request.arguments) == ("add", '{"a": 2, "b": 3}')  # type: ignore[union-attr]
    approved = client.responses.create(
        model="m", previous_response_id=asked.id, tools=tools,  # type: ignore[arg-type]
        input=[{"type": "mcp_approval_response", "approval_request_id": request.id,
                "approve": True}])
    assert [i.type for i in approved.output] == ["mcp_call", "message"]
    assert approved.output[0].approval_request_id == request.id  # type: ignore[union-attr]
    assert approved.output[0].output == "5" and approved.output_text == "sum: 5"  # type: ignore[union-attr]
    # the items sent back instead (store: false), and a denial
    denied = client.responses.create(
        model="m", store=False, tools=tools,  # type: ignore[arg-type]
        input=[{"role": "user", "content": QUESTION},
               *[i.model_dump(exclude_none=True) for i in asked.output],  # type: ignore[misc]
               {"type": "mcp_approval_response", "approval_request_id": request.id,
                "approve": False, "reason": "not now"}])
    assert [i.type for i in denied.output] == ["message"]
    assert denied.output_text.startswith("error: The user denied this call of tool 'add'")
    seen = backend.requests[-1]
    assert [m.role for m in seen.messages] == ["user", "assistant", "user"]


# -- openai-agents and pydantic-ai ----------------------------------------------------------------


def test_openai_agents_hosted_mcp_tool(gateway: Any, mcp_url: str) -> None:
    agents = pytest.importorskip("agents")
    agents.set_tracing_disabled(True)
    srv, _ = gateway
    decisions: list[str] = []

    def approve(request: Any) -> Any:
        decisions.append(request.data.name)
        return {"approve": True}

    async def run(approval: str, hook: Any) -> Any:
        provider = agents.OpenAIProvider(openai_client=openai.AsyncOpenAI(
            base_url=srv.url + "/v1", api_key="k", max_retries=0, timeout=30))
        agent = agents.Agent(name="calc", model="gpt-test", tools=[agents.HostedMCPTool(
            tool_config=mcp_tool(mcp_url, approval), on_approval_request=hook)])
        return await agents.Runner.run(agent, QUESTION,
                                       run_config=agents.RunConfig(model_provider=provider))

    assert asyncio.run(run("never", None)).final_output == "sum: 5"
    assert asyncio.run(run("always", approve)).final_output == "sum: 5"
    assert decisions == ["add"]


@pytest.mark.parametrize("provider", ["anthropic", "openai-responses"])
def test_pydantic_ai_mcp_server_tool(gateway: Any, mcp_url: str, provider: str) -> None:
    pytest.importorskip("pydantic_ai")
    from pydantic_ai import Agent
    from pydantic_ai.capabilities.native_tool import NativeTool
    from pydantic_ai.native_tools import MCPServerTool

    srv, _ = gateway
    if provider == "anthropic":
        from pydantic_ai.models.anthropic import AnthropicModel
        from pydantic_ai.providers.anthropic import AnthropicProvider

        model: Any = AnthropicModel("claude-test", provider=AnthropicProvider(
            anthropic_client=anthropic.AsyncAnthropic(base_url=srv.url, api_key="k",
                                                      max_retries=0)))
    else:
        from pydantic_ai.models.openai import OpenAIResponsesModel
        from pydantic_ai.providers.openai import OpenAIProvider

        model = OpenAIResponsesModel("gpt-test", provider=OpenAIProvider(
            openai_client=openai.AsyncOpenAI(base_url=srv.url + "/v1", api_key="k",
                                              max_retries=0)))
    agent = Agent(model, capabilities=[NativeTool(MCPServerTool(
        id="calc", url=mcp_url + "/mcp", authorization_token=TOKEN))])
    result = agent.run_sync(QUESTION)
    assert result.output == "sum: 5"
