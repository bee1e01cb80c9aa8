"""Mistral's ``[TOOL_CALLS]`` format (Mistral 7B Instruct v0.3, Nemo, Small): the answer is
``[TOOL_CALLS] [{"name": ..., "arguments": {...}}, ...]``; tools are listed in
``[AVAILABLE_TOOLS]`` before the last user turn and results come back in ``[TOOL_RESULTS]``.

Its template requires call ids of nine letters and digits and user/assistant turns that
alternate: each call id is mapped to one (the same id gives the same nine characters, for
the call and its result), and a user turn made only of tool results is not sent as an
empty user message. ``[TOOL_CALLS]`` is a special token of Mistral's tokenizer (a text
backend that knows it lets the model write it as that token)."""

from __future__ import annotations

import hashlib
import string

from ...grammar.json_calls import JsonCallStyle
from ..text_model import TextMessage
from .native import NativeFormat

__all__ = ["MistralFormat", "nine_char_id"]

_ALPHABET = string.ascii_letters + string.digits


def nine_char_id(call_id: str) -> str:
    """A call id as Mistral's template accepts it: nine letters and digits, the same for
    the same id."""
    if len(call_id) == 9 and call_id.isalnum():
        return call_id
    n = int.from_bytes(hashlib.sha256(call_id.encode("utf-8")).digest()[:8], "big")
    chars = []
    for _ in range(9):
        n, r = divmod(n, len(_ALPHABET))
        chars.append(_ALPHABET[r])
    return "".join(chars)


class MistralFormat(NativeFormat):
    family = "mistral"
    style = JsonCallStyle(name="mistral", block_open="[TOOL_CALLS] [", between=", ",
                          block_close="]", name_key="name", args_key="arguments")
    marks = ("[TOOL_CALLS]",)
    specials = ("[TOOL_CALLS]",)

    def conversation(self, messages: list[TextMessage]) -> list[TextMessage]:
        out: list[TextMessage] = []
        for message in messages:
            message = dict(message)
            if message.get("tool_calls"):
                message["tool_calls"] = [{**call, "id": nine_char_id(str(call["id"]))}
                                         for call in message["tool_calls"]]
            if message["role"] == "tool":
                message["tool_call_id"] = nine_char_id(str(message["tool_call_id"]))
            out.append(message)
        return out
