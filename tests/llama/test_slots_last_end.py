"""On the bundled model with slots: two requests decoded together each read their own
``last_end`` (the local backend's and its text model's), set in the requesting thread."""

from __future__ import annotations

import threading
from typing import Any

import pytest

pytest.importorskip("llama_cpp")

from tooluse.messages import Message, Request, ToolChoice, ToolSpec

pytestmark = pytest.mark.slow

WEATHER = ToolSpec(name="get_weather", description="Get the current weather in a city",
                   input_schema={"type": "object", "properties": {"location": {"type": "string"}},
                                 "required": ["location"]})


def test_requests_decoded_together_each_read_their_own_last_end() -> None:
    from tooluse.backends.local import LocalBackend

    try:
        local = LocalBackend(prompt_cache=False, slots=2)
    except Exception as exc:  # noqa: BLE001 - the bundled model may be missing
        pytest.skip(f"local model unavailable: {exc}")
    questions = ["Weather in Paris?",
                 "I am planning a long walk along the river this afternoon, so please tell "
                 "me what the weather is like right now in the city of Amsterdam."]
    done = threading.Barrier(2, timeout=120)
    seen: dict[int, tuple[Any, Any, Any]] = {}

    def ask(k: int) -> None:
        response = local.complete(Request(
            model="local", max_tokens=48, tools=[WEATHER], tool_choice=ToolChoice(type="any"),
            messages=[Message(role="user", content=questions[k])]))
        done.wait()  # both have finished before either reads
        seen[k] = (response, local.last_end, local.text_model.last_end)

    try:
        threads = [threading.Thread(target=ask, args=(k,)) for k in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(300)
        assert local.loaded.pool is not None and local.loaded.pool.busiest == 2
        short, long = seen[0], seen[1]
        for response, end, text_end in (short, long):
            assert end is not None and text_end is not None
            usage = response.usage  # the uncached rest and the cache reads: the whole prompt
            assert end.input_tokens == usage.input_tokens + (usage.cache_read_input_tokens or 0)
            assert text_end.input_tokens == end.input_tokens
        assert long[1].input_tokens > short[1].input_tokens + 15
    finally:
        local.close()
