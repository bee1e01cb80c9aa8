"""How a step runs on the bundled model (SmolLM2-135M) with slots: a decode of a few tokens
on the single-token threads, a prompt on all of them; a request alone in the pool decodes
in its own thread, without waking the scheduler thread."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("llama_cpp")

from tooluse.llama.seq import SMALL_BATCH

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def pool() -> Iterator[Any]:
    from tooluse.llama.model import (
        default_model_path,
        load_model,
        model_settings,
        unload_model,
    )

    try:
        # two threads for prompts, one for single tokens (a small model file)
        settings = model_settings(default_model_path(), n_ctx=256, slots=2, n_threads=2)
        loaded = load_model(settings)
    except Exception as exc:  # noqa: BLE001 - the bundled model may be missing
        pytest.skip(f"local model unavailable: {exc}")
    yield loaded.pool
    unload_model(settings)


def test_a_few_tokens_decode_on_the_single_token_threads(pool: Any) -> None:
    import llama_cpp

    threads = pool.threads
    assert (threads.decode, threads.batch) == (1, 2)
    seen: list[int] = []
    original = llama_cpp.llama_decode

    def spy(ctx: Any, batch: Any) -> int:
        seen.append(int(llama_cpp.llama_n_threads_batch(ctx)))
        return int(original(ctx, batch))

    llama_cpp.llama_decode = spy
    try:
        prompt = list(range(1000, 1000 + SMALL_BATCH + 20))
        seq = pool.acquire(prompt)
        try:
            seq.eval(prompt)  # a prompt: every thread
            seq.eval([2000, 2001, 2002])  # a forced run: one thread
            seq.score(seq.n_tokens, [3000, 3001])  # a short scoring: one thread
            seq.eval(list(range(4000, 4000 + SMALL_BATCH + 1)))  # a long run: every thread
        finally:
            pool.release(seq)
    finally:
        llama_cpp.llama_decode = original
    assert seen == [2, 1, 1, 2]


def test_a_request_alone_decodes_without_the_scheduler_thread(pool: Any) -> None:
    import time

    tokens = list(range(5000, 5040))
    time.sleep(0.2)  # the last test's release woke it: let it settle
    woken, steps = pool.wakeups, pool.steps
    seq = pool.acquire(tokens)
    try:
        seq.eval(tokens)
        for token in range(6000, 6010):
            seq.eval([token])
        assert pool.steps == steps + 11  # every evaluation decoded...
        # ...and the scheduler thread slept through them: woken once, when the prompt was
        # in (for requests waiting to copy its prefix), not at each of the 11
        assert pool.wakeups - woken <= 1
    finally:
        pool.release(seq)  # (which wakes it: a slot came free)
