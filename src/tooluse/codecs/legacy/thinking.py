"""The ``<thinking>`` section of the prompt-based format <-> a neutral
:class:`~tooluse.messages.ThinkingBlock`.

A model answering in this format may reason first, between ``<thinking>`` and
``</thinking>``, then answer or call (SPEC section 2; the seeds' worked examples). By
default that section is ordinary text, as the format's documentation asks ("nothing may
depend on those tags"). Asked to (``decode_response(..., thinking=True)``), a completion
that *opens* with the section (blanks before it allowed) has it read as a thinking block:

- its text is unescaped once (``&lt;`` ``&gt;`` ``&amp;``) and loses one newline at each
  end, as a parameter value does, so what :func:`render_thinking` writes comes back exactly;
- the blanks between ``</thinking>`` and what follows are layout, not text;
- a section never closed is thinking cut at the token limit, unless a call block begins in
  it: then it is no section, and the calls are read as calls.

Rendering (:func:`render_thinking`) writes a block's text (and summary parts) the same
way; what the text cannot hold (a signature, a redacted block) is the caller's policy
(:mod:`.mapping`).
"""

from __future__ import annotations

from ...messages import ThinkingBlock
from ._text import unescape
from .parser import _strip_one_newline
from .render import framed

__all__ = ["THINKING_CLOSE", "THINKING_OPEN", "render_thinking", "split_thinking"]

THINKING_OPEN = "<thinking>"
THINKING_CLOSE = "</thinking>"
_WS = " \t\r\n"
_CALL_OPENERS = ("<function_calls", "<invoke")


def render_thinking(block: ThinkingBlock) -> str:
    """The block as a ``<thinking>`` section (its text, then its summary parts, each after
    a blank line); empty when it has no text (an encrypted-only block)."""
    text = block.joined_text
    return f"{THINKING_OPEN}{framed(text)}{THINKING_CLOSE}" if text else ""


def split_thinking(completion: str) -> tuple[ThinkingBlock | None, str]:
    """The completion's leading ``<thinking>`` section as a block, and the rest of the
    completion; ``(None, completion)`` when it does not open with one."""
    head = completion.lstrip(_WS)
    if not head.startswith(THINKING_OPEN):
        return None, completion
    inner = head[len(THINKING_OPEN):]
    end = inner.find(THINKING_CLOSE)
    if end < 0:
        if any(opener in inner for opener in _CALL_OPENERS):
            return None, completion
        body, rest = inner, ""
    else:
        body, rest = inner[:end], inner[end + len(THINKING_CLOSE):].lstrip(_WS)
    return ThinkingBlock(text=_strip_one_newline(unescape(body))), rest
