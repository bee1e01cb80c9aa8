"""OpenAI Responses API (``POST /v1/responses``) <-> the neutral model (the codec; see
:mod:`.requests` for how the shapes are mapped and docs/server.md for every field's policy).

- :mod:`._wire` — pydantic models of the wire format, ``TARGET``;
- :mod:`._tools` — custom and namespace tools carried through neutral tools;
- :mod:`._reasoning` — ``reasoning`` items and the ``reasoning`` setting <-> thinking;
- :mod:`.requests` — request decoding/validation and encoding;
- :mod:`.responses` — response objects;
- :mod:`.stream` — the numbered ``response.*`` event stream;
- :mod:`.errors` — error bodies (OpenAI's shape) and in-stream errors.
"""

from __future__ import annotations

from ._wire import TARGET as TARGET
from .errors import backend_error, default_param, error_body, error_code, error_param
from .request_encoding import encode_request
from .requests import decode_request, stream_requested
from .responses import decode_response, echo_fields, encode_response
from .stream import StreamEncoder, encode_events
from .stream_decode import decode_events

__all__ = [
    "StreamEncoder",
    "backend_error",
    "decode_events",
    "decode_request",
    "decode_response",
    "default_param",
    "echo_fields",
    "encode_events",
    "encode_request",
    "encode_response",
    "error_body",
    "error_code",
    "error_param",
    "stream_requested",
]
