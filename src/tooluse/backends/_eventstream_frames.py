"""Reading the AWS binary event stream (ConverseStream's answer), fast where it is plain.

botocore's :class:`~botocore.eventstream.EventStreamBuffer` parses every frame in Python a
few bytes at a time (a slice and a copy per field), a large part of a proxied
ConverseStream's CPU (``bench/gateway/converse_frames.py``). A Converse stream's frames are
plain: two or three string headers and a JSON payload. :class:`FrameBuffer` reads such a
frame itself (both CRCs checked with zlib, the limits botocore sets, string headers) and
hands any other frame, whole, to botocore: a frame with other header types, a duplicate
header, a bad checksum or length, a name that is not UTF-8. So what it yields or raises for
those is botocore's own.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator
from typing import Any, Final

__all__ = ["FrameBuffer"]

_PRELUDE: Final = struct.Struct(">III")
_U16: Final = struct.Struct(">H")
_U32: Final = struct.Struct(">I")
_STRING: Final = 7
# botocore's limits (botocore.eventstream._MAX_HEADERS_LENGTH / _MAX_PAYLOAD_LENGTH)
_MAX_HEADERS: Final = 128 * 1024
_MAX_PAYLOAD: Final = 24 * 1024 * 1024


def _string_headers(data: bytes, start: int, end: int) -> dict[str, Any] | None:
    """The headers in ``data[start:end]`` when every one is a string, each named once;
    None otherwise (botocore decides)."""
    headers: dict[str, Any] = {}
    i = start
    try:
        while i < end:
            name_end = i + 1 + data[i]
            name = data[i + 1:name_end].decode("utf-8")
            if data[name_end] != _STRING or name in headers:
                return None
            (length,) = _U16.unpack_from(data, name_end + 1)
            value_start = name_end + 3
            i = value_start + length
            if i > end:
                return None
            headers[name] = data[value_start:i].decode("utf-8")
    except (IndexError, UnicodeDecodeError, struct.error):
        return None
    return headers


class FrameBuffer:
    """Bytes in (:meth:`add_data`), ``(headers, payload)`` of each complete frame out
    (iterating it), as botocore's ``EventStreamBuffer`` gives them; raises botocore's
    ``ParserError`` where botocore does."""

    def __init__(self) -> None:
        self._data = b""

    def add_data(self, data: bytes) -> None:
        self._data = self._data + data if self._data else data

    def __iter__(self) -> Iterator[tuple[dict[str, Any], bytes]]:
        data = self._data
        at = 0
        try:
            while len(data) - at >= _PRELUDE.size:
                total, headers_length, prelude_crc = _PRELUDE.unpack_from(data, at)
                plain = (zlib.crc32(data[at:at + 8]) == prelude_crc
                         and headers_length <= _MAX_HEADERS
                         and total - headers_length - 16 <= _MAX_PAYLOAD
                         and total >= headers_length + 16)
                if plain and len(data) - at < total:
                    return  # the rest of the frame is still to come
                end = at + total
                headers = None
                if plain:
                    payload_end = end - 4
                    if zlib.crc32(data[at:payload_end]) == _U32.unpack_from(data, payload_end)[0]:
                        headers = _string_headers(data, at + 12, at + 12 + headers_length)
                if headers is None:  # botocore's parse: its values, or its error
                    frame = self._botocore(data[at:])
                    if frame is None:
                        return
                else:
                    frame = headers, data[at + 12 + headers_length:end - 4]
                at = end  # consumed before it is handed out, as botocore does
                yield frame
        finally:
            self._data = data[at:]

    @staticmethod
    def _botocore(data: bytes) -> tuple[dict[str, Any], bytes] | None:
        """The first frame of ``data`` as botocore parses it (None: not complete)."""
        from botocore.eventstream import EventStreamBuffer

        buffer = EventStreamBuffer()
        buffer.add_data(data)
        for message in buffer:
            return message.headers, message.payload
        return None
