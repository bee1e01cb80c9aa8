"""One turn decoded token by token by the fast or llama engine (:class:`TurnDecoder`): the
grammar's forced text, with token healing; the model's choices (a value copied whole, the
call-or-text threshold, the next token); the repeat guard's rollbacks; stop strings; and
the turn's counts at its end. :mod:`.text` starts the turn and owns the token choices it
calls (:class:`Engine`: what a turn uses of the text backend)."""

from __future__ import annotations

import codecs
from collections.abc import Iterator, Sequence
from collections.abc import Set as AbstractSet
from typing import Any, Literal, Protocol

from ..grammar.matcher import Matcher, MatchState
from ..grammar.tool_calls import ToolGrammar
from ..prompting.text_model import StopScanner, TextEnd
from .copy_values import ValueCopier
from .model import LoadedModel
from .no_repeat import Checkpoint, NoRepeat
from .seq import Seq
from .turn import DecodingTurn

__all__ = ["Engine", "TurnDecoder"]

#: Forced tokens that token healing holds back: those at a tag boundary.
_TAG_BYTES = frozenset(b"<>")
_OPEN = ord("<")
_CLOSE_PARAMS = b"</parameters>"


class Engine(Protocol):
    """What a turn uses of :class:`~.text.LlamaTextBackend` (which imports this)."""

    loaded: LoadedModel
    no_repeat: bool
    heal_forced: bool
    call_threshold: float | None
    last_end: TextEnd | None

    @property
    def engine(self) -> str: ...

    def _llama_sampler(self, grammar: ToolGrammar, temperature: float) -> Any: ...

    def _forced_tokens(self, forced: bytes, pieces: list[bytes],
                       specials: Sequence[str] = ()) -> list[int]: ...

    def _finished(self, matcher: Matcher, state: MatchState) -> bool: ...

    def _resume(self, seq: Seq, point: Checkpoint) -> tuple[MatchState, int]: ...

    def _banned(self, guard: NoRepeat, matcher: Matcher | None, state: MatchState | None,
                pieces: list[bytes]) -> set[int]: ...

    def _call_or_text(self, seq: Seq, np: Any, state: MatchState, matcher: Matcher,
                      pieces: list[bytes]) -> int | None: ...

    def _next_token(self, seq: Seq, np: Any, rng: Any, state: MatchState | None,
                    matcher: Matcher | None, sampler: Any, pieces: list[bytes],
                    eog: frozenset[int], temperature: float, top_p: float | None,
                    top_k: int | None, banned: AbstractSet[int] = frozenset()) -> int | None: ...


class TurnDecoder:
    """One turn decoded token by token by the fast or llama engine: the grammar's forced
    text (with token healing), the model's choices (a value copied whole, the call-or-text
    threshold, the next token), the repeat guard's rollbacks, stop strings, and the turn's
    counts at its end."""

    def __init__(self, backend: Engine, seq: Seq, turn: DecodingTurn,
                 stop: Sequence[str], temperature: float, top_p: float | None,
                 top_k: int | None, grammar: ToolGrammar | None, prefill: str,
                 conversation: str | None, copier: ValueCopier | None,
                 specials: tuple[str, ...] = (), seed: int | None = None,
                 optional_margin: float | None = None,
                 steered: list[str] | None = None) -> None:
        import numpy as np

        self.backend, self.seq, self.turn, self.np = backend, seq, turn, np
        self.max_tokens, self.end = turn.max_tokens, turn.end
        self.temperature, self.top_p, self.top_k = temperature, top_p, top_k
        self.copier = copier
        self.matcher = grammar.matcher if grammar is not None and backend.engine != "llama" \
            else None
        self.state: MatchState | None = self.matcher.initial if self.matcher is not None \
            else None
        self.sampler = backend._llama_sampler(grammar, temperature) if (
            grammar is not None and backend.engine == "llama") else None
        # A family's special tokens the answer may write stand for their text here.
        self.specials = specials
        self.pieces = backend.loaded.pieces_with(specials) if specials \
            else backend.loaded.pieces()
        self.eog = backend.loaded.eog_tokens()
        self.rng = np.random.default_rng(backend.loaded.settings.seed if seed is None else seed)
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self.scanner = StopScanner(stop)
        self.guard = NoRepeat(prefill.encode("utf-8"), conversation=conversation) if (
            self.matcher is not None and backend.no_repeat and temperature <= 0) else None
        self.produced = 0
        self.forced_tokens = 0
        self.healing = False
        self.pending = b""  # a value chosen by ``copier``, fed as forced text
        self.chosen: Checkpoint | None = None  # where ``copier`` chose it
        self.feed: list[int] = []  # the tokens of this step, forced or chosen
        #: Tokens released but not evaluated yet: evaluated together (one decode) when the
        #: model next chooses, so a chosen token and the forced text after it, or a value
        #: chosen whole and the tags after it, cost one ``llama_decode``, not one each.
        self.unfed: list[int] = []
        self.released: bytes | Checkpoint = b""
        #: Greedy only: close a call's parameters unless another optional one is this much
        #: likelier (nats; :meth:`_optional_or_close`), each change noted in ``steered``.
        self.optional_margin = optional_margin if temperature <= 0 else None
        self.steered = steered
        self.closed_optionals = 0

    def run(self) -> Iterator[str | TextEnd]:
        end, seq = self.end, self.seq
        try:
            while self.produced < self.max_tokens:
                if self.matcher is not None and self.state is not None and not self.healing:
                    self._force(self.matcher)
                if not self.feed:
                    chose = self._choose()
                    if chose == "again":
                        continue
                    if chose == "end":
                        end.reason = "end"
                        break
                # What was forced or chosen: rolled back by the repeat guard, or released
                # as text, checked for a stop string and the grammar's end, then evaluated.
                if isinstance(self.released, Checkpoint):
                    # Back to a point before every token not evaluated yet.
                    self.unfed = []
                    self.state, self.produced = self.backend._resume(seq, self.released)
                    if self.copier is not None:
                        self.copier.reopen()
                    self.feed = []
                    continue
                text, hit = self.scanner.push(self.decoder.decode(self.released))
                if text:
                    yield text
                if hit is not None:
                    end.reason, end.stop_sequence = "stop", hit
                    break
                if self.matcher is not None and self.state is not None \
                        and self.backend._finished(self.matcher, self.state):
                    end.reason = "end"
                    break
                self.unfed += self.feed
                self.feed = []
            self._flush()  # the cache holds the whole turn, for the next prompt to reuse
            yield from self._rest()
        finally:
            self._count()
        yield end

    def _flush(self) -> None:
        """Evaluate the tokens released since the last evaluation, in one decode."""
        if self.unfed:
            self.seq.eval(self.unfed)
            self.unfed = []

    def _force(self, matcher: Matcher) -> None:
        """Feed the text the grammar fully determines here (or the value ``copier`` chose),
        but a last token the model should write itself (token healing)."""
        assert self.state is not None
        pieces, state = self.pieces, self.state
        forced, after = (self.pending, matcher.advance(state, self.pending)) if self.pending \
            else matcher.forced(state)
        forced_ids = self.backend._forced_tokens(forced, pieces, self.specials) if forced \
            else []
        if (forced_ids and self.backend.heal_forced and not self.pending
                and not self.backend._finished(matcher, after)
                and _TAG_BYTES.intersection(pieces[forced_ids[-1]])):
            # Token healing: the last forced token ("<" of "</parameters>" or "<unit>", ">"
            # before a value) would split a token the model normally writes whole ("</",
            # ">["), and after such a split it judges the choice that follows badly (after
            # a lone "<" it all but never closes). Hold it back: the model writes it
            # itself, within the grammar, merged with what follows.
            forced_ids.pop()
            forced = b"".join(pieces[t] for t in forced_ids)
            after = matcher.advance(state, forced)
            self.healing = True
        self.pending = b""
        if not forced_ids:
            return
        if self.produced + len(forced_ids) > self.max_tokens:
            forced_ids = forced_ids[: self.max_tokens - self.produced]
            forced = b"".join(pieces[t] for t in forced_ids)
            after = matcher.advance(state, forced)
        self.state = after
        self.produced += len(forced_ids)
        self.forced_tokens += len(forced_ids)
        self.feed = forced_ids
        self.released = self.guard.push(forced, self.chosen) if self.guard is not None \
            else forced
        self.chosen = None

    def _choose(self) -> Literal["again", "end"] | None:
        """The model chooses what comes next: a value copied whole (then ``"again"``: it is
        fed as forced text), or a token (``"end"`` when it ends the turn)."""
        backend, seq, np, guard = self.backend, self.seq, self.np, self.guard
        matcher, state, pieces, eog = self.matcher, self.state, self.pieces, self.eog
        self.healing = False
        self._flush()
        if self.copier is not None and matcher is not None and state is not None:
            self.pending = self.copier.choose(
                backend, seq, np, state, matcher, pieces, eog,
                guard.banned_values_here() if guard is not None else frozenset(),
            ) or b""
            if self.pending:
                # A value chosen whole: a point a repeated call may go back to.
                self.chosen = Checkpoint(
                    len(guard.written), seq.n_tokens, self.produced, state, -1,
                    self.copier.last_choice[1], self.copier.last_choice[0],
                ) if guard is not None and guard.reopened \
                    and self.copier.last_choice is not None else None
                return "again"
        token = None
        if (self.produced == 0 and matcher is not None and state is not None
                and backend.call_threshold is not None):
            token = backend._call_or_text(seq, np, state, matcher, pieces)
        elif self.optional_margin is not None and matcher is not None and state is not None:
            token = self._optional_or_close(matcher, state)
        before = (seq.n_tokens, self.produced, state)
        if token is None:
            banned = backend._banned(guard, matcher, state, pieces) \
                if guard is not None else frozenset()
            token = backend._next_token(seq, np, self.rng, state, matcher, self.sampler,
                                        pieces, eog, self.temperature, self.top_p, self.top_k,
                                        banned)
        if token is None or token in eog:
            return "end"
        piece = pieces[token]
        if matcher is not None and state is not None:
            self.state = matcher.advance(state, piece)
        self.produced += 1
        self.feed = [token]
        self.released = piece if guard is None else guard.push(piece, Checkpoint(
            len(guard.written), before[0], before[1], before[2], token, seq.gap))
        return None

    def _optional_or_close(self, matcher: Matcher, state: MatchState) -> int | None:
        """Where the grammar lets the call close its parameters (``</``) or open another
        optional one (``<name>``): the model's log-probability of each side (its allowed
        first tokens summed); close unless another parameter is at least
        ``optional_margin`` nats likelier. None: not such a point, or the model's own
        greedy choice stands (then normal decoding picks it)."""
        limit = self.optional_margin
        if limit is None or matcher.allowed_bytes(state) != {_OPEN} \
                or not matcher.advance(state, _CLOSE_PARAMS):
            return None
        np, pieces = self.np, self.pieces
        ids = self.backend.loaded.first_byte_index().get(_OPEN)
        if ids is None:
            return None
        logits = self.seq.logits().astype(np.float64)
        logp = logits - logits.max()
        logp -= np.log(np.exp(logp).sum())
        order = ids[np.argsort(-logp[ids])][:64]
        allowed = [int(t) for t in order if matcher.advance(state, pieces[int(t)])]
        close = [t for t in allowed if pieces[t].startswith(b"</")]
        more = [t for t in allowed if not pieces[t].startswith(b"</")]
        if not close or not more:
            return None
        margin = float(np.logaddexp.reduce(logp[more]) - np.logaddexp.reduce(logp[close]))
        if margin >= limit:
            return None
        if logp[more[0]] > logp[close[0]]:  # greedy would have opened another parameter
            self.closed_optionals += 1
            if self.steered is not None:
                self.steered.append("optional_margin")
        return close[0]

    def _rest(self) -> Iterator[str]:
        """The text still held when the loop ends (by the repeat guard, the stop scanner or
        the UTF-8 decoder), and the turn's end as the guard sees it."""
        end, guard, scanner, decoder = self.end, self.guard, self.scanner, self.decoder
        if end.reason == "length" and guard is not None and guard.abandon():
            # Out of tokens inside a call we were only trying: the model had closed the
            # call block there, so the answer ends as it would have.
            end.reason, end.stop_sequence = "stop", "</function_calls>"
            text = scanner.push(decoder.decode(guard.release(final=True)))[0]
            text += scanner.flush()
            if text:
                yield text
        if end.reason != "stop":
            held = guard.release(final=True) if guard is not None else b""
            text, hit = scanner.push(decoder.decode(held)) if held else ("", None)
            if hit is not None:
                end.reason, end.stop_sequence = "stop", hit
                if text:
                    yield text
        if end.reason != "stop":
            rest = text if held else ""
            rest += scanner.flush() + decoder.decode(b"", final=True)
            if rest:
                yield rest

    def _count(self) -> None:
        """The turn's counts, kept in ``last_end``: also when the consumer stops early
        (closing the generator)."""
        end = self.end
        if self.sampler is not None:
            import llama_cpp

            llama_cpp.llama_sampler_free(self.sampler)
        end.output_tokens = self.produced
        end.timings = self.turn.timings(self.forced_tokens)
        if self.copier is not None:
            end.timings["copied_values"] = float(self.copier.copied)
            end.timings["scored_enums"] = float(self.copier.enum_choices)
            if self.copier.refused:
                end.timings["refused_values"] = float(self.copier.refused)
        if self.closed_optionals:
            end.timings["closed_optionals"] = float(self.closed_optionals)
        if self.guard is not None and self.guard.rollbacks:
            end.timings["repeat_rollbacks"] = float(self.guard.rollbacks)
        self.backend.last_end = end
