"""A full KV cache on the bundled model (SmolLM2-135M) with slots: a request that finds no
room waits, at most ``cache_wait`` seconds, for another to free some, then fails as
"overloaded"; a cancelled one stops waiting; every slot waiting for room fails the last
one at once; the scheduler sleeps while there is nothing to do (no polling)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

pytest.importorskip("llama_cpp")

from tooluse.cancel import CancelSignal, cancelling
from tooluse.errors import BackendError, Cancelled
from tooluse.llama.slots import SlotState

pytestmark = pytest.mark.slow

N_CTX = 256  # cells of the KV cache, shared by the two slots


@pytest.fixture(scope="module")
def pool() -> Iterator[Any]:
    from tooluse.llama.model import (
        default_model_path,
        load_model,
        model_settings,
        unload_model,
    )

    try:
        settings = model_settings(default_model_path(), n_ctx=N_CTX, slots=2)
        loaded = load_model(settings)
    except Exception as exc:  # noqa: BLE001 - the bundled model may be missing
        pytest.skip(f"local model unavailable: {exc}")
    assert loaded.pool.n_ctx == N_CTX
    yield loaded.pool
    unload_model(settings)


@pytest.fixture(autouse=True)
def empty(pool: Any) -> Iterator[None]:
    """Each test starts with idle slots and an empty cache, and leaves them so."""
    for seq in pool.seqs:
        seq.reset()
    pool.cache_wait = 30.0
    yield
    assert {s.state for s in pool.seqs} == {SlotState.IDLE}
    for seq in pool.seqs:
        seq.reset()


def _tokens(first: int, n: int) -> list[int]:
    return list(range(first, first + n))


class _Request(threading.Thread):
    """A request's evaluation in its own thread: acquire a slot, evaluate ``tokens`` (after
    ``before``, if given, run first), release; its error and how long it took."""

    def __init__(self, pool: Any, tokens: list[int], *, signal: CancelSignal | None = None,
                 hold: threading.Event | None = None) -> None:
        super().__init__(daemon=True)
        self.pool, self.tokens, self.signal, self.hold = pool, tokens, signal, hold
        self.error: BaseException | None = None
        self.elapsed = 0.0

    def run(self) -> None:
        started = time.monotonic()
        try:
            if self.signal is not None:
                with cancelling(self.signal):
                    self._evaluate()
            else:
                self._evaluate()
        except BaseException as exc:  # noqa: BLE001 - read by the test
            self.error = exc
        self.elapsed = time.monotonic() - started

    def _evaluate(self) -> None:
        seq = self.pool.acquire(self.tokens)
        try:
            seq.eval(self.tokens)
            if self.hold is not None:
                self.hold.wait(600)
        finally:
            self.pool.release(seq)


def _until(condition: Callable[[], bool], timeout: float = 600.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def _waiting(pool: Any) -> int:
    count: int = pool.usage()["waiting_for_cache"]
    return count


def _holder(pool: Any, n: int) -> tuple[_Request, threading.Event]:
    """A request holding ``n`` cells of the cache until its event is set."""
    done = threading.Event()
    holder = _Request(pool, _tokens(1000, n), hold=done)
    holder.start()
    _until(lambda: any(s._n == n for s in pool.seqs))
    return holder, done


def test_a_request_finding_the_cache_full_is_served_when_room_frees(pool: Any) -> None:
    holder, done = _holder(pool, 200)
    late = _Request(pool, _tokens(5000, 120))
    late.start()
    _until(lambda: _waiting(pool) == 1)
    time.sleep(0.3)
    assert late.is_alive() and late.error is None  # still waiting, not refused
    done.set()  # the first request ends: its cells can go
    late.join(600)
    holder.join(600)
    assert holder.error is None and late.error is None  # served, not refused
    assert _waiting(pool) == 0


def test_a_request_still_without_room_after_the_bound_is_overloaded(pool: Any) -> None:
    pool.cache_wait = 0.5
    holder, done = _holder(pool, 200)
    late = _Request(pool, _tokens(5000, 120))
    late.start()
    late.join(600)
    assert isinstance(late.error, BackendError) and late.error.kind == "overloaded"
    assert "full" in str(late.error)
    assert 0.5 <= late.elapsed < 600
    assert holder.is_alive() and holder.error is None  # the request at work goes on
    done.set()
    holder.join(600)
    assert holder.error is None and _waiting(pool) == 0


def test_cancelling_a_request_waiting_for_room_frees_it(pool: Any) -> None:
    holder, done = _holder(pool, 200)
    signal = CancelSignal()
    late = _Request(pool, _tokens(5000, 120), signal=signal)
    late.start()
    _until(lambda: _waiting(pool) == 1)
    cancelled = time.monotonic()
    signal.set()
    late.join(600)
    assert isinstance(late.error, Cancelled)
    assert time.monotonic() - cancelled < 2  # woken by the signal, not by the 30 s bound
    assert _waiting(pool) == 0
    assert sum(s.busy for s in pool.seqs) == 1  # its slot is free again
    done.set()
    holder.join(600)
    assert holder.error is None


def test_when_every_slot_waits_for_room_the_last_fails_at_once(pool: Any) -> None:
    # Two requests hold 130 + 120 of the 256 cells; each then wants 20 more: neither can
    # go on until the other ends, so waiting for the bound would help nobody.
    pool.cache_wait = 600.0
    first, second = _tokens(1000, 130), _tokens(5000, 120)
    seqs = [pool.acquire(first), pool.acquire(second)]
    seqs[0].eval(first)
    seqs[1].eval(second)
    errors: list[BaseException | None] = [None, None]
    took = [0.0, 0.0]

    def more(i: int) -> None:
        started = time.monotonic()
        try:
            seqs[i].eval(_tokens(9000 + 100 * i, 20))
        except BaseException as exc:  # noqa: BLE001 - read below
            errors[i] = exc
            pool.release(seqs[i])  # the client is answered: its slot goes
        took[i] = time.monotonic() - started

    threads = [threading.Thread(target=more, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(600)
    failed = [e for e in errors if e is not None]
    assert len(failed) == 1, errors
    assert isinstance(failed[0], BackendError) and failed[0].kind == "overloaded"
    assert "no room left for every request" in str(failed[0])  # not the bound's error
    assert max(took) < pool.cache_wait
    for i in range(2):
        if errors[i] is None:
            pool.release(seqs[i])


def test_the_scheduler_sleeps_while_idle_and_while_a_request_waits(pool: Any) -> None:
    time.sleep(0.2)  # the last test's releases woke it: let it settle
    before = pool.wakeups
    time.sleep(0.5)
    assert pool.wakeups == before  # idle: no wake-up at all
    holder, done = _holder(pool, 200)
    late = _Request(pool, _tokens(5000, 120))
    late.start()
    _until(lambda: _waiting(pool) == 1)
    waiting = pool.wakeups
    time.sleep(1.0)
    assert pool.wakeups - waiting <= 2  # a 4 ms poll would wake ~250 times
    done.set()
    late.join(600)
    holder.join(600)
    assert late.error is None and holder.error is None
