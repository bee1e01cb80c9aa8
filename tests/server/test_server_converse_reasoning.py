"""Reasoning through the gateway to a Bedrock upstream: a fake ConverseStream
endpoint (AWS binary event stream, parsed by the gateway's own boto3 client) streams
``reasoningContent`` text, then its signature, then the answer. A boto3 Converse client gets
it in its own format, in order, and its reasoning setting and history blocks reach the
upstream unchanged; a Messages client through the same gateway gets thinking blocks with
``thinking_delta`` and ``signature_delta``."""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import anthropic
import boto3
import pytest
from botocore.config import Config

from tooluse.backends.bedrock import BedrockBackend
from tooluse.server import ServerThread, create_app
from tooluse.server.http.eventstream import encode_event

# a real client: a 4xx the policy does not explain fails the test (recording.py)
pytestmark = pytest.mark.client

MODEL = "anthropic.claude-sonnet-4-5-20250929-v1:0"
SIGNATURE = "EqQBCkgIARABGAIiQFv1pX+Zl2/ThinkingSig=="
SECRET = bytes(range(1, 48))
THOUGHT = ["The user asks about ", "Lima; ", "I should call the tool."]


def _delta(index: int, delta: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return "contentBlockDelta", {"contentBlockIndex": index, "delta": delta}


UPSTREAM_EVENTS = [
    ("messageStart", {"role": "assistant"}),
    *[_delta(0, {"reasoningContent": {"text": piece}}) for piece in THOUGHT],
    _delta(0, {"reasoningContent": {"signature": SIGNATURE}}),
    ("contentBlockStop", {"contentBlockIndex": 0}),
    _delta(1, {"reasoningContent": {"redactedContent": base64.b64encode(SECRET).decode()}}),
    ("contentBlockStop", {"contentBlockIndex": 1}),
    _delta(2, {"text": "Checking Lima."}),
    ("contentBlockStop", {"contentBlockIndex": 2}),
    ("messageStop", {"stopReason": "end_turn"}),
    ("metadata", {"usage": {"inputTokens": 12, "outputTokens": 40, "totalTokens": 52}, "metrics": {"latencyMs": 3}}),
]


@contextmanager
def converse_upstream() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """A ConverseStream endpoint: records each request body, answers UPSTREAM_EVENTS as
    event-stream frames cut across chunks."""
    bodies: list[dict[str, Any]] = []
    frames = b"".join(encode_event(kind, body) for kind, body in UPSTREAM_EVENTS)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            bodies.append(json.loads(self.rfile.read(int(self.headers["content-length"]))))
            assert self.path.endswith("/converse-stream"), self.path
            self.send_response(200)
            self.send_header("content-type", "application/vnd.amazon.eventstream")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            for i in range(0, len(frames), 40):
                piece = frames[i : i + 40]
                self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        yield f"http://{host}:{port}", bodies
    finally:
        server.shutdown()
        server.server_close()


def bedrock_client(url: str) -> Any:
    return boto3.client(
        "bedrock-runtime", region_name="us-east-1", endpoint_url=url,
        aws_access_key_id="AKID", aws_secret_access_key="x",
        config=Config(retries={"total_max_attempts": 1, "mode": "standard"}, read_timeout=20))


@pytest.fixture()
def gateway() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    with converse_upstream() as (upstream_url, bodies):
        backend = BedrockBackend(MODEL, client=bedrock_client(upstream_url))
        with ServerThread(create_app(backend)) as srv:
            yield srv.url, bodies


def test_converse_client_gets_reasoning_in_order_and_upstream_gets_its_own(
    gateway: tuple[str, list[dict[str, Any]]],
) -> None:
    url, bodies = gateway
    messages = [
        {"role": "user", "content": [{"text": "Weather in Lima?"}]},
        {"role": "assistant", "content": [
            {"reasoningContent": {"reasoningText": {"text": "Earlier thought.", "signature": "sig-turn-1"}}},
            {"reasoningContent": {"redactedContent": b"\x01\x02opaque"}},
            {"text": "Which Lima?"}]},
        {"role": "user", "content": [{"text": "Lima, Peru."}]},
    ]
    fields = {"thinking": {"type": "enabled", "budget_tokens": 2048},
              "anthropic_beta": ["interleaved-thinking-2025-05-14"]}
    out = bedrock_client(url).converse_stream(
        modelId=MODEL, messages=messages, inferenceConfig={"maxTokens": 4096},
        additionalModelRequestFields=fields)
    events = list(out["stream"])

    # the client's own format, in the upstream's order: text pieces, then the signature
    block0 = [e["contentBlockDelta"]["delta"]["reasoningContent"] for e in events
              if e.get("contentBlockDelta", {}).get("contentBlockIndex") == 0]
    assert block0 == [*({"text": p} for p in THOUGHT), {"signature": SIGNATURE}]
    kinds = [next(iter(e)) for e in events]
    assert kinds[0] == "messageStart" and kinds[-2:] == ["messageStop", "metadata"]
    assert kinds.index("contentBlockStop") > kinds.index("contentBlockDelta")
    redacted = [e["contentBlockDelta"]["delta"]["reasoningContent"]["redactedContent"] for e in events
                if e.get("contentBlockDelta", {}).get("contentBlockIndex") == 1]
    assert redacted == [SECRET]  # boto3 decodes the blob: the same bytes as upstream sent
    text = [e["contentBlockDelta"]["delta"]["text"] for e in events
            if e.get("contentBlockDelta", {}).get("contentBlockIndex") == 2]
    assert "".join(text) == "Checking Lima."

    # the upstream got the reasoning setting and the history blocks as the client sent them
    sent = bodies[-1]
    assert sent["additionalModelRequestFields"] == fields
    assert sent["messages"][1]["content"][:2] == [
        {"reasoningContent": {"reasoningText": {"text": "Earlier thought.", "signature": "sig-turn-1"}}},
        {"reasoningContent": {"redactedContent": base64.b64encode(b"\x01\x02opaque").decode()}},
    ]


def test_messages_client_gets_thinking_and_signature_deltas(
    gateway: tuple[str, list[dict[str, Any]]],
) -> None:
    url, bodies = gateway
    client = anthropic.Anthropic(base_url=url, api_key="k", max_retries=0, timeout=20)
    with client.messages.stream(
        model=MODEL, max_tokens=4096, thinking={"type": "enabled", "budget_tokens": 2048},
        messages=[{"role": "user", "content": "Weather in Lima?"}],
    ) as stream:
        events = list(stream)
        final = stream.get_final_message()
    deltas = [(e.index, e.delta.type) for e in events if e.type == "content_block_delta"]
    assert deltas[:4] == [(0, "thinking_delta")] * 3 + [(0, "signature_delta")]
    thought = "".join(e.delta.thinking for e in events
                      if e.type == "content_block_delta" and e.delta.type == "thinking_delta")
    assert thought == "".join(THOUGHT)
    assert [b.type for b in final.content] == ["thinking", "redacted_thinking", "text"]
    assert final.content[0].thinking == "".join(THOUGHT)  # type: ignore[union-attr]
    assert final.content[0].signature == SIGNATURE  # type: ignore[union-attr]
    assert final.content[1].data == base64.b64encode(SECRET).decode()  # type: ignore[union-attr]
    # the Messages thinking setting reached Bedrock as Claude's thinking field
    assert bodies[-1]["additionalModelRequestFields"] == {"thinking": {"type": "enabled", "budget_tokens": 2048}}
