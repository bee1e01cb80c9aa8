"""Where traces are kept: :class:`TraceStore`, one embedded SQLite database (stdlib
:mod:`sqlite3`), bounded by a count and a size, the oldest first out.

One row per trace: the columns a listing needs (time, source, API, model, tools, number of
calls, status, latency, tokens) and the trace itself as JSON (:func:`.serialize.trace_dict`).
``search`` finds a text anywhere in a trace (the prompt, the raw output, the bodies): it is
looked for as JSON writes it, so quotes and newlines match too.

The gateway never writes on the request's path: :meth:`TraceStore.submit` hands the trace
to one writer thread, which serialises and stores it after the answer has gone out
(:meth:`TraceStore.flush` waits for it). The runner stores with :meth:`TraceStore.add`.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .._bounded_table import prune, sqlite_setup
from .._migrations import SchemaVersionError, migrate_sqlite
from .._writer import BatchWriter
from .record import Trace
from .serialize import MAX_TEXT, trace_dict

__all__ = ["DEFAULT_MAX_BYTES", "DEFAULT_MAX_TRACES", "TraceStore", "default_path", "open_store"]

DEFAULT_MAX_TRACES = 1000
DEFAULT_MAX_BYTES = 100 * 1024 * 1024

_SCHEMA = """
CREATE TABLE IF NOT EXISTS traces (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    time REAL NOT NULL,
    source TEXT NOT NULL,
    api TEXT NOT NULL,
    model TEXT,
    tools TEXT NOT NULL,
    calls INTEGER NOT NULL,
    status TEXT NOT NULL,
    http_status INTEGER,
    latency_ms REAL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    size INTEGER NOT NULL,
    body TEXT NOT NULL
)
"""
_COLUMNS = ("id", "time", "source", "api", "model", "tools", "calls", "status", "http_status",
            "latency_ms", "input_tokens", "output_tokens", "size")


def _v1_traces(db: sqlite3.Connection) -> None:
    """The schema before versions: the table, and its (seq, size) index."""
    db.execute(_SCHEMA)
    # count(*), sum(size) and the oldest rows come from this small index on every write, not
    # from scanning the rows with their bodies (which grew the cost of a write with the
    # store's size)
    db.execute("CREATE INDEX IF NOT EXISTS traces_seq_size ON traces (seq, size)")


#: The trace store's schema, one step a version (:mod:`tooluse._migrations`): append, never edit.
MIGRATIONS = (_v1_traces,)


def default_path() -> Path:
    """``$TOOLUSE_TRACE_DB``, else ``~/.cache/tooluse/traces.db`` (``$XDG_CACHE_HOME``)."""
    explicit = os.environ.get("TOOLUSE_TRACE_DB")
    if explicit:
        return Path(explicit)
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "tooluse" / "traces.db"


class TraceStore:
    """Traces in the SQLite file ``path`` (``":memory:"``: for this process only).

    At most ``max_traces`` traces and ``max_bytes`` of stored JSON: past either, the oldest
    go. One text of a trace keeps at most ``max_text`` characters (cut visibly). Safe to
    use from several threads.
    """

    def __init__(self, path: str | os.PathLike[str] = ":memory:", *,
                 max_traces: int = DEFAULT_MAX_TRACES, max_bytes: int = DEFAULT_MAX_BYTES,
                 max_text: int = MAX_TEXT) -> None:
        if max_traces < 1:
            raise ValueError(f"max_traces must be at least 1, not {max_traces!r}")
        if max_bytes < 1:
            raise ValueError(f"max_bytes must be positive, not {max_bytes!r}")
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self.max_traces, self.max_bytes, self.max_text = max_traces, max_bytes, max_text
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(self.path, check_same_thread=False)
            if self.path != ":memory:":
                # WAL without an fsync per commit: a crash may lose the last traces, never
                # corrupt the file.
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")
            migrate_sqlite(self._db, "trace store", MIGRATIONS, table="traces",
                           where=self.path)
            # the count and the bytes stored, kept beside the table (tooluse._bounded_table)
            sqlite_setup(self._db, "traces", size="size")
        except (sqlite3.DatabaseError, SchemaVersionError) as exc:
            raise ValueError(f"cannot use {self.path} as a trace database: {exc}") from exc
        self._writer = BatchWriter(self._write, name="tooluse-traces", logger="tooluse.trace")

    # -- writing ----------------------------------------------------------------------------
    def add(self, trace: Trace) -> dict[str, Any]:
        """Store ``trace`` now (dropping the oldest past the bounds); returns its JSON form."""
        data = trace_dict(trace, self.max_text)
        self.add_dict(data)
        return data

    def add_dict(self, data: dict[str, Any]) -> None:
        """Store a trace already in its JSON form (:func:`.serialize.trace_dict`)."""
        self._insert([data])

    def _insert(self, items: list[dict[str, Any]]) -> None:
        rows = [self._row(data) for data in items]
        with self._lock:
            self._db.executemany(
                f"INSERT OR REPLACE INTO traces ({', '.join(_COLUMNS)}, body) "
                f"VALUES ({', '.join('?' * (len(_COLUMNS) + 1))})", rows)
            self._prune()
            self._db.commit()

    @staticmethod
    def _row(data: dict[str, Any]) -> tuple[Any, ...]:
        body = json.dumps(data, ensure_ascii=False, default=str)
        summary = data["summary"]
        return (data["id"], data["time"], data["source"], data["api"], summary["model"],
                json.dumps(summary["tools"]), summary["calls"], summary["status"],
                data["status"], data["duration_ms"], summary["input_tokens"],
                summary["output_tokens"], len(body.encode("utf-8")), body)

    def _prune(self) -> None:
        # The newest trace stays even alone over the size: a store never drops what it was
        # just given (its texts are cut to max_text already).
        prune(self._db, "traces", self.max_traces, max_bytes=self.max_bytes)

    def submit(self, trace: Trace) -> None:
        """Store ``trace`` from the writer thread (the caller does not wait)."""
        self._writer.submit(trace)

    def _write(self, traces: list[Trace]) -> None:
        """The writer thread: what has queued up is stored in one transaction."""
        try:
            self._insert([trace_dict(t, self.max_text) for t in traces])
        except Exception:  # noqa: BLE001 - one by one: a bad trace must not cost the others
            for trace in traces:
                self._add_logged(trace)

    def _add_logged(self, trace: Trace) -> None:
        try:
            self.add(trace)
        except Exception:  # the writer goes on; the failure is logged, not silent
            import logging

            logging.getLogger("tooluse.trace").exception("could not store trace %s", trace.id)

    def flush(self, timeout: float | None = 10.0) -> bool:
        """Wait until every submitted trace is stored; False if ``timeout`` ran out."""
        return self._writer.flush(timeout)

    # -- reading ----------------------------------------------------------------------------
    def list(self, limit: int = 20, *, search: str | None = None,
             before: int | None = None) -> list[dict[str, Any]]:
        """The newest ``limit`` traces' summaries (``search``: only those containing the
        text; ``before``: older than that ``seq``, for paging)."""
        where, args = [], []
        if search:
            where.append("instr(lower(body), lower(?)) > 0")
            args.append(json.dumps(search, ensure_ascii=False)[1:-1])
        if before is not None:
            where.append("seq < ?")
            args.append(str(before))
        sql = (f"SELECT seq, {', '.join(_COLUMNS)} FROM traces"
               + (f" WHERE {' AND '.join(where)}" if where else "")
               + " ORDER BY seq DESC LIMIT ?")
        with self._lock:
            rows = self._db.execute(sql, (*args, limit)).fetchall()
        out = []
        for row in rows:
            item = dict(zip(("seq", *_COLUMNS), row, strict=True))
            item["tools"] = json.loads(item["tools"])
            out.append(item)
        return out

    def get(self, trace_id: str) -> dict[str, Any] | None:
        """The whole trace whose id is or starts with ``trace_id`` (None if none, or if
        the prefix names more than one)."""
        with self._lock:
            rows = self._db.execute(
                "SELECT body FROM traces WHERE id = ? OR id LIKE ? ESCAPE '\\' "
                "ORDER BY id = ? DESC LIMIT 2",
                (trace_id, _like_prefix(trace_id), trace_id)).fetchall()
        if not rows or (len(rows) > 1 and json.loads(rows[0][0])["id"] != trace_id):
            return None
        data: dict[str, Any] = json.loads(rows[0][0])
        return data

    def __len__(self) -> int:
        with self._lock:
            (count,) = self._db.execute("SELECT count(*) FROM traces").fetchone()
        return int(count)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.list(self.max_traces))

    def close(self) -> None:
        """Store what is pending, then close the database."""
        self._writer.close()
        with self._lock:
            self._db.close()


def _like_prefix(prefix: str) -> str:
    return prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def open_store(target: TraceStore | str | os.PathLike[str] | bool | None) -> TraceStore | None:
    """A store from what a caller passed as ``trace=``: a :class:`TraceStore` as is, a
    path (a SQLite file), True (:func:`default_path`), None or False (no tracing)."""
    if target is None or target is False:
        return None
    if isinstance(target, TraceStore):
        return target
    if target is True:
        return TraceStore(default_path())
    return TraceStore(target)
