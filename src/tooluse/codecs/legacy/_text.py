"""Escaping and id generation for the prompt-based XML format.

Why a module of its own: escaping must happen *exactly once* at each boundary (text into the
prompt, text back out of the model). Keeping both directions side by side makes that easy to
check; double escaping (``&amp;lt;`` reaching the tool) is a bug peers ship.

Only ``&``, ``<`` and ``>`` are escaped. That is enough: the parser recognises a tag only at a
literal ``<``, so a value without one can never open or close a tag. ``"`` is escaped too, but
only inside attribute values (``<parameter name="...">``), the one place a quote ends something.
"""

from __future__ import annotations

import re
import secrets

__all__ = ["escape", "escape_attr", "new_message_id", "new_tool_use_id", "unescape"]

_ENTITY = re.compile(r"&(lt|gt|amp|quot);")
_ENTITY_CHARS = {"lt": "<", "gt": ">", "amp": "&", "quot": '"'}
_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def escape(text: str) -> str:
    """``&`` -> ``&amp;``, ``<`` -> ``&lt;``, ``>`` -> ``&gt;`` (``&`` first, so once only)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def escape_attr(text: str) -> str:
    """:func:`escape` plus ``"`` -> ``&quot;`` for a double-quoted attribute value."""
    return escape(text).replace('"', "&quot;")


def unescape(text: str) -> str:
    """Undo :func:`escape` / :func:`escape_attr` in one left-to-right pass.

    One pass matters: ``&amp;lt;`` must become ``&lt;`` (what the user wrote), not ``<``.
    Any other ``&`` (``AT&T``, ``&nbsp;``) is left as written, because models often write a
    bare ``&`` and the text must reach the tool unchanged.
    """
    if "&" not in text:
        return text
    return _ENTITY.sub(lambda m: _ENTITY_CHARS[m.group(1)], text)


def _base62(n_chars: int) -> str:
    # One draw of a uniform number below 62**n, written in base 62: uniform characters,
    # and ~20x cheaper than n separate secrets.choice calls (ids are made per parsed call).
    number = secrets.randbelow(62**n_chars)
    chars = []
    for _ in range(n_chars):
        number, digit = divmod(number, 62)
        chars.append(_BASE62[digit])
    return "".join(chars)


def new_tool_use_id() -> str:
    """A fresh id in the Messages API's shape: ``toolu_`` + 24 base62 characters (~143 bits)."""
    return "toolu_" + _base62(24)


def new_message_id() -> str:
    """A fresh response id: ``msg_`` + 24 base62 characters."""
    return "msg_" + _base62(24)
