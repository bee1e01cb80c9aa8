"""The real local model behind /v1/messages, driven by the anthropic SDK."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("llama_cpp")

import anthropic

from tooluse.server import ServerThread, create_app

# a real client: a 4xx the policy does not explain fails the test (recording.py)
pytestmark = [pytest.mark.slow, pytest.mark.client]


@pytest.fixture(scope="module")
def local_server() -> Iterator[ServerThread]:
    try:
        app = create_app("local")
    except (ImportError, OSError, FileNotFoundError) as exc:
        pytest.skip(f"local model unavailable: {exc}")
    with ServerThread(app) as srv:
        yield srv


def test_local_model_forced_tool_call(local_server: ServerThread, tools: list[dict[str, Any]]) -> None:
    client = anthropic.Anthropic(base_url=local_server.url, api_key="k", max_retries=0, timeout=300)
    msg = client.messages.create(
        model="local", max_tokens=128, tools=tools,
        tool_choice={"type": "tool", "name": "get_weather"},
        messages=[{"role": "user", "content": "What is the weather in Paris?"}],
    )
    calls = [b for b in msg.content if b.type == "tool_use"]
    assert msg.stop_reason == "tool_use"
    assert calls and calls[0].name == "get_weather"
    assert isinstance(calls[0].input.get("location"), str)  # the grammar guarantees the schema
    assert calls[0].id


def test_local_model_streams_text(local_server: ServerThread) -> None:
    client = anthropic.Anthropic(base_url=local_server.url, api_key="k", max_retries=0, timeout=300)
    with client.messages.stream(
        model="local", max_tokens=16, messages=[{"role": "user", "content": "Say hello."}]
    ) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert text.strip()
    assert final.stop_reason in ("end_turn", "max_tokens")
    assert final.usage.output_tokens > 0


def test_local_model_concurrent_requests_queue(local_server: ServerThread, tools: list[dict[str, Any]]) -> None:
    """Two clients at once on the one loaded model: both get well-formed, complete answers."""
    from concurrent.futures import ThreadPoolExecutor

    client = anthropic.Anthropic(base_url=local_server.url, api_key="k", max_retries=0, timeout=300)

    def forced(city: str) -> Any:
        return client.messages.create(
            model="local", max_tokens=64, tools=tools, tool_choice={"type": "tool", "name": "get_weather"},
            messages=[{"role": "user", "content": f"What is the weather in {city}?"}],
        )

    def streamed(_: str) -> Any:
        with client.messages.stream(model="local", max_tokens=64, tools=tools,
                                    tool_choice={"type": "any"},
                                    messages=[{"role": "user", "content": "Weather in Oslo?"}]) as s:
            return s.get_final_message()

    with ThreadPoolExecutor(2) as pool:
        a = pool.submit(forced, "Lima")
        b = pool.submit(streamed, "Oslo")
        first, second = a.result(), b.result()
    for msg in (first, second):
        calls = [blk for blk in msg.content if blk.type == "tool_use"]
        assert msg.stop_reason in ("tool_use", "max_tokens"), msg  # a 135M model may ramble
        assert calls and calls[0].name == "get_weather" and isinstance(calls[0].input, dict)


def test_disconnect_stops_the_local_model(local_server: ServerThread) -> None:
    """After a client leaves a long stream, the model is free again at once: the next
    request does not wait for the abandoned generation (which holds the model lock)."""
    import time

    import httpx2

    body = {"model": "local", "max_tokens": 400, "stream": True,
            "messages": [{"role": "user", "content": "Write a very long story about a dragon and a knight."}]}
    short = dict(body, max_tokens=8)
    started = time.monotonic()
    httpx2.post(local_server.url + "/v1/messages", json=short, timeout=300)
    short_time = time.monotonic() - started
    with httpx2.Client(timeout=300) as client, client.stream("POST", local_server.url + "/v1/messages", json=body) as resp:
        deltas = 0
        for line in resp.iter_lines():
            deltas += "text_delta" in line
            if deltas >= 3:
                break
    started = time.monotonic()
    r = httpx2.post(local_server.url + "/v1/messages", json=short, timeout=300)
    after = time.monotonic() - started
    assert r.status_code == 200
    # ~400 more tokens would take well over 10 s on this CPU; a short request takes ~1 s
    assert after < max(5.0, 3 * short_time), (after, short_time)
