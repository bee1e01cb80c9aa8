"""Converse answers validate against botocore's ``bedrock-runtime`` service model (botocore's
own validator: unknown members, missing required ones, types, lengths, unions): the
``Converse`` output whole, each ``ConverseStream`` event's payload against its member of
``ConverseStreamOutput`` (exceptions inside the stream too), and errors against the exception
shape their ``x-amzn-ErrorType`` names; for text, tool use, reasoning (signed and redacted),
cache counts, a ``max_tokens`` stop and a stream that fails after it started."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from botocore.eventstream import EventStreamBuffer
from conformance_backends import DiesMidway, StructuredScript
from conformance_tally import Tally
from conformance_vendor_types import bedrock_model, botocore_errors

from tooluse.backends.scripted import ScriptedBackend
from tooluse.errors import BackendError
from tooluse.server import ServerThread, create_app

API = "converse"
MODEL, VERSION = bedrock_model()
CONVERSE = MODEL.operation_model("Converse")
STREAM = MODEL.operation_model("ConverseStream")
#: Errors AWS answers for any service before the service sees the request (botocore reads
#: them by their code and ``message``; the service model names none of them).
AWS_COMMON_ERRORS = ("UnrecognizedClientException", "InvalidSignatureException",
                     "MissingAuthenticationTokenException")
TOOLS = {"tools": [{"toolSpec": {"name": "get_weather", "description": "Weather in a city",
                                 "inputSchema": {"json": {"type": "object", "properties": {
                                     "city": {"type": "string"}}}}}}]}


@pytest.fixture(scope="module")
def gateway() -> Iterator[ServerThread]:
    with ServerThread(create_app(StructuredScript())) as srv:
        yield srv


def _events(content: bytes) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    buffer = EventStreamBuffer()
    buffer.add_data(content)
    return [(dict(m.headers), json.loads(m.payload)) for m in buffer]


def check_stream(tally: Tally, content: bytes) -> list[str]:
    union = STREAM.output_shape.members["stream"]
    kinds = []
    for headers, payload in _events(content):
        kind = headers.get(":event-type") or headers.get(":exception-type")
        assert kind in union.members, f"{kind} is no member of {union.name}"
        shape = union.members[kind]
        tally.check(API, f"stream {headers[':message-type']}", shape.name, VERSION, payload,
                    lambda p, s=shape: botocore_errors(s, p))
        kinds.append(kind)
    return kinds


@pytest.mark.parametrize("said", ["hello", "weather?", "think", "a long one"])
def test_whole_and_streamed_answers_conform(gateway: ServerThread, tally: Tally,
                                            said: str) -> None:
    body = {"messages": [{"role": "user", "content": [{"text": said}]}], "toolConfig": TOOLS,
            "inferenceConfig": {"maxTokens": 100}}
    whole = httpx2.post(gateway.url + "/model/m/converse", json=body, timeout=30)
    assert whole.status_code == 200, whole.text
    tally.check(API, "response", CONVERSE.output_shape.name, VERSION, whole.json(),
                lambda b: botocore_errors(CONVERSE.output_shape, b))
    streamed = httpx2.post(gateway.url + "/model/m/converse-stream", json=body, timeout=30)
    assert streamed.status_code == 200
    kinds = check_stream(tally, streamed.content)
    assert kinds[0] == "messageStart" and kinds[-1] == "metadata"


def test_a_stream_that_fails_midway_conforms(tally: Tally) -> None:
    with ServerThread(create_app(DiesMidway("overloaded"))) as srv:
        streamed = httpx2.post(srv.url + "/model/m/converse-stream", timeout=30, json={
            "messages": [{"role": "user", "content": [{"text": "x"}]}]})
    assert check_stream(tally, streamed.content)[-1] == "serviceUnavailableException"


def test_errors_conform(gateway: ServerThread, tally: Tally) -> None:
    def error(response: httpx2.Response, status: int) -> None:
        assert response.status_code == status, response.text
        name = response.headers["x-amzn-errortype"].split(":")[0]
        shapes = [s for s in CONVERSE.error_shapes if s.name == name]
        if shapes:
            tally.check(API, f"error {status}", name, VERSION, response.json(),
                        lambda b: botocore_errors(shapes[0], b))
        else:  # an error of AWS's auth layer, common to every service: no shape in the model
            assert name in AWS_COMMON_ERRORS, name
            tally.check(API, f"error {status}", name, "AWS common error: {message}",
                        response.json(), lambda b: [] if isinstance(b, dict) and list(b) == [
                            "message"] and isinstance(b["message"], str) else [repr(b)])

    hi = [{"role": "user", "content": [{"text": "hi"}]}]
    error(httpx2.post(gateway.url + "/model/m/converse", timeout=30,
                      json={"messages": hi, "frob": 1}), 400)
    error(httpx2.post(gateway.url + "/model/m/converse", timeout=30, json={
        "messages": [{"role": "user", "content": [{"text": ""}]}]}), 400)
    with ServerThread(create_app(ScriptedBackend([
            BackendError("prompt is too long: 9000 tokens > 8192 maximum", kind="context_length"),
            BackendError("slow down", kind="rate_limit")]), api_keys=["sk-good"])) as srv:
        auth = {"authorization": "Bearer sk-good"}
        error(httpx2.post(srv.url + "/model/m/converse", json={"messages": hi}, timeout=30,
                          headers={"authorization": "Bearer nope"}), 403)
        error(httpx2.post(srv.url + "/model/m/converse", json={"messages": hi}, timeout=30,
                          headers=auth), 400)
        error(httpx2.post(srv.url + "/model/m/converse", json={"messages": hi}, timeout=30,
                          headers=auth), 429)
