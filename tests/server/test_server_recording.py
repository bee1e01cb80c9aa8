"""The recording proxy of the client tests (recording.py) sees a 4xx a client recovered from,
tells the policy's explained refusals from the rest, and lists a request's field paths."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest
from recording import LOG, Exchange, explained, field_paths, unexplained

from tooluse.backends.scripted import ScriptedBackend
from tooluse.errors import BackendError
from tooluse.server import ServerThread, create_app


def test_a_4xx_the_client_recovered_from_is_still_seen(request: pytest.FixtureRequest) -> None:
    """The SDK retries a 429 by itself and the call succeeds: the check still lists it."""
    backend = ScriptedBackend([BackendError("slow down", kind="rate_limit"), "fine"])
    with ServerThread(create_app(backend)) as srv:
        answer = anthropic.Anthropic(base_url=srv.url, api_key="k", max_retries=2).messages.create(
            model="m", max_tokens=10, messages=[{"role": "user", "content": "hi"}])
    assert answer.content[0].text == "fine"  # type: ignore[union-attr]
    exchanges = LOG.of(request.node.nodeid)
    assert [e.status for e in exchanges] == [429, 200]
    (found,) = unexplained(exchanges, [])
    assert found.startswith("POST /v1/messages -> 429") and "Anthropic/Python" in found
    assert unexplained(exchanges, [(429, "slow down")]) == []


def _exchange(status: int, error: str) -> Exchange:
    return Exchange(method="POST", path="/v1/messages", headers={}, status=status, error=error)


def test_only_what_the_policy_explains_is_excused() -> None:
    over = _exchange(400, '{"error": {"message": "prompt is too long: 9000 tokens > 8192 maximum"}}')
    assert explained(over) is not None
    codex = _exchange(400, '{"error": {"code": "context_length_exceeded"}}')
    assert explained(codex) is not None
    thread = _exchange(400, '{"details": {"error_code": "thread_unsupported_request"}}')
    assert explained(thread) is not None
    # what Claude Code met before the gateway took per-message fields: not explained
    per_turn = _exchange(400, '{"type": "error", "error": {"type": "invalid_request_error", '
                              '"message": "messages.1.output_config: Extra inputs are not '
                              'permitted"}}')
    assert explained(per_turn) is None
    assert unexplained([per_turn], []) and unexplained([per_turn], [(400, "output_config")]) == []
    assert unexplained([_exchange(200, "")], []) == []


def test_field_paths_reach_into_messages_tools_and_their_content() -> None:
    body: dict[str, Any] = {
        "model": "m", "thinking": {"type": "adaptive"},
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hi",
                                                   "cache_control": {"type": "ephemeral"}}]},
                     {"role": "system", "content": "x", "output_config": {"effort": "low"}}],
        "tools": [{"name": "t", "input_schema": {}, "defer_loading": True}],
    }
    assert field_paths("messages", body) == {
        "model", "thinking", "thinking.type", "messages", "messages[].role",
        "messages[].content", "messages[].output_config", "messages[].content[type=text]",
        "tools", "tools[].name", "tools[].input_schema", "tools[].defer_loading"}
    converse = {"messages": [{"role": "user", "content": [{"text": "hi"}, {"cachePoint": {}}]}],
                "toolConfig": {"tools": [{"toolSpec": {}}, {"cachePoint": {}}]}}
    assert field_paths("converse", converse) == {
        "messages", "messages[].role", "messages[].content", "messages[].content[text]",
        "messages[].content[cachePoint]", "toolConfig", "toolConfig.tools",
        "toolConfig.tools[toolSpec]", "toolConfig.tools[cachePoint]"}
