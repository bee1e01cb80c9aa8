"""The openai SDK's ``client.responses`` against the gateway on the bundled local model:
a forced function call (the grammar guarantees its schema), a regex custom tool whose call
text matches the regex, and structured output with ``.parse``."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import openai
import pytest
from pydantic import BaseModel

from tooluse.server import ServerThread, create_app

# a real client: a 4xx the policy does not explain fails the test (recording.py)
pytestmark = [pytest.mark.slow, pytest.mark.client]

WEATHER = {"type": "function", "name": "get_weather", "description": "Weather in a city.",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                          "required": ["city"], "additionalProperties": False},
           "strict": True}


@pytest.fixture(scope="module")
def local_url() -> Iterator[str]:
    try:
        app = create_app("local")
    except (ImportError, OSError, FileNotFoundError) as exc:
        pytest.skip(f"local model unavailable: {exc}")
    with ServerThread(app) as srv:
        yield srv.url


def client(url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=url + "/v1", api_key="k", max_retries=0, timeout=300)


def test_forced_function_call_then_previous_response_id(local_url: str) -> None:
    c = client(local_url)
    first = c.responses.create(model="local", input="What is the weather in Paris?",
                               tools=[WEATHER], tool_choice="required", max_output_tokens=64)
    calls = [o for o in first.output if o.type == "function_call"]
    assert calls and calls[0].name == "get_weather"
    assert isinstance(json.loads(calls[0].arguments)["city"], str)
    second = c.responses.create(model="local", previous_response_id=first.id, tools=[WEATHER],
                                max_output_tokens=32, input=[
        {"type": "function_call_output", "call_id": calls[0].call_id, "output": "18 C"}])
    assert second.status in ("completed", "incomplete")
    # the model saw the stored turn: its prompt grew by the call and its output
    assert second.usage is not None and first.usage is not None
    assert second.usage.input_tokens > first.usage.input_tokens


def test_regex_custom_tool_call_matches(local_url: str) -> None:
    tool = {"type": "custom", "name": "set_version", "description": "Set the version.",
            "format": {"type": "grammar", "syntax": "regex", "definition": "v[0-9]{1,3}"}}
    out = client(local_url).responses.create(
        model="local", input="Set the version to 12.", tools=[tool],  # type: ignore[list-item]
        tool_choice={"type": "custom", "name": "set_version"}, max_output_tokens=32)
    calls = [o for o in out.output if o.type == "custom_tool_call"]
    assert calls and re.fullmatch("v[0-9]{1,3}", calls[0].input)


class City(BaseModel):
    name: str
    country: str


def test_parse_structured_output(local_url: str) -> None:
    with client(local_url).responses.stream(model="local", input="Paris is in France.",
                                            text_format=City, max_output_tokens=48) as stream:
        final = stream.get_final_response()
    assert isinstance(final.output_parsed, City)
