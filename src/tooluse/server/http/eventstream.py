"""The AWS binary event-stream framing (``application/vnd.amazon.eventstream``).

ConverseStream answers with this framing rather than SSE, and boto3 will only read frames
that are right to the byte, so this module writes exactly what botocore's
``botocore.eventstream`` parser checks:

    prelude  = total_length (u32 BE) | headers_length (u32 BE)
    frame    = prelude | CRC32(prelude) (u32 BE) | headers | payload | CRC32(all before) (u32 BE)
    header   = name_length (u8) | name (UTF-8) | type (u8, 7 = string) | value_length (u16 BE) | value

botocore has a decoder but no encoder, which is why this one exists; tests feed these bytes
to botocore's decoder and to a real boto3 client.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Mapping
from functools import lru_cache
from typing import Any, Final

from .encoding import json_bytes

__all__ = ["MAX_HEADERS_LENGTH", "MAX_PAYLOAD_LENGTH", "encode_event", "encode_exception", "encode_frame"]

_STRING: Final = 7
_PRELUDE: Final = struct.Struct(">II")
_U32: Final = struct.Struct(">I")
#: botocore refuses frames beyond these sizes (``_MAX_HEADERS_LENGTH``/``_MAX_PAYLOAD_LENGTH``).
MAX_HEADERS_LENGTH: Final = 128 * 1024
MAX_PAYLOAD_LENGTH: Final = 24 * 1024 * 1024


def _encode_headers(headers: Mapping[str, str]) -> bytes:
    out = bytearray()
    for name, value in headers.items():
        raw_name = name.encode("utf-8")
        raw_value = value.encode("utf-8")
        if not 0 < len(raw_name) < 256:
            raise ValueError(f"event-stream header name {name!r} must be 1-255 bytes")
        if len(raw_value) >= 1 << 15:
            raise ValueError(f"event-stream header {name!r} value is too long")
        out += bytes([len(raw_name)]) + raw_name + bytes([_STRING])
        out += struct.pack(">H", len(raw_value)) + raw_value
    return bytes(out)


def encode_frame(headers: Mapping[str, str], payload: bytes) -> bytes:
    """One complete frame with both CRCs."""
    return _frame(_encode_headers(headers), payload)


def _frame(raw_headers: bytes, payload: bytes) -> bytes:
    if len(raw_headers) > MAX_HEADERS_LENGTH:
        raise ValueError("event-stream headers too long")
    if len(payload) > MAX_PAYLOAD_LENGTH:
        raise ValueError("event-stream payload too long")
    total = _PRELUDE.size + 4 + len(raw_headers) + len(payload) + 4
    prelude = _PRELUDE.pack(total, len(raw_headers))
    head = prelude + _U32.pack(zlib.crc32(prelude))
    crc = zlib.crc32(payload, zlib.crc32(raw_headers, zlib.crc32(head)))  # of all before it
    return b"".join((head, raw_headers, payload, _U32.pack(crc)))


@lru_cache(maxsize=64)
def _event_headers(event_type: str) -> bytes:
    """The headers of an ``event`` frame (a stream has a handful of event types: each
    one's headers are encoded once)."""
    return _encode_headers({":event-type": event_type, ":content-type": "application/json",
                            ":message-type": "event"})


def _json(payload: Any) -> bytes:
    return json_bytes(payload, separators=(",", ":"))


def encode_event(event_type: str, payload: Any) -> bytes:
    """An ``event`` frame: ``event_type`` names the ConverseStreamOutput member."""
    return _frame(_event_headers(event_type), _json(payload))


def encode_exception(exception_type: str, message: str) -> bytes:
    """An ``exception`` frame (boto3 raises it as ``EventStreamError`` with that code)."""
    return encode_frame(
        {
            ":exception-type": exception_type,
            ":content-type": "application/json",
            ":message-type": "exception",
        },
        _json({"message": message}),
    )
