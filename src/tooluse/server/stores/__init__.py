"""The stores a ``--responses-store`` or ``usage_store`` value names (their own module, above
both kinds of each, so neither imports the other)."""

from __future__ import annotations

import os

from .responses import DEFAULT_MAX_RESPONSES, ResponseStore, SqliteResponseStore
from .usage import SqliteUsageStore, UsageStore

__all__ = ["open_response_store", "open_usage_store"]


def open_response_store(where: str | os.PathLike[str], *,
                        max_responses: int = DEFAULT_MAX_RESPONSES) -> ResponseStore:
    """The store ``where`` names: a ``postgresql://`` (or ``postgres://``) URL is a
    :class:`~.responses_pg.PostgresResponseStore` (the ``[postgres]`` extra), anything
    else a SQLite file (``":memory:"``: in memory)."""
    text = str(where)
    if text.startswith(("postgresql://", "postgres://")):
        from .responses_pg import PostgresResponseStore

        return PostgresResponseStore(text, max_responses=max_responses)
    return SqliteResponseStore(text, max_responses=max_responses)


def open_usage_store(where: str | os.PathLike[str]) -> UsageStore:
    """The usage store ``where`` names: a ``postgresql://`` (or ``postgres://``) URL is a
    :class:`~.usage_pg.PostgresUsageStore` (the ``[postgres]`` extra), anything else a
    SQLite file (``":memory:"``: in memory)."""
    text = str(where)
    if text.startswith(("postgresql://", "postgres://")):
        from .usage_pg import PostgresUsageStore

        return PostgresUsageStore(text)
    return SqliteUsageStore(text)
