"""Self-consistency and seeded sampling on the real bundled model."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from tooluse.messages import Message, Request, Response, ToolChoice, ToolSpec

pytestmark = pytest.mark.slow

WEATHER = ToolSpec(name="get_weather", description="Gets the current weather in a city.",
                   input_schema={"type": "object", "properties": {
                       "city": {"type": "string", "description": "The city, e.g. Paris."},
                       "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
                       "required": ["city"]})


@pytest.fixture(scope="module")
def backend() -> Any:
    pytest.importorskip("llama_cpp")
    from tooluse.backends.local import LocalBackend
    from tooluse.backends.local_options import LocalOptions
    from tooluse.errors import BackendError

    try:
        return LocalBackend(None, LocalOptions(self_consistency=3, prompt_cache=False))
    except BackendError as exc:
        pytest.skip(str(exc))


def ask(backend: Any, question: str) -> Response:
    response: Response = backend.complete(Request(
        messages=[Message(role="user", content=question)], tools=[WEATHER],
        tool_choice=ToolChoice(type="any"), max_tokens=64))
    for call in response.tool_uses:
        jsonschema.validate(call.input, WEATHER.input_schema)
    return response


def test_seeded_samples_differ_by_seed_and_repeat_by_seed(backend: Any) -> None:
    text = backend.text_model
    messages = [{"role": "user", "content": "Tell me a one-line story about a cat."}]

    def sample(seed: int) -> str:
        return "".join(c for c in text.generate_text(messages, max_tokens=24, temperature=1.0,
                                                     seed=seed) if isinstance(c, str))

    assert sample(1) == sample(1)
    assert len({sample(1), sample(2), sample(3)}) > 1


def test_self_consistency_keeps_one_valid_answer_the_same_every_time(backend: Any) -> None:
    first = ask(backend, "What is the weather in Oslo, in fahrenheit?")
    timings = dict(backend.last_end.timings)
    again = ask(backend, "What is the weather in Oslo, in fahrenheit?")
    assert [(c.name, c.input) for c in first.tool_uses] == \
        [(c.name, c.input) for c in again.tool_uses]
    assert first.tool_uses and first.tool_uses[0].name == "get_weather"
    assert timings["self_consistency_votes"] >= 2  # of 3: a majority
    assert timings["self_consistency_tokens"] > first.usage.output_tokens
    assert backend.last_end.timings["self_consistency_chosen"] == \
        timings["self_consistency_chosen"]
    chosen = timings["self_consistency_chosen"]
    for call in first.tool_uses:
        steered = call.origin.steered_by if call.origin is not None else []
        assert call.source == "model"
        # steered only where an answer other than the greedy one was kept
        assert "self_consistency" not in steered or chosen > 0
