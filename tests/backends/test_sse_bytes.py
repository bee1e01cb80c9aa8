"""backends/_sse.py: server-sent events read from bytes give the events httpx2's
EventSource gives, whatever the line endings and however the bytes are cut; JSON from jiter
is json's, a lone surrogate escape included; an oversized event is an SSEError."""

from __future__ import annotations

import json

import httpx2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tooluse.backends._sse import SSE, SSEDecoder, loads

STREAMS = [
    b"event: message_start\ndata: {\"a\": 1}\n\n: a comment\n\ndata: x\ndata: y\n\n",
    b"event: e\r\ndata: {\"b\": \"\xc3\xa9\"}\r\n\r\ndata:no space\r\rid: 7\nretry: 10\n\n",
    b"data: one\n\nevent: cut\ndata: never ended",
    b"\n\n\ndata:  two spaces\n\nevent:\ndata\n\nid: a\x00b\n\n",
]


def _httpx(raw: bytes) -> list[tuple[str, str]]:
    response = httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=raw,
                               request=httpx2.Request("GET", "http://x/"))
    return [(e.event, e.data) for e in httpx2.EventSource(response)]


def _ours(pieces: list[bytes]) -> list[tuple[str, str]]:
    decoder = SSEDecoder()
    return [(e.event, e.data.decode()) for p in pieces for e in decoder.feed(p)]


@pytest.mark.parametrize("raw", STREAMS)
def test_the_events_are_httpx2s_in_one_piece_and_byte_by_byte(raw: bytes) -> None:
    assert _ours([raw]) == _httpx(raw)
    assert _ours([raw[i:i + 1] for i in range(len(raw))]) == _httpx(raw)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(STREAMS), st.lists(st.integers(min_value=0, max_value=200), max_size=6))
def test_any_cut_of_the_bytes_gives_the_same_events(raw: bytes, cuts: list[int]) -> None:
    points = sorted({c % (len(raw) + 1) for c in cuts})
    pieces = [raw[a:b] for a, b in zip([0, *points], [*points, len(raw)], strict=True)]
    assert _ours(pieces) == _httpx(raw)


def test_an_event_over_the_bound_is_an_sse_error() -> None:
    decoder = SSEDecoder(max_event_bytes=100)
    with pytest.raises(httpx2.SSEError):
        decoder.feed(b"data: " + b"x" * 200)  # not even ended: still refused


def test_json_is_jsons_including_a_lone_surrogate() -> None:
    for raw in [b'{"a": [1, 2.5, "\\u00e9", null, true]}', b'{"s": "\\ud800x"}', b"123456789012345678901234567890"]:
        assert loads(raw) == json.loads(raw)
    with pytest.raises(ValueError):
        loads(b"{not json")
    assert SSE("m", b"\xff").text == "\ufffd"
