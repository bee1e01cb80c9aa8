"""The OpenAI Agents SDK (PyPI ``openai-agents``), unchanged except for the client's base_url,
running a tool loop through the gateway with its default model class, OpenAIResponsesModel
(so every turn is a ``POST /v1/responses``), streamed and not."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

# a real client: a 4xx the policy does not explain fails the test (recording.py)
pytestmark = pytest.mark.client

agents = pytest.importorskip("agents")

from openai import AsyncOpenAI

from tooluse.backends.scripted import from_spec
from tooluse.server import ServerThread, create_app

LOOP = '[{"call": "get_weather", "input": {"city": "Paris"}}, "It is 18 C in Paris."]'


def test_agent_tool_loop_whole_and_streamed() -> None:
    agents.set_tracing_disabled(True)
    calls: list[str] = []

    @agents.function_tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        calls.append(city)
        return "18 C"

    backend = from_spec(LOOP)

    async def run(url: str) -> tuple[Any, Any, list[str]]:
        provider = agents.OpenAIProvider(openai_client=AsyncOpenAI(
            base_url=url + "/v1", api_key="k", max_retries=0, timeout=20))
        # the provider's default model class, not one chosen here
        assert isinstance(provider.get_model("gpt-test"), agents.OpenAIResponsesModel)
        config = agents.RunConfig(model_provider=provider)
        agent = agents.Agent(name="weather", instructions="Be brief.", tools=[get_weather],
                             model="gpt-test")
        whole = await agents.Runner.run(agent, "Weather in Paris?", run_config=config)
        streamed = agents.Runner.run_streamed(agent, "Weather in Paris?", run_config=config)
        kinds = [event.type async for event in streamed.stream_events()]
        return whole, streamed, kinds

    with ServerThread(create_app(backend)) as srv:
        whole, streamed, kinds = asyncio.run(run(srv.url))
    assert whole.final_output == "It is 18 C in Paris."
    assert streamed.final_output == "It is 18 C in Paris."
    assert calls == ["Paris", "Paris"]
    assert "raw_response_event" in kinds and "run_item_stream_event" in kinds
    last = backend.requests[-1]
    assert last.system_text() == "Be brief."
    assert [m.role for m in last.messages] == ["user", "assistant", "user"]
    assert last.messages[-1].tool_results[0].text() == "18 C"
