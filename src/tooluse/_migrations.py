"""Schema versions of tooluse's stores: numbered migrations, each run once, in order.

In the manner of simonw/llm's ``migrations.py``: a store lists its migrations, functions
that take the database connection and change its tables; the store's schema version is how
many of them ran. SQLite keeps it in the file's ``PRAGMA user_version`` (so one store per
file); PostgreSQL, where several stores share a database, in the table ``tooluse_schema``
(one row per store, by name).

Migration 1 of every store is its schema as it was before versions existed (``CREATE ...
IF NOT EXISTS``): a file written by a release without versions holds those tables at
version 0, takes migration 1 as a no-op, and is stamped 1 with nothing lost. A later change
to a table is a new function at the end of the list, never an edit of one that shipped. A
database whose version is newer than this release knows is refused with
:class:`SchemaVersionError` before anything is written to it.

Each migration runs in its own transaction together with the new version number, so a
migration that fails leaves the database at the version before it; two processes opening
one database at once take the migrations in turn (SQLite's write lock, a PostgreSQL
advisory lock).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from typing import Any

from .errors import ToolUseError

__all__ = ["Migration", "SchemaVersionError", "migrate_postgres", "migrate_sqlite"]

#: One step of a store's schema: receives the connection, inside the step's transaction.
Migration = Callable[[Any], None]


class SchemaVersionError(ToolUseError, ValueError):
    """A store's database is of a schema this release cannot use (newer, or another store's)."""


def _check(store: str, where: str, version: int, known: int) -> None:
    if version > known:
        raise SchemaVersionError(
            f"{where}: the {store} there has schema version {version}, written by a newer "
            f"tooluse; this one knows versions up to {known}: upgrade tooluse, or use "
            "another file")


def migrate_sqlite(db: sqlite3.Connection, store: str, migrations: Sequence[Migration], *,
                   table: str, where: str) -> int:
    """Brings the SQLite database ``db`` to the last of ``migrations``; returns its version.

    ``store`` names the store in errors, ``where`` the file; ``table`` is one of the store's
    own tables: a file at a version above 0 without it belongs to another store (the
    version is the file's, not the table's) and is refused.
    """
    version = _sqlite_version(db)
    _check(store, where, version, len(migrations))
    if version and not _sqlite_has(db, table):
        raise SchemaVersionError(
            f"{where}: this file holds another store's tables (schema version {version}), "
            f"not the {store}'s: give the {store} a file of its own")
    if db.in_transaction:
        db.commit()
    while version < len(migrations):
        db.execute("BEGIN IMMEDIATE")
        try:
            version = _sqlite_version(db)  # another process may have migrated meanwhile
            _check(store, where, version, len(migrations))
            if version < len(migrations):
                migrations[version](db)
                version += 1
                db.execute(f"PRAGMA user_version = {version:d}")
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
    return version


def _sqlite_version(db: sqlite3.Connection) -> int:
    return int(db.execute("PRAGMA user_version").fetchone()[0])


def _sqlite_has(db: sqlite3.Connection, table: str) -> bool:
    return db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                      (table,)).fetchone() is not None


def migrate_postgres(db: Any, store: str, migrations: Sequence[Migration], *,
                     where: str) -> int:
    """Brings the PostgreSQL store ``store`` (its row in ``tooluse_schema``) to the last of
    ``migrations``; returns its version. ``db``: a psycopg connection in autocommit mode."""
    version = 0
    while True:
        with db.transaction():
            # one migrating process at a time, even before tooluse_schema exists
            db.execute("SELECT pg_advisory_xact_lock(hashtext('tooluse_schema'))")
            db.execute("CREATE TABLE IF NOT EXISTS tooluse_schema "
                       "(store TEXT PRIMARY KEY, version INTEGER NOT NULL)")
            row = db.execute("SELECT version FROM tooluse_schema WHERE store = %s",
                             (store,)).fetchone()
            version = int(row[0]) if row else 0
            _check(store, where, version, len(migrations))
            if version == len(migrations):
                return version
            migrations[version](db)
            version += 1
            db.execute("INSERT INTO tooluse_schema (store, version) VALUES (%s, %s) "
                       "ON CONFLICT (store) DO UPDATE SET version = excluded.version",
                       (store, version))
