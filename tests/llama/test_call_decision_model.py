"""The call decision and further calls from the likelihood, on the real bundled model."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from tooluse.messages import Message, Request, Response, ToolChoice, ToolSpec

pytestmark = pytest.mark.slow

WEATHER = ToolSpec(name="get_weather", description="Gets the current weather in a city.",
                   input_schema={"type": "object", "properties": {
                       "city": {"type": "string", "description": "The city, e.g. Paris."}},
                       "required": ["city"]})
STOCK = ToolSpec(name="get_stock_price", description="Gets the latest stock price of a "
                 "company by its ticker.", input_schema={"type": "object", "properties": {
                     "ticker": {"type": "string", "description": "Ticker symbol, e.g. AAPL."}},
                     "required": ["ticker"]})


@pytest.fixture(scope="module")
def backend() -> Any:
    pytest.importorskip("llama_cpp")
    from tooluse.backends.local import LocalBackend
    from tooluse.backends.local_options import LocalOptions
    from tooluse.errors import BackendError

    try:
        return LocalBackend(None, LocalOptions(call_decision="opener", more_calls_margin=-4.81,
                                               prompt_cache=False))
    except BackendError as exc:
        pytest.skip(str(exc))


def ask(backend: Any, question: str, tools: list[ToolSpec]) -> Response:
    response: Response = backend.complete(Request(
        messages=[Message(role="user", content=question)], tools=tools,
        tool_choice=ToolChoice(type="auto"), max_tokens=96))
    for call in response.tool_uses:
        schema = next(t for t in tools if t.name == call.name).input_schema
        jsonschema.validate(call.input, schema)
    return response


def test_the_opener_decides_a_call_where_a_tool_fits_and_text_where_none_does(
        backend: Any) -> None:
    from tooluse.backends.local_options import DECIDE_THRESHOLDS

    assert backend.text_model.call_threshold is None  # the decision replaces it
    called = ask(backend, "Get the current weather in the city of Paris.", [WEATHER])
    score = backend.last_end.timings["decide_score"]
    assert score >= DECIDE_THRESHOLDS["opener"]
    assert called.tool_uses and called.tool_uses[0].name == "get_weather"
    assert called.tool_uses[0].origin is not None \
        and called.tool_uses[0].origin.steered_by[:1] == ["call_decision"]
    answered = ask(backend, "Write a short poem about friendship.", [STOCK])
    assert backend.last_end.timings["decide_score"] < DECIDE_THRESHOLDS["opener"] < score
    assert not answered.tool_uses and answered.text().strip()


def test_further_calls_are_steered_and_never_repeat(backend: Any) -> None:
    question = "Get the current weather in Paris, Rome and Oslo."
    # At the calibrated margin the model's wish for a second call falls short here (its
    # margin is about -8 nats): its one call.
    one = ask(backend, question, [WEATHER])
    margin = backend.last_end.timings["more_calls_margin"]
    assert len(one.tool_uses) == 1 and margin < backend.more_calls_margin
    # A margin below it: further calls, each the model's, each with a new city.
    low = backend.more_calls_margin
    backend.more_calls_margin = margin - 1.0
    try:
        more = ask(backend, question, [WEATHER])
    finally:
        backend.more_calls_margin = low
    calls = more.tool_uses
    assert len(calls) >= 2 and len({c.input["city"] for c in calls}) == len(calls)
    assert calls[0].input == one.tool_uses[0].input
    for call in calls[1:]:
        assert call.source == "model" and call.origin is not None \
            and "more_calls" in call.origin.steered_by
