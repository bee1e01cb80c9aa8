"""The gateway on the local model with slots, its KV cache full: a request waits for room
at most ``cache_wait`` seconds, then gets each API's native "overloaded" error (Messages
529 ``overloaded_error``, Chat Completions 503); once room frees, the same request is
served. Real SDK clients (anthropic, openai) against the bundled model."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("llama_cpp")

from tooluse.server import ServerThread, create_app

pytestmark = pytest.mark.slow

N_CTX = 256
WAIT = 0.5


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[Any, str]]:
    from tooluse.backends.local import LocalBackend

    try:
        backend = LocalBackend(prompt_cache=False, slots=2, n_ctx=N_CTX, cache_wait=WAIT)
    except Exception as exc:  # noqa: BLE001 - the bundled model may be missing
        pytest.skip(f"local model unavailable: {exc}")
    with ServerThread(create_app(backend)) as running:
        yield backend.loaded.pool, running.url


@pytest.fixture()
def full(served: tuple[Any, str]) -> Iterator[None]:
    """Another request holds 250 of the 256 cells while the test runs."""
    pool, _ = served
    tokens = list(range(1000, 1250))
    seq = pool.acquire(tokens)
    try:
        seq.reset()  # the slot may hold them from the last test: evaluated anew
        seq.eval(tokens)
        yield
    finally:
        pool.release(seq)


def _ask_messages(url: str) -> Any:
    import anthropic

    client = anthropic.Anthropic(base_url=url, api_key="k", max_retries=0, timeout=120)
    return client.messages.create(model="local", max_tokens=8,
                                  messages=[{"role": "user", "content": "Say hi."}])


def test_messages_gets_529_overloaded_after_the_wait(served: tuple[Any, str],
                                                      full: None) -> None:
    import anthropic

    started = time.monotonic()
    with pytest.raises(anthropic.APIStatusError) as caught:
        _ask_messages(served[1])
    assert caught.value.status_code == 529
    assert caught.value.body["error"]["type"] == "overloaded_error"  # type: ignore[index]
    assert "full" in caught.value.body["error"]["message"]  # type: ignore[index]
    assert time.monotonic() - started >= WAIT  # it waited for room first


def test_chat_completions_gets_503_after_the_wait(served: tuple[Any, str], full: None) -> None:
    import openai

    client = openai.OpenAI(base_url=served[1] + "/v1", api_key="k", max_retries=0, timeout=120)
    started = time.monotonic()
    with pytest.raises(openai.APIStatusError) as caught:
        client.chat.completions.create(model="local", max_tokens=8,
                                       messages=[{"role": "user", "content": "Say hi."}])
    assert caught.value.status_code == 503
    assert time.monotonic() - started >= WAIT


def test_the_same_request_is_served_once_room_frees(served: tuple[Any, str]) -> None:
    message = _ask_messages(served[1])
    assert message.stop_reason in ("end_turn", "max_tokens") and message.content
    assert served[0].usage()["waiting_for_cache"] == 0
