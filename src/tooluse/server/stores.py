"""The Responses store a ``--responses-store`` value names (its own module, above both
stores, so neither imports the other)."""

from __future__ import annotations

import os

from .response_store import DEFAULT_MAX_RESPONSES, ResponseStore, SqliteResponseStore

__all__ = ["open_response_store"]


def open_response_store(where: str | os.PathLike[str], *,
                        max_responses: int = DEFAULT_MAX_RESPONSES) -> ResponseStore:
    """The store ``where`` names: a ``postgresql://`` (or ``postgres://``) URL is a
    :class:`~.response_store_pg.PostgresResponseStore` (the ``[postgres]`` extra), anything
    else a SQLite file (``":memory:"``: in memory)."""
    text = str(where)
    if text.startswith(("postgresql://", "postgres://")):
        from .response_store_pg import PostgresResponseStore

        return PostgresResponseStore(text, max_responses=max_responses)
    return SqliteResponseStore(text, max_responses=max_responses)
