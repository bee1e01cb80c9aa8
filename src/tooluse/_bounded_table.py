"""A table kept to its newest rows, in constant time per write (SQLite and PostgreSQL).

The trace store and the Responses stores keep at most N rows (and the trace store at most B
bytes), the oldest going first. Asking the table how full it is on every write (``count(*)``,
``sum(size)``, or an ``OFFSET`` walk to the N-th newest row) costs a walk over every row, so
a write cost more the fuller the store: 0.30 ms at 300 stored responses, 1.25 ms at 9,600.

Here the row count and the byte total live in a one-row side table, ``{table}_bound``, kept
by triggers on every insert and delete in the same transaction (so several processes
sharing the database agree), and re-counted once when a store opens (healing anything a
writer without the triggers did). A write then reads one row to know how full the table is,
and deletes only what is over, oldest first, through the primary key.

The table must have an integer primary key ``seq`` that grows with each insert. On SQLite,
``INSERT OR REPLACE`` fires the delete trigger only with ``PRAGMA recursive_triggers = ON``
(:func:`sqlite_setup` sets it on the connection it is given).
"""

from __future__ import annotations

from typing import Any

__all__ = ["postgres_setup", "prune", "sqlite_setup"]


def _bound(table: str) -> str:
    return f"{table}_bound"


def sqlite_setup(db: Any, table: str, *, size: str | None = None) -> None:
    """Create (or re-count) the bound of ``table`` on SQLite connection ``db`` (autocommit
    or not: the statements run in one immediate transaction). ``size``: the column whose
    sum is kept too."""
    bound = _bound(table)
    add = f"NEW.{size}" if size else "0"
    sub = f"OLD.{size}" if size else "0"
    total = f"coalesce(sum({size}), 0)" if size else "0"
    db.execute("PRAGMA recursive_triggers = ON")
    if db.in_transaction:
        db.commit()
    db.execute("BEGIN IMMEDIATE")
    try:
        db.execute(f"CREATE TABLE IF NOT EXISTS {bound} (rows INTEGER NOT NULL, "
                   "bytes INTEGER NOT NULL)")
        db.execute(f"DELETE FROM {bound}")
        db.execute(f"INSERT INTO {bound} SELECT count(*), {total} FROM {table}")
        db.execute(f"CREATE TRIGGER IF NOT EXISTS {bound}_insert AFTER INSERT ON {table} "
                   f"BEGIN UPDATE {bound} SET rows = rows + 1, bytes = bytes + {add}; END")
        db.execute(f"CREATE TRIGGER IF NOT EXISTS {bound}_delete AFTER DELETE ON {table} "
                   f"BEGIN UPDATE {bound} SET rows = rows - 1, bytes = bytes - {sub}; END")
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def postgres_setup(db: Any, table: str) -> None:
    """The same on PostgreSQL (rows only), in the caller's transaction: the table is locked
    against writes while it is re-counted and the trigger (re)made, so replicas starting
    together agree."""
    bound = _bound(table)
    db.execute(f"LOCK TABLE {table} IN SHARE ROW EXCLUSIVE MODE")
    db.execute(f"CREATE TABLE IF NOT EXISTS {bound} (rows BIGINT NOT NULL, bytes BIGINT NOT NULL)")
    db.execute(f"LOCK TABLE {bound} IN EXCLUSIVE MODE")
    db.execute(f"DELETE FROM {bound}")
    db.execute(f"INSERT INTO {bound} SELECT count(*), 0 FROM {table}")
    db.execute(f"CREATE OR REPLACE FUNCTION {bound}() RETURNS trigger LANGUAGE plpgsql AS $$ "
               f"BEGIN IF TG_OP = 'INSERT' THEN UPDATE {bound} SET rows = rows + 1; "
               f"ELSE UPDATE {bound} SET rows = rows - 1; END IF; RETURN NULL; END $$")
    db.execute(f"DROP TRIGGER IF EXISTS {bound} ON {table}")
    db.execute(f"CREATE TRIGGER {bound} AFTER INSERT OR DELETE ON {table} "
               f"FOR EACH ROW EXECUTE FUNCTION {bound}()")


def prune(db: Any, table: str, max_rows: int, *, max_bytes: int | None = None,
          param: str = "?") -> None:
    """Delete the oldest rows of ``table`` past ``max_rows`` (and, with ``max_bytes``, past
    that many bytes; the newest row stays even alone over the size), in the caller's
    transaction. ``param``: the driver's placeholder (``?`` sqlite3, ``%s`` psycopg)."""
    rows, total = db.execute(f"SELECT rows, bytes FROM {_bound(table)}").fetchone()
    if rows > max_rows:
        db.execute(f"DELETE FROM {table} WHERE seq IN "
                   f"(SELECT seq FROM {table} ORDER BY seq LIMIT {param})", (rows - max_rows,))
        rows, total = db.execute(f"SELECT rows, bytes FROM {_bound(table)}").fetchone()
    if max_bytes is None or total <= max_bytes or rows <= 1:
        return
    over, cut_at = total - max_bytes, None
    for seq, size in db.execute(f"SELECT seq, size FROM {table} ORDER BY seq LIMIT {param}",
                                (rows - 1,)):
        over -= size
        cut_at = seq
        if over <= 0:
            break
    if cut_at is not None:
        db.execute(f"DELETE FROM {table} WHERE seq <= {param}", (cut_at,))
