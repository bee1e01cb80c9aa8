"""How the gateway's stores open their SQLite files (the Responses store and the usage
store alike): the path with ``~`` expanded and its folder made, and one shared connection
in autocommit and WAL mode, with a busy timeout."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

__all__ = ["connect_sqlite", "sqlite_file"]


def sqlite_file(path: str | os.PathLike[str]) -> str:
    """``path`` with ``~`` expanded and its folder made (``:memory:`` as it is): where a
    gateway store's SQLite database goes."""
    path = str(path)
    if path == ":memory:":
        return path
    file = Path(path).expanduser()
    file.parent.mkdir(parents=True, exist_ok=True)
    return str(file)


def connect_sqlite(path: str, *, busy_timeout_ms: int,
                   synchronous: str | None = None) -> sqlite3.Connection:
    """A gateway store's connection to ``path`` (from :func:`sqlite_file`): shared by the
    request threads (the store holds its own lock), in autocommit (the store opens its own
    transactions), a file in WAL mode (``synchronous`` set when given), and waiting up to
    ``busy_timeout_ms`` for another process's write."""
    db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    if path != ":memory:":
        db.execute("PRAGMA journal_mode=WAL")
        if synchronous is not None:
            db.execute(f"PRAGMA synchronous={synchronous}")
    db.execute(f"PRAGMA busy_timeout={busy_timeout_ms}")
    return db
