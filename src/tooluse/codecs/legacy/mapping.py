"""A whole request or response in the prompt-based format.

:func:`encode_request` turns a neutral :class:`~tooluse.messages.Request` into what a
text-only model reads: a system prompt describing the tools, the conversation as text turns
(tool calls as ``<function_calls>``, results as ``<function_results>``) and, for a forced
tool choice, the prefill that opens the call (as the Messages API does for ``any``/``tool``).
:func:`decode_response` reads the completion back into a neutral
:class:`~tooluse.messages.Response`; :func:`encode_response` writes a response as the text a
model would have written.

Thinking blocks are written as ``<thinking>`` sections where they stand in an assistant
turn (:mod:`.thinking`); a block's signature and a redacted block have no place in text:
:class:`ConversionError` in strict mode, otherwise left out with a log line (a response is
always lenient). :func:`decode_response` reads a leading section back only when asked.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from ...errors import ConversionError
from ...messages import (
    ContentBlock,
    ImageBlock,
    RedactedThinkingBlock,
    Request,
    Response,
    StopReason,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
)
from .._common import Path, dropped, image_placeholder
from ._text import new_message_id
from .completion import items_to_completion
from .parser import LegacyParser
from .prompt import ToolStyle, render_tools_prompt
from .render import FUNCTION_CALLS_STOP, render_function_calls, render_function_results
from .thinking import render_thinking, split_thinking

__all__ = [
    "LegacyPrompt",
    "LegacyTurn",
    "decode_response",
    "encode_request",
    "encode_response",
    "tool_choice_prefill",
]

_TARGET = "prompt-based XML format"
_ROLE_LABEL = {"system": "System", "user": "User", "assistant": "Assistant"}


@dataclass(frozen=True)
class LegacyTurn:
    """One turn of the conversation as plain text."""

    role: Literal["user", "assistant"]
    text: str


@dataclass
class LegacyPrompt:
    """What a text model is given: system prompt, text turns, and the start of its answer.

    ``prefill`` is text the assistant's answer must begin with (the opening of a forced
    call); the completion continues it, so parse ``prefill + completion``
    (:func:`decode_response` does, given ``prefill=``). When the conversation itself ends
    with an assistant turn, the answer continues that turn.
    """

    system: str
    turns: list[LegacyTurn] = field(default_factory=list)
    prefill: str | None = None
    stop_sequences: list[str] = field(default_factory=list)

    def render(self) -> str:
        """The whole prompt as one text (``System: ...\\n\\nUser: ...\\n\\nAssistant: ...``),
        ending where the model's completion begins; for the convert CLI and plain
        completion endpoints."""
        parts: list[str] = []
        if self.system:
            parts.append(f"System: {self.system}")
        parts.extend(f"{_ROLE_LABEL[t.role]}: {t.text}" for t in self.turns)
        if self.turns and self.turns[-1].role == "assistant":
            last = parts.pop()
            parts.append(last + ("\n" + self.prefill if self.prefill else ""))
        else:
            parts.append("Assistant:" + (" " + self.prefill if self.prefill else ""))
        return "\n\n".join(parts)


def tool_choice_prefill(request: Request) -> str | None:
    """The opening of a call for ``tool_choice`` ``any`` (up to ``<tool_name>``) or ``tool``
    (with the name written); None when the model may answer freely."""
    choice = request.tool_choice
    if choice is None or not request.tools:
        return None
    if choice.type == "any":
        return "<function_calls>\n<invoke>\n<tool_name>"
    if choice.type == "tool":
        return f"<function_calls>\n<invoke>\n<tool_name>{choice.name}</tool_name>\n"
    return None


def _thinking_piece(block: ThinkingBlock | RedactedThinkingBlock, assistant: bool, path: Path,
                    strict: bool) -> str:
    """A thinking block as its ``<thinking>`` section ("" when nothing of it can be written)."""
    if not assistant:
        dropped(f"a {block.type} block belongs in an assistant turn", path, _TARGET, strict)
        return ""
    if isinstance(block, RedactedThinkingBlock):
        dropped("the prompt-based format cannot carry a redacted thinking block", path,
                _TARGET, strict)
        return ""
    if block.signature is not None:
        dropped("the prompt-based format cannot carry a thinking block's signature",
                (*path, "signature"), _TARGET, strict)
    return render_thinking(block)


def _message_text(
    request: Request, index: int, names: dict[str, str], strict: bool
) -> str:
    """One message's blocks as text; consecutive calls (results) share one block."""
    message = request.messages[index]
    pieces: list[str] = []
    calls: list[ToolUseBlock] = []
    results: list[tuple[str, ToolResultBlock]] = []
    result_paths: list[tuple[str | int, ...]] = []

    def flush() -> None:
        if calls:
            pieces.append(render_function_calls(calls))
            calls.clear()
        if results:
            pieces.append(render_function_results(results, paths=result_paths, strict=strict))
            results.clear()
            result_paths.clear()

    text: list[str] = []
    for j, block in enumerate(message.content):
        path: tuple[str | int, ...] = ("messages", index, "content", j)
        if isinstance(block, ImageBlock) and not strict:
            block = image_placeholder(block)
        if isinstance(block, TextBlock):
            flush()
            text.append(block.text)
            continue
        if text:
            pieces.append("".join(text))
            text.clear()
        if isinstance(block, (ThinkingBlock, RedactedThinkingBlock)):
            flush()
            pieces.append(_thinking_piece(block, message.role == "assistant", path, strict))
            continue
        if isinstance(block, ImageBlock):
            raise ConversionError(
                "an image cannot be carried by the prompt-based format (text only)",
                path, target=_TARGET,
            )
        if isinstance(block, ToolUseBlock) and message.role != "assistant":
            raise ConversionError("a tool_use block belongs in an assistant turn", path,
                                  target=_TARGET)
        if isinstance(block, ToolResultBlock) and message.role != "user":
            raise ConversionError("a tool_result block belongs in a user turn", path,
                                  target=_TARGET)
        if isinstance(block, ToolUseBlock):
            if results:
                flush()
            names[block.id] = block.name
            calls.append(block)
        elif isinstance(block, ToolResultBlock):
            if calls:
                flush()
            name = names.get(block.tool_use_id)
            if name is None:
                raise ConversionError(
                    f"tool result answers tool_use_id {block.tool_use_id!r}, which no earlier "
                    "tool call has, so its tool name is unknown",
                    path, target=_TARGET,
                )
            results.append((name, block))
            result_paths.append(path)
    flush()
    if text:
        pieces.append("".join(text))
    return "\n\n".join(p for p in pieces if p)


def encode_request(
    request: Request, *, style: ToolStyle = "xml", strict: bool = True,
    tools_under_none: bool = True, demonstrations: int = 0,
) -> LegacyPrompt:
    """The request as a text prompt. Raises :class:`ConversionError` (with the path of the
    block, e.g. ``messages.2.content.1``) for images, which text cannot carry;
    ``strict=False`` writes the codecs' documented placeholder text instead.

    A thinking block of an assistant turn is its ``<thinking>`` section, where it stands;
    its signature, a redacted block and thinking in a user turn cannot be written: strict
    :class:`ConversionError`, otherwise left out with a log line. (The prompting layer
    decides itself what a text model sees of the history's thinking.)

    The tools are described under every ``tool_choice``, ``none`` included: the Messages
    API keeps its tool system prompt under ``none`` (it counts the same tool-prompt tokens
    as under ``auto``), and a tool loop's last, text-only turn then shares its prompt
    prefix with the turns before it (a local model reuses its KV cache). Under ``none``
    the caller forbids calls (a grammar, or the ``<function_calls>`` stop string);
    ``tools_under_none=False`` leaves the tools out instead. ``style`` and
    ``demonstrations``: how the tools are described, and how many examples of the call
    format come first (:func:`~.prompt.render_tools_prompt`). ``any``/``tool`` prefill the
    answer with the opening of a call; ``disable_parallel_tool_use`` asks for one call.
    """
    choice = request.tool_choice
    system_text = request.system_text()
    if request.tools and (tools_under_none or choice is None or choice.type != "none"):
        system = render_tools_prompt(
            request.tools,
            system_text or None,
            style=style,
            parallel=not (choice is not None and choice.disable_parallel_tool_use),
            demonstrations=demonstrations,
        )
    else:
        system = system_text
    names: dict[str, str] = {}
    turns = [
        LegacyTurn(message.role, _message_text(request, i, names, strict))
        for i, message in enumerate(request.messages)
    ]
    stops = list(request.stop_sequences)
    if request.tools and FUNCTION_CALLS_STOP not in stops:
        stops.append(FUNCTION_CALLS_STOP)
    return LegacyPrompt(system, turns, tool_choice_prefill(request), stops)


def decode_response(
    text: str,
    tools: Sequence[ToolSpec] | None = None,
    *,
    stop_sequence: str | None = None,
    prefill: str | None = None,
    truncated: bool = False,
    model: str | None = None,
    id_factory: Callable[[], str] | None = None,
    thinking: bool = False,
) -> Response:
    """A completion as a neutral response.

    - ``stop_sequence``: the stop sequence that ended generation, if any.
    - ``prefill``: the text the answer was forced to begin with (see :class:`LegacyPrompt`);
      it is parsed together with ``text``.
    - ``truncated``: generation hit the token limit.
    - ``thinking``: a leading ``<thinking>`` section becomes a thinking block
      (:func:`~.thinking.split_thinking`); by default it is text like any other.

    ``stop_reason`` is ``tool_use`` when calls were parsed and the completion was not cut off
    inside one; ``max_tokens`` when cut off; ``stop_sequence`` for a caller's own stop
    sequence; otherwise ``end_turn``. Malformed calls stay in the content as text.
    """
    parser = LegacyParser(tools, id_factory=id_factory)
    full = (prefill or "") + text
    thought, full = split_thinking(full) if thinking else (None, full)
    items = parser.feed(full)
    cut_in_call = parser.in_call
    items += parser.close()
    parsed = items_to_completion(items)
    calls = parsed.tool_uses
    reason: StopReason
    if truncated and (cut_in_call or not calls):
        reason = "max_tokens"
    elif calls:
        reason = "tool_use"
    elif truncated:
        reason = "max_tokens"
    elif stop_sequence is not None and stop_sequence != FUNCTION_CALLS_STOP:
        reason = "stop_sequence"
    else:
        reason = "end_turn"
    content: list[ContentBlock] = [thought] if thought is not None else []
    content.extend(parsed.content)
    return Response(
        id=new_message_id(),
        model=model,
        content=content,
        stop_reason=reason,
        stop_sequence=stop_sequence if reason == "stop_sequence" else None,
    )


def encode_response(response: Response) -> str:
    """The response as the text the model would have written: text blocks as they are,
    thinking blocks as ``<thinking>`` sections, each run of calls as a closed
    ``<function_calls>`` block. A signature or a redacted block is left out with a log line."""
    pieces: list[str] = []
    calls: list[ToolUseBlock] = []
    for index, block in enumerate(response.content):
        if isinstance(block, ToolUseBlock):
            calls.append(block)
            continue
        if calls:
            pieces.append(render_function_calls(calls))
            calls = []
        if isinstance(block, TextBlock):
            pieces.append(block.text)
        elif isinstance(block, (ThinkingBlock, RedactedThinkingBlock)):
            pieces.append(_thinking_piece(block, True, ("content", index), False))
        else:
            raise ConversionError(
                f"a {block.type} block cannot appear in a text completion",
                ("content", index), target=_TARGET,
            )
    if calls:
        pieces.append(render_function_calls(calls))
    return "\n\n".join(p for p in pieces if p)
