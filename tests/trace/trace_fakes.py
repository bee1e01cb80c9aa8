"""Stand-ins for the trace tests: a text model that writes one call echoing the city of the
question (optionally waiting for a second request first, so two are in flight together),
and the tool it calls."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator, Sequence
from typing import Any

from tooluse.messages import ToolSpec
from tooluse.prompting.tool_use import PromptToolsBackend
from tooluse.prompting.text_model import TextEnd

WEATHER = ToolSpec(
    name="get_weather", description="Current weather in a city.",
    input_schema={"type": "object", "properties": {"city": {"type": "string"},
                                                   "days": {"type": "integer"}},
                  "required": ["city"]})
WEATHER_WIRE = {"name": "get_weather", "description": WEATHER.description,
                "input_schema": WEATHER.input_schema}


def call_text(city: str, extra: str = "") -> str:
    return ("<function_calls>\n<invoke>\n<tool_name>get_weather</tool_name>\n<parameters>\n"
            f"<city>{city}</city>\n{extra}</parameters>\n</invoke>\n</function_calls>")


class CityText:
    """Answers every prompt with a call of get_weather for the last capitalised word of the
    last user turn; with ``together=N`` each generation waits until N are running."""

    model = "city-text"

    def __init__(self, together: int = 1, extra: str = "") -> None:
        self.barrier = threading.Barrier(together, timeout=20) if together > 1 else None
        self.extra = extra

    def generate_text(self, messages: Sequence[dict[str, str]], *, prefill: str = "",
                      **options: Any) -> Iterator[str | TextEnd]:
        user = [m["content"] for m in messages if m["role"] == "user"][-1]
        city = re.findall(r"\b[A-Z][a-z]+\b", user)[-1]
        if self.barrier is not None:
            self.barrier.wait()
        text = call_text(city, self.extra)
        text = text.removeprefix(prefill)
        stops = [s for s in options.get("stop", ()) if s in text]
        reason = "end"
        if stops:
            text, reason = text[: text.index(stops[0])], "stop"
        for i in range(0, len(text), 7):
            yield text[i:i + 7]
        yield TextEnd(reason=reason, stop_sequence=stops[0] if stops else None,
                      input_tokens=40, output_tokens=len(text) // 4, cached_tokens=12,
                      timings={"forced_tokens": 3.0})


def city_backend(together: int = 1, extra: str = "") -> PromptToolsBackend:
    """The prompt-based backend over :class:`CityText` (no grammar: the fake applies none)."""
    return PromptToolsBackend(CityText(together, extra), grammar=False)
