"""``copy_values`` on the real default model: a value the question gives is copied where
the model alone invents one, and every call still validates."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from tooluse.messages import Message, Request, TextBlock, ToolChoice, ToolSpec

pytestmark = pytest.mark.slow

HOUSE = ToolSpec(name="predict_house_price", description="Predict the price of a house.",
                 input_schema={"type": "object", "properties": {
                     "bedrooms": {"type": "integer", "description": "Number of bedrooms."},
                     "bathrooms": {"type": "integer", "description": "Number of bathrooms."},
                     "area": {"type": "integer", "description": "Area in square feet."},
                     "location": {"type": "string", "description": "City of the house."}},
                     "required": ["bedrooms", "bathrooms", "area", "location"]})
QUESTION = ("Predict the price of a house in San Francisco with 3 bedrooms, 2 bathrooms "
            "and area of 1800 square feet.")


def call(copy: bool) -> tuple[dict[str, Any], Any]:
    pytest.importorskip("llama_cpp")
    from tooluse.backends.local import LocalBackend
    from tooluse.errors import BackendError

    try:
        backend = LocalBackend(n_threads=2, copy_values=copy, decide=False, score_tools=False,
                               optional_from_conversation=False, max_tools=0,
                               no_repeat=False, more_calls=False)
    except BackendError as exc:
        pytest.skip(str(exc))
    response = backend.complete(Request(
        messages=[Message(role="user", content=[TextBlock(text=QUESTION)])], tools=[HOUSE],
        tool_choice=ToolChoice(type="any"), max_tokens=96))
    assert len(response.tool_uses) == 1
    arguments = dict(response.tool_uses[0].input)
    jsonschema.validate(arguments, HOUSE.input_schema)
    return arguments, backend.text_model.last_end


def test_numbers_of_the_question_are_copied_not_invented() -> None:
    alone, _ = call(copy=False)
    # The model alone invents the counts (it writes 100 bedrooms and 200 bathrooms)...
    assert (alone["bedrooms"], alone["bathrooms"]) != (3, 2)
    copied, end = call(copy=True)
    # ...and with copy_values takes the ones the question gives.
    assert (copied["bedrooms"], copied["bathrooms"]) == (3, 2)
    assert copied["area"] == 1800 and copied["location"] == "San Francisco"
    assert end.timings["copied_values"] >= 1
