"""Versioned store schemas (tooluse._migrations): the stores written by the release before
versions existed (tests/fixtures/stores_v0, made by its make.py with that release's code) open
with today's code, every row there; a newer schema or another store's file is refused with a
clear error, unchanged; a failing migration leaves the file at its version.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tooluse._migrations import migrate_sqlite
from tooluse.server.stores.responses import SqliteResponseStore
from tooluse.server.stores.usage import SqliteUsageStore
from tooluse.trace.store import TraceStore

FIXTURES = Path(__file__).parents[2] / "fixtures" / "stores_v0"
TIME = 1_790_000_000.0  # make.py's


def _copy(name: str, tmp_path: Path) -> Path:
    target = tmp_path / name
    shutil.copy(FIXTURES / name, target)
    return target


def _version(path: Path) -> int:
    with sqlite3.connect(path) as db:
        return int(db.execute("PRAGMA user_version").fetchone()[0])


def _check_responses(store: Any) -> None:
    assert len(store) == 3
    for n in range(3):
        got = store.get(f"resp_{n}")
        assert got is not None
        assert got.body["output"][0]["content"][0]["text"] == f"Réponse {n} ☀"
        assert got.input_items == [{"type": "message", "role": "user", "content": f"question {n}"}]
        assert got.context == {"model": "m", "n": n}


def _check_usage(store: Any) -> None:
    totals = {row["key"]: row for row in store.totals()}
    assert totals["key-a"]["requests"] == 2 and totals["key-a"]["input_tokens"] == 21
    assert totals["key-a"]["cache_read_tokens"] == 1
    assert totals["key-b"]["failed"] == 1 and totals["key-b"]["output_tokens"] == 5
    assert totals["key-a"]["first_at"] == TIME and totals["key-a"]["last_at"] == TIME + 60


def test_a_trace_store_of_the_release_before_opens_with_every_trace(tmp_path: Path) -> None:
    path = _copy("traces.db", tmp_path)
    assert _version(path) == 0
    store = TraceStore(path)
    assert len(store) == 3
    listed = store.list(10)
    assert len(listed) == 3
    for row in listed:
        full = store.get(row["id"])
        assert full is not None
        text = json.dumps(full, ensure_ascii=False)
        assert any(f"question {n} ☀" in text and f"answer {n}" in text for n in range(3))
    assert len(store.list(10, search="question 1 ☀")) == 1
    store.close()
    assert _version(path) == 1
    again = TraceStore(path)  # at its version: nothing runs, nothing lost
    assert len(again) == 3
    again.close()


def test_a_responses_store_of_the_release_before_opens_with_every_response(
        tmp_path: Path) -> None:
    path = _copy("responses.sqlite3", tmp_path)
    store = SqliteResponseStore(path)
    _check_responses(store)
    store.put("resp_new", {"id": "resp_new"}, [], {})
    assert len(store) == 4
    store.close()
    assert _version(path) == 1


def test_a_usage_store_of_the_release_before_opens_with_its_totals(tmp_path: Path) -> None:
    path = _copy("usage.sqlite3", tmp_path)
    store = SqliteUsageStore(path)
    _check_usage(store)
    store.close()
    assert _version(path) == 1


def test_a_newer_schema_is_refused_and_left_as_it_is(tmp_path: Path) -> None:
    path = _copy("responses.sqlite3", tmp_path)
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA user_version = 7")
    before = path.read_bytes()
    with pytest.raises(OSError, match=r"schema version 7, written by a newer tooluse; this "
                                      r"one knows versions up to 1"):
        SqliteResponseStore(path)
    assert path.read_bytes() == before
    with pytest.raises(ValueError, match="newer tooluse"):
        TraceStore(_bump(_copy("traces.db", tmp_path), 2))


def _bump(path: Path, version: int) -> Path:
    with sqlite3.connect(path) as db:
        db.execute(f"PRAGMA user_version = {version}")
    return path


def test_another_stores_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite3"
    SqliteUsageStore(path).close()
    with pytest.raises(OSError, match="another store's tables .* give the responses store a "
                                      "file of its own"):
        SqliteResponseStore(path)


def test_a_failing_migration_leaves_the_file_at_its_version(tmp_path: Path) -> None:
    db = sqlite3.connect(tmp_path / "s.sqlite3", isolation_level=None)

    def v1(db: sqlite3.Connection) -> None:
        db.execute("CREATE TABLE t (a TEXT)")

    def v2(db: sqlite3.Connection) -> None:
        db.execute("ALTER TABLE t ADD COLUMN b TEXT")
        raise RuntimeError("half way")

    steps: list[Callable[[Any], None]] = [v1]
    assert migrate_sqlite(db, "test store", steps, table="t", where="s") == 1
    db.execute("INSERT INTO t VALUES ('kept')")
    with pytest.raises(RuntimeError, match="half way"):
        migrate_sqlite(db, "test store", [v1, v2], table="t", where="s")
    assert db.execute("PRAGMA user_version").fetchone()[0] == 1
    assert [r[1] for r in db.execute("PRAGMA table_info(t)")] == ["a"]  # no column b
    assert db.execute("SELECT a FROM t").fetchall() == [("kept",)]


# -- PostgreSQL: the tables the release before wrote (its pg_dump), opened by today's code --

pytest.importorskip("psycopg", reason="the [postgres] extra (psycopg) is in the [test] extra")
from test_server_responses_postgres import pg_url  # noqa: E402,F401  (the server fixture)


def _load_dump(url: str) -> None:
    import psycopg
    # pg_dump's psql meta-commands (\restrict) are not SQL
    sql = "\n".join(line for line in (FIXTURES / "postgres.sql").read_text().splitlines()
                    if not line.startswith("\\"))
    with psycopg.connect(url, autocommit=True) as db:
        db.execute("DROP SCHEMA public CASCADE")
        db.execute("CREATE SCHEMA public")
        db.execute(sql.encode())
        db.execute("SET search_path TO public")  # the dump empties it for its session


def test_postgres_stores_of_the_release_before_open_with_every_row(pg_url: str) -> None:  # noqa: F811
    import psycopg

    from tooluse.server.stores.responses_pg import PostgresResponseStore
    from tooluse.server.stores.usage_pg import PostgresUsageStore
    _load_dump(pg_url)
    responses = PostgresResponseStore(pg_url)
    _check_responses(responses)
    responses.close()
    usage = PostgresUsageStore(pg_url)
    _check_usage(usage)
    usage.close()
    with psycopg.connect(pg_url) as db:
        versions = dict(db.execute("SELECT store, version FROM tooluse_schema").fetchall())
        assert versions == {"tooluse_responses": 1, "usage": 1}
        db.execute("UPDATE tooluse_schema SET version = 5 WHERE store = 'usage'")
        db.commit()
    with pytest.raises(OSError, match="schema version 5, written by a newer tooluse"):
        PostgresUsageStore(pg_url)
    again = PostgresResponseStore(pg_url)  # its own row: still opens
    _check_responses(again)
    again.close()
