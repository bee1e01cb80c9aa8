"""The event-stream encoder judged by botocore's decoder; SigV4 verification against
signatures made by botocore's signer."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.eventstream import ChecksumMismatch, EventStreamBuffer
from hypothesis import given, settings
from hypothesis import strategies as st

from tooluse.server import encode_event, encode_exception, encode_frame
from tooluse.server.errors import GatewayError
from tooluse.server.http.auth import verify_sigv4


def parse(data: bytes, cut: int = 0) -> list:  # type: ignore[type-arg]
    buffer = EventStreamBuffer()
    out = []
    pieces = [data] if cut <= 0 else [data[i : i + cut] for i in range(0, len(data), cut)]
    for piece in pieces:
        buffer.add_data(piece)
        out.extend(buffer)
    return out


def test_event_frame_is_what_botocore_reads() -> None:
    payload = {"contentBlockIndex": 0, "delta": {"text": "héllo ✓"}}
    (msg,) = parse(encode_event("contentBlockDelta", payload))
    assert msg.headers == {
        ":event-type": "contentBlockDelta",
        ":content-type": "application/json",
        ":message-type": "event",
    }
    assert json.loads(msg.payload) == payload
    assert msg.to_response_dict()["status_code"] == 200


def test_exception_frame() -> None:
    (msg,) = parse(encode_exception("throttlingException", "slow down"))
    assert msg.headers[":message-type"] == "exception"
    assert msg.headers[":exception-type"] == "throttlingException"
    assert json.loads(msg.payload) == {"message": "slow down"}
    assert msg.to_response_dict()["status_code"] == 400


def test_corrupted_frame_is_rejected_by_botocore() -> None:
    frame = bytearray(encode_event("messageStart", {"role": "assistant"}))
    frame[-6] ^= 0xFF  # flip a payload byte: the message CRC no longer matches
    with pytest.raises(ChecksumMismatch):
        parse(bytes(frame))


@settings(max_examples=100, deadline=None)
@given(
    events=st.lists(
        st.tuples(
            st.sampled_from(["messageStart", "contentBlockDelta", "metadata"]),
            st.dictionaries(st.text(max_size=8), st.text(max_size=40), max_size=4),
        ),
        min_size=1,
        max_size=6,
    ),
    cut=st.integers(min_value=1, max_value=64),
)
def test_any_stream_cut_anywhere_parses_back(events: list[tuple[str, dict[str, str]]], cut: int) -> None:
    data = b"".join(encode_event(name, body) for name, body in events)
    parsed = parse(data, cut)
    assert [(m.headers[":event-type"], json.loads(m.payload)) for m in parsed] == events


def test_frame_limits() -> None:
    with pytest.raises(ValueError):
        encode_frame({"": "x"}, b"")
    with pytest.raises(ValueError):
        encode_frame({"n" * 300: "x"}, b"")


# -- SigV4 ----------------------------------------------------------------------------------
CREDS = {"AKIDGOOD": "s3cret"}
PATH = "/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse"


def signed(body: bytes = b'{"messages": []}', *, secret: str = "s3cret", key: str = "AKIDGOOD",
           when: datetime | None = None) -> tuple[list[tuple[bytes, bytes]], datetime]:
    """Headers as botocore's own signer makes them for this request."""
    request = AWSRequest(method="POST", url=f"http://127.0.0.1:8080{PATH}", data=body,
                         headers={"Content-Type": "application/json", "Host": "127.0.0.1:8080"})
    signer = SigV4Auth(Credentials(key, secret), "bedrock", "us-east-1")
    now = when or datetime.now(UTC)
    import botocore.auth

    original = botocore.auth.get_current_datetime
    botocore.auth.get_current_datetime = lambda: now.replace(tzinfo=None)  # type: ignore[assignment]
    try:
        signer.add_auth(request)
    finally:
        botocore.auth.get_current_datetime = original  # type: ignore[assignment]
    headers = [(k.lower().encode(), v.encode()) for k, v in request.headers.items()]
    return headers, now


def verify(headers: list[tuple[bytes, bytes]], body: bytes = b'{"messages": []}', *,
           now: datetime | None = None, path: str = PATH) -> str:
    return verify_sigv4(method="POST", scheme="http", raw_path=path.encode(), query_string=b"",
                        headers=headers, body=body, credentials=CREDS, now=now)


def test_sigv4_accepts_botocore_signature() -> None:
    headers, _ = signed()
    assert verify(headers) == "AKIDGOOD"


def code_of(fn) -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(GatewayError) as info:
        fn()
    assert info.value.kind in ("authentication", "permission")
    return info.value.aws_code or ""


def test_sigv4_rejections() -> None:
    headers, _now = signed()
    assert code_of(lambda: verify(headers, b'{"messages": [1]}')) == "InvalidSignatureException"
    assert code_of(lambda: verify(headers, path=PATH.replace("%3A", ":"))) == "InvalidSignatureException"
    bad, _ = signed(secret="other")
    assert code_of(lambda: verify(bad)) == "InvalidSignatureException"
    unknown, _ = signed(key="AKIDNOPE")
    assert code_of(lambda: verify(unknown)) == "UnrecognizedClientException"
    assert code_of(lambda: verify([h for h in headers if h[0] != b"authorization"])) == "MissingAuthenticationTokenException"
    garbled = [(k, b"AWS4-HMAC-SHA256 nonsense") if k == b"authorization" else (k, v) for k, v in headers]
    assert code_of(lambda: verify(garbled)) == "IncompleteSignatureException"
    old, when = signed(when=datetime.now(UTC) - timedelta(minutes=20))
    assert code_of(lambda: verify(old)) == "InvalidSignatureException"
    assert verify(old, now=when + timedelta(minutes=1)) == "AKIDGOOD"
    tampered = [(k, b"evil.example") if k == b"host" else (k, v) for k, v in headers]
    assert code_of(lambda: verify(tampered)) == "InvalidSignatureException"
