"""Choosing among the tokens a grammar allows, shared by the grammar engines."""

from __future__ import annotations

from typing import Any

__all__ = ["prefer_longer"]

_NEAR_TIE = 0.5


def prefer_longer(ok: list[int], logits: Any, pieces: list[bytes]) -> int:
    """The best token, unless a nearly as likely token extends it.

    The model's tokenizer splits "Madrid" as "Mad" + "rid"; when "M" and "Mad" score about
    the same (quantized weights make near-ties common), taking "M" leads the model into a
    split it never saw in training, and it tends to end the word there ("M</city>"). So a
    candidate within ``_NEAR_TIE`` logits that starts with the best one's text wins.
    """
    best = ok[0]
    head = pieces[best]
    floor = float(logits[best]) - _NEAR_TIE
    for token in ok[1:6]:
        if float(logits[token]) < floor:
            break
        piece = pieces[token]
        if len(piece) > len(head) and piece.startswith(head):
            return token
    return best
