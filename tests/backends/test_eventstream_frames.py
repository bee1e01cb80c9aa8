"""The Bedrock backend's event-stream reader gives what botocore's EventStreamBuffer gives,
frame for frame and error for error: plain frames (string headers) read by itself, any
other frame by botocore. Each case is checked against botocore on the same bytes, fed
whole and cut at every byte."""

from __future__ import annotations

import struct
import zlib
from typing import Any

import pytest
from botocore.eventstream import EventStreamBuffer, ParserError

from tooluse.backends._eventstream_frames import FrameBuffer
from tooluse.server.http.eventstream import encode_event, encode_exception, encode_frame


def _read(buffer: Any, chunks: list[bytes]) -> list[Any]:
    """What ``buffer`` yields (as ``(headers, payload)``) or raises, fed ``chunks``."""
    out: list[Any] = []
    try:
        for chunk in chunks:
            buffer.add_data(chunk)
            out.extend(m if isinstance(m, tuple) else (m.headers, m.payload) for m in buffer)
    except ParserError as exc:
        out.append((type(exc), str(exc)))
    return out


def _botocore(chunks: list[bytes]) -> list[Any]:
    return _read(EventStreamBuffer(), chunks)


def _ours(chunks: list[bytes]) -> list[Any]:
    return _read(FrameBuffer(), chunks)


def _cuts(data: bytes) -> list[list[bytes]]:
    return [[data]] + [[data[:i], data[i:]] for i in range(1, len(data))] + [
        [data[i:i + 1] for i in range(len(data))]]


def _frame(raw_headers: bytes, payload: bytes, *, prelude_crc: int | None = None,
           message_crc: int | None = None) -> bytes:
    prelude = struct.pack(">II", 16 + len(raw_headers) + len(payload), len(raw_headers))
    head = prelude + struct.pack(">I", zlib.crc32(prelude) if prelude_crc is None
                                 else prelude_crc)
    body = head + raw_headers + payload
    return body + struct.pack(">I", zlib.crc32(body) if message_crc is None else message_crc)


def _header(name: str, kind: int, value: bytes) -> bytes:
    raw = name.encode()
    return bytes([len(raw)]) + raw + bytes([kind]) + value


PLAIN = (encode_event("messageStart", {"role": "assistant"})
         + encode_event("contentBlockDelta", {"contentBlockIndex": 0,
                                              "delta": {"text": "h\u00e9llo \U0001f600"}})
         + encode_frame({}, b"")
         + encode_exception("throttlingException", "slow down"))

CASES = {
    "plain": PLAIN,
    "other header types": _frame(
        _header(":event-type", 7, struct.pack(">H", 4) + b"ping")
        + _header("flag", 0, b"") + _header("n", 4, struct.pack(">i", -7))
        + _header("when", 8, struct.pack(">q", 1700000000000))
        + _header("raw", 6, struct.pack(">H", 2) + b"\x00\xff"), b"{}") + PLAIN,
    "duplicate header": _frame(_header("a", 7, b"\x00\x01x") + _header("a", 7, b"\x00\x01y"),
                               b"{}"),
    "bad prelude crc": encode_event("messageStop", {}) + _frame(b"", b"{}", prelude_crc=1),
    "bad message crc": _frame(_header("a", 7, b"\x00\x01x"), b"{}", message_crc=1),
    "headers too long": struct.pack(">II", 200_000, 140_000) + struct.pack(
        ">I", zlib.crc32(struct.pack(">II", 200_000, 140_000))),
    "header past its section": _frame(_header("a", 7, b"\x00\x09x"), b"{}"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_frames_and_errors_are_botocores(name: str) -> None:
    data = CASES[name]
    expected = _botocore([data])
    assert expected  # every case yields or raises something
    for chunks in _cuts(data):
        assert _ours(chunks) == expected == _botocore(chunks), chunks


def test_a_plain_frame_is_read_without_botocore(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(data: bytes) -> None:
        raise AssertionError("handed to botocore")

    monkeypatch.setattr(FrameBuffer, "_botocore", staticmethod(refuse))
    assert _ours([PLAIN]) == _botocore([PLAIN])
