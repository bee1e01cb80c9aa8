"""Where the Responses API keeps its responses: an embedded SQLite store by default, or
PostgreSQL for replicas that share one (:mod:`.responses_pg`).

``store: true`` (the API's default) keeps each response so that a later request can chain
on it with ``previous_response_id`` and ``GET``/``DELETE /v1/responses/{id}`` and
``GET /v1/responses/{id}/input_items`` can read it. One row per response holds:

- ``body``: the response object exactly as it was answered (what ``GET`` returns);
- ``input_items``: the request's input items, each with an id (``input_items`` lists them);
- ``context``: the conversation the next response chains on, in neutral terms (the
  previous context, this request's input and this response's output; ``instructions`` are
  not carried over, as the API documents).

Why SQLite (stdlib ``sqlite3``): on disk, so a chain survives a gateway restart (not
necessarily a crash of the machine: commits do not wait on the disk); one file, no server to
run; safe for several processes on one machine (WAL). The store is bounded by
count: past ``max_responses`` the oldest rows are deleted, so it never grows without bound
(a chain whose start was evicted answers 404 for that id, as an expired response does), and
a write costs the same at 10 rows as at 10,000 (the count is kept beside the table:
:mod:`tooluse._bounded_table`, which the trace store uses too).

One connection, used from worker threads (the gateway calls the store through
``anyio.to_thread``), behind a lock held only for a few short statements (the JSON is
written and read outside it), so streams storing their responses at once wait on each
other for tens of microseconds, not for a walk over the store.

:class:`ResponseStore` is what the gateway needs of a store;
:func:`tooluse.server.stores.open_response_store` picks one from
``tooluse serve --responses-store``: a ``postgresql://`` URL or a file path.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from ..._bounded_table import prune, sqlite_setup
from ..._migrations import SchemaVersionError, migrate_sqlite
from .sqlite import connect_sqlite, sqlite_file

__all__ = [
    "DEFAULT_MAX_RESPONSES",
    "ResponseStore",
    "SqliteResponseStore",
    "StoredResponse",
    "check_max_responses",
    "default_store_path",
]

#: Responses kept before the oldest are deleted.
DEFAULT_MAX_RESPONSES: Final = 10_000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    created_at REAL NOT NULL,
    body TEXT NOT NULL,
    input_items TEXT NOT NULL,
    context TEXT NOT NULL
)
"""


def _v1_responses(db: sqlite3.Connection) -> None:
    """The schema before versions."""
    db.execute(_SCHEMA)


#: The SQLite store's schema, one step a version (:mod:`tooluse._migrations`): append, never
#: edit. The PostgreSQL store has its own list (:mod:`.response_store_pg`).
MIGRATIONS = (_v1_responses,)


def default_store_path() -> Path:
    """``$XDG_CACHE_HOME/tooluse/responses.sqlite3`` (``~/.cache`` without it)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "tooluse" / "responses.sqlite3"


@dataclass(frozen=True)
class StoredResponse:
    id: str
    created_at: float
    body: dict[str, Any]
    input_items: list[dict[str, Any]]
    context: dict[str, Any]


class ResponseStore(ABC):
    """What ``/v1/responses`` needs of a store: responses by id, bounded by count (past
    ``max_responses`` the oldest go first). Calls may come from several threads at once."""

    max_responses: int

    @abstractmethod
    def put(self, response_id: str, body: dict[str, Any], input_items: list[dict[str, Any]],
            context: dict[str, Any]) -> None:
        """Keep a response (replacing one of the same id), then drop the oldest past the bound."""

    @abstractmethod
    def get(self, response_id: str) -> StoredResponse | None:
        """The response, or None when there is none (never stored, deleted or evicted)."""

    @abstractmethod
    def delete(self, response_id: str) -> bool:
        """Whether there was such a response."""

    @abstractmethod
    def __len__(self) -> int:
        """How many responses are kept."""

    @abstractmethod
    def close(self) -> None:
        """Release the connection(s)."""


def check_max_responses(max_responses: object) -> int:
    if not isinstance(max_responses, int) or isinstance(max_responses, bool) or max_responses < 1:
        raise ValueError(f"max_responses must be a positive integer, not {max_responses!r}")
    return max_responses


class SqliteResponseStore(ResponseStore):
    """Responses by id in SQLite at ``path`` (``":memory:"``: in memory, gone on exit)."""

    def __init__(self, path: str | os.PathLike[str] = ":memory:", *,
                 max_responses: int = DEFAULT_MAX_RESPONSES) -> None:
        self.max_responses = check_max_responses(max_responses)
        self.path = sqlite_file(path)
        self._lock = threading.Lock()
        try:
            # WAL without an fsync per commit (as the trace store): a crash of the machine
            # may lose the last responses, never corrupt the file; a commit that waited on
            # the disk cost each stored stream (docs/benchmarks/code.md)
            self._db = connect_sqlite(self.path, busy_timeout_ms=5000, synchronous="NORMAL")
            migrate_sqlite(self._db, "responses store", MIGRATIONS, table="responses",
                           where=self.path)
            sqlite_setup(self._db, "responses")
        except (sqlite3.Error, SchemaVersionError) as exc:  # not a database, unwritable...: say which file
            raise OSError(f"cannot open the responses store {self.path}: {exc}") from None

    def put(self, response_id: str, body: dict[str, Any], input_items: list[dict[str, Any]],
            context: dict[str, Any]) -> None:
        row = (response_id, time.time(), dumps(body), dumps(input_items), dumps(context))
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.execute("DELETE FROM responses WHERE id = ?", (response_id,))
                self._db.execute(
                    "INSERT INTO responses (id, created_at, body, input_items, context) "
                    "VALUES (?, ?, ?, ?, ?)", row)
                prune(self._db, "responses", self.max_responses)
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def get(self, response_id: str) -> StoredResponse | None:
        with self._lock:
            row = self._db.execute(
                "SELECT id, created_at, body, input_items, context FROM responses WHERE id = ?",
                (response_id,)).fetchone()
        if row is None:
            return None
        return stored_from_row(row)

    def delete(self, response_id: str) -> bool:
        with self._lock:
            cursor = self._db.execute("DELETE FROM responses WHERE id = ?", (response_id,))
        return cursor.rowcount > 0

    def __len__(self) -> int:
        with self._lock:
            (count,) = self._db.execute("SELECT COUNT(*) FROM responses").fetchone()
        return int(count)

    def close(self) -> None:
        with self._lock:
            self._db.close()


def stored_from_row(row: tuple[Any, ...]) -> StoredResponse:
    """A row ``(id, created_at, body, input_items, context)`` with JSON text columns."""
    return StoredResponse(id=row[0], created_at=float(row[1]), body=json.loads(row[2]),
                          input_items=json.loads(row[3]), context=json.loads(row[4]))


def dumps(value: Any) -> str:
    """Compact JSON with ASCII escapes: a lone surrogate an upstream sent (see
    server/http/encoding.py) cannot be stored as UTF-8 text, its escape can."""
    return json.dumps(value, ensure_ascii=True, separators=(",", ":"))
