"""The Responses store on a real PostgreSQL server, shared by two gateway replicas: a
response one answered is chained on, read and deleted through the other.

The server is Debian's PostgreSQL (``postgresql`` package: initdb, pg_ctl), started in a
temporary directory on a free loopback port; without it the tests skip and say how to get it.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest

from tooluse.backends.scripted import from_spec
from tooluse.server import ServerThread, create_app

pytest.importorskip("psycopg", reason="the [postgres] extra (psycopg) is in the [test] extra")

from tooluse.server.stores import open_response_store
from tooluse.server.stores.responses_pg import PostgresResponseStore

WEATHER = {"type": "function", "name": "get_weather", "description": "Weather in a city.",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                          "required": ["city"], "additionalProperties": False}}
LOOP = '[{"call": "get_weather", "input": {"city": "Paris"}}, "It is 18 C in Paris."]'


def _pg_bin() -> Path | None:
    for candidate in sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True):
        if (candidate / "initdb").exists() and (candidate / "pg_ctl").exists():
            return candidate
    found = shutil.which("initdb")
    return Path(found).parent if found and shutil.which("pg_ctl") else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def pg_url() -> Iterator[str]:
    bindir = _pg_bin()
    if bindir is None:
        pytest.skip("no PostgreSQL server here: `apt-get install postgresql` (Debian) gives "
                    "initdb and pg_ctl, which this test starts in a temporary directory")
    root = Path(tempfile.mkdtemp(prefix="tooluse-pg-"))
    data, sock = root / "data", root / "sock"
    sock.mkdir()
    as_user: list[str] = []
    if os.geteuid() == 0:  # PostgreSQL refuses to run as root: run it as its own user
        if shutil.which("runuser") is None:
            pytest.skip("running as root without runuser: cannot start PostgreSQL")
        shutil.chown(root, "postgres")
        shutil.chown(sock, "postgres")
        as_user = ["runuser", "-u", "postgres", "--"]
    port = _free_port()

    def run(*args: str) -> None:
        subprocess.run([*as_user, *args], check=True, capture_output=True, timeout=120)

    run(str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", "tooluse", "-E", "UTF8")
    run(str(bindir / "pg_ctl"), "-D", str(data), "-w", "-l", str(root / "log"), "-o",
        f"-p {port} -k {sock} -c listen_addresses=127.0.0.1 -c fsync=off", "start")
    try:
        yield f"postgresql://tooluse@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run([*as_user, str(bindir / "pg_ctl"), "-D", str(data), "-m", "fast",
                        "stop"], capture_output=True, timeout=60, check=False)
        shutil.rmtree(root, ignore_errors=True)


def client(url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=url + "/v1", api_key="k", max_retries=0, timeout=20)


def test_two_replicas_share_their_responses(pg_url: str) -> None:
    one = open_response_store(pg_url)
    two = open_response_store(pg_url)
    assert isinstance(one, PostgresResponseStore)
    backend_b = from_spec(LOOP)
    with ServerThread(create_app(from_spec(LOOP), responses_store=one)) as a, \
            ServerThread(create_app(backend_b, responses_store=two)) as b:
        first = client(a.url).responses.create(model="m", input="Weather?", tools=[WEATHER])
        call = first.output[0]
        assert call.type == "function_call"
        # b never saw the first request: it chains on what a stored
        second = client(b.url).responses.create(
            model="m", previous_response_id=first.id, tools=[WEATHER],
            input=[{"type": "function_call_output", "call_id": call.call_id, "output": "18 C"}])
        assert second.output_text == "It is 18 C in Paris."
        assert backend_b.requests[-1].messages[0].text() == "Weather?"
        # GET on b answers a's response as a answered it; input_items too
        fetched = client(b.url).responses.retrieve(first.id)
        assert fetched.model_dump() == first.model_dump()
        items = client(b.url).responses.input_items.list(second.id)
        assert [i.type for i in items.data] == ["function_call_output"]
        # deleted on a, gone on b
        client(a.url).responses.delete(first.id)
        with pytest.raises(openai.NotFoundError):
            client(b.url).responses.retrieve(first.id)
    one.close()
    two.close()


def test_store_keeps_bodies_byte_for_byte_and_is_bounded(pg_url: str) -> None:
    store = PostgresResponseStore(pg_url, max_responses=3, table="bounded_test")
    other = PostgresResponseStore(pg_url, max_responses=3, table="bounded_test")
    try:
        body: dict[str, Any] = {"z": 1, "a": {"y": [1, 2], "b": "\ud83d"}, "id": "resp_0"}
        store.put("resp_0", body, [{"id": "i1"}], {"m": []})
        got = other.get("resp_0")
        assert got is not None and list(got.body) == ["z", "a", "id"] and got.body == body
        for n in range(1, 5):  # the bound holds across both instances (two replicas)
            (store if n % 2 else other).put(f"resp_{n}", {"id": f"resp_{n}"}, [], {})
        assert len(store) == 3 and store.get("resp_1") is None and other.get("resp_4")
        assert other.delete("resp_4") and not store.delete("resp_4")
    finally:
        store.close()
        other.close()


def test_unreachable_database_is_a_one_line_error() -> None:
    port = _free_port()  # nothing listens there
    with pytest.raises(OSError, match=r"cannot open the responses store "
                                      r"postgresql://u:\*\*\*@127\.0\.0\.1"):
        PostgresResponseStore(f"postgresql://u:secret@127.0.0.1:{port}/db", connect_timeout=2)
    with pytest.raises(ValueError, match="not a plain SQL table name"):
        PostgresResponseStore("postgresql://x@127.0.0.1/db", table="a; DROP TABLE b")


def test_serve_with_an_unreachable_store_says_so_in_one_line() -> None:
    port = _free_port()
    out = subprocess.run(
        [sys.executable, "-m", "tooluse.cli", "serve", "--backend", "scripted:hi", "--port", "0", "--responses-store",
         f"postgresql://u:secret@127.0.0.1:{port}/db"],
        capture_output=True, text=True, timeout=60, check=False)
    assert out.returncode == 2
    assert "cannot open the responses store postgresql://u:***@127.0.0.1" in out.stderr
    assert "secret" not in out.stderr and "Traceback" not in out.stderr


def test_the_bound_holds_exactly_through_gaps_and_a_second_replica(pg_url: str) -> None:
    """The count a trigger keeps beside the table says what count(*) would, whichever
    replica wrote, and a deleted id leaves room rather than an early eviction."""
    one = PostgresResponseStore(pg_url, max_responses=3, table="bound_test")
    two = PostgresResponseStore(pg_url, max_responses=3, table="bound_test")
    try:
        for k in range(5):
            (one if k % 2 else two).put(f"b{k}", {"k": k}, [], {})
        assert len(one) == 3 and one.get("b1") is None and two.get("b2") is not None
        assert two.delete("b3")
        one.put("b5", {}, [], {})
        assert len(two) == 3 and two.get("b2") is not None
        one.put("b6", {}, [], {})
        assert two.get("b2") is None and len(one) == 3
    finally:
        one.close()
        two.close()
