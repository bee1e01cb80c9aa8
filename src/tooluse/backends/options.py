"""The options every HTTP backend (``anthropic:``, ``openai:``, ``openai-prompt:``) takes for
talking to its upstream, defined once: their names and types (:class:`UpstreamOptions`,
:class:`AsyncUpstreamOptions`), their defaults, and :class:`RetryPolicy`.

The backends take them as keywords (``AnthropicBackend(model, timeout=30, max_retries=0)``)
and hand them to the one HTTP plumbing (``tooluse/backends/_upstream.py``); ``tooluse serve``
sets them from its ``--upstream-*`` flags. ``bedrock:`` takes the same timeout names
(botocore applies them).
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from typing import TYPE_CHECKING, Any, TypedDict

from ._retry import RetryPolicy

if TYPE_CHECKING:  # annotations only: `tooluse serve --help` need not import the client
    import httpx2

__all__ = [
    "ASYNC_UPSTREAM_KEYS",
    "DEFAULT_CONNECT_TIMEOUT",
    "DEFAULT_READ_TIMEOUT",
    "DEFAULT_TIMEOUT",
    "UPSTREAM_KEYS",
    "AsyncUpstreamOptions",
    "RetryPolicy",
    "UpstreamOptions",
    "check_options",
]

#: Seconds to open a connection.
DEFAULT_CONNECT_TIMEOUT = 10.0
#: Seconds of silence allowed while a stream is awaited or read.
DEFAULT_READ_TIMEOUT = 120.0
#: Seconds for a whole call until its answer starts (attempts and waits included).
DEFAULT_TIMEOUT = 300.0


class UpstreamOptions(TypedDict, total=False):
    """How a backend talks to its upstream; every key may be left out (``None`` is the
    default too)."""

    #: Deadline of a call until its answer starts, retries and their waits included
    #: (seconds, default :data:`DEFAULT_TIMEOUT`).
    timeout: float | None
    #: Seconds to open a connection (default :data:`DEFAULT_CONNECT_TIMEOUT`).
    connect_timeout: float | None
    #: Longest silence while a stream is awaited or read (default :data:`DEFAULT_READ_TIMEOUT`).
    read_timeout: float | None
    #: When and how long to wait before a retry (default ``RetryPolicy()``).
    retry: RetryPolicy | None
    #: Overrides ``retry.max_retries``.
    max_retries: int | None
    #: Replaces the network (``httpx2.MockTransport`` in tests).
    transport: httpx2.BaseTransport | None
    #: A client used as given and never closed by the backend.
    http_client: httpx2.Client | None


class AsyncUpstreamOptions(UpstreamOptions, total=False):
    """:class:`UpstreamOptions` and the async client's two (backends with an async path)."""

    async_transport: httpx2.AsyncBaseTransport | None
    async_http_client: httpx2.AsyncClient | None


#: The keys of :class:`UpstreamOptions` and of :class:`AsyncUpstreamOptions`.
UPSTREAM_KEYS: frozenset[str] = UpstreamOptions.__optional_keys__
ASYNC_UPSTREAM_KEYS: frozenset[str] = AsyncUpstreamOptions.__optional_keys__


def check_options(owner: str, options: Mapping[str, Any],
                  known: AbstractSet[str] = ASYNC_UPSTREAM_KEYS) -> None:
    """A ``TypeError`` for a keyword in ``options`` that is not one of ``known``, as Python
    gives for a keyword a function does not take (``**options`` would swallow it)."""
    for key in options:
        if key not in known:
            raise TypeError(f"{owner}() got an unexpected keyword argument {key!r}")
