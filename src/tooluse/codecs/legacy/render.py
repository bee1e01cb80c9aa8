"""Rendering tool calls and tool results as the legacy format's XML text.

The shapes are the documented ones (``docs/legacy.md``), character for character::

    <function_calls>
    <invoke>
    <tool_name>get_ticker_symbol</tool_name>
    <parameters>
    <company_name>General Motors</company_name>
    </parameters>
    </invoke>
    </function_calls>

    <function_results>
    <result>
    <tool_name>get_ticker_symbol</tool_name>
    <stdout>
    GM
    </stdout>
    </result>
    </function_results>

Every piece of caller or tool text is escaped exactly once (see :mod:`._text`), so no value
and no tool output can close its block or forge a ``<function_calls>``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from ...errors import ConversionError
from ...messages import ImageBlock, JsonBlock, TextBlock, ToolResultBlock, ToolUseBlock
from .._common import image_placeholder
from ._text import escape, escape_attr
from .schema import render_value

__all__ = [
    "FUNCTION_CALLS_START",
    "FUNCTION_CALLS_STOP",
    "parameter_tag",
    "render_function_calls",
    "render_function_results",
    "render_parameter",
    "result_text",
]

FUNCTION_CALLS_START = "<function_calls>"
#: Pass this as a stop sequence: generation then ends right after the last ``</invoke>``.
FUNCTION_CALLS_STOP = "</function_calls>"

# A parameter name that can be a tag name as is; anything else uses <parameter name="...">.
_TAG_NAME = re.compile(r"[^\W\d][\w.\-]{0,127}")
_TARGET = "prompt-based XML format"


def parameter_tag(name: str) -> tuple[str, str]:
    """The opening and closing tag for parameter ``name``.

    Names that are valid tag names (``company_name``) are their own tag
    (``<company_name>``); any other name (spaces, ``<``, digits first) is written as
    ``<parameter name="...">`` so it survives the trip through the text unchanged.
    """
    if _TAG_NAME.fullmatch(name):
        return f"<{name}>", f"</{name}>"
    return f'<parameter name="{escape_attr(name)}">', "</parameter>"


def render_parameter(name: str, value: Any) -> str:
    """One ``<name>value</name>`` line.

    A value that starts or ends with a line break gets one extra newline on each side; the
    parser removes exactly one newline at each end, so the value comes back unchanged while a
    model's ``<code>\\nprint(1)\\n</code>`` reads as ``print(1)``.
    """
    try:
        text = render_value(value)
    except (TypeError, ValueError) as exc:
        raise ConversionError(
            f"parameter {name!r} cannot be written as JSON: {exc}", target=_TARGET
        ) from exc
    open_tag, close_tag = parameter_tag(name)
    return f"{open_tag}{framed(text)}{close_tag}"


def framed(text: str) -> str:
    """``text`` escaped for the inside of a tag, with one extra newline on each side when it
    starts or ends with a line break: the parser removes exactly one at each end."""
    body = escape(text)
    if text[:1] in ("\n", "\r") or text[-1:] in ("\n", "\r"):
        body = f"\n{body}\n"
    return body


def render_invoke(call: ToolUseBlock) -> str:
    """One ``<invoke>`` of a call (the model's own way of writing it)."""
    lines = ["<invoke>", f"<tool_name>{escape(call.name)}</tool_name>", "<parameters>"]
    lines.extend(render_parameter(k, v) for k, v in call.input.items())
    lines.extend(["</parameters>", "</invoke>"])
    return "\n".join(lines)


def render_function_calls(calls: Sequence[ToolUseBlock], *, close: bool = True) -> str:
    """One ``<function_calls>`` block holding an ``<invoke>`` per call.

    ``close=False`` leaves out ``</function_calls>``, which is how a completion looks when the
    stop sequence ended it.
    """
    parts = [FUNCTION_CALLS_START, *(render_invoke(c) for c in calls)]
    if close:
        parts.append(FUNCTION_CALLS_STOP)
    return "\n".join(parts)


def result_text(
    result: ToolResultBlock,
    path: Sequence[str | int] = (),
    name: str | None = None,
    *,
    strict: bool = True,
) -> str:
    """A result's content as one text: text parts as written, JSON parts as JSON text.

    Images cannot travel inside a text prompt: :class:`ConversionError` names the result
    (``path``, e.g. ``messages.2.content.0``) and the part; ``strict=False`` writes the
    codecs' documented placeholder (``[image omitted: image/png image]``) instead.
    """
    parts: list[str] = []
    for i, part in enumerate(result.content):
        if isinstance(part, TextBlock):
            parts.append(part.text)
        elif isinstance(part, JsonBlock):
            try:
                parts.append(json.dumps(part.value, ensure_ascii=False, allow_nan=False))
            except (TypeError, ValueError) as exc:
                raise ConversionError(
                    f"JSON result content cannot be written as JSON text: {exc}",
                    (*path, "content", i), target=_TARGET,
                ) from exc
        elif isinstance(part, ImageBlock):
            if not strict:
                parts.append(image_placeholder(part).text)
                continue
            who = f"the result of tool {name!r}" if name else "a tool result"
            raise ConversionError(
                f"{who} (tool_use_id {result.tool_use_id!r}) holds an image; the prompt-based "
                "format carries only text, so the image would be lost",
                (*path, "content", i), target=_TARGET,
            )
    return "\n".join(parts)


def render_function_results(
    results: Sequence[tuple[str, ToolResultBlock]],
    *,
    paths: Sequence[Sequence[str | int]] | None = None,
    strict: bool = True,
) -> str:
    """One ``<function_results>`` block: ``<result>`` per success, ``<error>`` per failure,
    in the order of the calls they answer. ``results`` pairs each result with its tool's name.

    ``paths`` optionally locates each result (``("messages", 3, "content", 0)``) for error
    messages; by default a result is located by its index in ``results``. ``strict=False``:
    images become a text placeholder instead of a :class:`ConversionError`.
    """
    lines = ["<function_results>"]
    for i, (name, result) in enumerate(results):
        path = paths[i] if paths is not None and i < len(paths) else (i,)
        body = escape(result_text(result, path, name, strict=strict))
        if result.is_error:
            lines.extend(["<error>", body, "</error>"])
        else:
            lines.extend(
                ["<result>", f"<tool_name>{escape(name)}</tool_name>", "<stdout>", body,
                 "</stdout>", "</result>"]
            )
    lines.append("</function_results>")
    return "\n".join(lines)
