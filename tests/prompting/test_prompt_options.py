"""The prompt's options through the prompt-based backend (``-o demonstrations=N``,
``-o style=python``), without a model: what the text model is given."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from tooluse.backends.local_options import LocalOptions
from tooluse.messages import Message, Request, ToolChoice, ToolSpec
from tooluse.prompting import PromptToolsBackend, TextEnd

WEATHER = ToolSpec(name="get_weather", description="Current weather in a city.", input_schema={
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})


class Recording:
    model = "fake"

    def __init__(self) -> None:
        self.systems: list[str] = []

    def generate_text(self, messages: Sequence[dict[str, str]],
                      **options: Any) -> Iterator[str | TextEnd]:
        self.systems.append(messages[0]["content"])
        yield "It is sunny."
        yield TextEnd(reason="end")


def _system(**kwargs: Any) -> str:
    text = Recording()
    PromptToolsBackend(text, **kwargs).complete(Request(
        messages=[Message(role="user", content="Weather in Oslo?")], tools=[WEATHER],
        tool_choice=ToolChoice(type="auto"), max_tokens=32, system="Be brief."))
    return text.systems[0]


def test_demonstrations_and_python_style_change_the_system_prompt_only_when_asked() -> None:
    plain = _system()
    assert plain == _system(demonstrations=0, style="xml")
    assert "For example" not in plain and "<tool_description>\n<tool_name>get_weather" in plain
    demos = _system(demonstrations=2)
    assert demos.count("<function_calls>") == 3 and "find_recipe" in demos
    assert demos.replace(demos[demos.index("For example"):demos.index("Here are the tools")],
                         "") == plain
    python = _system(style="python")
    assert "def get_weather(city: str):" in python and "<tool_name>get_weather" not in python
    assert python.endswith("Be brief.")
    with pytest.raises(ValueError, match="style"):
        PromptToolsBackend(Recording(), style="yaml")  # type: ignore[arg-type]


def test_local_options_read_the_prompt_options() -> None:
    assert (LocalOptions().demonstrations, LocalOptions().style) == (0, "xml")
    options = LocalOptions.from_options({"demonstrations": "2", "style": "python"})
    assert (options.demonstrations, options.style) == (2, "python")
    with pytest.raises(ValueError, match="style"):
        LocalOptions.from_options({"style": "yaml"})
