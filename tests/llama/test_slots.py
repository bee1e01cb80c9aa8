"""Parallel slots on the bundled model (SmolLM2-135M): requests in sequences of one context,
decoded together, give the answers they get alone; a shared prefix is copied, not
evaluated again; a client that left frees its slot."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

pytest.importorskip("llama_cpp")

from tooluse.cancel import CancelSignal, cancelling
from tooluse.errors import Cancelled
from tooluse.llama.slots import SlotState
from tooluse.messages import Message, Request, Response, ToolChoice, ToolSpec
from tooluse.prompting.text_model import TextEnd

pytestmark = pytest.mark.slow

WEATHER = ToolSpec(name="get_weather", description="Get the current weather in a city",
                   input_schema={"type": "object", "properties": {
                       "location": {"type": "string"},
                       "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
                       "required": ["location"]})
TIME = ToolSpec(name="get_time", description="Get the current time in a time zone",
                input_schema={"type": "object", "properties": {"zone": {"type": "string"}},
                              "required": ["zone"]})
STOCK = ToolSpec(name="get_stock_price", description="Get the latest price of a stock",
                 input_schema={"type": "object", "properties": {"ticker": {"type": "string"}},
                               "required": ["ticker"]})

#: The fixed set: questions over the same tools and over different tool sets.
CASES: list[tuple[str, list[ToolSpec]]] = [
    ("What is the weather in Paris?", [WEATHER, TIME]),
    ("What time is it in Tokyo?", [WEATHER, TIME]),
    ("Weather in Berlin in fahrenheit please", [WEATHER, TIME]),
    ("Is it raining in Rome?", [WEATHER, TIME]),
    ("How much is Apple stock?", [STOCK]),
    ("Price of MSFT?", [STOCK, TIME]),
    ("What's the time in New York?", [TIME]),
    ("Is it cold in Oslo today?", [WEATHER]),
]


def _request(question: str, tools: list[ToolSpec]) -> Request:
    return Request(model="local", max_tokens=64, tools=tools, tool_choice=ToolChoice(type="any"),
                   messages=[Message(role="user", content=question)])


def _calls(response: Response) -> str:
    return json.dumps([b.model_dump(exclude={"id", "origin"}) for b in response.content],
                      sort_keys=True, default=str)


@pytest.fixture(scope="module")
def solo() -> Any:
    from tooluse.backends.local import LocalBackend

    try:
        return LocalBackend(prompt_cache=False)
    except Exception as exc:  # noqa: BLE001 - the bundled model may be missing
        pytest.skip(f"local model unavailable: {exc}")


@pytest.fixture(scope="module")
def pooled() -> Any:
    from tooluse.backends.local import LocalBackend

    return LocalBackend(prompt_cache=False, slots=4)


@pytest.fixture(scope="module")
def alone(solo: Any) -> list[str]:
    """The fixed set's answers from one slot (today's path), one after the other."""
    return [_calls(solo.complete(_request(q, t))) for q, t in CASES]


def test_one_request_at_a_time_in_the_pool_gives_the_one_slot_answers(
        pooled: Any, alone: list[str]) -> None:
    assert pooled.loaded.pool is not None and len(pooled.loaded.pool.seqs) == 4
    assert [_calls(pooled.complete(_request(q, t))) for q, t in CASES] == alone


def test_concurrent_requests_give_the_answers_they_get_alone(
        pooled: Any, alone: list[str]) -> None:
    """All of the fixed set at once, four slots decoding together. llama.cpp's batched
    kernels may differ from the single-token ones in the last bits, and a 135M model has
    near-ties that such a difference can flip: measured here, 7 or 8 of the 8 answers are
    identical (the exception, when there is one: a free-text zone name, "TOKADEN" against
    "TOKAI", where two spellings are almost equally likely). Every answer is a well-formed
    call of a tool of its request either way."""
    before = pooled.loaded.pool.usage()
    with ThreadPoolExecutor(len(CASES)) as pool:
        together = list(pool.map(lambda c: pooled.complete(_request(*c)), CASES))
    usage = pooled.loaded.pool.usage()
    assert usage["max_batch_sequences"] >= 2  # they were decoded together
    assert usage["busy"] == 0 and usage["steps"] > before["steps"]
    for response, (_, tools) in zip(together, CASES, strict=True):
        names = {b.name for b in response.content if b.type == "tool_use"}
        assert names and names <= {t.name for t in tools}
    same = sum(a == _calls(r) for a, r in zip(alone, together, strict=True))
    assert same >= len(CASES) - 2, (same, alone, [_calls(r) for r in together])


def test_batched_logits_match_the_single_sequence_ones(solo: Any, pooled: Any) -> None:
    """The logits a slot gets in a batch with other sequences are those of its prompt
    alone, to float rounding: a mixed-up row or position would differ by whole units."""
    import numpy as np

    prompts = [pooled.text_model.tokenize(pooled.text_model.render(
        [{"role": "user", "content": q}])) for q, _ in CASES[:4]]
    expected = []
    for tokens in prompts:
        with solo.loaded.sequence(tokens) as seq:
            seq.reset()
            seq.eval(tokens)
            expected.append(np.array(seq.logits(), dtype=np.float64))

    def evaluate(tokens: list[int]) -> Any:
        with pooled.loaded.sequence(tokens) as seq:
            seq.reset()
            seq.eval(tokens)
            return np.array(seq.logits(), dtype=np.float64)

    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(evaluate, prompts))
    for want, have in zip(expected, got, strict=True):
        assert int(np.argmax(want)) == int(np.argmax(have))
        assert float(np.max(np.abs(want - have))) < 0.05 * float(np.max(np.abs(want)))


SYSTEM = "You answer questions about the weather. " * 12


def _turn(backend: Any, question: str, max_tokens: int = 8) -> Iterator[str | TextEnd]:
    return backend.text_model.generate_text(
        [{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}],
        max_tokens=max_tokens)


def test_a_prefix_another_slot_holds_is_copied_not_evaluated(pooled: Any) -> None:
    pool = pooled.loaded.pool
    assert {s.state for s in pool.seqs} == {SlotState.IDLE}
    held = _turn(pooled, "Is it sunny in Lisbon?")
    next(held)  # the first request holds its slot, its prompt evaluated
    try:
        # one slot generates (its prompt is in the cache), the others are free
        assert sorted(s.state.value for s in pool.seqs) == ["generating", "idle", "idle", "idle"]
        items = list(_turn(pooled, "Is it windy in Dublin?"))
    finally:
        held.close()
    assert {s.state for s in pool.seqs} == {SlotState.IDLE}
    end = items[-1]
    assert isinstance(end, TextEnd)
    # the system message (12 sentences) came from the other slot
    assert end.cached_tokens >= len(pooled.text_model.tokenize(SYSTEM)) > 50
    assert end.cached_tokens < end.input_tokens
    assert pooled.loaded.pool.usage()["busy"] == 0


def test_a_client_that_left_frees_its_slot(pooled: Any) -> None:
    signal = CancelSignal()
    failures: list[BaseException] = []
    chunks: list[str | TextEnd] = []

    def run() -> None:
        with cancelling(signal):
            try:
                for chunk in _turn(pooled, "Tell me about the weather in Madrid.", 64):
                    chunks.append(chunk)
                    signal.set()  # the client leaves after the first text
            except Cancelled as exc:
                failures.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(300)
    assert len(chunks) == 1 and isinstance(chunks[0], str)
    assert failures and "slot freed" in str(failures[0])
    assert pooled.loaded.pool.usage()["busy"] == 0
    assert {s.state for s in pooled.loaded.pool.seqs} == {SlotState.IDLE}


def test_slots_must_be_positive() -> None:
    from tooluse.backends.local import LocalBackend

    with pytest.raises(ValueError, match="slots"):
        LocalBackend(slots=0)
