"""The Hermes-style format of Qwen2.5 and Qwen3 (and the Hermes 2 Pro / 3 models):
``<tool_call>\\n{"name": ..., "arguments": {...}}\\n</tool_call>``, one block per call, text
before the calls allowed; tool results come back in ``<tool_response>`` blocks of a user turn
(the template writes them from ``tool`` messages)."""

from __future__ import annotations

from ...grammar.json_calls import JsonCallStyle
from .native import NativeFormat

__all__ = ["HermesFormat"]


class HermesFormat(NativeFormat):
    family = "hermes"
    style = JsonCallStyle(name="hermes", call_open="<tool_call>\n", call_close="\n</tool_call>",
                          between="\n", name_key="name", args_key="arguments",
                          text_first=True, text_excludes="<")
    marks = ("<tool_call>",)
