"""Every malformed Messages request answers 400 (or its own status) in the API's error shape,
with a message naming the field; never 500."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest

from tooluse.backends.scripted import ScriptedBackend
from tooluse.errors import BackendError
from tooluse.server import ServerThread, create_app

TOOL = {"name": "get_weather", "description": "d", "input_schema": {"type": "object", "properties": {"location": {"type": "string"}}}}


def base(**over: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}
    body.update(over)
    return body


@pytest.fixture(scope="module")
def srv() -> Iterator[ServerThread]:
    with ServerThread(create_app(ScriptedBackend(lambda r: "ok"), max_body_bytes=20_000)) as s:
        yield s


def post(srv: ServerThread, content: bytes | str, headers: dict[str, str] | None = None) -> httpx2.Response:
    return httpx2.post(f"{srv.url}/v1/messages", content=content,
                       headers={"content-type": "application/json", **(headers or {})}, timeout=10)


def check(r: httpx2.Response, status: int, type_: str, *needles: str) -> None:
    assert r.status_code == status, r.text
    body = r.json()
    assert body["type"] == "error"
    assert body["error"]["type"] == type_
    for needle in needles:
        assert needle in body["error"]["message"], body["error"]["message"]


@pytest.mark.parametrize(
    ("raw", "needle"),
    [
        (b"{not json", "not valid JSON"),
        (b"", "empty"),
        (b"[1, 2]", "must be a JSON object"),
        (b"\"text\"", "must be a JSON object"),
        (b"\xff\xfe{}", "not UTF-8"),
        (b"{\"a\": NaN}", "NaN"),
        (b"[" * 100_00 + b"]" * 100_00, ""),
    ],
)
def test_unparseable_bodies(srv: ServerThread, raw: bytes, needle: str) -> None:
    check(post(srv, raw), 400, "invalid_request_error", needle)


CASES: list[tuple[dict[str, Any], str]] = [
    ({"model": "m", "messages": [{"role": "user", "content": "hi"}]}, "max_tokens"),
    (base(max_tokens="ten"), "max_tokens"),
    (base(max_tokens=0), "max_tokens"),
    (base(model=None), "model"),
    (base(messages="hi"), "messages"),
    (base(messages=[{"role": "robot", "content": "hi"}]), "messages.0.role"),
    (base(messages=[{"role": "user", "content": [{"type": "video", "url": "x"}]}]), "messages.0.content.0"),
    (base(stream="yes"), "stream"),
    (base(temperature="hot"), "temperature"),
    (base(stop_sequences="STOP"), "stop_sequences"),
    (base(tools=[{"name": "bad name!", "input_schema": {"type": "object"}}]), "tools.0.name"),
    (base(tools=[{"name": "x" * 65, "input_schema": {"type": "object"}}]), "tools.0.name"),
    (base(tools=[{"name": "t"}]), "tools.0.input_schema"),
    (base(tools=[{"name": "t", "input_schema": {"type": "array"}}]), "tools.0.input_schema"),
    (base(tools=[{"name": "t", "input_schema": {"type": "object", "oneOf": [{}, {}]}}]), "tools.0.input_schema"),
    (base(tools=[{"name": "t", "input_schema": {"type": "object", "properties": {"a": {"type": "strin"}}}}]), "tools.0.input_schema"),
    (base(tools=[TOOL, TOOL]), "tools"),
    (base(tools="get_weather"), "tools"),
    (base(tools=[TOOL], tool_choice={"type": "sometimes"}), "tool_choice"),
    (base(tools=[TOOL], tool_choice={"type": "tool"}), "tool_choice"),
    (base(tools=[TOOL], tool_choice={"type": "tool", "name": "nope"}), "tool_choice"),
    (base(tools=[TOOL], tool_choice={"type": "auto", "disable_parallel_tool_use": "yes"}), "tool_choice"),
    (base(messages=[
        {"role": "user", "content": "w?"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}}]},
        {"role": "user", "content": "no result"},
    ], tools=[TOOL]), "tool_use"),
    (base(messages=[
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_9", "content": "x"}]},
    ], tools=[TOOL]), "tool_use_id"),
    (base(messages=[
        {"role": "user", "content": "w?"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": "Paris"}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1"}]},
    ], tools=[TOOL]), "messages.1.content.0.input"),
    (base(messages=[
        {"role": "user", "content": "w?"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "is_error": "true"}]},
    ], tools=[TOOL]), "is_error"),
    (base(messages=[{"role": "user", "content": [
        {"type": "image", "source": {"type": "base64", "data": "iVBORw0KGgo="}}]}]),
     "messages.0.content.0"),
]


@pytest.mark.parametrize(("body", "field"), CASES, ids=[c[1] + f"-{i}" for i, c in enumerate(CASES)])
def test_invalid_requests_name_the_field(srv: ServerThread, body: dict[str, Any], field: str) -> None:
    check(post(srv, json.dumps(body)), 400, "invalid_request_error", field)


def test_body_cap_413(srv: ServerThread) -> None:
    big = base(messages=[{"role": "user", "content": "x" * 30_000}])
    check(post(srv, json.dumps(big)), 413, "request_too_large", "20000")


def test_body_cap_enforced_while_reading_chunked(srv: ServerThread) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "'
        for _ in range(100):
            yield b"y" * 1000
        yield b'"}]}'

    r = httpx2.post(f"{srv.url}/v1/messages", content=chunks(), timeout=10)  # no Content-Length
    check(r, 413, "request_too_large")


def test_unknown_path_and_method(srv: ServerThread) -> None:
    r = httpx2.get(f"{srv.url}/v1/messages", timeout=10)
    check(r, 405, "invalid_request_error", "GET")
    r = httpx2.post(f"{srv.url}/v1/nothing", json={}, timeout=10)
    check(r, 404, "not_found_error", "/v1/nothing")


@pytest.mark.parametrize(
    ("exc", "status", "type_"),
    [
        (BackendError("slow down", kind="rate_limit", retry_after=3), 429, "rate_limit_error"),
        (BackendError("busy", kind="overloaded"), 529, "overloaded_error"),
        (BackendError("upstream broke", kind="api"), 500, "api_error"),
        (BackendError("bad upstream key", kind="authentication"), 401, "authentication_error"),
        (BackendError("no such model", kind="not_found"), 404, "not_found_error"),
        (RuntimeError("secret /internal/path exploded"), 500, "api_error"),
    ],
)
@pytest.mark.parametrize("stream", [False, True])
def test_backend_failures_map_to_native_errors(exc: BaseException, status: int, type_: str, stream: bool) -> None:
    with ServerThread(create_app(ScriptedBackend([exc]))) as s:
        r = post(s, json.dumps(base(stream=stream)))
    check(r, status, type_)
    assert "secret" not in r.text and "Traceback" not in r.text
    if status == 429:
        assert r.headers["retry-after"] == "3"


def test_error_after_stream_started_is_an_sse_error_event() -> None:
    from tooluse.backend import Backend
    from tooluse.messages import TextBlock
    from tooluse.stream import BlockStart, MessageStart, TextDelta

    class Dies(Backend):
        def stream(self, request):  # type: ignore[no-untyped-def]
            yield MessageStart(id="msg_1", model="m")
            yield BlockStart(index=0, block=TextBlock(text=""))
            yield TextDelta(index=0, text="partial")
            raise BackendError("model crashed", kind="overloaded")

    with ServerThread(create_app(Dies())) as s:
        r = post(s, json.dumps(base(stream=True)))
    assert r.status_code == 200
    frames = [f for f in r.text.split("\n\n") if f]
    assert frames[0].startswith("event: message_start\n")
    assert frames[1] == 'event: ping\ndata: {"type":"ping"}'
    assert frames[-1].startswith("event: error\ndata: ")
    err = json.loads(frames[-1].split("data: ", 1)[1])
    assert err == {"type": "error", "error": {"type": "overloaded_error", "message": "model crashed"}}


@pytest.mark.parametrize("stream", [False, True])
def test_answer_the_api_cannot_carry_is_a_500_not_a_400(stream: bool) -> None:
    """A backend answering with an image block: the request was fine, so not a 400."""
    from tooluse.messages import ImageBlock, Response

    bad = Response(content=[ImageBlock(media_type="image/png", data="AAAA")], stop_reason="end_turn")
    with ServerThread(create_app(ScriptedBackend(lambda r: bad))) as s:
        r = post(s, json.dumps(base(stream=stream)))
    if not stream:
        check(r, 500, "api_error", "could not be sent")
        return
    # the stream had started (message_start) before the image block came: an error event
    last = [f for f in r.text.split("\n\n") if f][-1]
    assert last.startswith("event: error\n")
    error = json.loads(last.split("data: ", 1)[1])["error"]
    assert error["type"] == "api_error" and "cannot hold a image block" in error["message"]
