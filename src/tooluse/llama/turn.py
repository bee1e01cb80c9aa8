"""The start and the bookkeeping of one generated turn, shared by the grammar engines (the
fast and llama engines in :mod:`.text`, the llguidance one in :mod:`.llguidance`)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ..prompting.text_model import TextEnd, context_error

__all__ = ["DecodingTurn", "start_turn"]


@dataclass
class DecodingTurn:
    """A turn whose prompt is evaluated: its tokens, the generation budget left by the
    context, the :class:`TextEnd` being filled and the clock."""

    tokens: list[int]
    max_tokens: int
    end: TextEnd
    from_disk: int
    started: float
    prompt_done: float = field(default_factory=time.perf_counter)

    def timings(self, forced_tokens: int) -> dict[str, float]:
        """The timings every engine reports in ``TextEnd.timings``."""
        return {
            "prompt_s": self.prompt_done - self.started,
            "generate_s": time.perf_counter() - self.prompt_done,
            "forced_tokens": float(forced_tokens),
            "disk_cache_tokens": float(self.from_disk),
        }


def start_turn(tokens: list[int], max_tokens: int, n_ctx: int,
               eval_prompt: Callable[[list[int]], tuple[int, int]]) -> DecodingTurn:
    """Refuse the prompt's ``tokens`` when they do not fit ``n_ctx`` ("prompt is too
    long"), cap ``max_tokens`` to the room left, and evaluate them with ``eval_prompt``
    (which returns the tokens reused, of which loaded from disk)."""
    started = time.perf_counter()
    if len(tokens) >= n_ctx:
        raise context_error(len(tokens), n_ctx)
    budget = max(0, min(max_tokens, n_ctx - len(tokens)))
    cached, from_disk = eval_prompt(tokens)
    return DecodingTurn(tokens=tokens, max_tokens=budget,
                end=TextEnd(reason="length", input_tokens=len(tokens), cached_tokens=cached),
                from_disk=from_disk, started=started)
