"""Usage per API key and model, and the per-minute limits checked against it: SQLite by
default, PostgreSQL for replicas (:mod:`.usage_store_pg`).

What is kept, per key (its ``name``, never the key), model (the name the client asked
for) and route (the ``[[models]]`` entry that answered): requests, failed ones, tokens in
and out, cache reads and writes, first and last time. ``tooluse logs --usage`` and
``GET /usage`` show it.

The limits (a key's ``rpm`` and ``tpm``) are counted per key and minute in the same
database, so they hold across ``tooluse serve --workers`` (one SQLite file) and replicas
(one PostgreSQL database). A minute's count is a *sliding window*: the previous minute's
count weighted by the part of it still inside the last 60 seconds, plus this minute's
(the estimate Cloudflare and most gateways use); a request is admitted while the window
has room, and the admission counts it in the same transaction, so two workers cannot both
take the last place. A refused request is not counted, and gets how many seconds until
the window would let it in (its ``Retry-After``). Tokens are known once an answer ends:
they count from then on, so ``tpm`` refuses the requests after the one that went over.

Usage is written by one writer thread per store (:class:`~tooluse._writer.BatchWriter`: a
request does not wait for it); the admission is written at once.
"""

from __future__ import annotations

import math
import os
import sqlite3
import threading
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from ..._migrations import SchemaVersionError, migrate_sqlite
from ..._writer import BatchWriter
from .responses import default_store_path
from .sqlite import connect_sqlite, sqlite_file

__all__ = ["SqliteUsageStore", "UsageRecord", "UsageStore", "default_usage_path", "window_wait"]

#: The columns of a usage row, in order (``totals()`` gives dicts with these keys).
USAGE_COLUMNS: Final = ("key", "model", "route", "requests", "failed", "input_tokens",
                        "output_tokens", "cache_read_tokens", "cache_write_tokens",
                        "first_at", "last_at")


def default_usage_path() -> Path:
    """``usage.sqlite3`` beside the Responses store's default file:
    ``$XDG_CACHE_HOME/tooluse/usage.sqlite3`` (``~/.cache`` without it)."""
    return default_store_path().with_name("usage.sqlite3")


@dataclass(frozen=True)
class UsageRecord:
    """One finished request of a key."""

    key: str
    model: str
    route: str
    failed: bool
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    at: float = 0.0

    @property
    def tokens(self) -> int:
        """What counts against ``tpm``: the whole prompt and the answer."""
        return (self.input_tokens + self.cache_read_tokens + self.cache_write_tokens
                + self.output_tokens)


def window_wait(previous: float, current: float, elapsed: float, limit: int) -> float | None:
    """Seconds until a sliding minute window with ``previous`` and ``current`` counts
    (``elapsed`` seconds into the current minute) has room for one more under ``limit``;
    None when it has room now."""
    def weighted(prev: float, cur: float, into: float) -> float:
        return prev * max(0.0, 1.0 - into / 60.0) + cur

    if weighted(previous, current, elapsed) + 1 <= limit:
        return None
    if current + 1 <= limit and previous > 0:
        # this minute: the previous one's weight falls until there is room
        into = 60.0 * (1.0 - (limit - 1 - current) / previous)
        if into < 60.0:
            return max(0.0, into - elapsed)
    # the next minute: this minute's count becomes the previous one and falls in turn
    if current <= limit - 1:
        return 60.0 - elapsed
    return (60.0 - elapsed) + 60.0 * (1.0 - (limit - 1) / current)


class UsageStore(ABC):
    """Usage and limits by key (see the module docstring). Calls may come from several
    threads at once."""

    def __init__(self) -> None:
        self._writer = BatchWriter(self._store, name="tooluse-usage", logger="tooluse.server")

    # -- limits -----------------------------------------------------------------------------
    def admit(self, key: str, rpm: int | None, tpm: int | None,
              now: float | None = None) -> tuple[float, str] | None:
        """Count a request of ``key`` if its limits have room (None), else leave it out and
        give ``(seconds to wait, the limit that refused it)``."""
        at = time.time() if now is None else now
        minute = int(at // 60)
        return self._admit(key, minute, at - minute * 60, rpm, tpm)

    @staticmethod
    def decide(counts: dict[int, tuple[int, int]], minute: int, elapsed: float,
               rpm: int | None, tpm: int | None) -> tuple[float, str] | None:
        """The admission's rule over the key's ``{minute: (requests, tokens)}`` counts."""
        prev_r, prev_t = counts.get(minute - 1, (0, 0))
        cur_r, cur_t = counts.get(minute, (0, 0))
        waits = []
        if rpm is not None:
            wait = window_wait(prev_r, cur_r, elapsed, rpm)
            if wait is not None:
                waits.append((wait, f"{rpm} requests per minute"))
        if tpm is not None:
            wait = window_wait(prev_t, cur_t, elapsed, tpm)
            if wait is not None:
                waits.append((wait, f"{tpm} tokens per minute"))
        if not waits:
            return None
        wait, which = max(waits)
        return max(1.0, math.ceil(wait)), which

    @abstractmethod
    def _admit(self, key: str, minute: int, elapsed: float, rpm: int | None,
               tpm: int | None) -> tuple[float, str] | None:
        """:meth:`decide` over the stored counts and, when admitted, the request counted,
        in one transaction."""

    # -- usage ------------------------------------------------------------------------------
    def record(self, record: UsageRecord) -> None:
        """Add a finished request's usage (written by the writer thread)."""
        self._writer.submit(record)

    @abstractmethod
    def _store(self, records: list[UsageRecord]) -> None:
        """Add ``records`` to the totals and their tokens to their minutes, in one
        transaction."""

    def flush(self, timeout: float | None = 10.0) -> bool:
        """Wait until every recorded request is stored; False if ``timeout`` ran out."""
        return self._writer.flush(timeout)

    @abstractmethod
    def totals(self, key: str | None = None) -> list[dict[str, Any]]:
        """Every (key, model, route) row (only ``key``'s when given), as dicts with
        :data:`USAGE_COLUMNS`, ordered by key, model, route."""

    def close(self) -> None:
        """Store what is pending, then release the database."""
        self._writer.close()
        self._close()

    @abstractmethod
    def _close(self) -> None: ...


SCHEMA = (
    """CREATE TABLE IF NOT EXISTS usage (
        key TEXT NOT NULL, model TEXT NOT NULL, route TEXT NOT NULL,
        requests INTEGER NOT NULL DEFAULT 0, failed INTEGER NOT NULL DEFAULT 0,
        input_tokens INTEGER NOT NULL DEFAULT 0, output_tokens INTEGER NOT NULL DEFAULT 0,
        cache_read_tokens INTEGER NOT NULL DEFAULT 0,
        cache_write_tokens INTEGER NOT NULL DEFAULT 0,
        first_at REAL NOT NULL, last_at REAL NOT NULL,
        PRIMARY KEY (key, model, route))""",
    """CREATE TABLE IF NOT EXISTS usage_minutes (
        key TEXT NOT NULL, minute INTEGER NOT NULL,
        requests INTEGER NOT NULL DEFAULT 0, tokens INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (key, minute))""",
)


def _v1_usage(db: sqlite3.Connection) -> None:
    """The schema before versions."""
    for statement in SCHEMA:
        db.execute(statement)


#: The SQLite store's schema, one step a version (:mod:`tooluse._migrations`): append, never
#: edit. The PostgreSQL store has its own list (:mod:`.usage_store_pg`).
MIGRATIONS = (_v1_usage,)

#: Adds one record to the totals (SQLite and PostgreSQL both read this upsert).
UPSERT_USAGE: Final = (
    "INSERT INTO usage (key, model, route, requests, failed, input_tokens, output_tokens, "
    "cache_read_tokens, cache_write_tokens, first_at, last_at) "
    "VALUES ({p}, {p}, {p}, 1, {p}, {p}, {p}, {p}, {p}, {p}, {p}) "
    "ON CONFLICT (key, model, route) DO UPDATE SET requests = usage.requests + 1, "
    "failed = usage.failed + excluded.failed, "
    "input_tokens = usage.input_tokens + excluded.input_tokens, "
    "output_tokens = usage.output_tokens + excluded.output_tokens, "
    "cache_read_tokens = usage.cache_read_tokens + excluded.cache_read_tokens, "
    "cache_write_tokens = usage.cache_write_tokens + excluded.cache_write_tokens, "
    "last_at = excluded.last_at")
#: Adds tokens (or a request) to a key's minute.
UPSERT_MINUTE: Final = (
    "INSERT INTO usage_minutes (key, minute, requests, tokens) VALUES ({p}, {p}, {p}, {p}) "
    "ON CONFLICT (key, minute) DO UPDATE SET requests = usage_minutes.requests + "
    "excluded.requests, tokens = usage_minutes.tokens + excluded.tokens")


def usage_row(record: UsageRecord) -> tuple[Any, ...]:
    return (record.key, record.model, record.route, int(record.failed), record.input_tokens,
            record.output_tokens, record.cache_read_tokens, record.cache_write_tokens,
            record.at, record.at)


class SqliteUsageStore(UsageStore):
    """Usage and limits in the SQLite file ``path`` (``":memory:"``: this process only),
    shared by the processes that open it (WAL)."""

    def __init__(self, path: str | os.PathLike[str] = ":memory:") -> None:
        super().__init__()
        self.path = sqlite_file(path)
        self._lock = threading.Lock()
        try:
            self._db = connect_sqlite(self.path, busy_timeout_ms=10000)
            migrate_sqlite(self._db, "usage store", MIGRATIONS, table="usage",
                           where=self.path)
        except (sqlite3.Error, SchemaVersionError) as exc:
            raise OSError(f"cannot open the usage store {self.path}: {exc}") from None

    def _transaction(self, work: Any) -> Any:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                result = work(self._db)
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        return result

    def _admit(self, key: str, minute: int, elapsed: float, rpm: int | None,
               tpm: int | None) -> tuple[float, str] | None:
        def work(db: sqlite3.Connection) -> tuple[float, str] | None:
            rows = db.execute("SELECT minute, requests, tokens FROM usage_minutes "
                              "WHERE key = ? AND minute >= ?", (key, minute - 1)).fetchall()
            refused = self.decide({m: (r, t) for m, r, t in rows}, minute, elapsed, rpm, tpm)
            if refused is None:
                db.execute(UPSERT_MINUTE.format(p="?"), (key, minute, 1, 0))
                db.execute("DELETE FROM usage_minutes WHERE key = ? AND minute < ?",
                           (key, minute - 1))
            return refused

        result: tuple[float, str] | None = self._transaction(work)
        return result

    def _store(self, records: list[UsageRecord]) -> None:
        def work(db: sqlite3.Connection) -> None:
            db.executemany(UPSERT_USAGE.format(p="?"), [usage_row(r) for r in records])
            db.executemany(UPSERT_MINUTE.format(p="?"),
                           [(r.key, int(r.at // 60), 0, r.tokens) for r in records if r.tokens])

        self._transaction(work)

    def totals(self, key: str | None = None) -> list[dict[str, Any]]:
        sql = f"SELECT {', '.join(USAGE_COLUMNS)} FROM usage"
        args: tuple[Any, ...] = ()
        if key is not None:
            sql += " WHERE key = ?"
            args = (key,)
        with self._lock:
            rows = self._db.execute(sql + " ORDER BY key, model, route", args).fetchall()
        return [dict(zip(USAGE_COLUMNS, row, strict=True)) for row in rows]

    def _close(self) -> None:
        with self._lock:
            self._db.close()
