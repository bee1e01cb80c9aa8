"""Inputs the real APIs refuse, refused here too in each API's native shape:
lone surrogates (F1), empty streams (F6), bad image data, an empty Converse conversation,
an empty model id, a trailing slash; and a 413 a plain client can read."""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest

from tooluse.backends.scripted import ScriptedBackend
from tooluse.messages import Request
from tooluse.server import ServerThread, create_app
from tooluse.stream import MessageStart, StreamEvent

MESSAGES, CONVERSE, STREAM, CHAT = (
    "/v1/messages", "/model/m/converse", "/model/m/converse-stream", "/v1/chat/completions")
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(16)).decode()
JPEG = base64.b64encode(b"\xff\xd8\xff\xe0" + bytes(16)).decode()


class _Stream(ScriptedBackend):
    """Answers ``complete`` from the script, but streams exactly ``events``."""

    def __init__(self, events: list[StreamEvent]) -> None:
        super().__init__(lambda r: "ok")
        self.events = events

    def stream(self, request: Request) -> Iterator[Any]:
        yield from self.events


@pytest.fixture(scope="module")
def srv() -> Iterator[ServerThread]:
    with ServerThread(create_app(ScriptedBackend(lambda r: "ok"))) as s:
        yield s


def post(srv: ServerThread, path: str, body: str | bytes | dict[str, Any]) -> httpx2.Response:
    raw = json.dumps(body).encode() if isinstance(body, dict) else body
    raw = raw.encode() if isinstance(raw, str) else raw
    return httpx2.post(srv.url + path, content=raw, headers={"content-type": "application/json"},
                       timeout=10)


def native(r: httpx2.Response, path: str, status: int) -> str:
    """Check ``r`` is the native error of ``path``'s API with ``status``; its message."""
    assert r.status_code == status, r.text
    r.content.decode("utf-8")  # the error itself must be valid UTF-8
    body = r.json()
    if path.startswith("/model/"):
        assert set(body) == {"message"} and r.headers["x-amzn-errortype"], body
        return str(body["message"])
    if path.startswith("/v1/chat"):
        assert set(body["error"]) == {"message", "type", "param", "code"}, body
        return str(body["error"]["message"])
    assert body["type"] == "error" and set(body["error"]) == {"type", "message"}, body
    return str(body["error"]["message"])


def body_with(path: str, content: str) -> str:
    """A minimal request whose one user turn holds ``content`` (raw JSON text)."""
    if path.startswith("/model/"):
        return '{"messages":[{"role":"user","content":' + content + "}]}"
    return '{"model":"m","max_tokens":5,"messages":[{"role":"user","content":' + content + "}]}"


# --- F1: lone surrogates ------------------------------------------------------------------

ALL = [MESSAGES, CONVERSE, STREAM, CHAT]


@pytest.mark.parametrize("path", ALL)
@pytest.mark.parametrize("escape", ["\\ud800", "\\udfff", "x\\udbff", "\\ude00\\ud83d"])
def test_a_lone_surrogate_in_a_string_is_a_native_400(srv: ServerThread, path: str, escape: str) -> None:
    content = f'[{{"text":"hi {escape}"}}]' if path.startswith("/model/") else f'"hi {escape}"'
    message = native(post(srv, path, body_with(path, content)), path, 400)
    assert "unpaired UTF-16 surrogate" in message and "messages.0.content" in message


@pytest.mark.parametrize("path", ALL)
def test_a_lone_surrogate_in_a_key_is_a_400_whose_message_quotes_it_escaped(
    srv: ServerThread, path: str
) -> None:
    r = post(srv, path, body_with(path, '[{"\\ud800":"x"}]'))
    message = native(r, path, 400)
    assert "the key '\\ud800'" in message and "messages.0.content.0" in message
    if path == CHAT:
        assert r.json()["error"]["param"] == "messages.[0].content.[0]"


def test_a_streaming_request_with_a_lone_surrogate_gets_the_400_not_a_stream(srv: ServerThread) -> None:
    raw = '{"model":"m","max_tokens":5,"stream":true,"messages":[{"role":"user","content":"\\udfff"}]}'
    native(post(srv, MESSAGES, raw), MESSAGES, 400)
    native(post(srv, CHAT, raw), CHAT, 400)


@pytest.mark.parametrize("path", ALL)
def test_a_surrogate_pair_and_escaped_backslashes_are_fine(srv: ServerThread, path: str) -> None:
    text = '"smile \\ud83d\\ude00 and a path \\\\ud800"'
    content = f'[{{"text":{text}}}]' if path.startswith("/model/") else text
    assert post(srv, path, body_with(path, content)).status_code == 200


def test_a_lone_surrogate_in_the_backends_answer_is_sent_escaped_not_a_500() -> None:
    with ServerThread(create_app(ScriptedBackend(lambda r: "cut \ud83d"))) as s:
        r = post(s, MESSAGES, body_with(MESSAGES, '"hi"'))
        assert r.status_code == 200 and b"\\ud83d" in r.content
        assert r.json()["content"][0]["text"] == "cut \ud83d"
        raw = '{"model":"m","max_tokens":5,"stream":true,"messages":[{"role":"user","content":"hi"}]}'
        streamed = post(s, CHAT, raw)
        assert streamed.status_code == 200 and b"\\ud83d" in streamed.content
        assert streamed.content.endswith(b"data: [DONE]\n\n")


# --- F6: never a 200 for a stream that produced nothing -----------------------------------

def _stream_request(path: str) -> str:
    if path == STREAM:
        return body_with(path, '[{"text":"hi"}]')
    return '{"model":"m","max_tokens":5,"stream":true,"messages":[{"role":"user","content":"hi"}]}'


@pytest.mark.parametrize("path", [MESSAGES, STREAM, CHAT])
def test_an_empty_stream_is_a_native_error_before_any_200(path: str) -> None:
    with ServerThread(create_app(_Stream([]))) as s:
        message = native(post(s, path, _stream_request(path)), path, 500)
    assert "produced no output" in message


@pytest.mark.parametrize("path", [MESSAGES, STREAM, CHAT])
def test_a_stream_that_ends_without_message_stop_ends_in_an_in_stream_error(path: str) -> None:
    with ServerThread(create_app(_Stream([MessageStart(id="msg_1", model="m")]))) as s:
        r = post(s, path, _stream_request(path))
    assert r.status_code == 200
    if path == CHAT:
        assert not r.content.endswith(b"data: [DONE]\n\n")
        last = json.loads(r.content.strip().split(b"\n\n")[-1].removeprefix(b"data: "))
        assert "incomplete" in last["error"]["message"]
    elif path == MESSAGES:
        assert b"event: error" in r.content and b"event: message_stop" not in r.content
    else:
        assert b"internalServerException" in r.content and b"incomplete" in r.content


# --- accepted-but-invalid inputs ----------------------------------------------------------

def anthropic_image(media_type: str, data: str) -> str:
    return json.dumps([{"type": "image", "source": {"type": "base64", "media_type": media_type,
                                                      "data": data}}, {"type": "text", "text": "?"}])


def bedrock_image(fmt: str, data: str) -> str:
    return json.dumps([{"image": {"format": fmt, "source": {"bytes": data}}}, {"text": "?"}])


def openai_image(url: str) -> str:
    return json.dumps([{"type": "image_url", "image_url": {"url": url}}, {"type": "text", "text": "?"}])


@pytest.mark.parametrize(("path", "content", "needle"), [
    (MESSAGES, anthropic_image("image/png", "not base64!"), "not valid base64"),
    (MESSAGES, anthropic_image("image/png", "iVBORw0KGgo"), "not valid base64"),  # unpadded
    (MESSAGES, anthropic_image("image/png", JPEG), "does not match the provided media type image/png"),
    (MESSAGES, anthropic_image("image/png", base64.b64encode(b"hello world").decode()), "Could not process image"),
    (CONVERSE, bedrock_image("png", "@@@@"), "not valid base64"),
    (CONVERSE, bedrock_image("png", JPEG), "does not match the specified image format (png)"),
    (STREAM, bedrock_image("jpeg", base64.b64encode(b"GIF8").decode()), "Unable to process"),
    (CHAT, openai_image("data:image/png;base64,###"), "invalid base64 encoding"),
    (CHAT, openai_image("data:text/plain;base64," + PNG), "image MIME type"),
    (CHAT, openai_image("data:image/png;base64," + base64.b64encode(b"hello").decode()), "unsupported image"),
])
def test_invalid_image_data_is_refused_natively(srv: ServerThread, path: str, content: str, needle: str) -> None:
    message = native(post(srv, path, body_with(path, content)), path, 400)
    assert needle in message


@pytest.mark.parametrize(("path", "content"), [
    (MESSAGES, anthropic_image("image/png", PNG)),
    (CONVERSE, bedrock_image("jpeg", JPEG)),
    (CHAT, openai_image("data:image/png;base64," + PNG)),
    (CHAT, openai_image("data:image/png;base64," + JPEG)),  # the API reads the type off the bytes
])
def test_valid_image_data_is_accepted(srv: ServerThread, path: str, content: str) -> None:
    assert post(srv, path, body_with(path, content)).status_code == 200, content


@pytest.mark.parametrize("path", [CONVERSE, STREAM])
def test_an_empty_converse_conversation_is_a_validation_exception(srv: ServerThread, path: str) -> None:
    r = post(srv, path, {"messages": []})
    assert "must start with a user message" in native(r, path, 400)
    assert r.headers["x-amzn-errortype"] == "ValidationException"


@pytest.mark.parametrize("path", ["/model//converse", "/model//converse-stream"])
def test_an_empty_model_id_is_a_validation_exception(srv: ServerThread, path: str) -> None:
    r = post(srv, path, {"messages": [{"role": "user", "content": [{"text": "hi"}]}]})
    assert "'modelId'" in native(r, path, 400)
    assert r.headers["x-amzn-errortype"] == "ValidationException"


@pytest.mark.parametrize("path", ["/v1/messages/", "/v1/chat/completions/", "/model/m/converse/"])
def test_a_trailing_slash_is_a_native_404_not_a_bare_redirect(srv: ServerThread, path: str) -> None:
    r = httpx2.post(srv.url + path, json={"model": "m"}, timeout=10, follow_redirects=False)
    native(r, path, 404)


# --- 413 readable by a client that writes its whole body first ----------------------------

@pytest.mark.parametrize("chunked", [False, True])
def test_a_plain_urllib_client_reads_the_413_of_a_40_mb_body(srv: ServerThread, chunked: bool) -> None:
    body = b'{"model": "m", "pad": "' + b"x" * (40 * 1024 * 1024) + b'"}'
    data: Any = body
    if chunked:  # no Content-Length: the cap is found while reading
        data = iter([body[i:i + (1 << 20)] for i in range(0, len(body), 1 << 20)])
    request = urllib.request.Request(srv.url + MESSAGES, data=data, method="POST",
                                     headers={"content-type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(request, timeout=30)
    assert info.value.code == 413
    error = json.loads(info.value.read())
    assert error["error"]["type"] == "request_too_large" and "too large" in error["error"]["message"]


def test_compact_json_out_is_jsons_value_whatever_orjson_cannot_write() -> None:
    """server/http/encoding.py writes compact JSON with orjson where installed; where orjson
    would write another value or refuse (NaN as null, a lone surrogate, a 70-bit integer, an
    integer key), the bytes are json's, as before."""
    import json
    import math

    from tooluse.server.http.encoding import json_bytes

    compact = {"separators": (",", ":")}
    for value in [{"a": [1, 2.5, None, True], "t": "é\n"}, {"big": 2**70, "k": {1: "x"}},
                  {"f": 1e-7, "g": -0.0}]:
        assert json.loads(json_bytes(value, **compact)) == json.loads(
            json.dumps(value, separators=(",", ":")))
    assert json_bytes({"n": float("nan"), "x": None}, **compact) == b'{"n":NaN,"x":null}'
    assert json_bytes({"s": "\ud800"}, **compact) == b'{"s":"\\ud800"}'
    with pytest.raises(ValueError):  # a response body: not JSON, refused as before
        json_bytes({"n": math.inf}, allow_nan=False, **compact)
