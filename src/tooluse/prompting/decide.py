"""The call decision under ``tool_choice: auto`` from the model's own likelihood.

A small model almost never *ranks* the call block first, though it gives it clearly more
probability where a tool fits than where none does. A decision reads one number from the
model and compares it with a threshold set per model on a calibration set
(``bench/calibration/calibrate.py``, ``bench/calibration/``); none reads the conversation's words.

The scores (each: higher means "call"):

- ``opener``: the log-likelihood of the whole call opener
  (``<function_calls><invoke><tool_name>``), over its first tokens, not only the first;
- ``contrast``: the same, less its log-likelihood when the last user turn is emptied
  (contextual calibration: what the prompt's tools alone make likely is taken out);
- ``yes_no``: the model asked whether one of the tools does what was asked, its
  log-likelihood of "Yes" less that of "No".

A decision is made only where the last turn is the user's request (no tool result in it):
after a tool's result the bundled model gives the call opener a high likelihood whatever
the request (the calibration set's ``after_result`` cases: it asks again for what it has),
so a threshold set on first turns would call there. Those turns stay the model's own.

A call started by a decision is the model's call (it writes the tool and every value);
its origin records ``steered_by: ["call_decision"]`` (the ``en-bfcl`` preset's rule
``decide`` is another: it reads the question's words too).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, get_args

from ..messages import Request, ToolResultBlock
from .text_model import TextMessage

__all__ = ["CALL_OPENER", "DECIDE_MODES", "DecideMode", "Decision", "decides", "decision_scores"]

#: How the prompt-based format opens a call block (after it the model names the tool).
CALL_OPENER = "<function_calls>\n<invoke>\n<tool_name>"

DecideMode = Literal["opener", "contrast", "yes_no"]
DECIDE_MODES: tuple[str, ...] = get_args(DecideMode)

#: The question of ``yes_no`` (asked after the conversation, in a turn of its own).
_ASK = ("Can one of the tools above do what I asked? Answer Yes or No.")

Scorer = Callable[[list[TextMessage], Sequence[str]], list[float]]


def decides(request: Request) -> bool:
    """Whether a decision is made for ``request``: its last turn is the user's, with no
    tool result in it."""
    if not request.messages or request.messages[-1].role != "user":
        return False
    return not any(isinstance(b, ToolResultBlock) for b in request.messages[-1].content)


def _emptied(messages: list[TextMessage]) -> list[TextMessage] | None:
    """``messages`` with the last user turn's text emptied (None: no user turn last)."""
    if not messages or messages[-1].get("role") != "user":
        return None
    return [*messages[:-1], {**messages[-1], "content": ""}]


def decision_scores(score: Scorer, messages: list[TextMessage],
                    modes: Sequence[str] = DECIDE_MODES) -> dict[str, float]:
    """Each of ``modes``' score for ``messages`` (the prompt as the model reads it), from
    ``score(messages, continuations)``: the model's log-likelihood of each continuation."""
    out: dict[str, float] = {}
    if "opener" in modes or "contrast" in modes:
        out["opener"] = score(messages, [CALL_OPENER])[0]
    if "contrast" in modes:
        empty = _emptied(messages)
        out["contrast"] = out["opener"] - score(empty, [CALL_OPENER])[0] \
            if empty is not None else out["opener"]
    if "yes_no" in modes:
        asked = [*messages, {"role": "user", "content": _ASK}] \
            if messages[-1].get("role") != "user" \
            else [*messages[:-1], {**messages[-1],
                                   "content": messages[-1]["content"] + "\n\n" + _ASK}]
        yes, no = score(asked, ["Yes", "No"])
        out["yes_no"] = yes - no
    return {m: out[m] for m in modes}


@dataclass(frozen=True)
class Decision:
    """Call when the model's ``mode`` score reaches ``threshold``."""

    mode: DecideMode
    threshold: float

    def __post_init__(self) -> None:
        if self.mode not in DECIDE_MODES:
            raise ValueError(f"call_decision must be one of {', '.join(DECIDE_MODES)}, "
                             f"not {self.mode!r}")

    def score(self, score: Scorer, messages: list[TextMessage]) -> float:
        return decision_scores(score, messages, (self.mode,))[self.mode]

    def calls(self, score: Scorer, messages: list[TextMessage]) -> tuple[bool, float]:
        """Whether to call, and the score it was decided on."""
        value = self.score(score, messages)
        return value >= self.threshold, value
