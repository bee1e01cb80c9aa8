"""Helpers the API front ends share: mapping failures of the *input* to 400s.

A request that fails while being read or decoded is the client's fault by construction, so
any ``ValueError``/``TypeError`` escaping a codec there (a case the codec did not foresee)
still answers 400 with the message, never 500; the gap is logged so it gets fixed. Failures
after decoding go through :func:`~tooluse.server.errors.from_exception`, which hides
unexpected exceptions behind a generic 500.
"""

from __future__ import annotations

import logging

from ..errors import BackendError, ConversionError, WireFormatError
from .errors import GatewayError, from_exception

__all__ = ["input_error", "log", "output_error"]

log = logging.getLogger("tooluse.server")


def input_error(exc: BaseException) -> GatewayError:
    """The error to answer for ``exc`` raised while reading or decoding a request."""
    if isinstance(exc, GatewayError):
        return exc
    if isinstance(exc, RecursionError):
        log.warning("request too deeply nested for the codec")
        return GatewayError("request is nested too deeply", "invalid_request")
    error = from_exception(exc)
    if error.kind == "api" and isinstance(exc, (ValueError, TypeError, KeyError)):
        log.warning("codec raised %s on a request body", type(exc).__name__, exc_info=exc)
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else "malformed request"
        return GatewayError(message[:500], "invalid_request")
    if error.kind == "api":
        log.error("unexpected error while reading a request", exc_info=exc)
    return error


def output_error(exc: BaseException) -> GatewayError:
    """The error to answer for ``exc`` raised while running the backend or encoding.

    A format error at this stage is not the client's fault: the request was valid, and it
    is the backend's answer that is malformed or cannot be written in the client's API
    (e.g. an image block in a response), so it is a 500 that says so, not a 400.
    """
    if isinstance(exc, (WireFormatError, ConversionError)):
        log.error("the backend's answer could not be encoded: %s", exc)
        return GatewayError(f"the backend's answer could not be sent in this API: {exc}", "api")
    error = from_exception(exc)
    if isinstance(exc, BackendError):  # the backend's (or its upstream's) failure, not a bug here
        log.warning("backend error (%s): %s", exc.kind, exc.message)
    elif error.kind == "api" and not isinstance(exc, GatewayError):
        log.error("unexpected error while serving a request", exc_info=exc)
    return error
