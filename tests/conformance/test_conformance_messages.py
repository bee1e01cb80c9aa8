"""``/v1/messages`` answers validate against the anthropic SDK's own response types, strictly
(a field the type does not have is an error, as is a missing or mistyped one): the message
(``Message``), every stream event (``RawMessageStreamEvent``), errors before and inside a
stream (``ErrorResponse``) and ``count_tokens`` (``MessageTokensCount``); for text, tool use,
signed and redacted thinking, cache counts, ``max_tokens`` and ``stop_sequence`` stops."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from anthropic import types
from conformance_backends import DiesMidway, StructuredScript, sse_events
from conformance_tally import Tally
from conformance_vendor_types import anthropic_errors, anthropic_version

from tooluse.backends.scripted import ScriptedBackend
from tooluse.errors import BackendError
from tooluse.server import ServerThread, create_app

API = "messages"
VERSION = anthropic_version()
WEATHER = {"name": "get_weather", "description": "Weather in a city",
           "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}


@pytest.fixture(scope="module")
def gateway() -> Iterator[ServerThread]:
    with ServerThread(create_app(StructuredScript(),
                                 api_keys=["sk-good"])) as srv:
        yield srv


def _post(url: str, body: dict[str, Any], key: str = "sk-good",
          path: str = "/v1/messages") -> httpx2.Response:
    return httpx2.post(url + path, json=body, timeout=30, headers={"x-api-key": key})


def check(tally: Tally, kind: str, tp: Any, value: Any) -> None:
    tally.check(API, kind, tp.__name__ if hasattr(tp, "__name__") else str(tp), VERSION, value,
                lambda v: anthropic_errors(tp, v))


def check_event(tally: Tally, event: dict[str, Any]) -> None:
    if event["type"] == "ping":
        # the API's keep-alive, which the SDK reads past (it has no type for it): the
        # documented shape, nothing more
        tally.check(API, "ping", '{"type": "ping"}', "the API's documented ping", event,
                    lambda v: [] if v == {"type": "ping"} else [f"not a bare ping: {v}"])
    elif event["type"] == "error":
        check(tally, "in-stream error", types.ErrorResponse, event)
    else:
        tally.check(API, "stream event", "RawMessageStreamEvent", VERSION, event,
                    lambda v: anthropic_errors(types.RawMessageStreamEvent, v))


@pytest.mark.parametrize("said", ["hello", "weather?", "think", "a long one", "stop at three"])
def test_whole_and_streamed_messages_conform(gateway: ServerThread, tally: Tally,
                                             said: str) -> None:
    body = {"model": "claude-test", "max_tokens": 100, "tools": [WEATHER],
            "messages": [{"role": "user", "content": said}]}
    whole = _post(gateway.url, body)
    assert whole.status_code == 200, whole.text
    check(tally, "message", types.Message, whole.json())
    events = sse_events(_post(gateway.url, {**body, "stream": True}))
    assert events[0]["type"] == "message_start" and events[-1]["type"] == "message_stop"
    for event in events:
        check_event(tally, event)


def test_count_tokens_conforms(gateway: ServerThread, tally: Tally) -> None:
    counted = _post(gateway.url, {"model": "m", "messages": [{"role": "user", "content": "hi"}]},
                    path="/v1/messages/count_tokens")
    assert counted.status_code == 200
    check(tally, "count_tokens", types.MessageTokensCount, counted.json())


def test_a_stream_that_fails_midway_conforms(tally: Tally) -> None:
    with ServerThread(create_app(DiesMidway("overloaded"))) as srv:
        events = sse_events(httpx2.post(srv.url + "/v1/messages", timeout=30, json={
            "model": "m", "max_tokens": 10, "stream": True,
            "messages": [{"role": "user", "content": "x"}]}))
    assert events[-1]["type"] == "error"
    for event in events:
        check_event(tally, event)


def test_errors_conform(gateway: ServerThread, tally: Tally) -> None:
    def error(response: httpx2.Response, status: int) -> None:
        assert response.status_code == status, response.text
        check(tally, f"error {status}", types.ErrorResponse, response.json())

    hi = [{"role": "user", "content": "hi"}]
    error(_post(gateway.url, {"model": "m", "max_tokens": 10, "messages": hi, "frob": 1}), 400)
    error(_post(gateway.url, {"model": "m", "max_tokens": 10, "messages": hi}, key="bad"), 401)
    error(_post(gateway.url, {"model": "m", "max_tokens": 10, "messages": [
        {"role": "user", "content": "hi"}, {"role": "user", "content": "x",
                                             "output_config": {"effort": "low"}}]}), 400)
    with ServerThread(create_app(ScriptedBackend([
            BackendError("prompt is too long: 9000 tokens > 8192 maximum", kind="context_length"),
            BackendError("busy", kind="overloaded")]))) as srv:
        error(httpx2.post(srv.url + "/v1/messages", json={"model": "m", "max_tokens": 10,
                                                           "messages": hi}, timeout=30), 400)
        error(httpx2.post(srv.url + "/v1/messages", json={"model": "m", "max_tokens": 10,
                                                           "messages": hi}, timeout=30), 529)
