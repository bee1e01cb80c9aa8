"""Text generation on a loaded llama.cpp model: chat template, prefix cache, grammar.

This drives llama.cpp token by token (``Llama.eval`` + our own choice of the next token)
rather than calling ``create_chat_completion``, for three reasons:

- **prefix reuse**: the tool system prompt and the conversation so far repeat at every turn
  of a tool loop. ``Llama`` keeps the evaluated tokens in its KV cache; we compare the new
  prompt with them and evaluate only from the first differing token;
- **cheap grammar**: with :class:`~tooluse.grammar.matcher.Matcher` we check only the
  model's best candidates against the grammar (in order, so greedy decoding picks exactly
  what a full-vocabulary grammar sampler would), and text the grammar fully determines
  (``</tool_name>\\n<parameters>\\n<location>``) is tokenized and evaluated in one batch
  instead of being sampled token by token;
- **stop strings and prefill** are handled on our side, identically with and without a
  grammar.

``engine="llama"`` uses llama.cpp's own grammar sampler (the reference for benchmarks);
``"llguidance"`` (and ``"auto"`` where a schema needs it) :mod:`.llguidance`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import Any, Literal, Unpack

from ..errors import BackendError
from ..grammar.matcher import Matcher, MatchState
from ..grammar.tool_calls import ToolGrammar
from ..prompting.per_context import PerContext
from ..prompting.text_model import (
    Generation,
    GenerationOptions,
    TextEnd,
    TextMessage,
)
from ..prompting.thinking import assistant_start, mentions_think
from ..trace import current_turn
from . import llguidance  # auto/llguidance: schemas only llguidance enforces
from .cache import DiskPromptCache, eval_prompt, system_prefix_length, system_text
from .copy_values import ValueCopier, log_softmax, score_tokens
from .decode import TurnDecoder
from .model import LoadedModel
from .no_repeat import Checkpoint, NoRepeat
from .seq import Seq
from .token_choice import prefer_longer
from .turn import DecodingTurn, start_turn

__all__ = ["GrammarEngine", "LlamaTextBackend"]

GrammarEngine = Literal["auto", "fast", "llama", "llguidance"]

#: How many of the model's best tokens are checked against the grammar before falling
#: back to every token that can start with an allowed byte.
_TOP_CANDIDATES = 32


def _utf8_length(lead: int) -> int:
    """The length of the UTF-8 character a lead byte starts."""
    return 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4


class LlamaTextBackend:
    """A :class:`~tooluse.prompting.text_model.TextBackend` over a loaded GGUF model."""

    #: How the last generation in the current context ended, also when its consumer stopped
    #: early (set in the requesting thread, with slots too: :mod:`~tooluse.prompting.per_context`).
    last_end: PerContext[TextEnd | None] = PerContext(lambda: None)

    def __init__(
        self,
        loaded: LoadedModel,
        *,
        engine: GrammarEngine = "auto",
        chat_template: str | None = None,
        model: str | None = None,
        call_threshold: float | None = None,
        heal_forced: bool = True,
        prompt_cache: DiskPromptCache | None = None,
        no_repeat: bool = False,
        calls_follow_request: bool = False,
        copy_values: float | None = None,
        score_enums: bool = False,
        think_tags: bool | None = None,
    ) -> None:
        if engine not in ("auto", "fast", "llama", "llguidance"):
            raise ValueError(f"grammar engine must be auto, fast, llama or llguidance: {engine!r}")
        self.loaded = loaded
        self.engine: GrammarEngine = engine
        #: ``auto``: start a call when the model gives it at least this probability
        #: (None: plain argmax / sampling decides).
        self.call_threshold = call_threshold
        #: The first byte of the call block (``<`` in the XML format; a family's own
        #: format sets its opener's: Llama 3.x ``{``, Mistral ``[``).
        self.call_open_byte = ord("<")
        #: Leave the last token of grammar-forced text to the model (token healing).
        self.heal_forced = heal_forced
        #: KV states of tool system prompts saved on disk, shared between processes.
        self.prompt_cache = prompt_cache
        #: A further call may not repeat an earlier one (greedy decoding, fast engine).
        self.no_repeat = no_repeat
        #: With ``no_repeat``: where the model would close the call block, try another
        #: call, kept only if it brings a value of the conversation no call used yet.
        self.calls_follow_request = calls_follow_request
        #: Offer the conversation's spans at each parameter value; the number is the bonus
        #: (nats) a span needs over the model's free value (:mod:`.copy_values`).
        self.copy_values = copy_values
        #: Choose among a slot's few allowed values (enum, boolean) by whole likelihood.
        self.score_enums = score_enums
        self.model: str | None = model or Path(loaded.settings.path).stem
        self._formatter = _formatter(loaded, chat_template)
        #: A thinking model (writes ``<think>``): its chat template mentions the tag, unless
        #: ``think_tags`` says (:mod:`tooluse.prompting.thinking`).
        self.think_tags = mentions_think(self._formatter.template) if think_tags is None \
            else think_tags

    # -- prompt -------------------------------------------------------------------------------
    @property
    def chat_template(self) -> str:
        """The chat template the prompt is rendered with (the GGUF's, or the override)."""
        return str(self._formatter.template)

    def render(self, messages: Sequence[TextMessage], prefill: str = "",
               think: bool | None = None,
               tools: Sequence[Mapping[str, Any]] | None = None,
               template_kwargs: Mapping[str, Any] | None = None) -> str:
        """The prompt text: the model's own chat template, then the prefill. ``think``
        (a thinking model's turn may think, or not) goes to the template as
        ``enable_thinking``, and the think section is left to the prompting layer
        (:func:`~tooluse.prompting.thinking.assistant_start`). ``tools`` go to the template
        as ``tools=`` (a model family's own tool format); without them it is rendered as
        before, without the variable. ``template_kwargs`` are further variables of the
        family's template (gpt-oss's ``reasoning_effort``)."""
        switch: dict[str, Any] = dict(template_kwargs or {})
        if think is not None:
            switch["enable_thinking"] = think
        if tools:
            switch["tools"] = [dict(t) for t in tools]
        result = self._formatter(messages=[dict(m) for m in messages], **switch)
        return assistant_start(str(result.prompt), think) + prefill

    def tokenize(self, text: str) -> list[int]:
        return list(self.loaded.llm.tokenize(text.encode("utf-8"), add_bos=False, special=True))

    def prompt_tokens(self, messages: Sequence[TextMessage], prefill: str = "",
                      tools: Sequence[Mapping[str, Any]] | None = None,
                      template_kwargs: Mapping[str, Any] | None = None) -> int:
        return len(self.tokenize(self.render(messages, prefill, tools=tools,
                                             template_kwargs=template_kwargs)))

    def context_length(self) -> int:
        return int(self.loaded.llm.n_ctx())

    # -- generation ---------------------------------------------------------------------------
    def generate_text(self, messages: Sequence[TextMessage],
                      **options: Unpack[GenerationOptions]) -> Iterator[str | TextEnd]:
        g = Generation(**options)
        prompt = self.render(messages, g.prefill, g.think, g.tools, g.template_kwargs)
        if (turn := current_turn()) is not None:
            turn.rendered(prompt)
        system = system_text(messages)
        tokens = self.tokenize(prompt)
        with self.loaded.sequence(tokens) as seq:
            users = "\n".join(m["content"] for m in messages if m["role"] == "user")
            copier = ValueCopier(users, self.copy_values, enums=self.score_enums,
                                 focus=g.focus, naming=g.naming) if (
                (self.copy_values is not None or self.score_enums) and g.temperature <= 0) \
                else None
            yield from self._generate(seq, prompt, tokens, g.stop, g.max_tokens, g.temperature, g.top_p,
                                      g.top_k, g.grammar, system, g.prefill,
                                      users if self.calls_follow_request else None, copier,
                                      tuple(g.specials or ()), seed=g.seed,
                                      optional_margin=g.optional_margin, steered=g.steered)

    def score_continuations(self, messages: Sequence[TextMessage], continuations: Sequence[str],
                            *, prefill: str = "",
                            tools: Sequence[Mapping[str, Any]] | None = None,
                            template_kwargs: Mapping[str, Any] | None = None) -> list[float]:
        """The model's log-likelihood of each whole continuation after ``messages`` and
        ``prefill`` (natural log, summed over its tokens).

        Scoring alternatives whole (a tool name, a call against an answer) instead of by
        their first token: "get_weather_forecast" and "get_weather" differ only in later
        tokens. The prompt's KV cache is reused and left as it was."""
        import numpy as np

        prompt = self.render(messages, prefill, tools=tools, template_kwargs=template_kwargs)
        llm = self.loaded.llm
        tokens = self.tokenize(prompt)
        if len(tokens) >= llm.n_ctx():
            raise BackendError("the prompt does not fit the model's context",
                               kind="request_too_large")
        with self.loaded.sequence(tokens) as seq:
            self._eval_prompt(seq, prompt, tokens, system_text(messages))
            first = log_softmax(np, seq.logits().astype(np.float64))
            n_past = seq.n_tokens
            limit = max(0, min(llm.n_batch, llm.n_ctx() - n_past - 1))
            # What is decoded past the prompt is dropped (seq.n_tokens never moves).
            scores = [score_tokens(np, seq, n_past, first, list(
                llm.tokenize(text.encode("utf-8"), add_bos=False, special=False))[:limit])
                for text in continuations]
        return scores

    def _generate(self, seq: Seq, prompt: str, tokens: list[int], stop: Sequence[str], max_tokens: int, temperature: float,
                  top_p: float | None, top_k: int | None, grammar: ToolGrammar | None,
                  system: str = "", prefill: str = "",
                  conversation: str | None = None,
                  copier: ValueCopier | None = None,
                  specials: tuple[str, ...] = (),
                  seed: int | None = None, optional_margin: float | None = None,
                  steered: list[str] | None = None) -> Iterator[str | TextEnd]:
        if grammar and (llg := llguidance.matcher_for(self.loaded, grammar, self.engine)):
            yield from llguidance.generate(self, seq, llg, prompt, tokens, stop, max_tokens,
                                            temperature, top_p, top_k, system, seed=seed)
            return
        turn = self._start_turn(seq, prompt, tokens, max_tokens, system)
        yield from TurnDecoder(self, seq, turn, stop, temperature, top_p, top_k, grammar,
                               prefill, conversation, copier, specials, seed=seed,
                               optional_margin=optional_margin, steered=steered).run()

    def _banned(self, guard: NoRepeat, matcher: Matcher | None, state: MatchState | None,
                pieces: list[bytes]) -> set[int]:
        """Tokens not to choose here: those a rollback banned, and where the model chooses
        between closing the call block and another call, the side the guard rules out."""
        banned = set(guard.banned_here())
        mode = guard.mode_here()
        if mode is None or matcher is None or state is None:
            return banned
        gap = b"" if guard.written.endswith(b"\n") else b"\n"
        if matcher.advance(state, gap + b"<invoke>") and matcher.advance(
                state, gap + b"</function_calls>"):
            close, more = self._block_tokens(pieces)
            banned |= close if mode == "more" else more
        return banned

    def _block_tokens(self, pieces: list[bytes]) -> tuple[set[int], set[int]]:
        """Tokens that start closing a tag ("</") and those that start opening one."""
        found: tuple[set[int], set[int]] | None = getattr(self, "_block_ids", None)
        if found is None:
            close: set[int] = set()
            more: set[int] = set()
            for token, piece in enumerate(pieces):
                head = piece.lstrip(b"\n")
                if head.startswith(b"</"):
                    close.add(token)
                elif head.startswith(b"<"):
                    more.add(token)
            found = (close, more)
            self._block_ids = found
        return found

    @staticmethod
    def _resume(seq: Seq, point: Checkpoint) -> tuple[MatchState, int]:
        """Go back to where ``point``'s token was chosen (fresh logits for that step)."""
        seq.n_tokens = point.n_tokens - 1
        seq.eval([int(seq.input_ids[point.n_tokens - 1])])
        state: MatchState = point.state
        return state, point.produced

    def _forced_tokens(self, forced: bytes, pieces: list[bytes],
                       specials: Sequence[str] = ()) -> list[int]:
        """Tokens whose bytes are exactly ``forced`` ([] if none are found: the model then
        writes those bytes itself, under the grammar). A family's special token in
        ``forced`` (``specials``: harmony's ``<|message|>``, ``<|call|>``...) is fed as that
        token where the model's vocabulary has it, as the model would write it.

        Forced text may start or end inside a UTF-8 character (the model wrote the lead
        byte of "울", the grammar fixes the rest): llama.cpp's tokenizer turns such partial
        characters into U+FFFD, so they go through single-byte tokens instead. Output is
        bytes throughout; it is decoded to text once, by one incremental decoder."""
        if any(mark.encode("utf-8") in forced for mark in specials):
            ids = list(self.loaded.llm.tokenize(forced, add_bos=False, special=True))
            if b"".join(pieces[t] for t in ids) == forced:
                return ids
        ids = list(self.loaded.llm.tokenize(forced, add_bos=False, special=False))
        if b"".join(pieces[t] for t in ids) == forced:
            return ids
        start = 0
        while start < len(forced) and 0x80 <= forced[start] < 0xC0:
            start += 1
        end = len(forced)
        for back in range(1, min(4, len(forced) - start) + 1):
            lead = forced[end - back]
            if lead >= 0xC0:  # a lead byte: is its character complete?
                if back <= _utf8_length(lead) - 1:
                    end -= back
                break
            if lead < 0x80:
                break
        middle = list(self.loaded.llm.tokenize(forced[start:end], add_bos=False,
                                               special=False)) if end > start else []
        single = self._byte_tokens(pieces)
        try:
            ids = ([single[b] for b in forced[:start]] + middle
                   + [single[b] for b in forced[end:]])
        except KeyError:
            return []
        return ids if b"".join(pieces[t] for t in ids) == forced else []

    def _byte_tokens(self, pieces: list[bytes]) -> dict[int, int]:
        """The token of each single byte (byte-level vocabularies have all 256)."""
        found = getattr(self, "_single_bytes", None)
        if found is None:
            found = {}
            for token, piece in enumerate(pieces):
                if len(piece) == 1 and piece[0] not in found:
                    found[piece[0]] = token
            self._single_bytes: dict[int, int] = found
        return found

    def _start_turn(self, seq: Seq, prompt: str, tokens: list[int], max_tokens: int,
                    system: str) -> DecodingTurn:
        """Evaluate ``prompt``'s ``tokens`` in ``seq`` (reusing the KV and disk caches):
        the turn's start, for every engine."""
        return start_turn(tokens, max_tokens, self.loaded.llm.n_ctx(),
                          lambda tokens: self._eval_prompt(seq, prompt, tokens, system))

    def _eval_prompt(self, seq: Seq, prompt: str, tokens: list[int],
                     system: str) -> tuple[int, int]:
        """Evaluate the prompt's ``tokens``, reusing the KV cache and the disk cache of the
        prompt up to the end of the system message ``system`` (the tool system prompt).
        Returns (tokens reused, of which loaded from disk)."""
        prefix = system_prefix_length(self.tokenize, prompt, system, tokens) \
            if self.prompt_cache is not None else 0
        return eval_prompt(self.loaded, seq, tokens, prefix, self.prompt_cache)

    @staticmethod
    def _finished(matcher: Matcher, state: MatchState) -> bool:
        """The grammar is complete and allows nothing more: no need to ask the model."""
        return matcher.accepts(state) and not matcher.allowed_bytes(state)

    # -- choosing the next token -------------------------------------------------------------------
    def _next_token(self, seq: Seq, np: Any, rng: Any, state: MatchState | None, matcher: Matcher | None,
                    sampler: Any, pieces: list[bytes], eog: frozenset[int], temperature: float,
                    top_p: float | None, top_k: int | None,
                    banned: AbstractSet[int] = frozenset()) -> int | None:
        if sampler is not None:
            return seq.sample(sampler)
        logits = seq.logits()
        k = max(1, min(top_k or 40, _TOP_CANDIDATES * 4))
        if matcher is None or state is None:
            if temperature <= 0:
                return int(np.argmax(logits))
            top = np.argpartition(-logits, k)[:k]
            return self._sample(np, rng, top, logits, temperature, top_p)

        def allowed(token: int) -> bool:
            if token in banned:
                return False
            if token in eog:
                return matcher.accepts(state)
            piece = pieces[token]
            return bool(piece) and bool(matcher.advance(state, piece))

        top = np.argpartition(-logits, _TOP_CANDIDATES)[:_TOP_CANDIDATES]
        ranked = sorted((int(t) for t in top), key=lambda t: -float(logits[t]))
        ok = [t for t in ranked if allowed(t)]
        if not ok:
            ok = self._fallback(np, logits, state, matcher, allowed, eog,
                                need=1 if temperature <= 0 else k)
        if not ok:
            return None  # nothing allowed: the grammar is complete
        if temperature <= 0:
            chosen = prefer_longer(ok, logits, pieces) if len(ok) > 1 else ok[0]
            rivals = [float(logits[t]) for t in ok[:3] if t != chosen]
            seq.gap = float(logits[chosen]) - max(rivals) if rivals else float("inf")
            return chosen
        return self._sample(np, rng, np.array(ok[:k]), logits, temperature, top_p)

    def _call_or_text(self, seq: Seq, np: Any, state: MatchState, matcher: Matcher,
                      pieces: list[bytes]) -> int | None:
        """Under ``auto``: start the call block when the model gives it at least
        ``call_threshold`` probability (None: leave the choice to normal decoding).

        A small model almost never puts a call block first by argmax, even when its
        probability of doing so is clearly higher for questions a tool answers than for
        questions none does (see docs/benchmarks/local.md); a threshold on that probability
        is a better decision rule than argmax for it.
        """
        allowed = matcher.allowed_bytes(state)
        if self.call_open_byte not in allowed or len(allowed) == 1:
            return None  # not a choice between a call and text
        ids = self.loaded.first_byte_index().get(self.call_open_byte)
        if ids is None:
            return None
        logits = seq.logits().astype(np.float64)
        probs = np.exp(logits - logits.max())
        probs /= probs.sum()
        order = ids[np.argsort(-probs[ids])]
        callers = [int(t) for t in order[:64] if matcher.advance(state, pieces[int(t)])]
        if not callers or float(probs[callers].sum()) < (self.call_threshold or 0.0):
            return None
        return callers[0]

    def _fallback(self, np: Any, logits: Any, state: MatchState, matcher: Matcher,
                  allowed: Any, eog: frozenset[int], need: int) -> list[int]:
        """Tokens allowed by the grammar, best first, among every token whose first byte
        the grammar allows (only reached when none of the top candidates fits)."""
        index = self.loaded.first_byte_index()
        groups = [index[b] for b in matcher.allowed_bytes(state) if b in index]
        found: list[int] = []
        if groups:
            ids = np.concatenate(groups)
            order = ids[np.argsort(-logits[ids])]
            for token in order:
                if allowed(int(token)):
                    found.append(int(token))
                    if len(found) >= need:
                        break
        if not found and matcher.accepts(state) and eog:
            found.append(min(eog))
        return found

    @staticmethod
    def _sample(np: Any, rng: Any, ids: Any, logits: Any, temperature: float,
                top_p: float | None) -> int:
        chosen = logits[ids].astype(np.float64) / max(temperature, 1e-6)
        order = np.argsort(-chosen)
        ids, chosen = ids[order], chosen[order]
        probs = np.exp(chosen - chosen.max())
        probs /= probs.sum()
        if top_p is not None and 0 < top_p < 1:
            keep = int(np.searchsorted(np.cumsum(probs), top_p) + 1)
            ids, probs = ids[:keep], probs[:keep] / probs[:keep].sum()
        return int(rng.choice(ids, p=probs))

    def _llama_sampler(self, grammar: ToolGrammar, temperature: float) -> Any:
        """llama.cpp's own sampler chain: grammar over the whole vocabulary, then greedy or
        temperature sampling (the reference path)."""
        import llama_cpp

        sampler = llama_cpp.llama_sampler_chain_init(llama_cpp.llama_sampler_chain_default_params())
        compiled = compile_gbnf(self.loaded, grammar.gbnf)
        llama_cpp.llama_sampler_chain_add(sampler, compiled)
        if temperature <= 0:
            llama_cpp.llama_sampler_chain_add(sampler, llama_cpp.llama_sampler_init_greedy())
        else:
            llama_cpp.llama_sampler_chain_add(sampler, llama_cpp.llama_sampler_init_temp(temperature))
            llama_cpp.llama_sampler_chain_add(
                sampler, llama_cpp.llama_sampler_init_dist(self.loaded.settings.seed))
        return sampler


def compile_gbnf(loaded: LoadedModel, gbnf: str) -> Any:
    """Compile GBNF text with llama.cpp for ``loaded``'s vocabulary; raises ``ValueError``
    when llama.cpp rejects it. The caller frees the returned sampler (or adds it to a chain)."""
    import llama_cpp

    sampler = llama_cpp.llama_sampler_init_grammar(
        loaded.llm._model.vocab, gbnf.encode("utf-8"), b"root"
    )
    if not sampler:
        raise ValueError("llama.cpp rejected the grammar (see its message on stderr)")
    return sampler


def _formatter(loaded: LoadedModel, override: str | None) -> Any:
    """llama-cpp-python's Jinja2 chat formatter for the GGUF's own chat template."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    llm = loaded.llm
    template = override or llm.metadata.get("tokenizer.chat_template")
    if not template:
        raise BackendError(
            f"the model {loaded.settings.path} has no chat template in its metadata "
            "(tokenizer.chat_template); pass one with chat_template=...",
            kind="invalid_request",
        )

    def special(token: int) -> str:
        if token < 0:
            return ""
        return str(llm.detokenize([token], special=True).decode("utf-8", errors="replace"))

    return Jinja2ChatFormatter(
        template=template,
        eos_token=special(llm.token_eos()),
        bos_token=special(llm.token_bos()),
        add_generation_prompt=True,
    )

