"""``optional_margin``: where a call may close its parameters or write another optional
one, the model's likelihood of each, on the real bundled model."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from tooluse.messages import Message, Request, Response, ToolChoice, ToolSpec

pytestmark = pytest.mark.slow

TIMER = ToolSpec(name="start_timer", description="Starts a countdown timer.",
                 input_schema={"type": "object", "properties": {
                     "minutes": {"type": "integer", "description": "Length in minutes."},
                     "label": {"type": "string", "description": "A name for the timer."},
                     "sound": {"type": "string", "description": "The alarm sound."}},
                     "required": ["minutes"]})


@pytest.fixture(scope="module")
def backend() -> Any:
    pytest.importorskip("llama_cpp")
    from tooluse.backends.local import LocalBackend
    from tooluse.backends.local_options import LocalOptions
    from tooluse.errors import BackendError

    try:
        return LocalBackend(None, LocalOptions(prompt_cache=False))
    except BackendError as exc:
        pytest.skip(str(exc))


def timer(backend: Any, margin: float | None) -> Response:
    backend.optional_margin = margin
    try:
        response: Response = backend.complete(Request(
            messages=[Message(role="user", content="Start a timer for 7 minutes, please.")],
            tools=[TIMER], tool_choice=ToolChoice(type="any"), max_tokens=96))
    finally:
        backend.optional_margin = None
    assert len(response.tool_uses) == 1
    jsonschema.validate(response.tool_uses[0].input, TIMER.input_schema)
    return response


def test_a_margin_closes_the_parameters_the_model_would_have_gone_on_with(
        backend: Any) -> None:
    own = timer(backend, None).tool_uses[0]
    assert own.input.get("minutes") == 7
    assert set(own.input) - {"minutes"}, f"the model wrote no optional parameter: {own.input}"
    assert own.origin is None or "optional_margin" not in own.origin.steered_by

    closed = timer(backend, 30.0)
    call = closed.tool_uses[0]
    assert call.input == {"minutes": 7}
    assert call.origin is not None and "optional_margin" in call.origin.steered_by
    assert backend.last_end.timings["closed_optionals"] >= 1


def test_a_low_margin_leaves_every_choice_to_the_model(backend: Any) -> None:
    own = timer(backend, None).tool_uses[0]
    low = timer(backend, -30.0).tool_uses[0]
    assert low.input == own.input
    assert low.origin is None or "optional_margin" not in low.origin.steered_by
    assert "closed_optionals" not in backend.last_end.timings
