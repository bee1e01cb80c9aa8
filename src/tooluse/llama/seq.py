"""One llama.cpp sequence as a turn sees it: its tokens, their evaluation, the next logits.

A turn (:mod:`.text`, :mod:`.llguidance`, :mod:`.copy_values`) never touches the
llama.cpp context itself: it works on the :class:`Seq` it was given for the request, which
keeps the tokens in its part of the KV cache (``input_ids[:n_tokens]``), evaluates more
(``eval``, after dropping whatever lies past ``n_tokens``), gives the logits after the last
evaluated token, and scores a continuation without keeping it.

- :class:`SoloSeq`: the context's only sequence (``slots=1``, the default), through
  llama-cpp-python's ``Llama`` as before: one request at a time, under the model's lock;
- ``SlotSeq`` (:mod:`.slots`): one of N sequences of one context, evaluated by a
  scheduler that puts every active request's tokens into one ``llama_decode`` call.
"""

from __future__ import annotations

import ctypes
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

__all__ = ["SMALL_BATCH", "Seq", "SoloSeq", "Threads", "common_prefix", "load_state",
           "sample_from", "save_state"]

#: A decode of at most this many tokens runs on the single-token thread count.
SMALL_BATCH = 16


def common_prefix(ids: Any, n: int, tokens: Sequence[int]) -> int:
    """How many first tokens of ``ids[:n]`` and ``tokens`` agree."""
    limit = min(n, len(tokens))
    i = 0
    while i < limit and ids[i] == tokens[i]:
        i += 1
    return i


class Threads:
    """The threads of each ``llama_decode`` on ``ctx``: llama.cpp takes ``n_threads`` for a
    batch of one token and ``n_threads_batch`` for any more, so a step of four slots'
    tokens, a forced run of three tokens or the scoring of a short value ran on every
    core. With OpenMP's passive waiting (:func:`~.model._import_llama`) each such call
    wakes the sleeping workers, a fixed cost per call that on a small model outweighs the
    work it shares (docs/local.md has the figures), and on a machine busy elsewhere a worker
    not scheduled stalls every matrix. So a batch of at most
    :data:`SMALL_BATCH` tokens runs on ``n_threads`` (one thread for a small model,
    :func:`~.model.decode_threads`), and only longer ones (prompts) on ``n_threads_batch``.
    """

    def __init__(self, ctx: Any, small: int = SMALL_BATCH) -> None:
        import llama_cpp

        self.ctx = ctx
        self.small = small
        self.decode = int(llama_cpp.llama_n_threads(ctx))
        self.batch = int(llama_cpp.llama_n_threads_batch(ctx))
        self._current = self.batch

    def fit(self, n_tokens: int) -> None:
        """Set the threads for a ``llama_decode`` of ``n_tokens`` (under the caller's lock
        on the context)."""
        want = self.decode if n_tokens <= self.small else self.batch
        if want != self._current:
            import llama_cpp

            llama_cpp.llama_set_n_threads(self.ctx, self.decode, want)
            self._current = want


class Seq(ABC):
    """One sequence of a llama.cpp context, held by one request at a time."""

    #: The sequence's id in the context (``seq_id`` of the llama_batch).
    seq_id: int = 0
    #: The greedy choice's margin over its best rival at the last token chosen (read by the
    #: repeat guard's checkpoints; per sequence, as requests run side by side).
    gap: float = float("inf")

    @property
    @abstractmethod
    def input_ids(self) -> Any:
        """The evaluated tokens (a numpy array; valid up to :attr:`n_tokens`)."""

    @property
    @abstractmethod
    def n_tokens(self) -> int:
        """How many tokens the KV cache holds for this sequence."""

    @n_tokens.setter
    @abstractmethod
    def n_tokens(self, value: int) -> None:
        """Keep only the first ``value`` tokens (the next :meth:`eval` continues there)."""

    @abstractmethod
    def eval(self, tokens: Sequence[int]) -> None:
        """Evaluate ``tokens`` after the first :attr:`n_tokens` (dropping what lies past
        them); :meth:`logits` then gives the logits after the last one."""

    @abstractmethod
    def logits(self) -> Any:
        """The logits after the last evaluated token (a float32 numpy array, n_vocab)."""

    @abstractmethod
    def sample(self, sampler: Any) -> int:
        """The token llama.cpp's sampler chain ``sampler`` picks from :meth:`logits` (and
        accepts: a grammar sampler advances)."""

    @abstractmethod
    def score(self, n_past: int, ids: Sequence[int]) -> Any:
        """The logits after each of ``ids`` decoded from position ``n_past`` (rows, a
        float32 array of shape (len(ids), n_vocab), read before the next evaluation); the
        scored tokens are not kept, nor anything past ``n_past`` (:attr:`n_tokens` counts
        at most ``n_past`` then for a slot; the one sequence's keeps its count, and its
        next :meth:`eval` starts by dropping what lies past it, as always)."""

    def rewind(self, n_tokens: int, logits: Any) -> None:
        """Go back to the first ``n_tokens`` tokens, with ``logits`` (a copy the caller kept
        when they were the logits after those tokens) as :meth:`logits`: what a value's
        scoring or lookahead decoded past them is dropped, and nothing is evaluated again.
        This default evaluates the last kept token again (for a sequence that cannot take
        kept logits)."""
        self.n_tokens = n_tokens - 1
        self.eval([int(self.input_ids[n_tokens - 1])])

    @abstractmethod
    def reset(self) -> None:
        """Forget every token (an empty sequence)."""

    @abstractmethod
    def save_state(self) -> bytes | None:
        """The KV state of the sequence's tokens (for the disk prompt cache)."""

    @abstractmethod
    def load_state(self, payload: bytes, tokens: Sequence[int]) -> bool:
        """Replace the sequence with a saved state of ``tokens``; False if refused (the
        sequence is then empty)."""


def save_state(ctx: Any, seq_id: int) -> bytes | None:
    """``llama_state_seq_get_data`` of sequence ``seq_id`` (None if empty or refused)."""
    import llama_cpp

    size = int(llama_cpp.llama_state_seq_get_size(ctx, seq_id))
    if size <= 0:
        return None
    buf = (ctypes.c_uint8 * size)()
    written = int(llama_cpp.llama_state_seq_get_data(ctx, buf, size, seq_id))
    if written <= 0 or written > size:
        return None
    return bytes(buf)[:written]


def sample_from(sampler: Any, logits: Any) -> int:
    """The token llama.cpp's sampler chain ``sampler`` picks from ``logits`` (a numpy
    array, n_vocab), accepted (a grammar sampler advances)."""
    import llama_cpp
    from llama_cpp._internals import LlamaTokenDataArray

    data = LlamaTokenDataArray(n_vocab=len(logits))
    data.copy_logits(logits)
    llama_cpp.llama_sampler_apply(sampler, ctypes.byref(data.candidates))
    token = int(data.candidates_data.id[data.candidates.selected])
    llama_cpp.llama_sampler_accept(sampler, token)
    return token


def load_state(ctx: Any, payload: bytes, seq_id: int) -> bool:
    """``llama_state_seq_set_data`` into sequence ``seq_id`` (emptied first by the caller)."""
    import llama_cpp

    buf = (ctypes.c_uint8 * len(payload)).from_buffer_copy(payload)
    return int(llama_cpp.llama_state_seq_set_data(ctx, buf, len(payload), seq_id)) > 0


class SoloSeq(Seq):
    """The only sequence of a ``Llama`` (llama-cpp-python's own bookkeeping: ``eval``,
    ``n_tokens``, ``input_ids``)."""

    def __init__(self, llm: Any) -> None:
        self.llm = llm
        self.threads = Threads(llm.ctx)
        #: Logits given by :meth:`rewind`, returned until the next evaluation.
        self._kept: Any = None

    @property
    def input_ids(self) -> Any:
        return self.llm.input_ids

    @property
    def n_tokens(self) -> int:
        return int(self.llm.n_tokens)

    @n_tokens.setter
    def n_tokens(self, value: int) -> None:
        self._kept = None
        self.llm.n_tokens = value

    def eval(self, tokens: Sequence[int]) -> None:
        # A value looked ahead and then chosen is evaluated again, though the KV cells past
        # n_tokens hold it: cells written in another batch shape differ in the last bits,
        # enough to turn a greedy choice later in the answer (bench/speed_tokens.py).
        self._kept = None
        self.threads.fit(len(tokens))
        self.llm.eval(tokens)

    def logits(self) -> Any:
        import llama_cpp
        import numpy as np

        if self._kept is not None:
            return self._kept
        pointer = llama_cpp.llama_get_logits_ith(self.llm.ctx, -1)
        return np.ctypeslib.as_array(pointer, shape=(self.llm.n_vocab(),))

    def sample(self, sampler: Any) -> int:
        import llama_cpp

        if self._kept is not None:  # the context's logits are a scoring's: use the kept
            return sample_from(sampler, self._kept)
        return int(llama_cpp.llama_sampler_sample(sampler, self.llm.ctx, -1))

    def rewind(self, n_tokens: int, logits: Any) -> None:
        self.llm.n_tokens = n_tokens  # the next eval drops the KV cells past it
        self._kept = logits

    def score(self, n_past: int, ids: Sequence[int]) -> Any:
        import numpy as np

        llm = self.llm
        n_vocab = llm.n_vocab()
        llm._ctx.kv_cache_seq_rm(-1, n_past, -1)
        llm._batch.set_batch(batch=list(ids), n_past=n_past, logits_all=True)
        self.threads.fit(len(ids))
        llm._ctx.decode(llm._batch)
        rows = np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(len(ids) * n_vocab,))
        llm._ctx.kv_cache_seq_rm(-1, n_past, -1)
        return rows.reshape(len(ids), n_vocab)

    def reset(self) -> None:
        self._kept = None
        self.llm.reset()

    def save_state(self) -> bytes | None:
        return save_state(self.llm.ctx, 0)

    def load_state(self, payload: bytes, tokens: Sequence[int]) -> bool:
        llm = self.llm
        self._kept = None
        llm.reset()
        llm._ctx.kv_cache_seq_rm(-1, 0, -1)
        if not load_state(llm.ctx, payload, 0):
            llm._ctx.kv_cache_seq_rm(-1, 0, -1)
            return False
        llm.input_ids[: len(tokens)] = tokens
        llm.n_tokens = len(tokens)
        return True
