"""The llguidance grammar engine: constrained turns for schemas our own engine cannot enforce.

Our engine (:mod:`tooluse.grammar.matcher` through :mod:`.text`) leaves ``pattern``, ``format``,
numeric bounds, ``allOf`` and a few more keywords to validation after parsing; llguidance
(``LLMatcher``) enforces them while decoding, at a few times our constraint cost per token
and a tokenizer set-up per process (docs/benchmarks/code.md). So it is used only
where it adds a guarantee: ``grammar_engine="auto"`` picks it for a grammar that holds a
:class:`~tooluse.grammar.ir.Native` value (:attr:`ToolGrammar.native`) when the
``llguidance`` package is installed; ``"llguidance"`` forces it for every grammar. A string
parameter with a Lark grammar (``x-lark``) is such a value: llguidance runs that grammar as a
subgrammar (:attr:`ToolGrammar.llguidance`).

The turn: the forced tokens llguidance computes are evaluated in one batch (the last one held
back at a tag boundary, as the fast engine's token healing does); elsewhere the model's
logits are masked with llguidance's token bitmask and the best (or a sampled) token taken.
"""

from __future__ import annotations

import codecs
import logging
import time
from collections.abc import Iterator, Sequence
from typing import Any, Protocol

from ..grammar.tool_calls import ToolGrammar
from ..prompting.text_model import StopScanner, TextEnd
from .model import LoadedModel
from .seq import Seq
from .token_choice import prefer_longer
from .turn import DecodingTurn


class LlamaTextBackend(Protocol):
    """What a turn uses of :class:`~.text.LlamaTextBackend` (which imports this)."""

    loaded: LoadedModel
    heal_forced: bool
    call_threshold: float | None
    call_open_byte: int
    last_end: TextEnd | None

    def tokenize(self, text: str) -> list[int]: ...

    def _start_turn(self, seq: Seq, prompt: str, tokens: list[int], max_tokens: int,
                    system: str) -> DecodingTurn: ...

    def _sample(self, np: Any, rng: Any, ids: Any, logits: Any, temperature: float,
                top_p: float | None) -> int: ...

__all__ = ["available", "generate", "matcher_for"]

log = logging.getLogger(__name__)

#: Forced tokens held back for the model to write (token healing): those at a tag boundary.
_TAG_BYTES = frozenset(b"<>")
#: Compiled matchers kept per loaded model (copied for each turn).
_MAX_GRAMMARS = 32


def available() -> bool:
    """Whether the ``llguidance`` package can be imported."""
    try:
        import llguidance  # noqa: F401
    except ImportError:
        return False
    return True


def tokenizer(loaded: LoadedModel) -> Any:
    """llguidance's tokenizer of ``loaded``'s vocabulary, built once per loaded model.

    Built from the model's token pieces (computed once, or loaded with the disk prompt
    cache), the control tokens marked as llguidance's bridge marks them: faster than
    ``lltokenizer_from_vocab``, which asks llama.cpp for every piece again (docs/benchmarks/code.md; the same
    tokens, checked in tests)."""
    found = getattr(loaded, "_llg_tokenizer", None)
    if found is None:
        import ctypes

        import llama_cpp
        from llguidance import LLTokenizer

        started = time.perf_counter()
        vocab = loaded.llm._model.vocab
        get_attr = getattr(llama_cpp, "llama_vocab_get_attr", None) or llama_cpp.llama_token_get_attr
        control = llama_cpp.LLAMA_TOKEN_ATTR_CONTROL
        user = llama_cpp.LLAMA_TOKEN_ATTR_USER_DEFINED
        buffer = ctypes.create_string_buffer(1024)
        tokens: list[bytes] = []
        for token, piece in enumerate(loaded.pieces()):
            if not piece:  # a control token: its text, marked with 0xFF as the bridge does
                n = llama_cpp.llama_token_to_piece(vocab, token, buffer, 1024, 0, True)
                piece = buffer.raw[:max(n, 0)]
                attr = get_attr(vocab, token)
                if attr & control or (attr & user and piece.startswith(b"<")
                                      and piece.endswith(b">")):
                    piece = b"\xff" + piece
            tokens.append(piece)
        tokenize = ctypes.cast(llama_cpp.llama_cpp._lib.llama_tokenize, ctypes.c_void_p).value
        found = LLTokenizer.from_llamacpp(  # type: ignore[attr-defined]
            tokens=tokens, vocab_ptr=vocab, tokenize_fptr=tokenize,
            eos_token=sorted(loaded.eog_tokens()) or llama_cpp.llama_vocab_eos(vocab),
            slices=None)
        log.info("llguidance tokenizer built in %.2f s", time.perf_counter() - started)
        setattr(loaded, "_llg_tokenizer", found)  # noqa: B010 - not a declared field
    return found


def matcher_for(loaded: LoadedModel, grammar: ToolGrammar, engine: str) -> Any | None:
    """A fresh ``LLMatcher`` for ``grammar`` when ``engine`` calls for llguidance here
    (``"llguidance"``, or ``"auto"`` with a grammar only llguidance enforces fully), else
    None: the caller uses the fast engine. A grammar llguidance rejects (a ``pattern`` its
    regex dialect lacks) also gives None, with a warning."""
    if engine not in ("auto", "llguidance") or (engine == "auto" and not grammar.native):
        return None
    if not available():
        return None
    import llguidance

    cache: dict[Any, Any] = getattr(loaded, "_llg_matchers", None) or {}
    setattr(loaded, "_llg_matchers", cache)  # noqa: B010 - not a declared field
    key = grammar.key or grammar.llguidance
    if key not in cache:
        template: Any = llguidance.LLMatcher(tokenizer(loaded), grammar.llguidance, log_level=0)
        if template.is_error():
            log.warning("llguidance rejected the grammar, using the fast engine: %s",
                        template.get_error()[:300])
            template = None  # remembered: not compiled again
        if len(cache) >= _MAX_GRAMMARS:
            cache.pop(next(iter(cache)))
        cache[key] = template
    return None if cache[key] is None else cache[key].deep_copy()


def _allowed(np: Any, matcher: Any, bitmask: Any, n_vocab: int) -> Any:
    """The tokens the grammar allows next, as a boolean array over the model's vocabulary."""
    from llguidance.numpy import fill_next_token_bitmask

    fill_next_token_bitmask(matcher, bitmask)
    bits = np.unpackbits(bitmask.view(np.uint8), bitorder="little").astype(bool)
    if len(bits) < n_vocab:
        bits = np.concatenate([bits, np.zeros(n_vocab - len(bits), dtype=bool)])
    return bits[:n_vocab]


def _call_first(np: Any, backend: LlamaTextBackend, allowed: Any, logits: Any) -> int | None:
    """Under ``auto``, at the turn's first token: the best allowed token opening the call
    block (its first byte: ``<`` in the XML format) when the model gives those at least ``call_threshold`` probability and
    text is allowed too (the fast engine's rule, :meth:`LlamaTextBackend._call_or_text`)."""
    ids = backend.loaded.first_byte_index().get(backend.call_open_byte)
    if ids is None or backend.call_threshold is None:
        return None
    callers = ids[allowed[ids]]
    if not len(callers) or int(allowed.sum()) == len(callers):
        return None  # no call possible, or nothing but a call: not a choice
    probs = np.exp(logits.astype(np.float64) - float(logits.max()))
    probs /= probs.sum()
    if float(probs[callers].sum()) < backend.call_threshold:
        return None
    return int(callers[int(np.argmax(probs[callers]))])


def _choose(np: Any, backend: LlamaTextBackend, seq: Seq, rng: Any, allowed: Any,
            pieces: list[bytes], temperature: float, top_p: float | None, top_k: int | None,
            first: bool) -> int:
    logits = seq.logits()
    if first and (call := _call_first(np, backend, allowed, logits)) is not None:
        return call
    masked = np.where(allowed, logits.astype(np.float32), -np.inf)
    k = min(max(1, top_k or 40), int(allowed.sum()))
    top = np.argpartition(-masked, k - 1)[:k] if k < len(masked) else np.arange(len(masked))
    top = top[np.argsort(-masked[top])]
    if temperature <= 0:
        return prefer_longer([int(t) for t in top[:6]], masked, pieces)
    return backend._sample(np, rng, top, masked, temperature, top_p)


def generate(backend: LlamaTextBackend, seq: Seq, matcher: Any, prompt: str,
             tokens: list[int], stop: Sequence[str], max_tokens: int, temperature: float,
             top_p: float | None, top_k: int | None,
             system: str = "", *, seed: int | None = None) -> Iterator[str | TextEnd]:
    """One constrained turn under ``matcher`` in the sequence ``seq`` (``prompt``
    tokenized as ``tokens``): text as it comes, then the :class:`TextEnd` (also stored in
    ``backend.last_end``, for the current context), as the fast engine's turn gives them."""
    import numpy as np
    from llguidance.numpy import allocate_token_bitmask

    loaded = backend.loaded
    llm = loaded.llm
    turn = backend._start_turn(seq, prompt, tokens, max_tokens, system)
    max_tokens, end = turn.max_tokens, turn.end
    pieces = loaded.pieces()
    eog = loaded.eog_tokens()
    n_vocab = int(llm.n_vocab())
    bitmask = allocate_token_bitmask(1, tokenizer(loaded).vocab_size)
    rng = np.random.default_rng(loaded.settings.seed if seed is None else seed)
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    scanner = StopScanner(stop)
    produced = forced_count = 0
    healing = False
    try:
        while produced < max_tokens:
            if matcher.is_stopped():
                end.reason = "end"
                break
            ids = [] if healing else list(matcher.compute_ff_tokens())
            if ids and backend.heal_forced and _TAG_BYTES.intersection(pieces[ids[-1]]):
                ids.pop()  # token healing, as in the fast engine
                healing = True
            ids = ids[: max_tokens - produced]
            chosen = None
            if not ids:
                allowed = _allowed(np, matcher, bitmask, n_vocab)
                if not allowed.any():
                    end.reason = "end"
                    break
                chosen = _choose(np, backend, seq, rng, allowed, pieces, temperature, top_p, top_k,
                                 first=produced == 0)
                if chosen in eog:
                    end.reason = "end"
                    break
                ids, healing = [chosen], False
            if not matcher.consume_tokens(ids):
                log.warning("llguidance refused a token: %s", matcher.get_error()[:300])
                end.reason = "end"
                break
            produced += len(ids)
            forced_count += len(ids) if chosen is None else 0
            text, hit = scanner.push(decoder.decode(b"".join(pieces[t] for t in ids)))
            if text:
                yield text
            if hit is not None:
                end.reason, end.stop_sequence = "stop", hit
                break
            if matcher.is_stopped():
                end.reason = "end"
                break
            seq.eval(ids)
        if end.reason != "stop":
            rest = scanner.flush() + decoder.decode(b"", final=True)
            if rest:
                yield rest
    finally:
        end.output_tokens = produced
        end.timings = {**turn.timings(forced_count), "llguidance": 1.0}
        backend.last_end = end
    yield end
