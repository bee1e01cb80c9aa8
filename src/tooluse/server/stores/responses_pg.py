"""The Responses API's store on PostgreSQL, for gateway replicas that share their responses.

``tooluse serve --responses-store postgresql://user@host/db`` on each replica: a response one
replica answered is found by ``previous_response_id``, ``GET`` or ``DELETE`` on any other, so
the replicas can sit behind any load balancer (no sticky sessions).

Why PostgreSQL with psycopg 3 (the ``[postgres]`` extra): the database most deployments
already run and back up, and psycopg is its maintained driver; ``psycopg_pool`` gives each
worker thread its own connection. The table is the SQLite store's (one row per response,
JSON as text columns, so ``GET`` answers the body byte for byte as it was stored: ``jsonb``
would reorder its keys), created when missing; the bound by count holds across replicas: each
``put`` deletes, in its own transaction, the rows older than the newest ``max_responses``,
knowing how many there are from a count a trigger keeps beside the table
(:mod:`tooluse._bounded_table`), so a write costs the same at 10 rows as at 10,000. The
count's row is locked from a write's insert to its commit: concurrent writes queue there for
that long (a few statements), not for a walk over the table.
"""

from __future__ import annotations

import re
import time
from typing import Any

from ..._bounded_table import postgres_setup, prune
from ..._migrations import Migration
from .postgres import open_pool
from .responses import (
    DEFAULT_MAX_RESPONSES,
    ResponseStore,
    StoredResponse,
    check_max_responses,
    dumps,
    stored_from_row,
)

__all__ = ["PostgresResponseStore"]

_TABLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")


class PostgresResponseStore(ResponseStore):
    """Responses by id in the PostgreSQL database at ``url``, table ``table``.

    ``pool_size``: connections at most (one per thread that uses the store at once).
    Raises :class:`OSError` naming the database when it cannot be reached.
    """

    def __init__(self, url: str, *, max_responses: int = DEFAULT_MAX_RESPONSES,
                 table: str = "tooluse_responses", pool_size: int = 8,
                 connect_timeout: float = 10.0) -> None:
        self.max_responses = check_max_responses(max_responses)
        if not _TABLE.match(table):
            raise ValueError(f"not a plain SQL table name: {table!r}")
        self.url = url
        self.table = table
        self._pool = open_pool(url, what="responses store", version_of=table,
                               migrations=migrations(table),
                               setup=lambda db: postgres_setup(db, table),
                               pool_size=pool_size, connect_timeout=connect_timeout)

    def put(self, response_id: str, body: dict[str, Any], input_items: list[dict[str, Any]],
            context: dict[str, Any]) -> None:
        row = (response_id, time.time(), dumps(body), dumps(input_items), dumps(context))
        with self._pool.connection() as db, db.transaction():
            db.execute(f"DELETE FROM {self.table} WHERE id = %s", (response_id,))
            db.execute(f"INSERT INTO {self.table} (id, created_at, body, input_items, context) "
                       "VALUES (%s, %s, %s, %s, %s)", row)
            prune(db, self.table, self.max_responses, param="%s")

    def get(self, response_id: str) -> StoredResponse | None:
        with self._pool.connection() as db:
            row = db.execute(f"SELECT id, created_at, body, input_items, context FROM "
                             f"{self.table} WHERE id = %s", (response_id,)).fetchone()
        return None if row is None else stored_from_row(tuple(row))

    def delete(self, response_id: str) -> bool:
        with self._pool.connection() as db:
            cursor = db.execute(f"DELETE FROM {self.table} WHERE id = %s", (response_id,))
            return cursor.rowcount > 0

    def __len__(self) -> int:
        with self._pool.connection() as db:
            row = db.execute(f"SELECT COUNT(*) FROM {self.table}").fetchone()
        return int(row[0]) if row else 0

    def close(self) -> None:
        self._pool.close()


def migrations(table: str) -> tuple[Migration, ...]:
    """The store's schema in ``table``, one step a version (:mod:`tooluse._migrations`):
    append, never edit."""

    def v1(db: Any) -> None:  # the schema before versions
        db.execute(f"CREATE TABLE IF NOT EXISTS {table} ("
                   "seq BIGSERIAL PRIMARY KEY, id TEXT NOT NULL UNIQUE, "
                   "created_at DOUBLE PRECISION NOT NULL, body TEXT NOT NULL, "
                   "input_items TEXT NOT NULL, context TEXT NOT NULL)")

    return (v1,)
