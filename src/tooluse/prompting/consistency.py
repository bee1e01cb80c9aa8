"""Self-consistency: several grammar-constrained answers to one prompt, one of them kept.

With :class:`Consistency` set, the prompt-based backend asks the text model for ``samples``
answers to the same prompt under the same grammar: the first greedy (as without it), the
others sampled at ``temperature``, each with its own seed (``seed + i``), so a request gives
the same answers every time. Each answer is read into its calls (tool and values; an answer
without a call is one answer too), and one is kept:

- ``"majority"``: the calls most answers agree on (as a multiset, order-free); among those
  answers, the one the model finds likeliest (its whole text's log-likelihood), the greedy
  one first on a tie;
- ``"likelihood"``: the answer the model finds likeliest, whatever the others say.

Only the model's own answers are chosen from; a call of a kept answer that is not the
greedy one records ``steered_by: ["self_consistency"]``. Each answer costs one generation
and one scoring pass: the turn takes about ``samples`` times as long.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..codecs.legacy import parse_completion
from ..grammar.tool_calls import ToolGrammar
from ..messages import ToolSpec
from ..stream import StreamEvent
from ..trace import TextPass, current_turn
from .emitter import Emitter
from .text_model import TextBackend, TextEnd, TextMessage

__all__ = ["CONSISTENCY_CHOICES", "Consistency", "Sample", "answer_key", "choose", "draw",
           "stream_kept"]

ConsistencyChoice = Literal["majority", "likelihood"]
CONSISTENCY_CHOICES: tuple[ConsistencyChoice, ...] = ("majority", "likelihood")


@dataclass(frozen=True)
class Consistency:
    """How many answers to draw (``samples``, at least 2), how to choose one (``choice``),
    the temperature of every answer but the first (greedy), and the first sample's seed."""

    samples: int
    choice: ConsistencyChoice = "majority"
    temperature: float = 0.7
    seed: int = 1

    def __post_init__(self) -> None:
        if self.samples < 2:
            raise ValueError(f"self-consistency needs at least 2 samples, not {self.samples}")
        if self.choice not in CONSISTENCY_CHOICES:
            raise ValueError(f"self-consistency choice must be one of "
                             f"{', '.join(CONSISTENCY_CHOICES)}, not {self.choice!r}")
        if not self.temperature > 0:
            raise ValueError("self-consistency samples need a temperature above 0, "
                             f"not {self.temperature}")


@dataclass
class Sample:
    """One answer: what the model wrote after the prefill, how its generation ended, its
    calls read as :func:`answer_key`, and its log-likelihood."""

    text: str
    end: TextEnd
    key: tuple[str, ...]
    score: float


def answer_key(answer: str, tools: Sequence[ToolSpec]) -> tuple[str, ...]:
    """The calls of ``answer`` (the prefill and what the model wrote), order-free: each as
    its tool's name and values in JSON, sorted. No call: the empty tuple."""
    calls = parse_completion(answer, tools).tool_uses
    return tuple(sorted(json.dumps([c.name, c.input], sort_keys=True, ensure_ascii=False)
                        for c in calls))


def choose(samples: Sequence[Sample], choice: ConsistencyChoice) -> tuple[int, int]:
    """The index of the answer kept and how many answers share its calls."""
    if not samples:
        raise ValueError("no answer to choose from")
    votes = Counter(s.key for s in samples)
    pool = list(range(len(samples)))
    if choice == "majority":
        most = max(votes.values())
        pool = [i for i in pool if votes[samples[i].key] == most]
    best = max(pool, key=lambda i: (samples[i].score, -i))
    return best, votes[samples[best].key]


def draw(text_backend: TextBackend, messages: Sequence[TextMessage], prefill: str,
         grammar: ToolGrammar, options: Mapping[str, Any], tools: Sequence[ToolSpec],
         consistency: Consistency) -> tuple[list[Sample], int, int]:
    """The answers to ``messages`` after ``prefill`` under ``grammar``: the first with
    ``options`` (greedy), the others sampled; each read into its calls and scored by the
    model (``score_continuations``; a text backend without it scores none, and the first
    of the answers that agree most is kept). Returns them, the index of the one kept, and
    its votes."""
    score = getattr(text_backend, "score_continuations", None)
    samples: list[Sample] = []
    for i in range(consistency.samples):
        sampled = dict(options) if i == 0 else {
            **options, "temperature": consistency.temperature, "seed": consistency.seed + i - 1}
        text, end = _answer(text_backend, messages, prefill, grammar, sampled, f"sample_{i}")
        likelihood = float(score(messages, [text], prefill=prefill)[0]) \
            if score is not None and text else float("-inf")
        samples.append(Sample(text, end, answer_key(prefill + text, tools), likelihood))
    chosen, votes = choose(samples, consistency.choice)
    return samples, chosen, votes


def _answer(text_backend: TextBackend, messages: Sequence[TextMessage], prefill: str,
            grammar: ToolGrammar, options: Mapping[str, Any], purpose: str,
            ) -> tuple[str, TextEnd]:
    """One whole answer, not streamed, and how it ended; a ``purpose`` pass of the
    request's trace."""
    pieces: list[str] = []
    end: TextEnd | None = None
    chunks = text_backend.generate_text(messages, prefill=prefill, grammar=grammar, **options)
    try:
        for chunk in chunks:
            if isinstance(chunk, TextEnd):
                end = chunk
                break
            pieces.append(chunk)
    finally:
        close = getattr(chunks, "close", None)
        if close is not None:
            close()  # release the model (its lock) when the answer ends early
    end = end or TextEnd(reason="end")
    text = "".join(pieces)
    if (turn := current_turn()) is not None:
        turn.add_pass(TextPass(prefill, text, purpose, end.reason, end.stop_sequence,
                               end.input_tokens, end.output_tokens, end.cached_tokens,
                               dict(end.timings)))
    return text, end


def stream_kept(text_backend: TextBackend, consistency: Consistency, emitter: Emitter,
                messages: Sequence[TextMessage], prefill: str, grammar: ToolGrammar,
                options: dict[str, Any], tools: Sequence[ToolSpec], written: list[str]
                ) -> Generator[StreamEvent, None, TextEnd]:
    """Self-consistency in the tool-use layer: the answers drawn whole (:func:`draw`), one
    kept and streamed through ``emitter``, call by call (a repeated call ends it as it would
    have ended the generation); its calls record ``steered_by: ["self_consistency"]``
    unless they are the greedy answer's. ``written`` gets the text fed."""
    started = time.perf_counter()
    samples, chosen, votes = draw(text_backend, messages, prefill, grammar, options, tools,
                                  consistency)
    kept = samples[chosen]
    if kept.key != samples[0].key:
        emitter.steering = (*emitter.steering, "self_consistency")
    if steered := options.get("steered"):
        # What steered the greedy answer (``optional_margin``), where it is the one kept:
        # recorded on its calls (on all of them: the answer was drawn whole).
        if chosen == 0:
            emitter.steering = (*emitter.steering, *dict.fromkeys(steered))
        steered.clear()
    parts = kept.text.split("</invoke>")
    for n, piece in enumerate(parts):
        chunk = piece + ("</invoke>" if n < len(parts) - 1 else "")
        written.append(chunk)
        yield from emitter.feed(chunk)
        if emitter.repeated:
            break
    kept.end.timings.update({
        "self_consistency_s": time.perf_counter() - started,
        "self_consistency_chosen": float(chosen),
        "self_consistency_votes": float(votes),
        "self_consistency_tokens": float(sum(s.end.output_tokens for s in samples)),
    })
    return kept.end
