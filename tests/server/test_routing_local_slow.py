"""Fallbacks across backend kinds with the bundled model: an Anthropic upstream that answers
529 overloaded goes on to the local model (a forced tool call through the grammar, whole
and streamed), and a prompt over the local model's own context (its exact count, no
``context_window`` in the config) goes on to an Anthropic upstream."""

from __future__ import annotations

from collections.abc import Iterator
import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("llama_cpp")

import anthropic
from routing_procs import FakeUpstream, fake_upstreams, write_config

from tooluse.server import ServerThread, create_app

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, FakeUpstream,
                                                                       FakeUpstream]]:
    folder = tmp_path_factory.mktemp("routing-local")
    with fake_upstreams(folder, "overloaded", "big") as (overloaded, big):
        overloaded.control(fail=529, count=-1)
        config = write_config(folder / "g.toml", f"""
[[models]]
name = "claude-sonnet-4-5"
backend = "anthropic:{overloaded.url}#sonnet"
fallbacks = ["local"]

[[models]]
name = "local"
backend = "local"
fallbacks = ["big"]

[[models]]
name = "big"
backend = "anthropic:{big.url}#big-context"
""")
        try:
            app = create_app(config=config)
        except (ImportError, OSError, FileNotFoundError) as exc:
            pytest.skip(f"local model unavailable: {exc}")
        with ServerThread(app) as srv:
            yield srv.url, overloaded, big


def test_an_overloaded_anthropic_upstream_falls_over_to_the_local_model(
    setup: tuple[str, FakeUpstream, FakeUpstream], tools: list[dict[str, Any]]
) -> None:
    url, overloaded, big = setup
    client = anthropic.Anthropic(base_url=url, api_key="k", max_retries=0, timeout=300)
    ask = {"model": "claude-sonnet-4-5", "max_tokens": 128, "tools": tools,
           "tool_choice": {"type": "tool", "name": "get_weather"},
           "messages": [{"role": "user", "content": "What is the weather in Paris?"}]}
    raw = client.messages.with_raw_response.create(**ask)
    message = raw.parse()
    assert raw.headers["x-tooluse-route"] == "local"
    assert raw.headers["x-tooluse-attempts"].startswith("claude-sonnet-4-5=")
    assert message.model == "claude-sonnet-4-5"  # the client's name, from the local model
    calls = [b for b in message.content if b.type == "tool_use"]
    assert calls and calls[0].name == "get_weather"
    with client.messages.stream(**ask) as stream:
        final = stream.get_final_message()
        route = stream.response.headers["x-tooluse-route"]
    assert route == "local" and final.stop_reason == "tool_use"
    assert len(overloaded.log()) >= 1 and big.log() == []


def test_a_prompt_over_the_local_models_context_goes_on_to_the_next(
    setup: tuple[str, FakeUpstream, FakeUpstream],
) -> None:
    url, _, big = setup
    client = anthropic.Anthropic(base_url=url, api_key="k", max_retries=0, timeout=300)
    long = "word " * 12000  # over SmolLM2's 8192 tokens, counted by its own tokenizer
    raw = client.messages.with_raw_response.create(
        model="local", max_tokens=32, messages=[{"role": "user", "content": long}])
    assert raw.parse().content[0].text == "from big"  # type: ignore[union-attr]
    assert raw.headers["x-tooluse-route"] == "big"
    assert re.fullmatch(r"local=context_length [0-9.]+ms", raw.headers["x-tooluse-attempts"])
    assert [e["model"] for e in big.log()][-1] == "big-context"
