"""The gateway benchmark's own parts: the instant upstream must speak both wire formats as
the official SDKs read them, and the load generator must refuse answers that lost the tool
call — otherwise a broken proxy would look fast."""

from __future__ import annotations

import asyncio
import copy
import importlib.util
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "gateway"
sys.path.insert(0, str(BENCH))

import canned  # noqa: E402
import canned_converse  # noqa: E402
import canned_responses  # noqa: E402
import loadgen  # noqa: E402
import procs  # noqa: E402
from upstream import Upstream  # noqa: E402


def _load(name: str, file: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, BENCH / file)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


gw_run = _load("bench_gateway_run", "run.py")


def _anthropic_sse(events: list[tuple[str, dict]]) -> bytes:
    return b"".join(f"event: {n}\ndata: {json.dumps(d)}\n\n".encode() for n, d in events)


def _openai_sse(chunks: list[dict]) -> bytes:
    return b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in chunks) + b"data: [DONE]\n\n"


# -- answer checking ----------------------------------------------------------------------------


def test_check_body_accepts_the_canned_answers() -> None:
    ok = loadgen.check_body
    assert ok("anthropic", False, 200, json.dumps(canned.anthropic_message("m")).encode()) is None
    assert ok("anthropic", True, 200, _anthropic_sse(canned.anthropic_sse_events("m"))) is None
    assert ok("openai", False, 200, json.dumps(canned.openai_completion("m")).encode()) is None
    for usage in (True, False):
        body = _openai_sse(canned.openai_sse_chunks("m", include_usage=usage))
        assert ok("openai", True, 200, body) is None


def test_check_body_rejects_lost_streamed_tool_arguments() -> None:
    events = [
        e for e in canned.anthropic_sse_events("m") if e[1].get("delta", {}).get("type") != "input_json_delta"
    ]
    problem = loadgen.check_body("anthropic", True, 200, _anthropic_sse(events))
    assert problem is not None and "unreadable" in problem  # "" is not JSON
    chunks = canned.openai_sse_chunks("m", include_usage=False)
    del chunks[-3]  # one argument piece missing
    problem = loadgen.check_body("openai", True, 200, _openai_sse(chunks))
    assert problem is not None


def test_check_body_rejects_errors_and_wrong_answers() -> None:
    msg = canned.anthropic_message("m")
    assert loadgen.check_body("anthropic", False, 500, b"{}") == "HTTP 500: b'{}'"
    wrong = copy.deepcopy(msg)
    wrong["content"][1]["input"] = {"location": "Paris"}
    assert "tool input" in (loadgen.check_body("anthropic", False, 200, json.dumps(wrong).encode()) or "")
    wrong = copy.deepcopy(msg)
    wrong["stop_reason"] = "end_turn"
    assert "stop_reason" in (loadgen.check_body("anthropic", False, 200, json.dumps(wrong).encode()) or "")
    unfinished = _anthropic_sse(canned.anthropic_sse_events("m")[:-1])
    assert "message_stop" in (loadgen.check_body("anthropic", True, 200, unfinished) or "")
    no_done = _openai_sse(canned.openai_sse_chunks("m", include_usage=False))[: -len(b"data: [DONE]\n\n")]
    assert "[DONE]" in (loadgen.check_body("openai", True, 200, no_done) or "")
    completion = canned.openai_completion("m")
    completion["choices"][0]["finish_reason"] = "stop"
    assert "finish_reason" in (loadgen.check_body("openai", False, 200, json.dumps(completion).encode()) or "")
    assert loadgen.check_body("openai", False, 200, b"not json") is not None


def test_check_body_reads_the_responses_wire() -> None:
    ok = loadgen.check_body
    events = canned_responses.responses_sse_events("m")
    assert ok("responses", False, 200,
              json.dumps(canned_responses.response_object("m")).encode()) is None
    assert ok("responses", True, 200, _anthropic_sse(events)) is None
    assert ok("responses", True, 200, _anthropic_sse(events) + b"data: [DONE]\n\n") is None
    lost = [e for e in copy.deepcopy(events) if e[0] != "response.function_call_arguments.delta"]
    for n, (_, data) in enumerate(lost):
        data["sequence_number"] = n
    assert "streamed arguments" in (ok("responses", True, 200, _anthropic_sse(lost)) or "")
    unnumbered = copy.deepcopy(events)
    unnumbered[3][1]["sequence_number"] = 7
    assert "numbered" in (ok("responses", True, 200, _anthropic_sse(unnumbered)) or "")
    assert "response.completed" in (ok("responses", True, 200, _anthropic_sse(events[:-1])) or "")
    wrong = canned_responses.response_object("m")
    wrong["output"][1]["arguments"] = '{"location": "Paris"}'
    assert "arguments" in (ok("responses", False, 200, json.dumps(wrong).encode()) or "")


def test_percentile_is_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert loadgen.percentile(values, 50) == 50.0
    assert loadgen.percentile(values, 99) == 99.0
    assert loadgen.percentile(values, 100) == 100.0
    assert loadgen.percentile([3.0], 99) == 3.0
    assert loadgen.percentile([], 50) != loadgen.percentile([], 50)  # nan


# -- the upstream's routing (no sockets) ---------------------------------------------------------


def test_upstream_routes_and_counts() -> None:
    up = Upstream()
    status, ctype, body = up.answer("POST", "/v1/messages", json.dumps(canned.anthropic_request("x")).encode())
    assert status == 200 and ctype == "application/json"
    assert json.loads(body)["model"] == "x"
    status, ctype, frames = up.answer(
        "POST", "/v1/chat/completions", json.dumps(canned.openai_request(stream=True)).encode()
    )
    assert status == 200 and ctype == "text/event-stream" and isinstance(frames, list)
    status, ctype, frames = up.answer(
        "POST", "/v1/responses", json.dumps(canned_responses.responses_request("x")).encode())
    assert status == 200 and json.loads(frames)["output"][1]["name"] == canned.TOOL_NAME
    status, ctype, frames = up.answer(
        "POST", "/model/x/converse-stream", json.dumps(canned_converse.converse_request("x")).encode())
    assert status == 200 and ctype == "application/vnd.amazon.eventstream"
    assert loadgen.check_body("converse", True, 200, b"".join(frames)) is None
    assert up.served == {"anthropic": 1, "openai": 1, "responses": 1, "converse": 1}
    assert up.answer("POST", "/v1/messages", b"[1]")[0] == 400
    assert up.answer("POST", "/v1/messages", b'{"model": "x"}')[0] == 400  # no tools
    assert up.answer("POST", "/nope", b"{}")[0] == 404
    assert up.answer("POST", "/model/x/converse", b'{"messages": []}')[0] == 400  # no tools
    assert up.served == {"anthropic": 1, "openai": 1, "responses": 1, "converse": 1}


# -- the upstream over HTTP, read by the official SDKs -------------------------------------------


@pytest.fixture(scope="module")
def upstream_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = procs.free_port()
    server = procs.ServerProcess(
        "upstream",
        [sys.executable, str(BENCH / "upstream.py"), "--port", str(port)],
        ready_url=f"http://127.0.0.1:{port}/stats",
        log_path=tmp_path_factory.mktemp("gwbench") / "upstream.log",
    )
    server.start()
    try:
        server.wait_ready(30)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.stop()
    assert server.proc is not None and server.proc.poll() is not None


@pytest.mark.slow
def test_upstream_speaks_anthropic_as_the_sdk_reads_it(upstream_url: str) -> None:
    anthropic = pytest.importorskip("anthropic")
    client = anthropic.Anthropic(base_url=upstream_url, api_key="k", max_retries=0)
    message = client.messages.create(**canned.anthropic_request())
    assert message.stop_reason == "tool_use"
    assert message.content[1].input == canned.TOOL_INPUT
    with client.messages.stream(**canned.anthropic_request()) as stream:
        final = stream.get_final_message()
    assert final.content[1].name == canned.TOOL_NAME
    assert final.content[1].input == canned.TOOL_INPUT
    assert final.usage.output_tokens == 58


@pytest.mark.slow
def test_upstream_speaks_openai_as_the_sdk_reads_it(upstream_url: str) -> None:
    openai = pytest.importorskip("openai")
    client = openai.OpenAI(base_url=f"{upstream_url}/v1", api_key="k", max_retries=0)
    completion = client.chat.completions.create(**canned.openai_request())
    call = completion.choices[0].message.tool_calls[0]
    assert json.loads(call.function.arguments) == canned.TOOL_INPUT
    args = []
    usage = None
    for chunk in client.chat.completions.create(**canned.openai_request(stream=True)):
        for choice in chunk.choices:
            for delta in choice.delta.tool_calls or []:
                args.append(delta.function.arguments or "")
        usage = chunk.usage or usage
    assert json.loads("".join(args)) == canned.TOOL_INPUT
    assert usage is not None and usage.total_tokens == 470


@pytest.mark.slow
def test_upstream_speaks_responses_as_the_sdk_reads_it(upstream_url: str) -> None:
    openai = pytest.importorskip("openai")
    client = openai.OpenAI(base_url=f"{upstream_url}/v1", api_key="k", max_retries=0)
    response = client.responses.create(**canned_responses.responses_request(canned.MODEL))
    call = response.output[1]
    assert call.type == "function_call" and json.loads(call.arguments) == canned.TOOL_INPUT
    assert response.output_text == canned.TEXT
    with client.responses.stream(**canned_responses.responses_request(canned.MODEL)) as stream:
        final = stream.get_final_response()
    assert json.loads(final.output[1].arguments) == canned.TOOL_INPUT
    assert final.usage is not None and final.usage.total_tokens == 470


@pytest.mark.slow
def test_load_generator_times_and_checks_every_request(upstream_url: str) -> None:
    for wire in ("anthropic", "openai", "responses"):
        endpoint = loadgen.Endpoint(upstream_url, wire)
        for stream in (False, True):
            result = asyncio.run(loadgen.latency(endpoint, stream=stream, warmup=2, requests=30))
            assert result.errors == 0, result.first_error
            assert len(result.total_ms) == 30
            assert all(0 < t <= total for t, total in zip(result.ttfb_ms, result.total_ms))
            thr = asyncio.run(
                loadgen.throughput(endpoint, stream=stream, concurrency=4, seconds=0.3, max_requests=40)
            )
            assert thr.errors == 0 and 0 < thr.completed <= 40 and thr.rps > 0
    # A request that fails is counted as an error, not timed.
    closed = loadgen.Endpoint(f"http://127.0.0.1:{procs.free_port()}", "anthropic")
    result = asyncio.run(loadgen.latency(closed, stream=False, warmup=0, requests=3))
    assert result.errors == 3 and result.total_ms == [] and "ConnectError" in (result.first_error or "")


# -- run.py pieces --------------------------------------------------------------------------------


def test_find_litellm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LITELLM_BIN", raising=False)
    assert gw_run.find_litellm(str(tmp_path / "missing")) is None
    exe = tmp_path / "venv" / "bin" / "litellm"
    exe.parent.mkdir(parents=True)
    exe.write_text("#!/usr/bin/env python\n")
    exe.chmod(0o755)
    assert gw_run.find_litellm(str(tmp_path / "venv")) == exe
    assert gw_run.find_litellm(str(exe)) == exe
    monkeypatch.setenv("LITELLM_BIN", str(exe))
    assert gw_run.find_litellm(None) == exe


def test_missing_litellm_is_a_clear_message(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, str(BENCH / "run.py"), "--litellm", str(tmp_path / "nowhere"), "--no-write"],
        capture_output=True, text=True, timeout=60,
    )
    assert out.returncode == 2
    assert "LiteLLM's proxy was not found" in out.stderr and "pip install 'litellm[proxy]'" in out.stderr


def test_write_report_keeps_text_around_the_results(tmp_path: Path) -> None:
    doc = tmp_path / "gateway.md"
    gw_run.write_report(doc, "first")
    assert "first" in doc.read_text()
    doc.write_text(doc.read_text().replace("# Gateway", "# Gateway\n\nintro") + "\nnotes after\n")
    gw_run.write_report(doc, "second")
    text = doc.read_text()
    assert "second" in text and "first" not in text
    assert "intro" in text and "notes after" in text


@pytest.mark.slow
def test_run_end_to_end_on_the_direct_path(tmp_path: Path) -> None:
    out = subprocess.run(
        [
            sys.executable, str(BENCH / "run.py"), "--paths", "direct", "--requests", "20",
            "--warmup", "2", "--seconds", "0.3", "--rounds", "1", "--concurrency", "2",
            "--output", str(tmp_path / "gw.md"), "--logs", str(tmp_path / "logs"),
        ],
        capture_output=True, text=True, timeout=300, env={**os.environ, "LITELLM_BIN": ""},
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "| direct to upstream (baseline) |" in out.stdout
    assert "/v1/chat/completions" in out.stdout and "/v1/messages" in out.stdout
    assert "/v1/responses" in out.stdout
    assert "| 0 / " in out.stdout  # no errors
    assert gw_run.MARK_START in (tmp_path / "gw.md").read_text()


@pytest.mark.slow
def test_run_end_to_end_through_the_tooluse_gateway(tmp_path: Path) -> None:
    """Both tooluse paths, all four wire formats, JSON and streamed: every answer must carry the tool
    call intact (the load generator checks each one) and the upstream must see every request."""
    pytest.importorskip("uvicorn")
    out = subprocess.run(
        [
            sys.executable, str(BENCH / "run.py"), "--paths", "tooluse", "tooluse-inproc",
            "--requests", "15", "--warmup", "2", "--seconds", "0.3", "--rounds", "1",
            "--concurrency", "2", "--no-write", "--logs", str(tmp_path / "logs"),
        ],
        capture_output=True, text=True, timeout=300,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    rows = [line for line in out.stdout.splitlines() if line.startswith("| tooluse gateway")]
    assert len(rows) == 16, out.stdout  # 2 paths x 4 wires x (json, stream)
    assert "### The targets" in out.stdout and "| Bedrock Converse | stream |" in out.stdout
    assert all("| 0 / " in row for row in rows), out.stdout
    assert "Problems seen" not in out.stdout, out.stdout


@pytest.mark.slow
def test_run_measures_the_gateway_with_one_and_two_workers(tmp_path: Path) -> None:
    """``--workers 1 2``: the tooluse path once per worker count, each answer checked, the
    upstream seeing every request the two workers forwarded."""
    pytest.importorskip("uvicorn")
    out = subprocess.run(
        [
            sys.executable, str(BENCH / "run.py"), "--paths", "tooluse", "--wires", "anthropic",
            "--workers", "1", "2", "--requests", "10", "--warmup", "2", "--seconds", "0.3",
            "--rounds", "1", "--concurrency", "4", "--no-write", "--logs", str(tmp_path / "logs"),
        ],
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    one = [line for line in out.stdout.splitlines() if line.startswith("| tooluse gateway →")]
    two = [line for line in out.stdout.splitlines()
           if line.startswith("| tooluse gateway, 2 workers → upstream |")]
    assert len(one) == 2 and len(two) == 2, out.stdout  # json and stream each
    assert all("| 0 / " in row for row in one + two), out.stdout
    assert "Problems seen" not in out.stdout, out.stdout
    assert "tooluse-anthropic-w2" in out.stdout  # its memory is reported
