"""The gateway tells where each call came from: a response header on JSON
answers and a log line, streamed or not, while every wire body stays to its API's spec;
``tooluse serve -o`` / ``--preset`` set the backend's options and preset."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx2
import pytest

from tooluse.backends.scripted import ScriptedBackend
from tooluse.messages import CallOrigin, Response, ToolUseBlock, ValueChange
from tooluse.server import create_app
from tooluse.server.apis.call_origins import ORIGINS_HEADER, header_value
from tooluse.server.thread import ServerThread, free_port

EDITED = ToolUseBlock(
    id="toolu_e", name="set_timer", input={"minutes": 10},
    origin=CallOrigin(source="edited", changes=[ValueChange(
        parameter="label", kind="removed", before="timer", rule="optional_from_conversation")],
        steered_by=["focus_values"]))
ADDED = ToolUseBlock(id="toolu_a", name="set_timer", input={"minutes": 15},
                     origin=CallOrigin(source="added", rule="restate"))
PLAIN = ToolUseBlock(id="toolu_m", name="set_timer", input={"minutes": 5})
TIMER = {"name": "set_timer", "description": "Start a timer.", "input_schema": {
    "type": "object", "properties": {"minutes": {"type": "number"}, "label": {"type": "string"}},
    "required": ["minutes"]}}


def test_the_header_names_each_call_with_its_source_and_rules() -> None:
    assert header_value([]) is None
    assert header_value([PLAIN, EDITED, ADDED]) == (
        "toolu_m=model, toolu_e=edited:optional_from_conversation+focus_values, "
        "toolu_a=added:restate")


def _backend() -> ScriptedBackend:
    return ScriptedBackend([Response(content=[PLAIN, EDITED, ADDED], stop_reason="tool_use")
                            for _ in range(4)])


def _origin_keys(value: Any) -> list[str]:
    """Any key of the body that would leak the neutral origin into a wire format."""
    if isinstance(value, dict):
        return [k for k in value if k in ("origin", "steered_by", "changes")] + [
            k for v in value.values() for k in _origin_keys(v)]
    if isinstance(value, list):
        return [k for v in value for k in _origin_keys(v)]
    return []


def test_json_answers_carry_the_header_and_bodies_stay_to_spec(
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="tooluse.server")
    with ServerThread(create_app(_backend())) as server:
        client = anthropic.Anthropic(base_url=server.url, api_key="x", max_retries=0)
        raw = client.messages.with_raw_response.create(
            model="m", max_tokens=64, tools=[TIMER],  # type: ignore[list-item]
            messages=[{"role": "user", "content": "timers"}])
        assert raw.headers[ORIGINS_HEADER] == header_value([PLAIN, EDITED, ADDED])
        body = json.loads(raw.http_response.text)
        assert [b["id"] for b in body["content"]] == ["toolu_m", "toolu_e", "toolu_a"]
        assert _origin_keys(body) == []
        # Chat Completions and Converse: the same header, bodies without an origin.
        chat = httpx2.post(server.url + "/v1/chat/completions", json={
            "model": "m", "messages": [{"role": "user", "content": "timers"}]})
        assert chat.status_code == 200 and ORIGINS_HEADER in chat.headers
        assert _origin_keys(chat.json()) == []
        converse = httpx2.post(server.url + "/model/m/converse", json={
            "messages": [{"role": "user", "content": [{"text": "timers"}]}]})
        assert converse.status_code == 200, converse.text
        assert ORIGINS_HEADER in converse.headers and _origin_keys(converse.json()) == []
        # The Responses API: the same header, its function_call items without an origin.
        answer = httpx2.post(server.url + "/v1/responses", json={
            "model": "m", "input": "timers", "store": False})
        assert answer.status_code == 200, answer.text
        assert answer.headers[ORIGINS_HEADER] == header_value([PLAIN, EDITED, ADDED])
        assert _origin_keys(answer.json()) == []
    lines = [r.getMessage() for r in caplog.records if "not the model's" in r.getMessage()]
    assert len(lines) == 4
    assert "2 of 3 calls" in lines[0] and "added (restate)" in lines[0] \
        and 'label removed "timer" (optional_from_conversation)' in lines[0]


def test_a_stream_logs_the_origins_once_it_is_over(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="tooluse.server")
    with ServerThread(create_app(_backend())) as server:
        client = anthropic.Anthropic(base_url=server.url, api_key="x", max_retries=0)
        with client.messages.stream(model="m", max_tokens=64, tools=[TIMER],  # type: ignore[list-item]
                                    messages=[{"role": "user", "content": "timers"}]) as stream:
            final = stream.get_final_message()
        assert [b.id for b in final.content] == ["toolu_m", "toolu_e", "toolu_a"]  # type: ignore[union-attr]
    deadline = time.monotonic() + 5  # the line is written when the producer thread ends
    while not any("not the model's" in r.getMessage() for r in caplog.records):
        assert time.monotonic() < deadline, "no origins log line for the stream"
        time.sleep(0.05)
    (line,) = [r.getMessage() for r in caplog.records if "not the model's" in r.getMessage()]
    assert "toolu_a set_timer: added (restate)" in line


def test_model_calls_get_a_header_but_no_log_line(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="tooluse.server")
    backend = ScriptedBackend([Response(content=[PLAIN], stop_reason="tool_use")])
    with ServerThread(create_app(backend)) as server:
        answer = httpx2.post(server.url + "/v1/messages", json={
            "model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "x"}]})
    assert answer.headers[ORIGINS_HEADER] == "toolu_m=model"
    assert not [r for r in caplog.records if "not the model's" in r.getMessage()]


def _serve(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tooluse.cli", "serve", "--port",
                           str(free_port()), *args], check=False, capture_output=True, text=True,
                          timeout=60)


def test_serve_refuses_bad_options_and_presets_in_one_line() -> None:
    bad = _serve("--backend", "scripted:hi", "-o", "novalue")
    assert bad.returncode == 2 and "--option must be KEY=VALUE, not 'novalue'" in bad.stderr
    refused = _serve("--backend", "scripted:hi", "-o", "n_threads=1")
    assert refused.returncode == 2 and "does not take these options" in refused.stderr


@pytest.mark.slow
def test_a_preset_that_does_not_exist_is_refused_in_one_line() -> None:
    pytest.importorskip("llama_cpp")
    refused = _serve("--preset", "nope", "-o", "n_threads=1")
    assert refused.returncode == 2
    assert "unknown preset 'nope'; available: en-bfcl" in refused.stderr
    assert "Traceback" not in refused.stderr
    bad_rule = _serve("--preset", "en-bfcl", "-o", "fan_out=maybe", "-o", "n_threads=1")
    assert bad_rule.returncode == 2 and "must be true or false" in bad_rule.stderr


@pytest.fixture()
def local_gateway(request: pytest.FixtureRequest) -> Iterator[tuple[str, list[str]]]:
    pytest.importorskip("llama_cpp")
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "tooluse.cli", "serve", "--backend", "local", "--port", str(port),
         "-o", "n_threads=2", *request.param], stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx2.get(url + "/health", timeout=1).status_code == 200:
                    break
            except httpx2.TransportError:
                pass
            assert proc.poll() is None and time.monotonic() < deadline, "serve did not start"
            time.sleep(0.2)
        yield url, list(request.param)
    finally:
        proc.terminate()
        proc.wait(30)


@pytest.mark.slow
@pytest.mark.parametrize("local_gateway", [(), ("--preset", "en-bfcl")], indirect=True,
                         ids=["default", "preset"])
def test_the_local_model_adds_no_call_unless_a_preset_is_asked_for(
        local_gateway: tuple[str, list[str]]) -> None:
    """The issue's trap: "my last one was for 15 minutes" is no second timer. By default
    the gateway returns the model's one call; the en-bfcl preset adds the 15-minute timer
    (its rule restate), and the header says so."""
    url, args = local_gateway
    answer = httpx2.post(url + "/v1/messages", timeout=120, json={
        "model": "local", "max_tokens": 128, "tools": [TIMER], "tool_choice": {"type": "any"},
        "messages": [{"role": "user", "content":
                      "Set a timer for 10 minutes; my last one was for 15 minutes."}]})
    assert answer.status_code == 200, answer.text
    calls = [b for b in answer.json()["content"] if b["type"] == "tool_use"]
    origins = answer.headers[ORIGINS_HEADER]
    if not args:
        assert len(calls) == 1 and calls[0]["input"]["minutes"] == 10
        assert "added" not in origins and "edited" not in origins
    else:
        assert [c["input"]["minutes"] for c in calls] == [10, 15]
        assert origins.endswith("=added:restate")
