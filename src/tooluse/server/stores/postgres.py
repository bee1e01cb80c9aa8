"""What the gateway's PostgreSQL stores share (the Responses store and the usage store):
opening a pool on a database whose tables are migrated first, and naming the database in a
message without its password."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..._migrations import Migration, SchemaVersionError, migrate_postgres

if TYPE_CHECKING:
    from psycopg_pool import ConnectionPool

__all__ = ["open_pool", "redacted"]


def redacted(url: str) -> str:
    """The URL without its password (``user:secret@`` -> ``user:***@``), for messages."""
    return re.sub(r"(//[^/:@]*:)[^@/]*@", r"\1***@", url)


def open_pool(url: str, *, what: str, version_of: str, migrations: Sequence[Migration],
              setup: Callable[[Any], None] | None = None, pool_size: int,
              connect_timeout: float) -> ConnectionPool:
    """A psycopg pool (autocommit) on ``url``, once one direct connection has migrated the
    store's tables (``version_of``: whose version it is, as one database may hold several
    stores' tables) and run ``setup`` in a transaction. That first connection gives a clear
    error at once, not the pool's retries: :class:`OSError` naming ``what`` and the database
    (its password left out), also for a missing ``[postgres]`` extra."""
    try:
        import psycopg
        from psycopg_pool import ConnectionPool
    except ImportError:
        raise OSError(f"a postgresql:// {what} needs psycopg: "
                      "pip install 'tooluse[postgres]'") from None
    try:
        with psycopg.connect(url, connect_timeout=max(1, round(connect_timeout)),
                             autocommit=True) as db:
            migrate_postgres(db, version_of, migrations, where=redacted(url))
            if setup is not None:
                with db.transaction():
                    setup(db)
    except SchemaVersionError as exc:
        raise OSError(f"cannot open the {what}: {exc}") from None
    except psycopg.Error as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise OSError(f"cannot open the {what} {redacted(url)}: {reason}") from None
    return ConnectionPool(url, min_size=1, max_size=pool_size, open=True,
                          kwargs={"autocommit": True}, timeout=connect_timeout)
