"""The ``steered`` generation option: what a text backend notes while it writes a call
(``optional_margin``) is recorded on that call's origin, without a model: a fake text model
notes it while writing the first of two calls."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from tooluse.messages import Message, Request, ToolChoice, ToolSpec
from tooluse.prompting import PromptToolsBackend, TextEnd
from tooluse.prompting.consistency import Consistency

WEATHER = ToolSpec(name="get_weather", description="Current weather in a city.", input_schema={
    "type": "object", "properties": {"city": {"type": "string"}, "unit": {"type": "string"}},
    "required": ["city"]})


def invoke(city: str) -> str:
    return ("<invoke>\n<tool_name>get_weather</tool_name>\n<parameters>\n"
            f"<city>{city}</city>\n</parameters>\n</invoke>\n")


class NotingText:
    """Writes two calls in chunks; under ``optional_margin`` notes a steer while writing the
    first (greedy only, as the local decoder does)."""

    model = "fake"

    def __init__(self) -> None:
        self.options: list[dict[str, Any]] = []

    def score_continuations(self, messages: Sequence[dict[str, str]],
                            continuations: Sequence[str], *, prefill: str = "") -> list[float]:
        return [-1.0 for _ in continuations]

    def generate_text(self, messages: Sequence[dict[str, str]], **options: Any
                      ) -> Iterator[str | TextEnd]:
        self.options.append(options)
        steered = options.get("steered")
        yield "<function_calls>\n<invoke>\n<tool_name>get_weather</tool_name>\n<parameters>\n"
        if steered is not None and options.get("temperature", 0.0) <= 0:
            steered.append("optional_margin")
        yield "<city>Oslo</city>\n</parameters>\n</invoke>\n"
        yield invoke("Bergen") + "</function_calls>"
        yield TextEnd(reason="end", output_tokens=9)


def _request() -> Request:
    return Request(messages=[Message(role="user", content="Weather in Oslo and Bergen?")],
                   tools=[WEATHER], tool_choice=ToolChoice(type="auto"), max_tokens=64)


def steers(call: Any) -> list[str]:
    return list(call.origin.steered_by) if call.origin is not None else []


def test_the_steer_goes_on_the_call_being_written_only() -> None:
    text = NotingText()
    response = PromptToolsBackend(text, optional_margin=1.5).complete(_request())
    assert [c.input["city"] for c in response.tool_uses] == ["Oslo", "Bergen"]
    assert [steers(c) for c in response.tool_uses] == [["optional_margin"], []]
    assert text.options[0]["optional_margin"] == 1.5


def test_without_the_option_nothing_is_asked_or_recorded() -> None:
    text = NotingText()
    response = PromptToolsBackend(text).complete(_request())
    assert "steered" not in text.options[0] and "optional_margin" not in text.options[0]
    assert [steers(c) for c in response.tool_uses] == [[], []]


def test_self_consistency_records_the_steer_of_the_greedy_answer_it_keeps() -> None:
    response = PromptToolsBackend(NotingText(), optional_margin=1.5,
                                  consistency=Consistency(2)).complete(_request())
    assert all("optional_margin" in steers(c) for c in response.tool_uses)
