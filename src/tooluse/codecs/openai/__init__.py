"""OpenAI Chat Completions <-> the neutral model (the codec; see :mod:`.requests` for how
the shapes are mapped and what Chat Completions cannot carry).

The codec is split by concern; this package re-exports the names the former single module
``tooluse/codecs/openai.py`` exposed, so ``from tooluse.codecs import openai`` is unchanged:

- :mod:`._wire` — pydantic models of the wire format, ``TARGET``, ``MAX_STOP``;
- :mod:`.requests` — request decoding/validation and encoding;
- :mod:`.responses` — ``chat.completion`` bodies;
- :mod:`.stream` — ``chat.completion.chunk`` streams;
- :mod:`.errors` — error bodies, :class:`BackendError` from a body, ``param`` paths.

Imports are relative, so this package never shadows the ``openai`` SDK.
"""

from __future__ import annotations

from ._wire import MAX_STOP as MAX_STOP
from ._wire import TARGET as TARGET
from .errors import ERROR_TYPES as ERROR_TYPES
from .errors import backend_error, error_body, error_param
from .requests import decode_request, encode_request, stream_requested
from .responses import decode_response, encode_response
from .stream import decode_events, encode_events

__all__ = [
    "backend_error",
    "decode_events",
    "decode_request",
    "decode_response",
    "encode_events",
    "encode_request",
    "encode_response",
    "error_body",
    "error_param",
    "stream_requested",
]
