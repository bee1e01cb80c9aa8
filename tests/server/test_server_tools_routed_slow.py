"""The server tools the gateway runs, on a routed gateway (``create_app(config=...)``): a
tool search and an MCP server run around whatever backend the request's route picks (a
route of two deployments, a route whose own backend is down and falls back), each model
turn a try of the route; a route to an Anthropic-API upstream gets the server tools
forwarded as sent instead, and runs them itself."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from routing_procs import fake_upstreams, write_config
from test_server_mcp_slow import QUESTION as SUM_QUESTION
from test_server_mcp_slow import TOKEN, calc_app, calc_model
from test_server_tool_search import ALWAYS, DEFERRED, QUESTION, SEARCH, searching_model

from tooluse.backends.registry import register_backend
from tooluse.backends.scripted import ScriptedBackend
from tooluse.errors import BackendError
from tooluse.messages import Request, Response
from tooluse.server import ServerThread, create_app

pytestmark = pytest.mark.slow

pytest.importorskip("mcp", reason="needs the mcp extra")

#: Every scripted backend the routes built, by its spec's rest ("search-a"...).
BUILT: dict[str, ScriptedBackend] = {}


def _model(rest: str) -> Any:
    return calc_model if rest.startswith("calc") else searching_model


def _scripted(rest: str, **options: Any) -> ScriptedBackend:
    backend = ScriptedBackend(_model(rest), model=rest, chunk_size=4)
    BUILT[rest] = backend
    return backend


class Down(ScriptedBackend):
    """A route's own backend that is down: every call fails as overloaded."""

    def __init__(self) -> None:
        super().__init__(self._fail, model="down")
        self.calls = 0

    def _fail(self, request: Request) -> Response:
        self.calls += 1
        raise BackendError("down for the test", kind="overloaded", status=529)


DOWN: list[Down] = []


def _down(rest: str, **options: Any) -> Down:
    DOWN.append(Down())
    return DOWN[-1]


@pytest.fixture(autouse=True)
def _backends(monkeypatch: pytest.MonkeyPatch) -> None:
    register_backend("routed-scripted", _scripted)
    register_backend("routed-down", _down)
    BUILT.clear()
    DOWN.clear()
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.setenv(name, "sk-upstream")


@pytest.fixture(scope="module")
def mcp_url() -> Iterator[str]:
    with ServerThread(calc_app()) as server:
        yield server.url


@pytest.fixture()
def routed(tmp_path: Path) -> Iterator[tuple[ServerThread, Any]]:
    """A gateway over a config of four routes: ``small`` (two deployments of the searching
    model), ``primary`` (down, falling back to ``small``), ``calc`` (the MCP-calling
    model) and ``claude-*`` (a fake Anthropic-API upstream)."""
    with fake_upstreams(tmp_path, "up") as (upstream,):
        config = write_config(tmp_path / "gateway.toml", f"""
[[models]]
name = "small"
backend = ["routed-scripted:search-a", "routed-scripted:search-b"]

[[models]]
name = "primary"
backend = "routed-down:x"
fallbacks = ["small"]

[[models]]
name = "calc"
backend = "routed-scripted:calc"

[[models]]
name = "claude-*"
backend = "anthropic:{upstream.url}#up-model"
""")
        with ServerThread(create_app(config=config, allow_mcp_hosts=["127.0.0.1"])) as srv:
            yield srv, upstream


def _post(srv: ServerThread, body: dict[str, Any], **headers: str) -> httpx2.Response:
    return httpx2.post(srv.url + "/v1/messages", json=body, timeout=60,
                       headers={"anthropic-version": "2023-06-01", **headers})


def _search_body(model: str, stream: bool = False) -> dict[str, Any]:
    return {"model": model, "max_tokens": 200, "stream": stream,
            "tools": [ALWAYS, SEARCH, *DEFERRED],
            "messages": [{"role": "user", "content": QUESTION}]}


def _requests(*names: str) -> list[Request]:
    return [r for n in names if n in BUILT for r in BUILT[n].requests]


def test_tool_search_runs_around_the_routed_deployments(routed: Any) -> None:
    srv, upstream = routed
    answer = _post(srv, _search_body("small"))
    assert answer.status_code == 200, answer.text
    assert answer.headers["x-tooluse-route"].startswith("small[")  # one deployment of it
    body = answer.json()
    assert [b["type"] for b in body["content"]] == [
        "text", "server_tool_use", "tool_search_tool_result", "tool_use"]
    assert body["content"][-1]["name"] == "get_current_weather"
    assert body["model"] == "small"
    # the route's deployments saw two model turns: the search tool first, then the found tool
    seen = _requests("search-a", "search-b")
    assert len(seen) == 2
    assert [t.name for t in seen[0].tools] == ["ask_user", "tool_search_tool_bm25"]
    assert "get_current_weather" in [t.name for t in seen[1].tools]
    assert upstream.log() == []  # the other routes were not asked
    # streamed: the same blocks
    streamed = _post(srv, _search_body("small", stream=True))
    assert streamed.status_code == 200, streamed.text
    assert "tool_search_tool_result" in streamed.text and "get_current_weather" in streamed.text


def test_each_model_turn_falls_back_on_its_own(routed: Any) -> None:
    srv, _ = routed
    answer = _post(srv, _search_body("primary"))
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert [b["type"] for b in body["content"]][-1] == "tool_use"
    assert body["usage"]["server_tool_use"] == {
        "web_search_requests": 0, "web_fetch_requests": 0, "tool_search_requests": 1}
    assert answer.headers["x-tooluse-route"].startswith("small[")  # one deployment of it
    assert "primary=" in answer.headers["x-tooluse-attempts"]
    assert DOWN[0].calls >= 1  # the route's own backend was tried, and failed over
    assert len(_requests("search-a", "search-b")) == 2


def test_mcp_connector_runs_around_the_routed_backend(routed: Any, mcp_url: str) -> None:
    srv, upstream = routed
    answer = _post(srv, {
        "model": "calc", "max_tokens": 100,
        "messages": [{"role": "user", "content": SUM_QUESTION}],
        "mcp_servers": [{"type": "url", "url": mcp_url + "/mcp", "name": "calc",
                         "authorization_token": TOKEN}],
        "tools": [{"type": "mcp_toolset", "mcp_server_name": "calc"}]},
        **{"anthropic-beta": "mcp-client-2025-11-20"})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert [b["type"] for b in body["content"]] == ["mcp_tool_use", "mcp_tool_result", "text"]
    assert body["content"][-1]["text"] == "sum: 5"
    assert [t.name for t in BUILT["calc"].requests[0].tools] == ["add", "fail"]
    assert upstream.log() == []


def test_an_anthropic_api_route_gets_the_server_tools_forwarded(routed: Any,
                                                                 mcp_url: str) -> None:
    srv, upstream = routed
    answer = _post(srv, _search_body("claude-up"))
    assert answer.status_code == 200, answer.text
    assert answer.json()["content"] == [{"type": "text", "text": "from up"}]
    (sent,) = upstream.log()
    # forwarded as the client sent them: the search tool by its type, the deferred tools
    assert sent["tools"][:2] == ["ask_user", "tool_search_tool_bm25_20251119"]
    assert len(sent["tools"]) == 2 + len(DEFERRED)
    answer = _post(srv, {
        "model": "claude-up", "max_tokens": 100,
        "messages": [{"role": "user", "content": SUM_QUESTION}],
        "mcp_servers": [{"type": "url", "url": mcp_url + "/mcp", "name": "calc",
                         "authorization_token": TOKEN}],
        "tools": [{"type": "mcp_toolset", "mcp_server_name": "calc"}]},
        **{"anthropic-beta": "mcp-client-2025-11-20"})
    assert answer.status_code == 200, answer.text
    sent = upstream.log()[-1]
    assert sent["mcp_servers"] == ["calc"] and sent["tools"] == ["mcp_toolset"]
    assert not _requests("search-a", "search-b", "calc")  # no scripted route was asked
