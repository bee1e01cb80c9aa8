"""A config's API keys: the models each may use (any other is the API's own 403, and is not
listed), rpm/tpm limits answered with the API's own 429 and Retry-After, holding across
``tooluse serve --workers 2`` (one SQLite usage file) and across replicas (PostgreSQL),
usage per key and model (``GET /usage``, ``tooluse logs --usage``), and the key itself
never written anywhere: not in a log line, a trace, the usage store or ``--check``."""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
import time
from pathlib import Path

import httpx2
import pytest
from routing_clients import APIS, call
from routing_procs import Gateway, fake_upstreams, write_config
from test_server_cli_workers import _children, _owner
from test_server_responses_postgres import pg_url  # noqa: F401 - the PostgreSQL server

from tooluse.server import ServerThread, create_app

pytestmark = pytest.mark.slow

TEAM = "sk-team-a-5f0c9e2d41b7a8e3"
OTHER = "sk-team-b-c3d2e1f0a9b8c7d6"
ADMIN = "sk-admin-00112233445566778899"


def _config(upstream_url: str, *, rpm: int | None = None, tpm: int | None = None,
            usage: str | None = None) -> str:
    limits = "".join(f"{name} = {value}\n" for name, value in (("rpm", rpm), ("tpm", tpm))
                     if value is not None)
    store = f'usage_store = "{usage}"\n' if usage else ""
    return f"""{store}
[[models]]
name = "local-big"
backend = "anthropic:{upstream_url}#big"

[[models]]
name = "local-small"
backend = "openai:{upstream_url}/v1#small"

[[models]]
name = "claude-sonnet-4-5"
backend = "anthropic:{upstream_url}#sonnet"
fallbacks = ["local-small"]

[[keys]]
key = "{TEAM}"
name = "team-a"
models = ["local-*"]
{limits}
[[keys]]
key_env = "TEAM_B_KEY"
name = "team-b"
"""


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEAM_B_KEY", OTHER)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-upstream")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-upstream")


@pytest.mark.parametrize("api", APIS)
def test_a_key_gets_its_models_and_the_apis_own_403_for_others(api: str, tmp_path: Path) -> None:
    with fake_upstreams(tmp_path, "up") as (up,):
        config = write_config(tmp_path / "g.toml", _config(up.url))
        with ServerThread(create_app(config=config,
                                     usage_store=str(tmp_path / "usage.db"))) as srv:
            allowed = call(srv.url, api, "local-big", key=TEAM)
            refused = call(srv.url, api, "claude-sonnet-4-5", key=TEAM)
            other = call(srv.url, api, "claude-sonnet-4-5", key=OTHER)
            nobody = call(srv.url, api, "local-big")
            wrong = call(srv.url, api, "local-big", key="sk-not-a-key")
        models = [e["model"] for e in up.log()]
    assert allowed.ok and allowed.text == "from up"
    assert refused.status == 403
    native = {"messages": "permission_error", "chat": "permission", "converse":
              "AccessDeniedException", "responses": "permission"}[api]
    assert native in (refused.error or "") + str(refused.headers)
    assert "team-a" in (refused.error or "") and TEAM not in (refused.error or "")
    assert other.ok  # team-b may use every model
    assert nobody.status in (401, 403) and wrong.status in (401, 403)
    assert models == ["big", "sonnet"]


def test_a_key_sees_only_its_models_listed(tmp_path: Path) -> None:
    with fake_upstreams(tmp_path, "up") as (up,):
        config = write_config(tmp_path / "g.toml", _config(up.url))
        with ServerThread(create_app(config=config,
                                     usage_store=str(tmp_path / "usage.db"))) as srv:
            def listed(key: str) -> list[str]:
                data = httpx2.get(srv.url + "/v1/models", headers={"x-api-key": key},
                                  trust_env=False).json()
                return [m["id"] for m in data["data"]]

            assert listed(TEAM) == ["local-big", "local-small"]
            assert listed(OTHER) == ["local-big", "local-small", "claude-sonnet-4-5"]
            one = httpx2.get(srv.url + "/v1/models/claude-sonnet-4-5",
                             headers={"x-api-key": TEAM, "anthropic-version": "2023-06-01"},
                             trust_env=False)
            assert one.status_code == 403 and one.json()["error"]["type"] == "permission_error"
            missing = httpx2.get(srv.url + "/v1/models/gpt-9", headers={"x-api-key": OTHER},
                                 trust_env=False)
            assert missing.status_code == 404


def test_a_keys_fallbacks_stop_at_models_it_may_not_use(tmp_path: Path) -> None:
    """team-a may use local-* only: when its own route fails, a fallback outside its models
    is not tried for it (it would run up cost the key may not)."""
    with fake_upstreams(tmp_path, "down", "spare") as (down, spare):
        down.control(fail=529, count=-1)
        config = write_config(tmp_path / "g.toml", f"""
[[models]]
name = "local-big"
backend = "anthropic:{down.url}#big"
fallbacks = ["claude-sonnet-4-5", "local-small"]

[[models]]
name = "claude-sonnet-4-5"
backend = "anthropic:{spare.url}#sonnet"

[[models]]
name = "local-small"
backend = "anthropic:{spare.url}#small"

[[keys]]
key = "{TEAM}"
models = ["local-*"]
""")
        with ServerThread(create_app(config=config,
                                     usage_store=str(tmp_path / "usage.db"))) as srv:
            answer = call(srv.url, "messages", "local-big", key=TEAM)
        assert answer.ok and answer.headers["x-tooluse-route"] == "local-small"
        assert [e["model"] for e in spare.log()] == ["small"]


def test_rpm_holds_across_two_workers(tmp_path: Path) -> None:
    """rpm = 5 on a gateway of two worker processes: of 20 requests or more, each on a new
    connection, until each worker has refused some (with limits of their own, each would
    refuse only after answering 5 itself: 10 answered), exactly 5 are answered; the others
    get the API's 429 with Retry-After, whichever worker they reached."""
    with fake_upstreams(tmp_path, "up") as (up,):
        config = write_config(tmp_path / "g.toml",
                              _config(up.url, rpm=5, usage=str(tmp_path / "usage.db")))
        with Gateway(config, tmp_path, "--workers", "2") as gateway:
            deadline = time.monotonic() + 60
            while len(workers := _children(gateway.proc.pid)) < 3 and time.monotonic() < deadline:
                time.sleep(0.1)
            outcomes: list[tuple[int, int, str | None]] = []
            for k in range(200):
                if k >= 20 and len({pid for pid, status, _ in outcomes if status == 429}) == 2:
                    break
                conn = http.client.HTTPConnection("127.0.0.1", gateway.port, timeout=30)
                conn.request("POST", "/v1/messages", json.dumps({
                    "model": "local-big", "max_tokens": 20,
                    "messages": [{"role": "user", "content": f"hi {k}"}]}),
                    {"content-type": "application/json", "x-api-key": TEAM})
                pid = _owner(workers, gateway.port, conn)
                response = conn.getresponse()
                body = json.loads(response.read())
                outcomes.append((pid, response.status, response.getheader("retry-after")))
                if response.status == 429:
                    assert body["error"]["type"] == "rate_limit_error"
                    assert "5 requests per minute" in body["error"]["message"]
                conn.close()
            usage = httpx2.get(gateway.url + "/usage", headers={"x-api-key": TEAM},
                               trust_env=False).json()["usage"]
            log = gateway.text()
        upstream_got = len(up.log())
    answered = [o for o in outcomes if o[1] == 200]
    refused = [o for o in outcomes if o[1] == 429]
    assert len(answered) == 5 and len(refused) == len(outcomes) - 5, outcomes
    assert all(o[2] is not None and int(o[2]) >= 1 for o in refused)
    assert len({pid for pid, _, _ in refused}) == 2  # both workers refused some
    assert upstream_got == 5
    assert [(u["key"], u["model"], u["requests"]) for u in usage] == [("team-a", "local-big", 5)]
    assert TEAM not in log and OTHER not in log


def test_tpm_refuses_once_the_tokens_went_over(tmp_path: Path) -> None:
    with fake_upstreams(tmp_path, "up") as (up,):
        config = write_config(tmp_path / "g.toml", _config(up.url, tpm=60))
        with ServerThread(create_app(config=config,
                                     usage_store=str(tmp_path / "usage.db"))) as srv:
            statuses = []
            for _ in range(4):
                answer = call(srv.url, "chat", "local-small", key=TEAM, prompt="word " * 40)
                statuses.append((answer.status, answer.headers.get("retry-after")))
                time.sleep(0.3)  # the usage is written by a thread: let it
        upstream_got = len(up.log())
    assert statuses[0][0] == 200
    assert statuses[-1][0] == 429 and statuses[-1][1] is not None
    assert upstream_got < 4


def test_usage_per_key_and_model_and_the_key_is_written_nowhere(tmp_path: Path) -> None:
    """Usage rows per key, model and route with tokens in and out and cache reads; the keys
    appear in no file the gateway wrote (log, traces, usage) nor in --check's table."""
    with fake_upstreams(tmp_path, "up", "down") as (up, down):
        down.control(fail=529, count=-1)
        usage = tmp_path / "usage.db"
        config = write_config(tmp_path / "g.toml", _config(up.url, rpm=100, usage=str(usage))
                              .replace(f'"anthropic:{up.url}#sonnet"',
                                       f'"anthropic:{down.url}#sonnet"'))
        traces = tmp_path / "traces.db"
        with Gateway(config, tmp_path, "--trace", str(traces), "--api-key", ADMIN) as gateway:
            for api in APIS:
                for stream in (False, True):
                    assert call(gateway.url, api, "local-big", stream=stream, key=TEAM).ok
            assert call(gateway.url, "messages", "claude-sonnet-4-5", key=OTHER).ok  # fell over
            assert call(gateway.url, "messages", "local-small", key=OTHER, stream=True).ok
            assert call(gateway.url, "messages", "claude-sonnet-4-5", key=TEAM).status == 403
            time.sleep(0.5)
            own = httpx2.get(gateway.url + "/usage", headers={"x-api-key": TEAM},
                             trust_env=False).json()["usage"]
            everyone = httpx2.get(gateway.url + "/usage", headers={"x-api-key": ADMIN},
                                  trust_env=False).json()["usage"]
            anonymous = httpx2.get(gateway.url + "/usage", trust_env=False)
        log = gateway.text()
    assert anonymous.status_code == 401
    assert {(u["key"], u["model"]) for u in own} == {("team-a", "local-big")}
    rows = {(u["key"], u["model"], u["route"]): u for u in everyone}
    assert set(rows) == {("team-a", "local-big", "local-big"),
                         ("team-b", "claude-sonnet-4-5", "local-small"),
                         ("team-b", "local-small", "local-small")}
    big = rows[("team-a", "local-big", "local-big")]
    assert big["requests"] == 8 and big["failed"] == 0
    assert big["input_tokens"] > 0 and big["output_tokens"] == 8 * 3
    assert big["cache_read_tokens"] == 8 * 2  # the upstream's cache reads, counted
    printed = subprocess.run([sys.executable, "-m", "tooluse.cli", "logs", "--usage",
                              "--usage-store", str(usage)], capture_output=True, text=True,
                             timeout=60, check=True).stdout
    assert printed.splitlines()[0].split()[:4] == ["KEY", "MODEL", "ROUTE", "REQUESTS"]
    assert any(line.split()[:4] == ["team-a", "local-big", "local-big", "8"]
               for line in printed.splitlines())
    check = subprocess.run([sys.executable, "-m", "tooluse.cli", "serve", "--config",
                            str(config), "--check"], capture_output=True, text=True,
                           timeout=60, env={**__import__("os").environ, "TEAM_B_KEY": OTHER},
                           check=True).stdout
    for secret in (TEAM, OTHER):
        assert secret not in log and secret not in printed and secret not in check
        for path in tmp_path.rglob("*"):
            if path.is_file() and path.name != "g.toml":
                assert secret.encode() not in path.read_bytes(), path


def test_limits_hold_across_replicas_on_postgresql(tmp_path: Path, pg_url: str) -> None:
    """Two gateways (replicas) on one PostgreSQL usage store: rpm = 4 for both together."""
    with fake_upstreams(tmp_path, "up") as (up,):
        config = write_config(tmp_path / "g.toml", _config(up.url, rpm=4, usage=pg_url))
        with ServerThread(create_app(config=config)) as one, \
                ServerThread(create_app(config=config)) as two:
            statuses = [call(srv.url, "messages", "local-big", key=TEAM).status
                        for srv in (one, two) * 5]
            time.sleep(0.5)
            rows = httpx2.get(one.url + "/usage", headers={"x-api-key": TEAM},
                              trust_env=False).json()["usage"]
    assert statuses.count(200) == 4 and statuses.count(429) == 6, statuses
    assert statuses[:4] == [200] * 4
    assert [(r["key"], r["requests"]) for r in rows] == [("team-a", 4)]


def test_count_tokens_follows_the_route_and_the_keys_models(tmp_path: Path) -> None:
    with fake_upstreams(tmp_path, "up") as (up,):
        config = write_config(tmp_path / "g.toml", _config(up.url))
        with ServerThread(create_app(config=config,
                                     usage_store=str(tmp_path / "usage.db"))) as srv:
            def count(model: str, key: str) -> httpx2.Response:
                return httpx2.post(srv.url + "/v1/messages/count_tokens", json={
                    "model": model, "messages": [{"role": "user", "content": "word " * 40}]},
                    headers={"x-api-key": key, "anthropic-version": "2023-06-01"},
                    trust_env=False)

            small = count("local-small", TEAM)  # an openai: route: the gateway estimates
            refused = count("claude-sonnet-4-5", TEAM)
            missing = count("gpt-9", OTHER)
        assert small.status_code == 200 and small.json()["input_tokens"] > 40
        assert small.headers["x-tooluse-token-count"] == "estimate"
        assert refused.status_code == 403
        assert refused.json()["error"]["type"] == "permission_error"
        assert missing.status_code == 404
        assert up.log() == []  # counting is not a model request
