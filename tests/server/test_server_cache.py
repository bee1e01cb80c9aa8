"""Prompt caching through the gateway: a Messages client's ``cache_control`` breakpoints
reach a fake Anthropic upstream (``httpx2.MockTransport`` behind a real
:class:`AnthropicBackend`) exactly where the client put them, and a Bedrock upstream as
``cachePoint`` blocks; the upstream's cache counts come back in each client's own usage
fields (Messages whole and streamed through the anthropic SDK, Chat through the openai SDK,
Converse through boto3)."""

from __future__ import annotations

import copy
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import anthropic
import boto3
import httpx2
import openai
import pytest
from botocore.config import Config
from test_server_messages_thinking import sse_bytes

from tooluse.backends.anthropic import AnthropicBackend
from tooluse.backends.bedrock import BedrockBackend
from tooluse.server import ServerThread, create_app

EPHEMERAL = {"type": "ephemeral"}
SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}}
#: What the API answers for a request that read 4000 prompt tokens from the cache and wrote
#: 1500 (1000 of them for an hour), 12 uncached.
USAGE = {"input_tokens": 12, "cache_creation_input_tokens": 1500, "cache_read_input_tokens": 4000,
         "cache_creation": {"ephemeral_5m_input_tokens": 500, "ephemeral_1h_input_tokens": 1000},
         "output_tokens": 7}
ANSWER = {"id": "msg_up", "type": "message", "role": "assistant", "model": "claude-up",
          "content": [{"type": "text", "text": "Both files say hello."}],
          "stop_reason": "end_turn", "stop_sequence": None, "usage": {**USAGE, "service_tier": "standard"}}


def client_request() -> dict[str, Any]:
    """Breakpoints as Claude Code places them (the system prompt, the last tool, the last
    user block), and more: a 1h ttl, a tool result and a part of one, a tool call."""
    return {
        "model": "claude-up", "max_tokens": 512,
        "system": [{"type": "text", "text": "You are a coding agent.", "cache_control": {"type": "ephemeral", "ttl": "1h"}},
                   {"type": "text", "text": "Today is Friday."}],
        "tools": [{"name": "Glob", "description": "find files", "input_schema": SCHEMA},
                  {"name": "Read", "description": "read a file", "input_schema": SCHEMA,
                   "cache_control": EPHEMERAL}],
        "messages": [
            {"role": "user", "content": "read a.txt and b.txt"},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"path": "a.txt"}},
                {"type": "tool_use", "id": "toolu_2", "name": "Read", "input": {"path": "b.txt"},
                 "cache_control": EPHEMERAL}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "hello",
                 "cache_control": EPHEMERAL},
                {"type": "tool_result", "tool_use_id": "toolu_2",
                 "content": [{"type": "text", "text": "hello too", "cache_control": EPHEMERAL}]},
                {"type": "text", "text": "what do they say?", "cache_control": EPHEMERAL}]},
        ],
    }


def answer_events() -> list[dict[str, Any]]:
    """The API's stream of ANSWER: the cache counts in message_start, repeated (cumulative)
    in message_delta as the API now sends them."""
    start = {**ANSWER, "content": [], "stop_reason": None, "usage": {**USAGE, "output_tokens": 1}}
    return [
        {"type": "message_start", "message": start},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Both files say hello."}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
         "usage": {k: v for k, v in USAGE.items() if k != "cache_creation"}},
        {"type": "message_stop"},
    ]


class Upstream:
    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        self.bodies.append(body)
        if body.get("stream"):
            return httpx2.Response(200, content=sse_bytes(answer_events()),
                                   headers={"content-type": "text/event-stream"})
        return httpx2.Response(200, json=ANSWER)

    async def ahandle(self, request: httpx2.Request) -> httpx2.Response:
        await request.aread()
        return self.handle(request)


@pytest.fixture()
def gateway() -> Iterator[tuple[ServerThread, Upstream]]:
    seen = Upstream()
    backend = AnthropicBackend(
        "claude-up", base_url="http://upstream.invalid", api_key="k", max_retries=0,
        transport=httpx2.MockTransport(seen.handle), async_transport=httpx2.MockTransport(seen.ahandle))
    with ServerThread(create_app(backend)) as srv:
        yield srv, seen


def sdk(srv: ServerThread) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=srv.url, api_key="k", max_retries=0)


@pytest.mark.parametrize("stream", [False, True])
def test_anthropic_upstream_gets_every_breakpoint_where_the_client_put_it(
    gateway: tuple[ServerThread, Upstream], stream: bool,
) -> None:
    srv, seen = gateway
    sent = client_request()
    with httpx2.Client(timeout=30) as http:
        reply = http.post(srv.url + "/v1/messages", json={**sent, "stream": stream},
                          headers={"x-api-key": "k", "anthropic-version": "2023-06-01"})
    assert reply.status_code == 200, reply.text
    (body,) = seen.bodies
    for key in ("system", "tools", "messages"):
        assert body[key] == sent[key], key


def test_messages_client_gets_the_upstreams_cache_counts(gateway: tuple[ServerThread, Upstream]) -> None:
    srv, _ = gateway
    request = client_request()
    message = sdk(srv).messages.create(**request)
    usage = message.usage
    assert (usage.input_tokens, usage.output_tokens) == (12, 7)
    assert (usage.cache_read_input_tokens, usage.cache_creation_input_tokens) == (4000, 1500)
    assert usage.cache_creation is not None
    assert (usage.cache_creation.ephemeral_5m_input_tokens,
            usage.cache_creation.ephemeral_1h_input_tokens) == (500, 1000)


def test_messages_stream_client_gets_the_upstreams_cache_counts(
    gateway: tuple[ServerThread, Upstream],
) -> None:
    srv, _ = gateway
    with sdk(srv).messages.stream(**client_request()) as stream:
        events = list(stream)
        final = stream.get_final_message()
    start = next(e for e in events if e.type == "message_start")
    assert start.message.usage.cache_read_input_tokens == 4000
    assert final.content[0].text == "Both files say hello."  # type: ignore[union-attr]
    usage = final.usage
    assert (usage.input_tokens, usage.output_tokens) == (12, 7)
    assert (usage.cache_read_input_tokens, usage.cache_creation_input_tokens) == (4000, 1500)


@pytest.mark.parametrize("stream", [False, True])
def test_chat_client_gets_the_cache_reads_as_cached_tokens(
    gateway: tuple[ServerThread, Upstream], stream: bool,
) -> None:
    srv, _ = gateway
    client = openai.OpenAI(base_url=srv.url + "/v1", api_key="k", max_retries=0)
    messages: Any = [{"role": "system", "content": "You are a coding agent."},
                     {"role": "user", "content": "what do the files say?"}]
    if stream:
        chunks = list(client.chat.completions.create(
            model="claude-up", messages=messages, stream=True, stream_options={"include_usage": True}))
        usage = chunks[-1].usage
    else:
        usage = client.chat.completions.create(model="claude-up", messages=messages).usage
    assert usage is not None
    # the whole prompt (uncached, read and written) in prompt_tokens, the reads as cached_tokens
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (5512, 7, 5519)
    assert usage.prompt_tokens_details is not None
    assert usage.prompt_tokens_details.cached_tokens == 4000


def test_converse_client_breakpoints_reach_an_anthropic_upstream_and_its_counts_come_back(
    gateway: tuple[ServerThread, Upstream],
) -> None:
    srv, seen = gateway
    point = {"cachePoint": {"type": "default"}}
    body = {
        "system": [{"text": "You are a coding agent."}, {"cachePoint": {"type": "default", "ttl": "1h"}}],
        "messages": [{"role": "user", "content": [{"text": "what do the files say?"}, point]}],
        "toolConfig": {"tools": [{"toolSpec": {"name": "Read", "inputSchema": {"json": SCHEMA}}}, point]},
    }
    with httpx2.Client(timeout=30) as http:
        reply = http.post(srv.url + "/model/claude-up/converse", json=body)
    assert reply.status_code == 200, reply.text
    up = seen.bodies[-1]
    assert up["system"] == [{"type": "text", "text": "You are a coding agent.",
                             "cache_control": {"type": "ephemeral", "ttl": "1h"}}]
    assert up["messages"] == [{"role": "user", "content": [
        {"type": "text", "text": "what do the files say?", "cache_control": EPHEMERAL}]}]
    assert up["tools"][0]["cache_control"] == EPHEMERAL
    assert reply.json()["usage"] == {
        "inputTokens": 12, "outputTokens": 7, "totalTokens": 5519, "cacheReadInputTokens": 4000,
        "cacheWriteInputTokens": 1500,
        "cacheDetails": [{"ttl": "5m", "inputTokens": 500}, {"ttl": "1h", "inputTokens": 1000}]}


# --- a Bedrock upstream ------------------------------------------------------------------

CONVERSE_ANSWER = {
    "output": {"message": {"role": "assistant", "content": [{"text": "Both files say hello."}]}},
    "stopReason": "end_turn",
    "usage": {"inputTokens": 12, "outputTokens": 7, "totalTokens": 5519,
              "cacheReadInputTokens": 4000, "cacheWriteInputTokens": 1500},
    "metrics": {"latencyMs": 3},
}


@contextmanager
def converse_upstream() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """A Converse endpoint that records each request body and answers CONVERSE_ANSWER."""
    bodies: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            bodies.append(json.loads(self.rfile.read(int(self.headers["content-length"]))))
            data = json.dumps(CONVERSE_ANSWER).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        yield f"http://{host}:{port}", bodies
    finally:
        server.shutdown()
        server.server_close()


def test_bedrock_upstream_gets_cache_points_and_its_counts_reach_a_messages_client() -> None:
    with converse_upstream() as (url, bodies):
        client = boto3.client(
            "bedrock-runtime", region_name="us-east-1", endpoint_url=url,
            aws_access_key_id="AKID", aws_secret_access_key="x",
            config=Config(retries={"total_max_attempts": 1, "mode": "standard"}, read_timeout=20))
        backend = BedrockBackend("anthropic.claude-sonnet-4-5-20250929-v1:0", client=client)
        with ServerThread(create_app(backend)) as srv:
            message = sdk(srv).messages.create(**copy.deepcopy(client_request()))
    (body,) = bodies
    point = {"cachePoint": {"type": "default"}}
    assert body["system"] == [{"text": "You are a coding agent."},
                              {"cachePoint": {"type": "default", "ttl": "1h"}},
                              {"text": "Today is Friday."}]
    assert body["toolConfig"]["tools"][1:] == [
        {"toolSpec": {"name": "Read", "description": "read a file", "inputSchema": {"json": SCHEMA}}}, point]
    assert body["messages"][1]["content"][1:] == [
        {"toolUse": {"toolUseId": "toolu_2", "name": "Read", "input": {"path": "b.txt"}}}, point]
    assert [next(iter(b)) for b in body["messages"][2]["content"]] == [
        "toolResult", "cachePoint", "toolResult", "cachePoint", "text", "cachePoint"]
    usage = message.usage
    assert (usage.input_tokens, usage.cache_read_input_tokens, usage.cache_creation_input_tokens,
            usage.output_tokens) == (12, 4000, 1500, 7)
