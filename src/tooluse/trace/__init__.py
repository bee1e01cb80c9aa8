"""Traces: what the model saw and wrote, per request.

- :mod:`.record`: the per-request :class:`Trace` and its :class:`TurnRecord` (one backend call),
  made current with :func:`tracing`; the gateway, the runner and the backends write into
  :func:`current_trace` / :func:`current_turn`.
- :mod:`.serialize`: a trace as JSON (calls with origin, validation and span in the raw text).
- :mod:`.store`: :class:`TraceStore`, the bounded SQLite store behind ``tooluse serve
  --trace``, ``Runner(trace=...)`` and ``tooluse logs``.
"""

from __future__ import annotations

from .record import (
    REDACTED,
    SECRET_HEADERS,
    TextPass,
    Trace,
    Turn,
    TurnRecord,
    begin_turn,
    current_trace,
    current_turn,
    redact_headers,
    tracing,
)

__all__ = ["REDACTED", "SECRET_HEADERS", "TextPass", "Trace", "Turn", "TurnRecord", "begin_turn",
           "current_trace", "current_turn", "redact_headers", "tracing"]
