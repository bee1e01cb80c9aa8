"""A trace of the real local model behind the gateway: the prompt its chat template
rendered, the grammar's prefill, the raw text it wrote with the call block marked, the
cache and forced-token counts, and the call it became; two requests at once, not mixed."""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx2 as httpx
import pytest

pytest.importorskip("llama_cpp")

from tooluse.server import ServerThread, create_app
from tooluse.trace.store import TraceStore

pytestmark = pytest.mark.slow

TOOL = {"name": "get_weather", "description": "Get the current weather in a city.",
        "input_schema": {"type": "object", "properties": {"city": {"type": "string"}},
                         "required": ["city"]}}


def test_local_model_trace_holds_rendered_prompt_raw_output_and_calls() -> None:
    store = TraceStore()
    try:
        app = create_app("local", trace=store)
    except (ImportError, OSError, FileNotFoundError) as exc:
        pytest.skip(f"local model unavailable: {exc}")
    questions = {"Paris": "What is the weather in Paris?",
                 "Tokyo": "What is the weather in Tokyo?"}
    with ServerThread(app) as server, ThreadPoolExecutor(2) as pool:
        def ask(city: str) -> dict[str, Any]:
            answer = httpx.post(server.url + "/v1/messages", timeout=300, json={
                "model": "local", "max_tokens": 64, "tools": [TOOL],
                "tool_choice": {"type": "tool", "name": "get_weather"},
                "messages": [{"role": "user", "content": questions[city]}]})
            assert answer.status_code == 200, answer.text
            body: dict[str, Any] = answer.json()
            return body
        answers = dict(zip(questions, pool.map(ask, questions), strict=True))
        deadline = time.monotonic() + 30
        while len(store) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        store.flush()
    traces = [store.get(item["id"]) for item in store.list()]
    assert len(traces) == 2
    for trace in traces:
        assert trace is not None
        [turn] = trace["turns"]
        city = next(c for c, q in questions.items() if turn["prompt"][-1]["content"] == q)
        other = next(c for c in questions if c != city)
        # The prompt as SmolLM2's chat template rendered it, the tools in its system turn.
        rendered = turn["rendered_prompt"]
        assert "<|im_start|>user" in rendered and questions[city] in rendered
        assert "<tool_name>get_weather</tool_name>" in rendered and other not in rendered
        [first, *_] = turn["passes"]
        assert first["prefill"] and rendered.endswith(first["prefill"])
        assert first["input_tokens"] > 0 and first["output_tokens"] > 0
        assert "forced_tokens" in first["counts"] and first["cached_tokens"] >= 0
        # The call the model wrote, marked in its raw output, is the one the client got.
        [call] = turn["calls"]
        sent = [b for b in answers[city]["content"] if b["type"] == "tool_use"]
        assert [call["id"]] == [b["id"] for b in sent] and call["input"] == sent[0]["input"]
        assert call["valid"] and call["span"] is not None
        block = turn["raw"][call["span"][0]:call["span"][1]]
        assert block.startswith("<invoke>") and "<tool_name>get_weather</tool_name>" in block
        for value in call["input"].values():
            assert json.dumps(value).strip('"') in block or str(value) in block
        assert trace["response"]["content"] == answers[city]["content"]
