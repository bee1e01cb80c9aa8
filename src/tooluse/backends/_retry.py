"""When and how long to wait before retrying a failed model call.

Model APIs shed load with 429 (rate limit), 529 (Anthropic: overloaded) and 5xx answers
and ask the client to come back later, sometimes saying when (``retry-after``). A client
that retries at once makes the overload worse; one that never retries fails on every
transient hiccup. The policy here is the usual one: a bounded number of retries, exponential
backoff with jitter (so many clients do not retry in lock-step), and the server's
``retry-after`` honoured when it gives one — unless it asks for longer than ``max_wait``, in
which case waiting inside a call would look like a hang and the error is raised instead
(with ``retry_after`` set, so the caller can decide).
"""

from __future__ import annotations

import random
import time
from collections.abc import Mapping
from dataclasses import dataclass

from ..errors import BackendError

__all__ = ["RetryPolicy", "parse_retry_after"]


def parse_retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds the server asks us to wait: ``retry-after-ms``, ``retry-after`` as seconds,
    or ``retry-after`` as an HTTP date. ``None`` when absent or unreadable."""
    lowered = {k.lower(): v for k, v in headers.items()}
    raw_ms = lowered.get("retry-after-ms")
    if raw_ms is not None:
        try:
            return max(0.0, float(raw_ms) / 1000.0)
        except ValueError:
            pass
    raw = lowered.get("retry-after")
    if raw is None:
        return None
    raw = raw.strip()
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    import email.utils  # an HTTP date: rare, and `tooluse serve --help` should not pay for it

    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - time.time())


@dataclass(frozen=True)
class RetryPolicy:
    """``max_retries`` retries after the first attempt (so ``max_retries + 1`` calls at most).

    The n-th retry waits ``min(max_delay, initial_delay * 2**n)`` scaled by a random factor
    in ``[1 - jitter, 1]``, or the server's ``retry-after`` when it sent one (up to
    ``max_wait`` seconds).
    """

    max_retries: int = 2
    initial_delay: float = 0.5
    max_delay: float = 8.0
    jitter: float = 0.25
    max_wait: float = 60.0

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ValueError("max_retries must be >= 0")
        if self.initial_delay < 0 or self.max_delay < 0 or self.max_wait < 0:
            raise ValueError("retry delays must be >= 0")
        if not 0 <= self.jitter <= 1:
            raise ValueError("jitter must be between 0 and 1")

    def delay(self, retry: int, error: BackendError) -> float | None:
        """Seconds to wait before retry number ``retry`` (0-based) after ``error``, or
        ``None`` when the error must be raised (not retryable, budget spent, or the server
        asked for a longer wait than ``max_wait``)."""
        if not error.retryable or retry >= self.max_retries:
            return None
        if error.retry_after is not None:
            wait = float(error.retry_after)
            return wait if wait <= self.max_wait else None
        base = min(self.max_delay, self.initial_delay * (2.0**retry))
        return base * (1.0 - self.jitter * random.random())
