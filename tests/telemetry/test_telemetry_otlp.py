"""OpenTelemetry switched on the standard way, end to end: the ``OTEL_*``
variables alone make ``tooluse serve`` and a plain script using the runner export their spans
over OTLP/HTTP, here to a receiver in the test that decodes the protobuf POSTs on
``/v1/traces`` with opentelemetry-proto. Without the variables nothing of OpenTelemetry is
even imported; a configuration that cannot be followed stops ``tooluse serve`` with one line."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx2
import pytest

pytest.importorskip("opentelemetry.sdk", reason="needs the [otel] extra: pip install 'tooluse[otel]'")
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

from tooluse.server.thread import free_port


def _value(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return tuple(_value(v) for v in value.array_value.values)
    return getattr(value, kind) if kind else None


class Received:
    """What the receiver decoded: (resource attributes, scope name, span) per span."""

    def __init__(self) -> None:
        self.spans: list[tuple[dict[str, Any], str, Any]] = []
        self.paths: list[str] = []
        self.lock = threading.Lock()

    def add(self, path: str, body: bytes) -> None:
        request = ExportTraceServiceRequest.FromString(body)
        with self.lock:
            self.paths.append(path)
            for resource_spans in request.resource_spans:
                resource = {a.key: _value(a.value) for a in resource_spans.resource.attributes}
                for scope_spans in resource_spans.scope_spans:
                    for span in scope_spans.spans:
                        self.spans.append((resource, scope_spans.scope.name, span))

    def wait_for(self, *names: str, timeout: float = 20) -> dict[str, tuple[dict[str, Any], str, Any]]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                found = {span.name: (r, s, span) for r, s, span in self.spans}
            if all(name in found for name in names):
                return found
            time.sleep(0.05)
        raise AssertionError(f"no spans {names} arrived; got {sorted(found)}")


@pytest.fixture()
def receiver() -> Iterator[tuple[str, Received]]:
    received = Received()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            assert self.headers["Content-Type"] == "application/x-protobuf"
            received.add(self.path, body)
            reply = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, *args: Any) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", received
    finally:
        server.shutdown()
        server.server_close()


def _env(**otel: str) -> dict[str, str]:
    """This process's environment without any OTEL_* variable, plus ``otel``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env.update(otel)
    return env


def _attributes(span: Any) -> dict[str, Any]:
    return {a.key: _value(a.value) for a in span.attributes}


def test_tooluse_serve_exports_its_spans_as_the_otel_variables_say(
        receiver: tuple[str, Received]) -> None:
    endpoint, received = receiver
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "tooluse.cli", "serve", "--port", str(port), "--log-level",
         "warning", "--backend", 'scripted:call:get_weather {"city": "Paris"}'],
        env=_env(OTEL_EXPORTER_OTLP_ENDPOINT=endpoint, OTEL_SERVICE_NAME="gateway-under-test",
                 OTEL_BSP_SCHEDULE_DELAY="50"),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx2.get(url + "/health", timeout=1).status_code == 200:
                    break
            except httpx2.TransportError:
                pass
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()[0]
            time.sleep(0.1)
        trace_id, parent_id = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
        reply = httpx2.post(url + "/v1/messages", headers={
            "traceparent": f"00-{trace_id}-{parent_id}-01"}, json={
            "model": "m-otlp", "max_tokens": 32, "messages": [{"role": "user", "content": "hi"}],
            "tools": [{"name": "get_weather", "input_schema": {"type": "object"}}]})
        assert reply.status_code == 200, reply.text
        resource, scope, span = received.wait_for("chat m-otlp")["chat m-otlp"]
    finally:
        proc.terminate()
        out = proc.communicate(timeout=15)[0]
    assert "OpenTelemetry spans on" in out
    assert received.paths and set(received.paths) == {"/v1/traces"}
    assert resource["service.name"] == "gateway-under-test"
    assert scope == "tooluse"
    assert span.trace_id.hex() == trace_id and span.parent_span_id.hex() == parent_id
    attrs = _attributes(span)
    assert attrs["gen_ai.operation.name"] == "chat"
    assert attrs["gen_ai.request.model"] == attrs["gen_ai.response.model"] == "m-otlp"
    assert attrs["gen_ai.response.id"] == reply.json()["id"]
    assert attrs["gen_ai.response.finish_reasons"] == ("tool_call",)
    assert attrs["tooluse.api"] == "messages"
    assert [(e.name, _attributes(e)["gen_ai.tool.name"]) for e in span.events] == [
        ("tooluse.tool_call", "get_weather")]


RUN_SCRIPT = textwrap.dedent("""
    from tooluse import Runner

    def add(a: int, b: int) -> int:
        "Add two numbers."
        return a + b

    steps = '[{"call": "add", "input": {"a": 2, "b": 3}}, "5"]'
    print(Runner("scripted:" + steps, [add]).run("2+3?").text)
""")


def test_a_plain_script_with_the_runner_exports_when_the_variables_say(
        receiver: tuple[str, Received]) -> None:
    endpoint, received = receiver
    done = subprocess.run([sys.executable, "-c", RUN_SCRIPT], capture_output=True, text=True, check=False,
                          timeout=60, env=_env(OTEL_TRACES_EXPORTER="otlp",
                                               OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=endpoint
                                               + "/v1/traces"))
    assert done.returncode == 0 and done.stdout.strip() == "5", done.stderr
    # the SDK flushed its batch at exit: everything is here without waiting
    found = received.wait_for("invoke_agent", "chat scripted", "execute_tool add", timeout=1)
    resource, _, agent = found["invoke_agent"]
    assert resource["service.name"] == "tooluse"  # no OTEL_SERVICE_NAME: tooluse's default
    tool = found["execute_tool add"][2]
    assert tool.parent_span_id == agent.span_id and tool.trace_id == agent.trace_id
    assert _attributes(tool)["gen_ai.tool.call.id"] == "toolu_scripted_0001"
    assert len([s for _, _, s in received.spans if s.name == "chat scripted"]) == 2


OFF_SCRIPT = textwrap.dedent("""
    import sys
    from starlette.testclient import TestClient
    from tooluse import Runner, telemetry
    from tooluse.server import create_app

    with TestClient(create_app("scripted:hello")) as client:
        assert client.post("/v1/messages", json={"model": "m", "max_tokens": 8, "messages": [
            {"role": "user", "content": "x"}]}).status_code == 200
    Runner("scripted:fine", []).run("x")
    print(telemetry.tracer() is None, "opentelemetry.trace" in sys.modules)
""")


@pytest.mark.parametrize("otel", [{}, {"OTEL_SDK_DISABLED": "true",
                                       "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"},
                                  {"OTEL_TRACES_EXPORTER": "none"}],
                         ids=["no-variables", "sdk-disabled", "exporter-none"])
def test_off_nothing_of_opentelemetry_is_imported(otel: dict[str, str]) -> None:
    done = subprocess.run([sys.executable, "-c", OFF_SCRIPT], capture_output=True, text=True, check=False,
                          timeout=60, env=_env(**otel))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "False"]


@pytest.mark.parametrize(("otel", "says"), [
    ({"OTEL_TRACES_EXPORTER": "nosuch"}, "OTEL_TRACES_EXPORTER names 'nosuch'"),
    ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9", "OTEL_EXPORTER_OTLP_PROTOCOL": "smoke"},
     "OTEL_EXPORTER_OTLP_PROTOCOL='smoke' is not one of grpc, http/protobuf"),
    ({"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
     "OTEL_TRACES_EXPORTER names 'otlp_proto_grpc', which no installed package provides"),
])
def test_a_configuration_that_cannot_be_followed_stops_serve_with_one_line(
        otel: dict[str, str], says: str) -> None:
    done = subprocess.run([sys.executable, "-m", "tooluse.cli", "serve", "--backend", "scripted:x",
                           "--port", str(free_port())], capture_output=True, text=True, check=False,
                          timeout=60, env=_env(**otel))
    assert done.returncode == 2
    assert done.stderr.startswith("tooluse serve: cannot start: ") and says in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_without_the_sdk_serve_says_so_and_serves_without_spans() -> None:
    # variables set for other programs must not stop a gateway installed without [otel]
    port = free_port()
    blocked = ("import sys; sys.modules['opentelemetry.sdk'] = None; from tooluse.cli import "
               f"main; sys.exit(main(['serve', '--backend', 'scripted:x', '--port', '{port}']))")
    proc = subprocess.Popen([sys.executable, "-c", blocked], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True,
                            env=_env(OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:9"))
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx2.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                    break
            except httpx2.TransportError:
                pass
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()[0]
            time.sleep(0.1)
    finally:
        proc.terminate()
        out = proc.communicate(timeout=15)[0]
    assert ("tooluse serve: OpenTelemetry stays off: OTEL_* variables ask for traces but "
            "OpenTelemetry's SDK is not installed") in out
    assert "pip install 'tooluse[otel]'" in out
