"""What a text model is given for a request: chat messages, the prefill of the assistant
turn, the stop strings and the grammar (:func:`build_text_prompt`).

Thinking blocks of the history never reach the legacy codec's rendering: on a thinking model
their text goes back into their turn as a ``<think>`` section, for the chat template to keep
or drop; on any other they are left out (:mod:`.thinking`)."""

from __future__ import annotations

import json

from ..codecs.legacy import FUNCTION_CALLS_STOP, ToolStyle, encode_request
from ..grammar.tool_calls import GrammarLimits, ToolGrammar, tool_call_grammar
from ..messages import Message, RedactedThinkingBlock, Request, ThinkingBlock, ToolChoice
from .emitter import CALLS_OPEN
from .text_model import TextMessage
from .thinking import THINK_OPEN, think_budget, thinking_grammar, with_thought

__all__ = ["build_text_prompt", "reminded"]

_SCHEMA_INSTRUCTION = "Answer with only one JSON value (no other text) matching this JSON Schema: "


def build_text_prompt(
    request: Request,
    *,
    style: ToolStyle = "xml",
    grammar: bool = True,
    limits: GrammarLimits | None = None,
    tools_under_none: bool = True,
    none_reminder: str | None = None,
    thinking_model: bool = False,
    demonstrations: int = 0,
) -> tuple[list[TextMessage], str, list[str], ToolGrammar | None]:
    """What the text model is given for ``request``: chat messages, the prefill of the
    assistant turn, the stop strings and the grammar (None when not constraining).
    ``thinking_model``: the model writes a ``<think>`` section (:mod:`.thinking`): when the
    request asks for reasoning (``request.reasoning.on``) the grammar allows a bounded one
    before the answer (without a grammar, the turn is prefilled with ``<think>``), and the
    history's thinking goes back into its turns; otherwise the history's thinking is left
    out and nothing else changes.
    ``tools_under_none=False``: ``tool_choice: none`` leaves the tool descriptions out.
    ``none_reminder``: under ``tool_choice: none`` with the tools kept in the prompt, this
    text is added to the last user turn (after the cached prefix), e.g. a reminder to
    answer from the function results rather than about the tools.

    ``style`` and ``demonstrations``: how the tools are described, and how many examples of
    the call format the system prompt gives (:func:`~tooluse.codecs.legacy.render_tools_prompt`).

    Raises :class:`ConversionError` for what text cannot carry (images).
    """
    messages, prefill, stops, constraint, continuing = _prompt(
        request, style, grammar, limits, tools_under_none, none_reminder, thinking_model,
        demonstrations)
    reasoning = request.reasoning
    if thinking_model and reasoning is not None and reasoning.on and not continuing:
        if constraint is not None:
            return messages, "", stops, thinking_grammar(constraint, think_budget(reasoning))
        if not prefill:
            return messages, THINK_OPEN + "\n", stops, None
    return messages, prefill, stops, constraint


def _thoughtless(message: Message) -> Message:
    """``message`` without its thinking blocks."""
    if not message.thinking:
        return message
    return message.model_copy(update={"content": [
        b for b in message.content if not isinstance(b, (ThinkingBlock, RedactedThinkingBlock))]})


def _prompt(request: Request, style: ToolStyle, grammar: bool,
            limits: GrammarLimits | None, tools_under_none: bool, none_reminder: str | None,
            thinking_model: bool, demonstrations: int = 0,
            ) -> tuple[list[TextMessage], str, list[str], ToolGrammar | None, str]:
    """:func:`build_text_prompt` before a think section, and the caller's own start of the
    answer (a last assistant turn) it continues."""
    plain = request.model_copy(update={"messages": [_thoughtless(m) for m in request.messages]})
    prompt = encode_request(plain, style=style, tools_under_none=tools_under_none,
                            demonstrations=demonstrations)
    texts = [turn.text for turn in prompt.turns]
    if thinking_model:
        for i, message in enumerate(request.messages):
            thought = ThinkingBlock.join(
                b for b in message.content
                if isinstance(b, ThinkingBlock) and b.joined_text.strip())
            if thought and message.role == "assistant":
                texts[i] = with_thought(thought, texts[i])
    messages: list[TextMessage] = []
    system = prompt.system
    schema = request.response_schema
    if schema is not None:
        system = (system + "\n\n" if system else "") + _SCHEMA_INSTRUCTION + json.dumps(
            schema, ensure_ascii=False)
    if system:
        messages.append({"role": "system", "content": system})
    messages.extend({"role": t.role, "content": text} for t, text in zip(prompt.turns, texts,
                                                                          strict=True))
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
            return (messages, "", stops,
                    tool_call_grammar(request.tools, choice, limits, schema), continuing)
        return messages, continuing, stops, None, continuing
    if FUNCTION_CALLS_STOP not in stops:
        stops.append(FUNCTION_CALLS_STOP)
    if grammar and not continuing:
        tool_grammar = tool_call_grammar(request.tools, choice, limits, schema)
        return messages, tool_grammar.prefill, stops, tool_grammar, continuing
    prefill = continuing
    if prompt.prefill:
        prefill = (continuing + "\n" if continuing else "") + prompt.prefill
    return messages, prefill, stops, None, continuing


def reminded(messages: list[TextMessage], reminder: str) -> list[TextMessage]:
    """``messages`` with ``reminder`` added to the last turn, if it is the user's."""
    if not messages or messages[-1]["role"] != "user":
        return messages
    return [*messages[:-1], {"role": "user", "content": messages[-1]["content"] + reminder}]
