"""The library's composite backends: FallbackBackend (backends in order) and
BalancedBackend (deployments of one model: least busy, round-robin ties, cooldowns), and the
rule they share: a request goes on to the next backend only on a retryable failure or a
prompt over the context, and only before the answer's first content event.

The backends under them are scripted; the gateway's tests (tests/server/test_routing_*.py)
run the same composites against real upstream processes on sockets.
"""

from __future__ import annotations

from collections.abc import Iterator

import anyio
import pytest

from tooluse.backend import Backend
from tooluse.backends.anthropic import AnthropicBackend
from tooluse.backends.balanced import BalancedBackend
from tooluse.backends.failover import FallbackBackend, recording_attempts
from tooluse.backends.scripted import ScriptedBackend
from tooluse.errors import BackendError
from tooluse.messages import Message, Request, Response, TextBlock
from tooluse.stream import MessageStart, StreamEvent, accumulate, events_from_response

REQUEST = Request(messages=[Message(role="user", content="hi")], max_tokens=10)


def _text(response: Response) -> str:
    return "".join(b.text for b in response.content if isinstance(b, TextBlock))


def _answers(text: str, n: int = 100) -> ScriptedBackend:
    return ScriptedBackend([text] * n, model="m")


def _failing(kind: str, n: int = 100, **extra: float) -> ScriptedBackend:
    return ScriptedBackend([BackendError(f"{kind} here", kind=kind, **extra)  # type: ignore[arg-type]
                            for _ in range(n)], model="m")


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class FailsAfter(Backend):
    """Opens its stream (MessageStart, and ``content`` more events), then fails."""

    name = "fails-after"

    def __init__(self, content: int, kind: str = "overloaded") -> None:
        self.content = content
        self.kind = kind

    def stream(self, request: Request) -> Iterator[StreamEvent]:
        events = events_from_response(Response(content=[TextBlock(text="partial answer")],
                                               stop_reason="end_turn"), chunk_size=3)
        yield next(events)  # MessageStart
        for _ in range(self.content):
            yield next(events)
        raise BackendError("Overloaded", kind=self.kind)  # type: ignore[arg-type]


# -- FallbackBackend ------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["overloaded", "rate_limit", "unavailable", "timeout",
                                  "context_length"])
def test_fallback_goes_on_after_a_retryable_failure_or_a_long_prompt(kind: str) -> None:
    backend = FallbackBackend([_failing(kind), _answers("second")], labels=["a", "b"])
    with recording_attempts() as log:
        assert _text(backend.complete(REQUEST)) == "second"
    assert [(a.target, a.outcome, a.kind) for a in log] == [("a", "failed", kind),
                                                            ("b", "answered", None)]


def test_fallback_raises_at_once_what_would_fail_everywhere() -> None:
    second = _answers("second")
    backend = FallbackBackend([_failing("invalid_request"), second])
    with pytest.raises(BackendError, match="invalid_request here"):
        backend.complete(REQUEST)
    assert second.served == 0


def test_fallback_raises_the_last_failure_when_every_backend_failed() -> None:
    backend = FallbackBackend([_failing("overloaded"), _failing("unavailable")])
    with pytest.raises(BackendError) as caught:
        accumulate(backend.stream(REQUEST))
    assert caught.value.kind == "unavailable"


def test_a_stream_that_fails_right_after_opening_goes_on_to_the_next() -> None:
    """The Messages API opens a stream and then sends overloaded_error: nothing of it has
    reached the caller (MessageStart is held until the first content event)."""
    backend = FallbackBackend([FailsAfter(0), _answers("second")], labels=["a", "b"])
    with recording_attempts() as log:
        events = list(backend.stream(REQUEST))
    assert _text(accumulate(iter(events))) == "second"
    assert sum(isinstance(e, MessageStart) for e in events) == 1
    assert [a.outcome for a in log] == ["failed", "answered"]


def test_a_stream_that_fails_after_its_first_content_is_not_replayed() -> None:
    second = _answers("second")
    backend = FallbackBackend([FailsAfter(2), second])
    seen: list[StreamEvent] = []
    with pytest.raises(BackendError, match="Overloaded"):
        for event in backend.stream(REQUEST):
            seen.append(event)
    assert second.served == 0
    assert len(seen) == 3  # MessageStart, the block's start, its first text


def test_fallback_async_paths() -> None:
    backend = FallbackBackend([_failing("overloaded"), FailsAfter(0), _answers("third")])

    async def run() -> tuple[str, str]:
        whole = _text(await backend.acomplete(REQUEST))
        events = [e async for e in backend.astream(REQUEST)]
        return whole, _text(accumulate(iter(events)))

    assert anyio.run(run) == ("third", "third")


# -- BalancedBackend ------------------------------------------------------------------------

def test_even_load_is_round_robin() -> None:
    deployments = [_answers(str(i)) for i in range(3)]
    backend = BalancedBackend(deployments)
    answers = [_text(backend.complete(REQUEST)) for _ in range(30)]
    assert answers[:6] == ["0", "1", "2", "0", "1", "2"]
    assert [d.served for d in deployments] == [10, 10, 10]


def test_the_least_busy_deployment_gets_the_request() -> None:
    deployments = [_answers(str(i)) for i in range(3)]
    backend = BalancedBackend(deployments)
    held = [backend.stream(REQUEST) for _ in range(2)]
    firsts = [next(s) for s in held]  # two streams open: on deployments 0 and 1
    assert len(firsts) == 2
    assert [s["in_flight"] for s in backend.states()] == [1, 1, 0]
    assert _text(backend.complete(REQUEST)) == "2"
    assert _text(backend.complete(REQUEST)) == "2"  # still the only idle one
    for stream in held:
        stream.close()
    assert [s["in_flight"] for s in backend.states()] == [0, 0, 0]


def test_a_failing_deployment_cools_down_for_its_retry_after() -> None:
    clock = Clock()
    limited = ScriptedBackend([BackendError("slow down", kind="rate_limit", retry_after=7),
                               "0-again", "0-again"], model="m")
    other = _answers("1")
    backend = BalancedBackend([limited, other], clock=clock)
    with recording_attempts() as log:
        assert _text(backend.complete(REQUEST)) == "1"  # tried 0 (429), then 1
    assert [(a.target, a.outcome) for a in log] == [("scripted[0]", "failed"),
                                                    ("scripted[1]", "answered")]
    state = backend.states()[0]
    assert state["state"] == "cooling" and state["cooldown_s"] == 7.0
    assert "rate_limit: slow down" in state["last_error"]
    clock.now += 6.9
    assert [_text(backend.complete(REQUEST)) for _ in range(3)] == ["1", "1", "1"]
    clock.now += 0.2
    assert backend.states()[0]["state"] == "ready"
    assert _text(backend.complete(REQUEST)) == "0-again"


def test_cooldowns_double_while_failures_go_on_and_end_with_an_answer() -> None:
    clock = Clock()
    flaky = ScriptedBackend([BackendError("down", kind="unavailable")] * 3 + ["ok"] * 5,
                            model="m")
    backend = BalancedBackend([flaky, _answers("other")], cooldown=2, max_cooldown=5,
                              clock=clock)
    waits = []
    for _ in range(3):
        backend.complete(REQUEST)  # flaky fails, other answers
        waits.append(backend.states()[0]["cooldown_s"])
        clock.now += waits[-1]
        backend._next = 0  # the next request tries the flaky one first
    assert waits == [2.0, 4.0, 5.0]
    assert _text(backend.complete(REQUEST)) == "ok"
    assert backend._deployments[0].streak == 0


def test_when_every_deployment_cools_down_the_soonest_back_is_tried() -> None:
    clock = Clock()
    a = ScriptedBackend([BackendError("a", kind="overloaded", retry_after=30), "a-ok"], model="m")
    b = ScriptedBackend([BackendError("b", kind="overloaded", retry_after=10), "b-ok"], model="m")
    backend = BalancedBackend([a, b], clock=clock)
    with pytest.raises(BackendError, match="^b$"):
        backend.complete(REQUEST)
    assert not backend.available()
    assert _text(backend.complete(REQUEST)) == "b-ok"  # b's cooldown ends first


def test_a_prompt_over_the_context_is_not_tried_on_the_other_deployments() -> None:
    other = _answers("1")
    backend = BalancedBackend([_failing("context_length"), other])
    with pytest.raises(BackendError) as caught:
        backend.complete(REQUEST)
    assert caught.value.kind == "context_length"
    assert other.served == 0
    assert backend.states()[0]["state"] == "ready"  # not the deployment's fault


def test_balanced_async_paths_count_in_flight_and_cool_down() -> None:
    backend = BalancedBackend([_failing("unavailable"), _answers("1")])

    async def run() -> list[str]:
        out = [_text(await backend.acomplete(REQUEST))]
        events = [e async for e in backend.astream(REQUEST)]
        out.append(_text(accumulate(iter(events))))
        return out

    assert anyio.run(run) == ["1", "1"]
    assert [s["in_flight"] for s in backend.states()] == [0, 0]
    assert backend.states()[0]["state"] == "cooling"


def test_fallback_over_balanced_records_each_deployment_once() -> None:
    pool = BalancedBackend([_failing("overloaded"), _failing("unavailable")],
                           labels=["big[0]", "big[1]"])
    backend = FallbackBackend([pool, _answers("small")], labels=["big", "small"])
    with recording_attempts() as log:
        assert _text(backend.complete(REQUEST)) == "small"
        assert _text(backend.complete(REQUEST)) == "small"
    assert [(a.target, a.outcome) for a in log] == [
        ("big[0]", "failed"), ("big[1]", "failed"), ("small", "answered"),
        ("big", "skipped"), ("small", "answered")]


def test_a_try_with_another_after_it_does_not_retry_the_last_one_does() -> None:
    """An HTTP backend's own retries (429 with Retry-After: 0, twice) wait inside one try;
    in a failover, a try with another after it fails at once (the next one is the retry),
    the last one retries as the backend would alone."""
    import httpx2

    calls: list[str] = []

    def overloaded(request: httpx2.Request) -> httpx2.Response:
        calls.append(str(request.url.host))
        return httpx2.Response(529, headers={"retry-after": "0"}, json={
            "type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})

    def http(host: str) -> AnthropicBackend:
        return AnthropicBackend("m", base_url=f"http://{host}", api_key="k",
                                transport=httpx2.MockTransport(overloaded))

    backend = FallbackBackend([BalancedBackend([http("a0"), http("a1")]), http("b")])
    with pytest.raises(BackendError) as caught:
        backend.complete(REQUEST)
    assert caught.value.kind == "overloaded"
    assert calls == ["a0", "a1", "b", "b", "b"]  # the last one: 1 call and its 2 retries
    calls.clear()
    assert http("c").retry.max_retries == 2
    with pytest.raises(BackendError):
        http("c").complete(REQUEST)
    assert calls == ["c", "c", "c"]  # alone, as before
