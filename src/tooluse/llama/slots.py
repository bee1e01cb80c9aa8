"""Parallel slots: N sequences of one llama.cpp context, decoded together, one batch a step.

With ``slots=N`` (N > 1) the model's context holds N sequences (``n_seq_max``, one unified
KV cache) and N requests run at once, each in its own :class:`SlotSeq`. A request's turn
runs unchanged in its own thread (grammar state, forced tokens, token healing, stop
strings, sampling, copied values: all of :mod:`.text` per request); only its
evaluations go through :class:`SlotPool`'s scheduler thread, which puts the tokens every
active request is waiting on into one ``llama_decode`` call (a ``llama_batch`` with each
token's ``seq_id`` and logits flag), hands each request its logits, and starts the next
step. The weights are read once per step for all its sequences; each sequence's own tokens
still cost their own work (``bench/speed_slots_floor.py`` measures llama.cpp's floor).

- **Each slot keeps its own prefix cache**: a request takes the free slot whose cached
  tokens it shares most (then the least recently used), and evaluates from the first token
  that differs (:func:`~.cache.eval_prompt`, as with one sequence).
- **A prefix common to slots is evaluated once**: when another slot holds (or is
  evaluating) a longer prefix of the request's prompt — the tools' system prompt — the
  request waits for it and takes it with llama.cpp's sequence copy
  (``llama_memory_seq_cp``: in a unified KV cache the cells are shared, not duplicated).
  The disk prompt cache loads into any slot (``llama_state_seq_set_data`` by ``seq_id``).
- **Requests join and leave between steps.** A step waits a moment (``gather``) for the
  requests that took part in the last one to ask again, so that they stay in one batch.
  A long prompt is evaluated in chunks of ``prompt_chunk`` tokens while others decode, so
  it does not stall them (alone, in chunks of ``n_batch`` as ``Llama.eval`` does).
- **Cancellation**: a request whose :class:`~tooluse.cancel.CancelSignal` is set (the
  client left) is failed at the next step with :class:`~tooluse.errors.Cancelled`, and its
  slot freed.

Each slot is in one :class:`SlotState` at a time, as in llama.cpp's server: ``IDLE`` (free;
its cached tokens stay for the next request that shares them), ``PROMPT`` (held by a request
whose prompt is being evaluated: taken from another slot, loaded from disk or decoded in
chunks) and ``GENERATING`` (the prompt is in the cache; the request decodes its answer).
``IDLE -> PROMPT`` when a request acquires it, ``PROMPT -> GENERATING`` when its prompt has
been evaluated, back to ``IDLE`` when the request releases it (or fails).

The KV cache is shared: ``n_ctx`` cells in all, for every slot's tokens (a common prefix
counted once). When a step finds no room, the caches of idle slots are dropped and the
step is tried again; if there is still none, each of its sequences is tried alone (the
generating ones first: they finish and free room) and those that do not fit wait, at most
``cache_wait`` seconds, for a request to end or a scoring to give its cells back; then they
fail with the "overloaded" error (the Messages API's 529, the other APIs' 503). A request
waiting so can be cancelled like any other. When every busy slot waits for room, nothing
can free any: the request that began waiting last fails at once, so that the others go on.

The scheduler thread sleeps on one condition, woken by the events that give it work: a
request's tokens to evaluate, a slot freed or cells given back, a cancel signal set, the
end of a waiting request's bound. Idle, it does not wake at all (:attr:`SlotPool.wakeups`
counts its wake-ups).
"""

from __future__ import annotations

import contextlib
import enum
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..cancel import CancelSignal, current_cancel
from ..errors import BackendError, Cancelled
from .seq import Seq, Threads, common_prefix, load_state, sample_from, save_state

__all__ = ["SlotPool", "SlotSeq", "SlotState"]

#: Tokens of prompts evaluated in one step while other requests decode.
PROMPT_CHUNK = 64
#: Seconds a step waits for the requests of the last step to ask again.
GATHER_S = 0.004
#: Shorter common prefixes are evaluated again rather than waited for or copied.
MIN_SHARED = 16
#: A job with at most this many tokens is decoding (all of it goes in the next step).
_DECODING = 16
#: Seconds a request waits for room in a full KV cache before it fails as overloaded.
CACHE_WAIT_S = 5.0


class SlotState(enum.Enum):
    """Where a slot stands (the module's docstring gives the transitions)."""

    IDLE = "idle"
    PROMPT = "prompt"
    GENERATING = "generating"


@dataclass(eq=False)
class _Job:
    """Tokens of one sequence to evaluate from position ``pos``."""

    seq: SlotSeq
    tokens: list[int]
    pos: int
    #: Logits after every token (scoring) instead of after the last one only.
    all_logits: bool = False
    #: Record the tokens as the sequence's own (an evaluation, not a scoring).
    keep: bool = True
    done: int = 0
    rows: list[Any] = field(default_factory=list)
    error: BaseException | None = None
    finished: threading.Event = field(default_factory=threading.Event)
    #: When the job first found no room in the KV cache (``time.monotonic``); None: it has
    #: not, or found room since.
    blocked: float | None = None
    #: :attr:`SlotPool.freed` when it last found no room (tried again once it moves).
    tried: int = 0

    @property
    def decoding(self) -> bool:
        return len(self.tokens) - self.done <= _DECODING


class SlotSeq(Seq):
    """One slot: a sequence of the pool's context, held by one request at a time."""

    def __init__(self, pool: SlotPool, seq_id: int) -> None:
        import numpy as np

        self.pool = pool
        self.seq_id = seq_id
        self._ids = np.zeros(pool.n_ctx, dtype=np.intc)
        self._n = 0
        self._logits = np.zeros(pool.n_vocab, dtype=np.single)
        #: The prompt being evaluated (others wait for its shared prefix); None after.
        self.target: list[int] | None = None
        self.state = SlotState.IDLE
        self.last_used = 0.0
        self.cancel: CancelSignal | None = None

    @property
    def busy(self) -> bool:
        """Held by a request (not :attr:`SlotState.IDLE`)."""
        return self.state is not SlotState.IDLE

    @property
    def input_ids(self) -> Any:
        return self._ids

    @property
    def n_tokens(self) -> int:
        return self._n

    @n_tokens.setter
    def n_tokens(self, value: int) -> None:
        with self.pool.ctx_lock:
            self.pool.forget(self.seq_id, value)
            self._n = value

    def eval(self, tokens: Sequence[int]) -> None:
        self.n_tokens = self._n  # drop what lies past n_tokens (e.g. a scoring's tokens)
        if tokens:
            rows = self.pool.run(_Job(self, list(tokens), self._n))
            self._logits = rows[-1]

    def logits(self) -> Any:
        return self._logits

    def sample(self, sampler: Any) -> int:
        return sample_from(sampler, self._logits)

    def rewind(self, n_tokens: int, logits: Any) -> None:
        self.n_tokens = n_tokens
        self._logits = logits

    def score(self, n_past: int, ids: Sequence[int]) -> Any:
        import numpy as np

        with self.pool.ctx_lock:
            self.pool.forget(self.seq_id, n_past)
        rows = self.pool.run(_Job(self, list(ids), n_past, all_logits=True, keep=False))
        with self.pool.ctx_lock:
            self.pool.forget(self.seq_id, n_past)
            # The cells past n_past are gone: no other slot may copy them from here.
            self._n = min(self._n, n_past)
        self.pool.gave_back()
        return np.stack(rows)

    def reset(self) -> None:
        self.n_tokens = 0

    def save_state(self) -> bytes | None:
        with self.pool.ctx_lock:
            return save_state(self.pool.ctx, self.seq_id)

    def load_state(self, payload: bytes, tokens: Sequence[int]) -> bool:
        with self.pool.ctx_lock:
            self.pool.forget(self.seq_id, 0)
            self._n = 0
            if not load_state(self.pool.ctx, payload, self.seq_id):
                self.pool.forget(self.seq_id, 0)
                return False
            self._ids[: len(tokens)] = tokens
            self._n = len(tokens)
        return True


class SlotPool:
    """``n_slots`` sequences of ``llm``'s context and the scheduler thread decoding them."""

    def __init__(self, llm: Any, n_slots: int, *, prompt_chunk: int = PROMPT_CHUNK,
                 gather: float = GATHER_S, cache_wait: float = CACHE_WAIT_S) -> None:
        import llama_cpp

        self.llm = llm
        self.ctx = llm.ctx
        self.n_ctx = int(llm.n_ctx())
        self.n_vocab = int(llm.n_vocab())
        self.n_batch = int(llm.n_batch)
        self.prompt_chunk = max(1, min(prompt_chunk, self.n_batch))
        self.gather = gather
        #: Seconds a request waits for room in a full KV cache (then "overloaded").
        self.cache_wait = cache_wait
        self.memory = llama_cpp.llama_get_memory(self.ctx)
        self.seqs = [SlotSeq(self, i) for i in range(n_slots)]
        #: Serialises every call on the llama.cpp context (decode, memory, state).
        self.ctx_lock = threading.Lock()
        #: Held while a step is built and decoded (the scheduler's, or a lone request's).
        self._stepping = threading.Lock()
        #: Guards the jobs, the slots' state and the counters; notified at every change.
        self.cond = threading.Condition()
        self._jobs: list[_Job] = []
        self._expected: set[int] = set()  # slots that took part in the last step
        self._waiting = 0  # requests waiting for a free slot
        self._closed = False
        self.steps = 0
        self.tokens = 0
        self.busiest = 0  # most sequences in one step
        #: Bumped whenever cells may have come free (a slot released, a scoring's cells
        #: dropped): a job waiting for room is tried again then, not before.
        self.freed = 0
        #: Times the scheduler thread woke from a wait (it sleeps while there is no work).
        self.wakeups = 0
        self._batch = llama_cpp.llama_batch_init(self.n_batch, 0, 1)
        #: A decoding step (a few tokens) on the single-token threads, prompts on all.
        self.threads = Threads(self.ctx)
        self._thread = threading.Thread(target=self._loop, name="tooluse-slots", daemon=True)
        self._thread.start()

    # -- slots ------------------------------------------------------------------------------
    def acquire(self, tokens: Sequence[int]) -> SlotSeq:
        """A free slot for a request whose prompt is ``tokens``: the one whose cache shares
        most of it (then the least recently used), given the longest prefix another slot
        holds or is evaluating. Waits while every slot is busy; raises when the request's
        cancel signal is set meanwhile."""
        cancel = current_cancel()
        with self.cond, self._woken_by(cancel):
            self._waiting += 1
            try:
                while not any(not s.busy for s in self.seqs):
                    _check(cancel)
                    self.cond.wait()
            finally:
                self._waiting -= 1
            free = [s for s in self.seqs if not s.busy]
            seq = max(free, key=lambda s: (common_prefix(s._ids, s._n, tokens), -s.last_used))
            seq.state, seq.cancel = SlotState.PROMPT, cancel
            try:
                self._share(seq, tokens, cancel)
            except BaseException:
                self._free(seq)
                raise
            seq.target = list(tokens)
        return seq

    def release(self, seq: SlotSeq) -> None:
        with self.cond:
            self._free(seq)

    def _free(self, seq: SlotSeq) -> None:
        seq.state, seq.target, seq.cancel = SlotState.IDLE, None, None
        seq.last_used = time.monotonic()
        self._expected.discard(seq.seq_id)
        self.freed += 1  # its cache may be dropped for a request waiting for room
        self.cond.notify_all()

    def gave_back(self) -> None:
        """Cells of the KV cache came free: a request waiting for room tries again."""
        with self.cond:
            self.freed += 1
            self.cond.notify_all()

    def _notify(self) -> None:
        with self.cond:
            self.cond.notify_all()

    def _woken_by(self, cancel: CancelSignal | None) -> Any:
        """A context in which ``cancel`` being set wakes whoever waits on :attr:`cond`."""
        return contextlib.nullcontext() if cancel is None else cancel.on_set(self._notify)

    def _share(self, seq: SlotSeq, tokens: Sequence[int], cancel: CancelSignal | None) -> None:
        """Give ``seq`` the longest prefix of ``tokens`` another slot holds, waiting for one
        being evaluated (under ``self.cond``)."""
        while True:
            own = common_prefix(seq._ids, seq._n, tokens)
            source, length, pending = None, own, False
            for other in self.seqs:
                if other is seq:
                    continue
                held = common_prefix(other._ids, other._n, tokens)
                if held > length:
                    source, length = other, held
                if other.target is not None and held < len(other.target) and \
                        common_prefix(other.target, len(other.target), tokens) >= max(
                            held, own) + MIN_SHARED:
                    pending = True  # it will hold more of ours soon
            if not pending:
                break
            _check(cancel)
            with self._woken_by(cancel):
                self.cond.wait()
        if source is None or length < own + MIN_SHARED:
            return
        import llama_cpp

        with self.ctx_lock:
            # Read again under the context's lock (idle caches may have been dropped).
            length = common_prefix(source._ids, source._n, tokens)
            if length < own + MIN_SHARED:
                return
            self.forget(seq.seq_id, 0)
            llama_cpp.llama_memory_seq_cp(self.memory, source.seq_id, seq.seq_id, 0, length)
            seq._ids[:length] = source._ids[:length]
            seq._n = length

    def forget(self, seq_id: int, start: int) -> None:
        """Drop sequence ``seq_id``'s cells from position ``start`` (under ``ctx_lock``)."""
        import llama_cpp

        llama_cpp.llama_memory_seq_rm(self.memory, seq_id, start, -1)

    def usage(self) -> dict[str, int]:
        """Slot use, for ``/health``: slots, busy, waiting requests, steps and tokens
        decoded, most sequences in one step."""
        with self.cond:
            return {"slots": len(self.seqs), "busy": sum(s.busy for s in self.seqs),
                    "waiting": self._waiting,
                    "waiting_for_cache": sum(j.blocked is not None for j in self._jobs),
                    "steps": self.steps, "tokens": self.tokens,
                    "max_batch_sequences": self.busiest}

    # -- the scheduler ----------------------------------------------------------------------
    def run(self, job: _Job) -> list[Any]:
        """Evaluate ``job`` in the next steps; its logits rows (the last, or every one).

        A request alone in the pool (every other slot idle, nothing queued) decodes in its
        own thread: with nobody to batch with, the hand-off to the scheduler thread and
        back at every token is pure cost (one client was ~8% slower than the queue)."""
        _check(job.seq.cancel)
        with self.cond:
            if self._closed:
                raise BackendError("the model was unloaded", kind="unavailable")
            alone = not self._jobs and all(s is job.seq or not s.busy for s in self.seqs)
        if alone and self._stepping.acquire(blocking=False):
            try:
                while job.error is None and job.done < len(job.tokens) and \
                        job.blocked is None:
                    evaluating = job.seq.target is not None
                    self._step([job])
                    if evaluating and job.seq.target is None:
                        self._notify()  # its prompt is in: a request waiting for it looks
            finally:
                self._stepping.release()
            if job.error is not None:
                raise job.error
            if job.done == len(job.tokens):
                return job.rows
        with self.cond:  # not alone (any more), or waiting for room: the scheduler's
            if self._closed:
                raise BackendError("the model was unloaded", kind="unavailable")
            self._jobs.append(job)
            if job.blocked is not None:
                self._unstick()  # alone and no room: nothing will free any
            self.cond.notify_all()
        with self._woken_by(job.seq.cancel):  # a cancel reaches a job waiting for room
            job.finished.wait()
        if job.error is not None:
            raise job.error
        return job.rows

    def close(self) -> None:
        with self.cond:
            self._closed = True
            self.cond.notify_all()
        self._thread.join()
        import llama_cpp

        llama_cpp.llama_batch_free(self._batch)

    def _loop(self) -> None:
        while True:
            with self.cond:
                while True:
                    if self._closed:
                        for job in self._jobs:
                            job.error = BackendError("the model was unloaded",
                                                     kind="unavailable")
                            job.finished.set()
                        return
                    now = time.monotonic()
                    self._expire(now)
                    if any(self._ready(j) for j in self._jobs):
                        break
                    # Nothing to do until a request asks, a slot or cells come free, a
                    # cancel signal is set, or a waiting request's bound ends.
                    bound = min((j.blocked + self.cache_wait for j in self._jobs
                                 if j.blocked is not None), default=None)
                    self.cond.wait(None if bound is None else max(0.0, bound - now))
                    self.wakeups += 1
                # The requests of the last step are back in a moment: decode them together.
                deadline = time.monotonic() + self.gather
                while not self._expected <= {j.seq.seq_id for j in self._jobs}:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        break
                    self.cond.wait(left)
                    self.wakeups += 1
                jobs = [j for j in self._jobs if self._ready(j)]
            try:
                with self._stepping:
                    finished = self._step(jobs)
            except BaseException as exc:  # noqa: BLE001 - handed to each waiting request
                finished = jobs
                for job in jobs:
                    job.error = exc
            with self.cond:
                self._expected = {j.seq.seq_id for j in finished if j.seq.busy}
                self._finish(finished)
                self._unstick()
                self.cond.notify_all()

    def _ready(self, job: _Job) -> bool:
        """Whether ``job`` goes into the next step: not waiting for room, or cells came
        free since it last found none (under :attr:`cond`)."""
        return job.blocked is None or job.tried != self.freed

    def _finish(self, jobs: list[_Job]) -> None:
        for job in jobs:
            self._jobs.remove(job)
            job.finished.set()

    def _expire(self, now: float) -> None:
        """Fail the jobs waiting for room whose request was cancelled or whose bound is
        over (under :attr:`cond`)."""
        ended = []
        for job in self._jobs:
            if job.blocked is None:
                continue
            if job.seq.cancel is not None and job.seq.cancel.is_set():
                job.error = _cancelled()
            elif now >= job.blocked + self.cache_wait:
                job.error = self._full(f"stayed full for {self.cache_wait:g} s")
            else:
                continue
            ended.append(job)
        self._finish(ended)

    def _unstick(self) -> None:
        """When every busy slot waits for room and nothing freed any since, none can come:
        fail the request that began waiting last, so that the others go on (under
        :attr:`cond`)."""
        blocked = [j for j in self._jobs if j.blocked is not None]
        if not blocked or any(self._ready(j) for j in blocked):
            return
        busy = {s.seq_id for s in self.seqs if s.busy}
        if not busy <= {j.seq.seq_id for j in blocked}:
            return  # a request at work will end, or ask again
        last = max(blocked, key=lambda j: j.blocked or 0.0)
        last.error = self._full("has no room left for every request at work")
        self._finish([last])

    def _full(self, why: str) -> BackendError:
        return BackendError(
            f"the model's context ({self.n_ctx} tokens, shared by {len(self.seqs)} slots) "
            f"{why}: fewer requests at once, fewer slots or a larger n_ctx",
            kind="overloaded")

    def _step(self, jobs: list[_Job]) -> list[_Job]:
        """One ``llama_decode`` over the next tokens of ``jobs``; the jobs it finished."""
        for job in jobs:
            if job.seq.cancel is not None and job.seq.cancel.is_set():
                job.error = _cancelled()
        live = [j for j in jobs if j.error is None]
        decoding = [j for j in live if j.decoding]
        prompts = [j for j in live if not j.decoding]
        room = self.n_batch - sum(len(j.tokens) - j.done for j in decoding)
        if decoding:
            room = min(room, self.prompt_chunk)
        plan = [(j, len(j.tokens) - j.done) for j in decoding]
        for i, job in enumerate(prompts):
            share = room // (len(prompts) - i)
            if share <= 0:
                break
            take = min(share, len(job.tokens) - job.done)
            plan.append((job, take))
            room -= take
        if plan:
            self._decode(plan)
        return [j for j in jobs if j.error is not None or j.done == len(j.tokens)]

    def _decode(self, plan: list[tuple[_Job, int]]) -> None:
        """Decode ``plan`` in one step; where the KV cache has no room for it all, each
        sequence alone (the generating ones first), and those that do not fit wait."""
        freed = self.freed  # read first: cells freed meanwhile wake the waiting jobs again
        done: list[tuple[int, int]] = []
        with self.ctx_lock:
            code = self._attempt(plan, done)
            if code == 1:  # no room in the KV cache: drop the idle slots' caches, try again
                # (a slot taken meanwhile reads its n_tokens again: it evaluates more)
                idle = [s for s in self.seqs if not s.busy and s._n]
                for seq in idle:
                    self.forget(seq.seq_id, 0)
                    seq._n = 0
                if idle:
                    code = self._attempt(plan, done)
            if code == 1 and len(plan) > 1:
                for item in sorted(plan, key=lambda item: not item[0].decoding):
                    self._settle([item], self._attempt([item], done), freed)
            else:
                self._settle(plan, code, freed)
        with self.cond:
            for tokens, sequences in done:
                self.steps += 1
                self.tokens += tokens
                self.busiest = max(self.busiest, sequences)

    def _settle(self, plan: list[tuple[_Job, int]], code: int, freed: int) -> None:
        """After a failed decode of ``plan`` (``code`` not 0): its jobs wait for room
        (``code`` 1) or fail (under ``ctx_lock``)."""
        if code == 0:
            return
        now = time.monotonic()
        for job, _ in plan:
            self.forget(job.seq.seq_id, job.pos + job.done)
            if code == 1:
                job.blocked = now if job.blocked is None else job.blocked
                job.tried = freed
            else:
                job.error = BackendError(
                    f"the model could not evaluate the request (llama_decode returned "
                    f"{code})", kind="api")

    def _attempt(self, plan: list[tuple[_Job, int]], done: list[tuple[int, int]]) -> int:
        """One ``llama_decode`` of ``plan``; on success the jobs take their logits and
        tokens and ``done`` gets (tokens, sequences) of the step. Its return code (under
        ``ctx_lock``)."""
        import llama_cpp
        import numpy as np

        batch = self._batch
        outputs: list[tuple[_Job, int]] = []
        n = 0
        for job, take in plan:
            for k in range(job.done, job.done + take):
                batch.token[n] = job.tokens[k]
                batch.pos[n] = job.pos + k
                batch.n_seq_id[n] = 1
                batch.seq_id[n][0] = job.seq.seq_id
                wanted = job.all_logits or k == len(job.tokens) - 1
                batch.logits[n] = wanted
                if wanted:
                    outputs.append((job, n))
                n += 1
        batch.n_tokens = n
        self.threads.fit(n)
        code = int(llama_cpp.llama_decode(self.ctx, batch))
        if code != 0:
            return code
        for job, index in outputs:
            pointer = llama_cpp.llama_get_logits_ith(self.ctx, index)
            job.rows.append(np.ctypeslib.as_array(pointer, shape=(self.n_vocab,)).copy())
        for job, take in plan:
            job.blocked = None
            if job.keep:
                start = job.pos + job.done
                job.seq._ids[start:start + take] = job.tokens[job.done:job.done + take]
                job.seq._n = start + take
            job.done += take
            target = job.seq.target
            if target is not None and (not job.keep or job.seq._n >= len(target)
                                       or common_prefix(job.seq._ids, job.seq._n, target)
                                       < job.seq._n):
                job.seq.target = None  # its prompt is evaluated (or it went elsewhere)
                if job.seq.state is SlotState.PROMPT:
                    job.seq.state = SlotState.GENERATING
        done.append((n, len({j.seq.seq_id for j, _ in plan})))
        return 0


def _cancelled() -> Cancelled:
    return Cancelled("the client went away: its request was stopped and its slot freed")


def _check(cancel: CancelSignal | None) -> None:
    if cancel is not None and cancel.is_set():
        raise _cancelled()
