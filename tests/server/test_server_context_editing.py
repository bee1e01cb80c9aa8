"""Context editing done by the gateway for a backend that cannot: clear_tool_uses and
clear_thinking applied to the history before the backend sees it, and reported in
``context_management.applied_edits`` as Anthropic reports them, whole and streamed."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest

from tooluse.backends.scripted import ScriptedBackend
from tooluse.messages import ThinkingBlock, ToolResultBlock, ToolUseBlock
from tooluse.runner.context_edits import CLEARED
from tooluse.server import ServerThread, create_app

TOOLS = [{"name": n, "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}}}
         for n in ("search", "read")]


def history(calls: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "research this"}]
    for i in range(calls):
        name = "read" if i == 1 else "search"
        messages.append({"role": "assistant", "content": [
            {"type": "thinking", "thinking": f"step {i}", "signature": f"sig{i}"},
            {"type": "tool_use", "id": f"toolu_{i}", "name": name, "input": {"q": f"q{i}" * 20}}]})
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": f"result {i} " * 50}]})
    return messages


EDITS = {"edits": [
    {"type": "clear_thinking_20251015", "keep": {"type": "thinking_turns", "value": 1}},
    {"type": "clear_tool_uses_20250919", "trigger": {"type": "input_tokens", "value": 100},
     "keep": {"type": "tool_uses", "value": 2}, "exclude_tools": ["read"],
     "clear_tool_inputs": True}]}


@pytest.mark.parametrize("stream", [False, True])
def test_edits_applied_and_reported(stream: bool) -> None:
    backend = ScriptedBackend(lambda request: "done")
    with ServerThread(create_app(backend)) as srv:
        client = anthropic.Anthropic(base_url=srv.url, api_key="k", max_retries=0)
        kwargs: dict[str, Any] = {
            "model": "m", "max_tokens": 100, "messages": history(5), "tools": TOOLS,
            "thinking": {"type": "enabled", "budget_tokens": 1024}, "context_management": EDITS,
            "betas": ["context-management-2025-06-27"]}
        if stream:
            with client.beta.messages.stream(**kwargs) as events:
                message = events.get_final_message()
        else:
            message = client.beta.messages.create(**kwargs)
    assert message.content[0].text == "done"  # type: ignore[union-attr]
    assert message.context_management is not None
    edits = [e.model_dump() for e in message.context_management.applied_edits]
    assert [e["type"] for e in edits] == ["clear_thinking_20251015", "clear_tool_uses_20250919"]
    assert edits[0]["cleared_thinking_turns"] == 4
    # calls 0..4: "read" (1) excluded, the last two (3, 4) kept: 0 and 2 cleared
    assert edits[1]["cleared_tool_uses"] == 2
    assert edits[0]["cleared_input_tokens"] > 0 and edits[1]["cleared_input_tokens"] > 0
    seen = backend.requests[-1]
    thinking = [b for m in seen.messages for b in m.content if isinstance(b, ThinkingBlock)]
    assert [b.text for b in thinking] == ["step 4"]
    results = {b.tool_use_id: b.text() for m in seen.messages for b in m.content
               if isinstance(b, ToolResultBlock)}
    assert results["toolu_0"] == results["toolu_2"] == CLEARED
    assert results["toolu_1"].startswith("result 1") and results["toolu_4"].startswith("result 4")
    inputs = {b.id: b.input for m in seen.messages for b in m.content if isinstance(b, ToolUseBlock)}
    assert inputs["toolu_0"] == {} and inputs["toolu_3"] == {"q": "q3" * 20}


def test_below_the_trigger_nothing_is_cleared() -> None:
    backend = ScriptedBackend(lambda request: "done")
    with ServerThread(create_app(backend)) as srv:
        client = anthropic.Anthropic(base_url=srv.url, api_key="k", max_retries=0)
        message = client.beta.messages.create(
            model="m", max_tokens=100, messages=history(5), tools=TOOLS,
            context_management={"edits": [{"type": "clear_tool_uses_20250919"}]})
    assert message.context_management is not None
    assert message.context_management.applied_edits == []  # 100,000 tokens by default
    assert CLEARED not in str(backend.requests[-1].messages)


def test_clear_at_least_leaves_an_edit_that_frees_too_little_undone() -> None:
    backend = ScriptedBackend(lambda request: "done")
    edit = {"type": "clear_tool_uses_20250919", "trigger": {"type": "tool_uses", "value": 2},
            "keep": {"type": "tool_uses", "value": 1}}
    with ServerThread(create_app(backend)) as srv:
        client = anthropic.Anthropic(base_url=srv.url, api_key="k", max_retries=0)

        def applied(**extra: Any) -> list[Any]:
            message = client.beta.messages.create(
                model="m", max_tokens=100, messages=history(3), tools=TOOLS,
                context_management={"edits": [{**edit, **extra}]})
            assert message.context_management is not None
            return list(message.context_management.applied_edits)

        (done,) = applied()  # without clear_at_least: two of three results cleared
        assert done.cleared_tool_uses == 2  # type: ignore[union-attr]
        freed = done.cleared_input_tokens  # type: ignore[union-attr]
        assert CLEARED in str(backend.requests[-1].messages)
        assert applied(clear_at_least={"type": "input_tokens", "value": freed + 1}) == []
        assert CLEARED not in str(backend.requests[-1].messages)
        (done,) = applied(clear_at_least={"type": "input_tokens", "value": freed})
        assert done.cleared_tool_uses == 2  # type: ignore[union-attr]
