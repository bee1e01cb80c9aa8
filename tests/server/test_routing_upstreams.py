"""Routing against real upstream processes (fake Anthropic and OpenAI servers on sockets,
tests/server/fake_upstream.py): routes by name and glob, three deployments balanced (even
and uneven load), a deployment killed under load with no client request failing on any of
the four APIs, a 429's Retry-After cooling a deployment down, an upstream stream that opens
then fails, context-window routing, the native error when every route failed, and every
attempt in the trace and the OpenTelemetry span.

The gateway runs in this process on a socket (ServerThread) over ``create_app(config=...)``.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from routing_clients import APIS, acall, call, request_of
from routing_procs import FakeUpstream, fake_upstreams, served_by, write_config

from tooluse.server import ServerThread, create_app

pytestmark = pytest.mark.slow

ANTHROPIC_KEY_ENV = {"ANTHROPIC_API_KEY": "sk-upstream", "OPENAI_API_KEY": "sk-upstream"}


@pytest.fixture(autouse=True)
def _upstream_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in ANTHROPIC_KEY_ENV.items():
        monkeypatch.setenv(name, value)


@pytest.fixture()
def gateway(tmp_path: Path) -> Iterator[object]:
    """``gateway(config_text)`` -> a running ServerThread over that config."""
    running: list[ServerThread] = []

    def start(text: str, **app: object) -> ServerThread:
        config = write_config(tmp_path / f"config-{len(running)}.toml", text)
        thread = ServerThread(create_app(config=config, **app))  # type: ignore[arg-type]
        thread.__enter__()
        running.append(thread)
        return thread

    yield start
    for thread in running:
        thread.__exit__(None, None, None)


def _deployments(upstreams: list[FakeUpstream], scheme: str = "anthropic",
                 model: str = "up-model") -> str:
    path = "" if scheme == "anthropic" else "/v1"
    return "[" + ", ".join(f'"{scheme}:{u.url}{path}#{model}"' for u in upstreams) + "]"


def test_routes_by_exact_name_and_by_glob(tmp_path: Path, gateway) -> None:  # type: ignore[no-untyped-def]
    with fake_upstreams(tmp_path, "sonnet", "haiku", "gpt", "rest") as (sonnet, haiku, gpt, rest):
        srv = gateway(f"""
[[models]]
name = "claude-sonnet-*"
backend = "anthropic:{sonnet.url}#claude-sonnet-upstream"

[[models]]
name = "claude-haiku-4-5"
backend = "anthropic:{haiku.url}#claude-haiku-upstream"

[[models]]
name = "gpt-?"
backend = "openai:{gpt.url}/v1#qwen3"

[[models]]
name = "*"
backend = "openai:{rest.url}/v1"
""")
        asked = [("claude-sonnet-4-5", "sonnet"), ("claude-sonnet-4-6", "sonnet"),
                 ("claude-haiku-4-5", "haiku"), ("gpt-5", "gpt"),
                 ("claude-haiku-4-5-20251001", "rest"), ("anything-else", "rest")]
        for api in APIS:
            for stream in (False, True):
                for model, where in asked:
                    answer = call(srv.url, api, model, stream=stream)
                    assert answer.ok, (api, stream, model, answer.error)
                    assert answer.text == f"from {where}", (api, stream, model)
                    if answer.model is not None:  # the client's name is echoed
                        assert answer.model == model, (api, stream, model)
                    route = answer.headers["x-tooluse-route"]
                    assert route == {"sonnet": "claude-sonnet-*", "haiku": "claude-haiku-4-5",
                                     "gpt": "gpt-?", "rest": "*"}[where]
        # each upstream got its entry's model; "*" (no model in its spec) the client's name
        assert {e["model"] for e in sonnet.log()} == {"claude-sonnet-upstream"}
        assert {e["model"] for e in haiku.log()} == {"claude-haiku-upstream"}
        assert {e["model"] for e in gpt.log()} == {"qwen3"}
        assert {e["model"] for e in rest.log()} == {"claude-haiku-4-5-20251001", "anything-else"}
        assert served_by([sonnet, haiku, gpt, rest]) == {"sonnet": 16, "haiku": 8, "gpt": 8,
                                                         "rest": 16}


def test_a_name_no_entry_matches_is_the_apis_own_404(tmp_path: Path, gateway) -> None:  # type: ignore[no-untyped-def]
    with fake_upstreams(tmp_path, "only") as (only,):
        srv = gateway(f'[[models]]\nname = "m"\nbackend = "anthropic:{only.url}#x"\n')
        answer = call(srv.url, "messages", "other")
        assert answer.status == 404 and "not_found_error" in (answer.error or "")
        answer = call(srv.url, "chat", "other")
        assert answer.status == 404 and "model: other" in (answer.error or "")
        assert only.log() == []


def _load(url: str, n: int, concurrency: int, model: str, *,
          apis: tuple[str, ...] = ("messages",), streams: tuple[bool, ...] = (False,),
          during: object = None) -> list[object]:
    """``n`` requests, ``concurrency`` at a time, cycling over ``apis`` x ``streams``;
    ``during(done_count)`` is called after each completes (to kill something mid-load)."""
    combos = [(a, s) for a in apis for s in streams]
    jobs = [combos[i % len(combos)] for i in range(n)]
    random.Random(7).shuffle(jobs)
    results: list[object] = []

    async def run() -> None:
        queue: asyncio.Queue[tuple[str, bool]] = asyncio.Queue()
        for job in jobs:
            queue.put_nowait(job)
        async with httpx2.AsyncClient(timeout=60, trust_env=False,
                                      limits=httpx2.Limits(max_connections=concurrency)) as client:
            async def worker() -> None:
                while not queue.empty():
                    api, stream = queue.get_nowait()
                    results.append((api, stream, await acall(client, url, api, model,
                                                             stream=stream)))
                    if during is not None:
                        during(len(results))  # type: ignore[operator]

            await asyncio.gather(*(worker() for _ in range(concurrency)))

    asyncio.run(run())
    return results


def test_three_deployments_share_an_even_load_within_ten_percent(tmp_path: Path, gateway) -> None:  # type: ignore[no-untyped-def]
    with fake_upstreams(tmp_path, "d0", "d1", "d2", flags=["--delay", "0.005"]) as ups:
        srv = gateway(f'[[models]]\nname = "pool"\nbackend = {_deployments(ups)}\n')
        results = _load(srv.url, 600, 6, "pool", streams=(False, True))
        assert all(r[2].ok for r in results)  # type: ignore[attr-defined]
        shares = served_by(ups)
        assert sum(shares.values()) == 600
        for name, count in shares.items():
            assert abs(count - 200) <= 20, shares  # within 10% of an even share
        routes = Counter(r[2].headers["x-tooluse-route"] for r in results)  # type: ignore[attr-defined]
        assert routes == Counter({"pool[0]": shares["d0"], "pool[1]": shares["d1"],
                                  "pool[2]": shares["d2"]})


def test_the_least_busy_deployment_gets_more_under_uneven_load(tmp_path: Path, gateway) -> None:  # type: ignore[no-untyped-def]
    with fake_upstreams(tmp_path, "fast0", "fast1") as fast, \
            fake_upstreams(tmp_path, "slow", flags=["--delay", "0.25"]) as slow:
        ups = [fast[0], slow[0], fast[1]]
        srv = gateway(f'[[models]]\nname = "pool"\nbackend = {_deployments(ups)}\n')
        results = _load(srv.url, 300, 6, "pool")
        assert all(r[2].ok for r in results)  # type: ignore[attr-defined]
        shares = served_by(ups)
        # round-robin alone would give the slow one a third (100); holding its requests
        # longer, it is the busiest one each time and gets a request only when it is idle
        assert shares["slow"] < 40, shares
        assert abs(shares["fast0"] - shares["fast1"]) <= 30, shares


def test_a_deployment_killed_mid_load_fails_no_client_request(tmp_path: Path, gateway) -> None:  # type: ignore[no-untyped-def]
    """1,000 requests over the four APIs, JSON and streamed, 16 at a time, on three
    deployments; one is SIGKILLed a third of the way through. Requests waiting on it (each
    upstream answers after 20 ms) and those sent to it afterwards go on to another
    deployment before anything reached the client."""
    with fake_upstreams(tmp_path, "d0", "d1", "d2", flags=["--delay", "0.02"]) as ups:
        srv = gateway(f'[[models]]\nname = "pool"\nbackend = {_deployments(ups)}\n')
        victim = ups[1]
        killed_at: list[int] = []

        def kill(done: int) -> None:
            if done == 333 and not killed_at:
                killed_at.append(len(victim.log()))
                victim.kill()

        results = _load(srv.url, 1000, 16, "pool", apis=APIS, streams=(False, True),
                        during=kill)
        failed = [(api, stream, answer.error) for api, stream, answer in results  # type: ignore[misc]
                  if not answer.ok]
        assert killed_at and failed == []
        assert len(results) == 1000
        assert Counter((api, stream) for api, stream, _ in results) == Counter(  # type: ignore[misc]
            {(a, s): 125 for a in APIS for s in (False, True)})
        others = served_by([ups[0], ups[2]])
        assert killed_at[0] + sum(others.values()) >= 1000
        attempts = [a.attempts for _, _, a in results]  # type: ignore[misc]
        assert any(("pool[1]", "unavailable") in a for a in attempts)  # some went on from it
        health = httpx2.get(srv.url + "/health", trust_env=False).json()
        states = {d["label"]: d for d in health["routes"][0]["deployments"]}
        assert states["pool[1]"]["state"] == "cooling" and states["pool[1]"]["failed"] >= 1


def test_a_429_with_retry_after_cools_the_deployment_down(tmp_path: Path, gateway) -> None:  # type: ignore[no-untyped-def]
    with fake_upstreams(tmp_path, "d0", "d1") as (d0, d1):
        srv = gateway(f'[[models]]\nname = "pool"\nbackend = {_deployments([d0, d1])}\n')
        d0.control(fail=429, count=1, retry_after=2)
        first = call(srv.url, "messages", "pool")
        assert first.ok and first.text == "from d1"
        assert first.headers["x-tooluse-route"] == "pool[1]"
        assert first.attempts == [("pool[0]", "rate_limit")]
        health = httpx2.get(srv.url + "/health", trust_env=False).json()
        d0_state = health["routes"][0]["deployments"][0]
        assert d0_state["state"] == "cooling" and 1.0 < d0_state["cooldown_s"] <= 2.0
        assert "rate_limit" in d0_state["last_error"]
        cooled = [call(srv.url, "chat", "pool", stream=True).text for _ in range(6)]
        assert cooled == ["from d1"] * 6  # d0 is left alone for its Retry-After
        assert len(d0.log()) == 1
        time.sleep(2.1)
        back = [call(srv.url, "messages", "pool").text for _ in range(4)]
        assert "from d0" in back  # tried again once its cooldown ended
        assert len(d0.log()) >= 2


def test_an_upstream_stream_that_opens_then_is_overloaded_falls_over(tmp_path: Path, gateway) -> None:  # type: ignore[no-untyped-def]
    with fake_upstreams(tmp_path, "busy", "spare") as (busy, spare):
        busy.control(fail="stream-overloaded", count=-1)
        srv = gateway(f"""
[[models]]
name = "claude-sonnet-4-5"
backend = "anthropic:{busy.url}#up"
fallbacks = ["spare"]

[[models]]
name = "spare"
backend = "openai:{spare.url}/v1#qwen3"
""")
        answer = call(srv.url, "messages", "claude-sonnet-4-5", stream=True)
        assert answer.ok and answer.text == "from spare"
        assert answer.model == "claude-sonnet-4-5"  # the client's name, whoever answered
        assert answer.headers["x-tooluse-route"] == "spare"
        assert answer.attempts == [("claude-sonnet-4-5", "overloaded")]
        assert len(busy.log()) == 1 and len(spare.log()) == 1


def test_routed_streams_end_their_deployments_count_however_they_end(tmp_path: Path, gateway) -> None:  # type: ignore[no-untyped-def]
    """A routed stream is handed straight through once a deployment answered; each
    deployment's count of requests in flight still ends with every stream: read to its
    end (served), or left by a client after its first bytes (neither served nor failed)."""
    with fake_upstreams(tmp_path, "d0", "d1") as ups:
        srv = gateway(f'[[models]]\nname = "pool"\nbackend = {_deployments(ups)}\n'
                      'fallbacks = ["spare"]\n\n'
                      f'[[models]]\nname = "spare"\nbackend = "anthropic:{ups[0].url}#up-model"\n')
        for api in APIS:
            answer = call(srv.url, api, "pool", stream=True)
            assert answer.ok and answer.text in ("from d0", "from d1"), answer
        left = 0
        with httpx2.Client(trust_env=False) as client:
            for api in APIS:
                path, body = request_of(api, "pool", "hello", True)
                with client.stream("POST", srv.url + path, json=body) as response:
                    assert response.status_code == 200
                    next(response.iter_raw())  # the first bytes, then the client goes
                    left += 1

        def pool() -> list[dict[str, object]]:
            health = httpx2.get(srv.url + "/health", trust_env=False).json()
            return next(r for r in health["routes"] if r["name"] == "pool")["deployments"]  # type: ignore[no-any-return]

        deadline = time.monotonic() + 5
        while any(d["in_flight"] for d in pool()) and time.monotonic() < deadline:
            time.sleep(0.05)
        states = pool()
        assert [d["in_flight"] for d in states] == [0, 0], states
        assert [d["failed"] for d in states] == [0, 0], states
        served = sum(int(d["served"]) for d in states)  # type: ignore[call-overload]
        assert len(APIS) <= served <= len(APIS) + left, states


def test_a_prompt_over_a_context_window_goes_to_the_first_fallback_that_fits(
    tmp_path: Path, gateway  # type: ignore[no-untyped-def]
) -> None:
    with fake_upstreams(tmp_path, "small", "medium", "large") as (small, medium, large):
        srv = gateway(f"""
[[models]]
name = "claude-sonnet-4-5"
backend = "anthropic:{small.url}#small"
context_window = 400
fallbacks = ["medium", "large"]

[[models]]
name = "medium"
backend = "anthropic:{medium.url}#medium"
context_window = 1500

[[models]]
name = "large"
backend = "openai:{large.url}/v1#large"
context_window = 100000
""")
        short = call(srv.url, "messages", "claude-sonnet-4-5", prompt="hi")
        middle = call(srv.url, "messages", "claude-sonnet-4-5", prompt="word " * 600)
        long = call(srv.url, "chat", "claude-sonnet-4-5", stream=True, prompt="word " * 5000)
        assert (short.text, middle.text, long.text) == ("from small", "from medium", "from large")
        assert middle.attempts == [("claude-sonnet-4-5", "context_length")]
        assert long.attempts == [("claude-sonnet-4-5", "context_length"),
                                 ("medium", "context_length")]
        # the upstreams too small were never called for the long prompts
        assert len(small.log()) == 1 and len(medium.log()) == 1 and len(large.log()) == 1
        # nowhere to go: the API's own 400, in the wording Claude Code reads
        too_long = call(srv.url, "messages", "medium", prompt="word " * 5000)
        assert too_long.status == 400
        assert "prompt is too long" in (too_long.error or "") and "1500 maximum" in (too_long.error or "")


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("stream", [False, True])
def test_when_every_route_failed_the_client_gets_the_last_native_error(
    tmp_path: Path, gateway, api: str, stream: bool  # type: ignore[no-untyped-def]
) -> None:
    with fake_upstreams(tmp_path, "a", "b", "c") as (a, b, c):
        a.control(fail=529, count=-1)
        b.control(fail=500, count=-1)
        c.control(fail=429, count=-1, retry_after=1)
        srv = gateway(f"""
[[models]]
name = "main"
backend = ["anthropic:{a.url}#m", "anthropic:{b.url}#m"]
fallbacks = ["backup"]

[[models]]
name = "backup"
backend = "openai:{c.url}/v1#n"
""")
        answer = call(srv.url, api, "main", stream=stream)
        assert answer.status == 429, answer.error  # the last failure: backup's 429
        assert answer.headers.get("retry-after") == "1"
        assert set(answer.attempts) == {("main[0]", "overloaded"), ("main[1]", "api"),
                                        ("backup", "rate_limit")}
        error = answer.error or ""
        native = {"messages": "rate_limit_error", "chat": "rate_limit",
                  "converse": "ThrottlingException", "responses": "rate_limit"}[api]
        assert native in error or native in str(answer.headers), (api, error, answer.headers)
        # the tries with another after them failed at once; the last retried (its backend's
        # own two retries, after the Retry-After it was given) before the error was final
        assert (len(a.log()), len(b.log()), len(c.log())) == (1, 1, 3)


def test_every_attempt_is_in_the_trace_and_the_span(tmp_path: Path, gateway) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("opentelemetry.sdk")
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from tooluse.telemetry import reset, use_tracer_provider
    from tooluse.trace.store import TraceStore

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    use_tracer_provider(provider)
    store = TraceStore(tmp_path / "traces.db")
    try:
        with fake_upstreams(tmp_path, "down", "up") as (down, up):
            down.control(fail=529, count=-1)
            srv = gateway(f"""
[[models]]
name = "m"
backend = "anthropic:{down.url}#x"
fallbacks = ["spare"]
cooldown = 0

[[models]]
name = "spare"
backend = "anthropic:{up.url}#y"
""", trace=store)
            for stream in (False, True):
                assert call(srv.url, "messages", "m", stream=stream).text == "from up"
            store.flush()
        traces = [store.get(item["id"]) for item in store.list(10)]
        for trace in traces:
            assert trace is not None
            attempts = trace["turns"][0]["attempts"]
            assert [(a["target"], a["outcome"], a.get("error")) for a in attempts] == [
                ("m", "failed", "overloaded"), ("spare", "answered", None)]
        spans = [s for s in exporter.get_finished_spans() if s.name.startswith("chat")]
        assert len(spans) == 2
        for span in spans:
            events = [(e.attributes["tooluse.attempt.target"],
                       e.attributes["tooluse.attempt.outcome"])
                      for e in span.events if e.name == "tooluse.attempt"]
            assert events == [("m", "failed"), ("spare", "answered")]
    finally:
        reset()
        store.close()
