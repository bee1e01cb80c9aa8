"""SIGHUP reloads the config of ``tooluse serve --config`` without dropping requests in
flight: in one process (the route table is swapped; requests running finish on the old
one, whose backends are closed after them) and with ``--workers 2`` (uvicorn's graceful
restart, each new worker ready before an old one stops). A broken file changes nothing
but one error line."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from routing_clients import Answer, call
from routing_procs import Gateway, fake_upstreams, write_config

from tooluse.backends.registry import register_backend
from tooluse.backends.scripted import ScriptedBackend
from tooluse.server import ServerThread, create_app
from tooluse.server.app import reload_app
from tooluse.server.route_config import ConfigError

pytestmark = pytest.mark.slow


def _config(url: str) -> str:
    return f'[[models]]\nname = "m"\nbackend = "anthropic:{url}#up"\n'


def _in_flight(url: str, n: int) -> tuple[list[threading.Thread], list[Answer]]:
    answers: list[Answer] = []

    def one(k: int) -> None:
        answers.append(call(url, ("messages", "chat")[k % 2], "m", stream=k % 3 == 0))

    threads = [threading.Thread(target=one, args=(k,)) for k in range(n)]
    for thread in threads:
        thread.start()
    return threads, answers


def _until_all_new(url: str, seconds: float = 90.0) -> list[str | None]:
    """Requests until 10 in a row come from the new upstream (the workers replaced)."""
    deadline, streak, seen = time.monotonic() + seconds, 0, []
    while streak < 10 and time.monotonic() < deadline:
        text = call(url, "messages", "m").text
        seen.append(text)
        streak = streak + 1 if text == "from new" else 0
    return seen


@pytest.mark.parametrize("workers", [1, 2])
def test_sighup_reloads_without_dropping_requests_in_flight(tmp_path: Path, workers: int) -> None:
    with fake_upstreams(tmp_path, "old", "new") as (old, new):
        old.control(delay=2.0)
        config = write_config(tmp_path / "g.toml", _config(old.url))
        extra = ["--workers", "2"] if workers > 1 else []
        with Gateway(config, tmp_path, *extra, env={"ANTHROPIC_API_KEY": "k"}) as gateway:
            assert call(gateway.url, "messages", "m").text == "from old"
            threads, answers = _in_flight(gateway.url, 6)
            deadline = time.monotonic() + 30
            while len(old.log()) < 7 and time.monotonic() < deadline:
                time.sleep(0.02)  # until the six are waiting on the old upstream
            assert len(old.log()) == 7
            write_config(config, _config(new.url))
            gateway.hangup()
            seen = _until_all_new(gateway.url)
            for thread in threads:
                thread.join(60)
            log = gateway.text()
            assert gateway.proc.poll() is None  # still serving
    assert len(answers) == 6 and all(a.ok for a in answers), [a.error for a in answers]
    assert {a.text for a in answers} == {"from old"}  # finished where they started
    assert seen[-10:] == ["from new"] * 10
    if workers == 1:
        assert "g.toml: reloaded: 1 model route(s), 0 key(s)" in log
    assert "Traceback" not in log


@pytest.mark.parametrize("workers", [1, 2])
def test_a_broken_config_on_sighup_keeps_the_one_served(tmp_path: Path, workers: int) -> None:
    with fake_upstreams(tmp_path, "old") as (old,):
        config = write_config(tmp_path / "g.toml", _config(old.url))
        extra = ["--workers", "2"] if workers > 1 else []
        with Gateway(config, tmp_path, *extra, env={"ANTHROPIC_API_KEY": "k"}) as gateway:
            write_config(config, _config(old.url) + 'fallbacks = ["nope"]\n')
            gateway.hangup()
            deadline = time.monotonic() + 30
            while "reload refused" not in gateway.text() and time.monotonic() < deadline:
                time.sleep(0.1)
            answers = [call(gateway.url, "messages", "m").text for _ in range(5)]
            log = gateway.text()
    refusals = [line for line in log.splitlines() if "reload refused" in line]
    assert len(refusals) == 1, log
    assert "fallbacks: 'nope' names no [[models]] entry" in refusals[0]
    assert answers == ["from old"] * 5


class Closing(ScriptedBackend):
    closed: list[str] = []

    def close(self) -> None:
        Closing.closed.append(self.model)


def test_a_reload_keeps_unchanged_backends_and_closes_the_others_after_their_requests(
    tmp_path: Path,
) -> None:
    register_backend("closing", lambda rest, **options: Closing([f"from {rest}"] * 50,
                                                                model=rest))
    Closing.closed.clear()
    config = write_config(tmp_path / "g.toml",
                          '[[models]]\nname = "a"\nbackend = "closing:a"\n'
                          '[[models]]\nname = "b"\nbackend = "closing:b"\n')
    app = create_app(config=config)
    router = app.state.gateway.router
    with ServerThread(app) as srv:
        kept = router.table.route("a").backend.deployments[0]
        old = router.table
        old.acquire()  # a request still running on the old table
        write_config(config, '[[models]]\nname = "a"\nbackend = "closing:a"\n'
                             '[[models]]\nname = "c"\nbackend = "closing:c"\n')
        assert reload_app(app).endswith("reloaded: 2 model route(s), 0 key(s)")
        assert router.table.route("a").backend.deployments[0] is kept  # not built again
        assert call(srv.url, "messages", "c").text == "from c"
        assert call(srv.url, "messages", "b").status == 404
        assert Closing.closed == []  # b's backend waits for the request still on it
        old.release()
        assert Closing.closed == ["b"]
        write_config(config, '[[models]]\nname = "a"\nbackend = "nope:x"\n')
        with pytest.raises(ConfigError, match="unknown backend 'nope'"):
            reload_app(app)
        assert call(srv.url, "messages", "a").text == "from a"
    assert sorted(Closing.closed) == ["a", "b", "c"]
