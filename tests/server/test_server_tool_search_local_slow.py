"""Tool search on the bundled model through the gateway: the 60 deferred tools of
bench/tool_search/catalog.py stay out of the prompt (counted by the local model itself
through count_tokens), and the model's turns come back as valid Messages blocks. How often
the small model finds and calls the right tool is measured by bench/tool_search/run.py
(docs/server.md reports it), not asserted here."""

from __future__ import annotations

import anthropic
import pytest
import tool_catalog as catalog

from tooluse.server import ServerThread, create_app

pytestmark = pytest.mark.slow

SEARCH = {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}


def test_deferred_tools_leave_the_local_prompt() -> None:
    deferred = [SEARCH, *({**t, "defer_loading": True} for t in catalog.TOOLS)]
    question, _ = catalog.REQUESTS[0]
    messages = [{"role": "user", "content": question}]
    with ServerThread(create_app("local")) as srv:
        client = anthropic.Anthropic(base_url=srv.url, api_key="k", max_retries=0, timeout=600)
        small = client.messages.count_tokens(model="m", messages=messages,  # type: ignore[arg-type]
                                             tools=deferred).input_tokens  # type: ignore[arg-type]
        every = client.messages.count_tokens(model="m", messages=messages,  # type: ignore[arg-type]
                                             tools=catalog.TOOLS).input_tokens
        message = client.beta.messages.create(model="m", max_tokens=200, messages=messages,  # type: ignore[arg-type]
                                              tools=deferred,  # type: ignore[arg-type]
                                              tool_choice={"type": "auto"})
    assert small * 10 < every  # measured: 346 against 6,961
    kinds = [b.type for b in message.content]
    assert set(kinds) <= {"text", "server_tool_use", "tool_search_tool_result", "tool_use"}
    uses = [b for b in message.content if b.type == "server_tool_use"]
    assert len(uses) == len([b for b in message.content if b.type == "tool_search_tool_result"])
    searches = message.usage.model_dump().get("server_tool_use") or {}
    assert searches.get("tool_search_requests", 0) == len(uses)
