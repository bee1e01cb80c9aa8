"""Usage and key limits on PostgreSQL, for gateway replicas that share them
(``usage_store = "postgresql://..."`` in the config; the ``[postgres]`` extra).

The tables are the SQLite store's (:mod:`.usage_store`), created when missing. An admission
takes a transaction-scoped advisory lock on its key, so two replicas cannot both take a
key's last place in a minute; usage rows are added with upserts that sum.
"""

from __future__ import annotations

from typing import Any

from .postgres import open_pool
from .usage import (
    SCHEMA,
    UPSERT_MINUTE,
    UPSERT_USAGE,
    USAGE_COLUMNS,
    UsageRecord,
    UsageStore,
    usage_row,
)

__all__ = ["PostgresUsageStore"]


def _v1(db: Any) -> None:
    """The schema before versions: the SQLite store's tables, in PostgreSQL's types."""
    for statement in SCHEMA:
        db.execute(statement.replace(" REAL ", " DOUBLE PRECISION ").replace("INTEGER", "BIGINT"))


#: The store's schema, one step a version (:mod:`tooluse._migrations`): append, never edit.
MIGRATIONS = (_v1,)


class PostgresUsageStore(UsageStore):
    """Usage and limits in the PostgreSQL database at ``url``. Raises :class:`OSError`
    naming the database when it cannot be reached."""

    def __init__(self, url: str, *, pool_size: int = 4, connect_timeout: float = 10.0) -> None:
        super().__init__()
        self.url = url
        self._pool = open_pool(url, what="usage store", version_of="usage",
                               migrations=MIGRATIONS, pool_size=pool_size,
                               connect_timeout=connect_timeout)

    def _admit(self, key: str, minute: int, elapsed: float, rpm: int | None,
               tpm: int | None) -> tuple[float, str] | None:
        with self._pool.connection() as db, db.transaction():
            db.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (key,))
            rows = db.execute("SELECT minute, requests, tokens FROM usage_minutes "
                              "WHERE key = %s AND minute >= %s", (key, minute - 1)).fetchall()
            refused = self.decide({int(m): (int(r), int(t)) for m, r, t in rows}, minute,
                                  elapsed, rpm, tpm)
            if refused is None:
                db.execute(UPSERT_MINUTE.format(p="%s"), (key, minute, 1, 0))
                db.execute("DELETE FROM usage_minutes WHERE key = %s AND minute < %s",
                           (key, minute - 1))
        return refused

    def _store(self, records: list[UsageRecord]) -> None:
        with self._pool.connection() as db, db.transaction(), db.cursor() as cursor:
            cursor.executemany(UPSERT_USAGE.format(p="%s"), [usage_row(r) for r in records])
            minutes = [(r.key, int(r.at // 60), 0, r.tokens) for r in records if r.tokens]
            if minutes:
                cursor.executemany(UPSERT_MINUTE.format(p="%s"), minutes)

    def totals(self, key: str | None = None) -> list[dict[str, Any]]:
        sql = f"SELECT {', '.join(USAGE_COLUMNS)} FROM usage"
        args: tuple[Any, ...] = ()
        if key is not None:
            sql += " WHERE key = %s"
            args = (key,)
        with self._pool.connection() as db:
            rows = db.execute(sql + " ORDER BY key, model, route", args).fetchall()
        return [dict(zip(USAGE_COLUMNS, row, strict=True)) for row in rows]

    def _close(self) -> None:
        self._pool.close()
