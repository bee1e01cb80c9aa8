"""What a text model is given for a request: chat messages, the prefill of the assistant
turn, the stop strings and the grammar (:func:`build_text_prompt`)."""

from __future__ import annotations

import json
from typing import Literal

from ..codecs.legacy import FUNCTION_CALLS_STOP, encode_request
from ..messages import Request, ToolChoice
from .emitter import CALLS_OPEN
from .grammar import GrammarLimits, ToolGrammar, tool_call_grammar
from .text_backend import TextMessage

__all__ = ["build_text_prompt", "reminded"]

_SCHEMA_INSTRUCTION = "Answer with only one JSON value (no other text) matching this JSON Schema: "


def build_text_prompt(
    request: Request,
    *,
    style: Literal["xml", "json"] = "xml",
    grammar: bool = True,
    limits: GrammarLimits | None = None,
    tools_under_none: bool = True,
    none_reminder: str | None = None,
) -> tuple[list[TextMessage], str, list[str], ToolGrammar | None]:
    """What the text model is given for ``request``: chat messages, the prefill of the
    assistant turn, the stop strings and the grammar (None when not constraining).
    ``tools_under_none=False``: ``tool_choice: none`` leaves the tool descriptions out.
    ``none_reminder``: under ``tool_choice: none`` with the tools kept in the prompt, this
    text is added to the last user turn (after the cached prefix), e.g. a reminder to
    answer from the function results rather than about the tools.

    Raises :class:`ConversionError` for what text cannot carry (images).
    """
    prompt = encode_request(request, style=style, tools_under_none=tools_under_none)
    messages: list[TextMessage] = []
    system = prompt.system
    schema = request.response_schema
    if schema is not None:
        system = (system + "\n\n" if system else "") + _SCHEMA_INSTRUCTION + json.dumps(
            schema, ensure_ascii=False)
    if system:
        messages.append({"role": "system", "content": system})
    messages.extend({"role": t.role, "content": t.text} for t in prompt.turns)
    continuing = ""
    if messages and messages[-1]["role"] == "assistant":
        # The caller prefilled the answer: the model continues that turn.
        continuing = messages.pop()["content"]
    choice = request.tool_choice or ToolChoice()
    if none_reminder and choice.type == "none" and request.tools and tools_under_none:
        messages = reminded(messages, none_reminder)
    stops = list(prompt.stop_sequences)
    if not request.tools or choice.type == "none":
        # No tools offered (or forbidden): a call block must not even begin.
        if CALLS_OPEN not in stops:
            stops.append(CALLS_OPEN)
        if (request.tools or schema is not None) and grammar and not continuing:
            # Tools forbidden but in the conversation: plain text only, no XML echoes; or
            # structured output: one JSON value of the schema.
            return messages, "", stops, tool_call_grammar(request.tools, choice, limits, schema)
        return messages, continuing, stops, None
    if FUNCTION_CALLS_STOP not in stops:
        stops.append(FUNCTION_CALLS_STOP)
    if grammar and not continuing:
        tool_grammar = tool_call_grammar(request.tools, choice, limits, schema)
        return messages, tool_grammar.prefill, stops, tool_grammar
    prefill = continuing
    if prompt.prefill:
        prefill = (continuing + "\n" if continuing else "") + prompt.prefill
    return messages, prefill, stops, None


def reminded(messages: list[TextMessage], reminder: str) -> list[TextMessage]:
    """``messages`` with ``reminder`` added to the last turn, if it is the user's."""
    if not messages or messages[-1]["role"] != "user":
        return messages
    return [*messages[:-1], {"role": "user", "content": messages[-1]["content"] + reminder}]
