"""Grammar-constrained decoding on the client, for servers that take no grammar.

Ollama, LM Studio and most hosted OpenAI-compatible APIs accept no grammar, so prompt-based
tool calls from a small model often do not parse or validate. If the server (a) continues a
final assistant message and (b) returns the top candidates of the next token
(``logprobs`` / ``top_logprobs``), the grammar can be applied here instead, one token at a
time: ask for one token with its best candidates, keep the best one the grammar allows
(:class:`~tooluse.grammar.matcher.Matcher`), append it to the assistant message, repeat.

What keeps this affordable: text the grammar fully determines (tag names, ``</city>\\n
</parameters>``...) is appended without asking the model at all (:meth:`Matcher.forced`),
so a call like ``get_weather(city="Paris")`` costs a handful of one-token requests, and
servers with a prompt cache (llama.cpp, vLLM, Ollama) re-read only the new tokens.

The limit: only the server's top candidates (20 at most in the OpenAI API) are seen. When
none of them fits, generation ends there (the parser then keeps the text as text) rather
than inventing a token the model did not propose.
"""

from __future__ import annotations

import codecs
import math
import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Literal

from ..grammar.matcher import Matcher, MatchState
from ..grammar.tool_calls import ToolGrammar
from ..prompting.text_model import StopScanner, TextEnd

__all__ = ["Candidate", "StepResult", "constrained_generate", "step_result_from_chat"]


@dataclass(frozen=True)
class Candidate:
    """One possible token: its bytes (empty for an end-of-turn token) and log-prob."""

    data: bytes
    logprob: float


@dataclass
class Position:
    """One generated token: what the server chose, and its best alternatives (best first)."""

    chosen: bytes
    candidates: list[Candidate]


@dataclass
class StepResult:
    """The answer to "continue with up to n tokens", token by token."""

    positions: list[Position] = field(default_factory=list)
    #: The server ended the turn after the last position (its own end-of-turn token).
    ended: bool = False
    input_tokens: int = 0
    output_tokens: int = 0


#: ``step(continuation_so_far, n) -> StepResult``: one request for up to ``n`` tokens.
Step = Callable[[str, int], StepResult]


def constrained_generate(
    step: Step,
    grammar: ToolGrammar,
    *,
    matcher: Matcher | None = None,
    stop: Sequence[str] = (),
    max_tokens: int = 1024,
    temperature: float = 0.0,
    lookahead: int = 16,
    seed: int | None = None,
) -> Iterator[str | TextEnd]:
    """Text chunks of a continuation that stays inside ``grammar``, then a :class:`TextEnd`
    (``timings["requests"]``: how many requests it took; ``["forced_bytes"]``: how much
    text the grammar supplied without asking).

    Each request asks for up to ``lookahead`` tokens. The server's tokens are taken as long
    as the grammar allows them; at the first one it does not, the best allowed candidate of
    that position replaces it and the rest of the answer is dropped (it was conditioned on
    the refused token). With greedy decoding this is exactly one-token-at-a-time decoding,
    in fewer requests.
    """
    matcher = matcher or Matcher(grammar.root)
    state: MatchState = matcher.initial
    rng = random.Random(seed)
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    scanner = StopScanner(stop)
    continuation = ""
    end = TextEnd(reason="end")
    requests = produced = forced_bytes = 0
    ask = max(1, lookahead)
    try:
        while True:
            pieces: list[bytes] = []
            finished = False
            forced, after = matcher.forced(state)
            if forced:
                state = after
                forced_bytes += len(forced)
                pieces.append(forced)
                finished = _complete(matcher, state)
            elif _complete(matcher, state):
                break
            elif produced >= max_tokens:
                end.reason = "length"
                break
            else:
                result = step(continuation, max(1, min(ask, max_tokens - produced)))
                requests += 1
                if requests == 1:
                    end.input_tokens = result.input_tokens
                end.output_tokens += result.output_tokens
                state, taken, verdict = _take(matcher, state, result, temperature, rng)
                finished = verdict is True
                if verdict == _STUCK:
                    # Nothing the model proposes fits. Where the grammar can reach a stop
                    # string (the end of a call block), close with it; otherwise end here.
                    written = continuation + b"".join(taken).decode("utf-8", "replace")
                    exit_ = _exit(matcher, state, stop, written)
                    if exit_ is not None:
                        state = matcher.advance(state, exit_)
                        taken.append(exit_)
                    finished = True
                produced += max(1, len(taken))
                # Ask for about twice what the model last got right: few wasted tokens
                # while it strays, long runs while it follows the grammar.
                ask = min(max(1, lookahead), max(2, 2 * len(taken)))
                pieces.extend(taken)
            hit: str | None = None
            for data in pieces:
                piece = decoder.decode(data)
                continuation += piece
                text, hit = scanner.push(piece)
                if text:
                    yield text
                if hit is not None:
                    end.reason, end.stop_sequence = "stop", hit
                    break
            if hit is not None or finished:
                break
        if end.stop_sequence is None:
            rest = scanner.flush() + decoder.decode(b"", final=True)
            if rest:
                yield rest
    finally:
        end.timings = {"requests": float(requests), "forced_bytes": float(forced_bytes)}
        if end.output_tokens == 0:
            end.output_tokens = produced
    yield end


def _exit(matcher: Matcher, state: MatchState, stops: Sequence[str],
          written: str) -> bytes | None:
    """What completes a stop string from here, if the grammar allows it: the whole stop
    string (possibly after a line break), or the rest of one whose start ends ``written``
    (``/function_calls>`` after ``</invoke>\n<``). None when there is none."""
    for stop in stops:
        for start in range(len(stop)):
            if start and not written.endswith(stop[:start]):
                continue
            for lead in ("", "\n") if not start else ("",):
                tail = (lead + stop[start:]).encode("utf-8")
                if matcher.advance(state, tail):
                    return tail
    return None


def _complete(matcher: Matcher, state: MatchState) -> bool:
    """The grammar is complete and allows nothing more."""
    return matcher.accepts(state) and not matcher.allowed_bytes(state)


#: :func:`_take`'s verdict when no candidate of a position fits the grammar.
_STUCK: Literal["stuck"] = "stuck"


def _take(matcher: Matcher, state: MatchState, result: StepResult, temperature: float,
          rng: random.Random) -> tuple[MatchState, list[bytes], bool | Literal["stuck"]]:
    """Walk the server's tokens: the new state, the tokens taken, and whether the turn is
    over (the model ended it where the grammar may end, or the grammar is complete), or
    ``"stuck"`` (none of the candidates at some position fits)."""
    taken: list[bytes] = []
    for position in result.positions:
        if position.chosen:
            after = matcher.advance(state, position.chosen)
            if after:
                state = after
                taken.append(position.chosen)
                if _complete(matcher, state):
                    return state, taken, True
                continue
        elif matcher.accepts(state):
            return state, taken, True  # the model's end of turn, where the grammar may end
        if matcher.forced(state)[0]:
            return state, taken, False  # the grammar writes what comes next
        choice = _choose(matcher, state, position.candidates, temperature, rng)
        if choice is None:
            return state, taken, _STUCK
        if not choice:
            return state, taken, True  # end of turn chosen among the candidates
        state = matcher.advance(state, choice)
        taken.append(choice)
        return state, taken, _complete(matcher, state)
    if result.ended and matcher.accepts(state):
        return state, taken, True
    return state, taken, False


def _choose(matcher: Matcher, state: MatchState, candidates: Sequence[Candidate],
            temperature: float, rng: random.Random) -> bytes | None:
    """The best allowed candidate (sampled among the allowed ones when ``temperature >
    0``); ``b""`` for the end of turn; ``None`` when none is allowed."""
    allowed: list[Candidate] = []
    for candidate in candidates:
        if not candidate.data:
            if matcher.accepts(state):
                allowed.append(candidate)
        elif matcher.advance(state, candidate.data):
            allowed.append(candidate)
    if not allowed:
        return None
    pick = allowed[0]
    if temperature > 0 and len(allowed) > 1:
        top = max(c.logprob for c in allowed)
        weights = [math.exp((c.logprob - top) / temperature) for c in allowed]
        pick = rng.choices(allowed, weights=weights)[0]
    return pick.data


def step_result_from_chat(data: object) -> StepResult:
    """Read a non-streamed ``chat.completion`` asked with ``logprobs: true, top_logprobs:
    k``: each generated token with its candidates.

    A token's bytes come from ``bytes`` when the server gives them (a token may be part of
    a UTF-8 character), else from its text; an empty token is an end of turn. An answer
    that finished with ``stop`` ended the turn after its last token. Raises ``ValueError``
    (saying what is missing) when the answer has no log-probabilities.
    """
    if not isinstance(data, dict):
        raise ValueError("the answer is not a JSON object")  # noqa: TRY004 (a wire problem)
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ValueError("the answer has no choices")
    choice = choices[0]
    usage = data.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    result = StepResult(
        ended=choice.get("finish_reason") == "stop",
        input_tokens=_int(usage.get("prompt_tokens")),
        output_tokens=_int(usage.get("completion_tokens")),
    )
    message = choice.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    logprobs = choice.get("logprobs")
    entries = logprobs.get("content") if isinstance(logprobs, dict) else None
    if not isinstance(entries, list) or not entries:
        if not content and result.ended:
            return result  # the turn ended at once
        raise ValueError("the answer has no logprobs.content (does the server support "
                         "logprobs / top_logprobs on chat completions?)")
    for entry in entries:
        if not isinstance(entry, dict):
            raise ValueError("a logprobs.content entry is not an object")  # noqa: TRY004
        chosen = _token_bytes(entry)
        if chosen is None:
            raise ValueError("a logprobs.content entry has no token")
        candidates: list[Candidate] = []
        seen: set[bytes] = set()
        tops = entry.get("top_logprobs")
        for top in [entry, *(tops if isinstance(tops, list) else [])]:
            data_ = _token_bytes(top) if isinstance(top, dict) else None
            if data_ is None or data_ in seen:
                continue
            seen.add(data_)
            logprob = top.get("logprob")
            value = float(logprob) if isinstance(logprob, (int, float)) else -math.inf
            candidates.append(Candidate(data_, value))
        candidates.sort(key=lambda c: -c.logprob)
        result.positions.append(Position(chosen, candidates))
    return result


def _token_bytes(entry: dict[str, object]) -> bytes | None:
    raw = entry.get("bytes")
    if isinstance(raw, list) and all(isinstance(b, int) and 0 <= b < 256 for b in raw):
        return bytes(raw)
    token = entry.get("token")
    return token.encode("utf-8") if isinstance(token, str) else None


def _int(value: object) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0
