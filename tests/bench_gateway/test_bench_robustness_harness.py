"""The robustness campaign's own judge and generators: a campaign that counted a cut stream
as complete, or a non-native error as native, would report zeros that mean nothing."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "robustness"
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(BENCH.parent / "gateway"))

import faulty_upstream
from mutators import mutants
from wire import judge, valid_request

SSE = "text/event-stream"


def test_mutants_are_deterministic_varied_and_malformed() -> None:
    first = list(mutants("anthropic", 300, seed=1, streaming=True))
    assert first == list(mutants("anthropic", 300, seed=1, streaming=True))
    bodies = {body for _, body in first}
    assert len(bodies) > 250
    valid = json.dumps(valid_request("anthropic")).encode()
    assert sum(body == valid for _, body in first) < 15  # a few mutations can be no-ops
    assert any(b"\\ud800" in body or b"\\udfff" in body for body in bodies)  # sent as escapes
    assert any(not body.startswith(b"{") for body in bodies)  # byte-level mutations too


@pytest.mark.parametrize(("api", "status", "headers", "body", "kind"), [
    ("anthropic", 400, {}, {"type": "error", "error": {"type": "invalid_request_error", "message": "m"}}, "native_error"),
    ("anthropic", 400, {}, {"error": {"message": "m"}}, "bad"),
    ("bedrock", 400, {"x-amzn-errortype": "ValidationException"}, {"message": "m"}, "native_error"),
    ("bedrock", 400, {}, {"message": "m"}, "bad"),
    ("openai", 400, {}, {"error": {"message": "m", "type": "t", "param": None, "code": None}}, "native_error"),
    ("openai", 500, {}, {"detail": "Internal Server Error"}, "bad"),
    ("anthropic", 200, {}, {"type": "message", "content": [], "stop_reason": None}, "bad"),
])
def test_judge_errors_and_json_answers(api: str, status: int, headers: dict[str, str], body: object, kind: str) -> None:
    assert judge(api, status, headers, json.dumps(body).encode(), "application/json").kind == kind


def _anthropic_stream(*names: str) -> bytes:
    data = {"message_delta": {"type": "message_delta", "delta": {"stop_reason": "end_turn"}}}
    return b"".join(f"event: {n}\ndata: {json.dumps(data.get(n, {'type': n}))}\n\n".encode() for n in names)


def test_judge_streams_a_cut_one_is_never_complete() -> None:
    whole = _anthropic_stream("message_start", "ping", "content_block_start", "content_block_stop",
                              "message_delta", "message_stop")
    assert judge("anthropic", 200, {}, whole, SSE).kind == "complete"
    assert judge("anthropic", 200, {}, whole.rsplit(b"event: message_stop", 1)[0], SSE).kind == "bad"
    assert judge("anthropic", 200, {}, _anthropic_stream("message_start", "error"), SSE).kind == "stream_error"
    chunk = {"choices": [{"index": 0, "delta": {}, "finish_reason": None}]}
    done = b"data: " + json.dumps(chunk).encode() + b"\n\ndata: [DONE]\n\n"
    assert judge("openai", 200, {}, done, SSE).kind == "bad"  # [DONE] without a finish_reason
    chunk["choices"][0]["finish_reason"] = "stop"  # type: ignore[index]
    assert judge("openai", 200, {}, b"data: " + json.dumps(chunk).encode() + b"\n\ndata: [DONE]\n\n", SSE).kind == "complete"


@pytest.mark.parametrize("kind", ["anthropic", "openai"])
def test_the_broken_json_fault_really_breaks_the_tool_arguments(kind: str) -> None:
    frames = b"".join(faulty_upstream._broken_stream(kind)).decode()
    assert '{\\"city\\": \\"Par' in frames
    assert ("message_stop" if kind == "anthropic" else "[DONE]") in frames  # then ends normally
