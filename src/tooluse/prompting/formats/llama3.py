"""Llama 3.1+'s JSON calls: the answer is ``{"name": ..., "parameters": {...}}`` (the
template asks for exactly that, "Respond in the format {"name": function name, "parameters":
dictionary of argument name and its value}"), several calls separated by ``; `` (what Llama
3.x writes when it calls more than one); tool results come back as ``ipython`` turns.

Its template renders one call per assistant message (it raises an error on more), so an
earlier turn's parallel calls go back as consecutive assistant messages, one call each."""

from __future__ import annotations

from ...grammar.json_calls import JsonCallStyle
from ..text_model import TextMessage
from .native import NativeFormat

__all__ = ["Llama3Format"]


class Llama3Format(NativeFormat):
    family = "llama3"
    style = JsonCallStyle(name="llama3", between="; ", name_key="name",
                          args_key="parameters")
    marks = ('"parameters": dictionary of argument name', "<|python_tag|>")

    def conversation(self, messages: list[TextMessage]) -> list[TextMessage]:
        out: list[TextMessage] = []
        for message in messages:
            calls = message.get("tool_calls") or []
            if message["role"] != "assistant" or len(calls) <= 1:
                out.append(message)
                continue
            if message["content"]:
                out.append({"role": "assistant", "content": message["content"]})
            out.extend({"role": "assistant", "content": "", "tool_calls": [call]}
                       for call in calls)
        return out
