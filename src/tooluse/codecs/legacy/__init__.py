"""The prompt-based ("legacy") XML tool-use format.

Tools are described inside the system prompt; the model calls them by writing a
``<function_calls>`` block (generation stops at :data:`FUNCTION_CALLS_STOP`); results go back
as ``<function_results>`` in the next user turn. This package renders all of that, parses a
model's completion back into :class:`~tooluse.messages.ToolUseBlock` s (incrementally, in
linear time, safe against forged calls in tool output), and maps whole requests and
responses, a leading ``<thinking>`` section included (:mod:`.thinking`). See
``docs/legacy.md``.
"""

from __future__ import annotations

from ._text import escape, escape_attr, new_message_id, new_tool_use_id, unescape
from .completion import ParsedCompletion, items_to_completion, parse_completion
from .items import CallItem, Item, ParseProblem, TextItem, ToolLike
from .mapping import (
    LegacyPrompt,
    LegacyTurn,
    decode_response,
    encode_request,
    encode_response,
    tool_choice_prefill,
)
from .parser import MAX_TAG, LegacyParser
from .prompt import TOOL_STYLES, ToolStyle, render_tool_description, render_tools_prompt
from .render import (
    FUNCTION_CALLS_START,
    FUNCTION_CALLS_STOP,
    parameter_tag,
    render_function_calls,
    render_function_results,
    render_parameter,
    result_text,
)
from .schema import (
    ConversionProblem,
    ValueReader,
    convert_value,
    render_value,
    resolve,
    schema_types,
    type_label,
)
from .thinking import THINKING_CLOSE, THINKING_OPEN, render_thinking, split_thinking

__all__ = [
    "FUNCTION_CALLS_START",
    "FUNCTION_CALLS_STOP",
    "MAX_TAG",
    "THINKING_CLOSE",
    "THINKING_OPEN",
    "TOOL_STYLES",
    "CallItem",
    "ConversionProblem",
    "Item",
    "LegacyParser",
    "LegacyPrompt",
    "LegacyTurn",
    "ParseProblem",
    "ParsedCompletion",
    "TextItem",
    "ToolLike",
    "ToolStyle",
    "ValueReader",
    "convert_value",
    "decode_response",
    "encode_request",
    "encode_response",
    "escape",
    "escape_attr",
    "items_to_completion",
    "new_message_id",
    "new_tool_use_id",
    "parameter_tag",
    "parse_completion",
    "render_function_calls",
    "render_function_results",
    "render_parameter",
    "render_thinking",
    "render_tool_description",
    "render_tools_prompt",
    "render_value",
    "resolve",
    "result_text",
    "schema_types",
    "split_thinking",
    "tool_choice_prefill",
    "type_label",
    "unescape",
]
