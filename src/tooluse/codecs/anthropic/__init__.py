"""Anthropic Messages API <-> the neutral model.

Decoding validates a request the way the Messages API does and reports the first problem
with the API's field path, so the gateway can answer ``invalid_request_error`` exactly as the
real API would (the rules are listed in :mod:`.requests`). ``stream`` is validated but is not
part of :class:`~tooluse.messages.Request`: read it with :func:`stream_requested`.

The codec is split by concern; this module only re-exports the names callers use
(``from tooluse.codecs import anthropic as codec; codec.decode_request(...)``):

- :mod:`._wire` — the pydantic wire models (strict request side, lenient response side);
- :mod:`.requests` — request decoding/validation and encoding;
- :mod:`.responses` — response bodies and the stop-reason tables;
- :mod:`.stream` — SSE stream events;
- :mod:`.thinking` — thinking blocks and the ``thinking`` setting (what the API takes back:
  :func:`sendable`);
- :mod:`.cache` — ``cache_control`` breakpoints and the usage's cache counts;
- :mod:`.errors` — error bodies and status codes.
"""

from __future__ import annotations

from ._wire import IMAGE_MEDIA_TYPES
from ._wire import TARGET as TARGET  # a module-level name of the single-file codec; kept
from .errors import ERROR_TYPES, backend_error, error_body
from .request_encoding import encode_request
from .requests import decode_request, stream_requested
from .responses import decode_response, encode_response
from .stream import decode_events, encode_events
from .thinking import sendable

__all__ = [
    "ERROR_TYPES",
    "IMAGE_MEDIA_TYPES",
    "backend_error",
    "decode_events",
    "decode_request",
    "decode_response",
    "encode_events",
    "encode_request",
    "encode_response",
    "error_body",
    "sendable",
    "stream_requested",
]
