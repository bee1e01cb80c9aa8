"""Malformed Converse and Chat Completions requests: native error shapes, never 500."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest

from tooluse.backends.scripted import ScriptedBackend
from tooluse.server import ServerThread, create_app

CONVERSE = "/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse"
SPEC = {"toolSpec": {"name": "get_weather", "description": "d",
                     "inputSchema": {"json": {"type": "object", "properties": {"city": {"type": "string"}}}}}}
USER = {"role": "user", "content": [{"text": "hi"}]}


@pytest.fixture(scope="module")
def srv() -> Iterator[ServerThread]:
    with ServerThread(create_app(ScriptedBackend(lambda r: "ok"), max_body_bytes=10_000)) as s:
        yield s


def converse(srv: ServerThread, body: Any, path: str = CONVERSE) -> httpx2.Response:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    return httpx2.post(srv.url + path, content=raw, headers={"content-type": "application/json"}, timeout=10)


def aws_check(r: httpx2.Response, status: int, code: str, needle: str = "") -> None:
    assert r.status_code == status, r.text
    assert r.headers["x-amzn-errortype"] == code
    body = r.json()
    assert set(body) == {"message"}
    assert needle in body["message"], body["message"]


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        (b"{oops", "not valid JSON"),
        (b"[]", "JSON object"),
        ({}, "messages"),
        ({"messages": "hi"}, "messages"),
        ({"messages": [{"role": "user", "content": [{"video": {}}]}]}, "messages.0.content.0"),
        ({"messages": [USER], "inferenceConfig": {"maxTokens": "many"}}, "inferenceConfig.maxTokens"),
        ({"messages": [USER], "toolConfig": {"tools": [{"toolSpec": {"name": "x" * 65, "inputSchema": {"json": {"type": "object"}}}}]}},
         "toolConfig.tools.0.toolSpec.name"),
        ({"messages": [USER], "toolConfig": {"tools": [{"toolSpec": {"name": "t", "inputSchema": {"json": {"type": "string"}}}}]}},
         "toolConfig.tools.0.toolSpec.inputSchema"),
        ({"messages": [USER], "toolConfig": {"tools": [SPEC], "toolChoice": {"none": {}}}}, "toolChoice"),
        ({"messages": [USER], "toolConfig": {"tools": [SPEC], "toolChoice": {"tool": {"name": "nope"}}}}, "toolChoice"),
        ({"messages": [USER, {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "get_weather", "input": {}}}]},
                       {"role": "user", "content": [{"toolResult": {"toolUseId": "t1", "content": [{"text": "x"}], "status": "failed"}}]}],
          "toolConfig": {"tools": [SPEC]}}, "status"),
        ({"messages": [USER, {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "get_weather", "input": {}}}]},
                       {"role": "user", "content": [{"text": "forgot the result"}]}],
          "toolConfig": {"tools": [SPEC]}}, "t1"),
        ({"messages": [{"role": "user", "content": [{"image": {"format": "bmp", "source": {"bytes": "AAAA"}}}]}]}, "format"),
    ],
)
def test_converse_validation(srv: ServerThread, body: Any, needle: str) -> None:
    aws_check(converse(srv, body), 400, "ValidationException", needle)
    aws_check(converse(srv, body, CONVERSE + "-stream"), 400, "ValidationException", needle)


def test_converse_body_cap(srv: ServerThread) -> None:
    r = converse(srv, {"messages": [{"role": "user", "content": [{"text": "x" * 20_000}]}]})
    aws_check(r, 413, "ValidationException", "10000")


def test_converse_unknown_operation(srv: ServerThread) -> None:
    r = httpx2.post(srv.url + "/model/m/invoke", json={}, timeout=10)
    assert r.status_code == 404 and r.headers["x-amzn-errortype"] == "ResourceNotFoundException"


CHAT = "/v1/chat/completions"


def chat(srv: ServerThread, body: Any) -> httpx2.Response:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    return httpx2.post(srv.url + CHAT, content=raw, headers={"content-type": "application/json"}, timeout=10)


def oa_check(r: httpx2.Response, status: int, needle: str = "", param: str | None = None) -> None:
    assert r.status_code == status, r.text
    error = r.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert needle in error["message"], error["message"]
    if param is not None:
        assert error["param"] == param


MSG = [{"role": "user", "content": "hi"}]
FN = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}


@pytest.mark.parametrize(
    ("body", "needle", "param"),
    [
        (b"nope", "not valid JSON", None),
        (b"3", "JSON object", None),
        ({"messages": MSG}, "model", "model"),
        ({"model": "m", "messages": MSG, "stream": "yes"}, "stream", "stream"),
        ({"model": "m", "messages": MSG, "tools": [{"type": "function", "function": {"name": "a b"}}]}, "tools", None),
        ({"model": "m", "messages": MSG, "tools": [FN], "tool_choice": "sometimes"}, "tool_choice", None),
        ({"model": "m", "messages": MSG, "tools": [FN], "tool_choice": {"type": "function", "function": {"name": "g"}}}, "tool_choice", None),
        ({"model": "m", "messages": [{"role": "user", "content": "x"},
                                     {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{bad"}}]},
                                     {"role": "tool", "tool_call_id": "c1", "content": "r"}], "tools": [FN]}, "arguments", None),
        ({"model": "m", "messages": MSG, "seed": 3}, "seed", None),
    ],
)
def test_chat_validation(srv: ServerThread, body: Any, needle: str, param: str | None) -> None:
    oa_check(chat(srv, body), 400, needle, param)


def test_chat_body_cap(srv: ServerThread) -> None:
    oa_check(chat(srv, {"model": "m", "messages": [{"role": "user", "content": "x" * 20_000}]}), 413, "10000")


def _deep_schema(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"a": schema}}
    return schema


@pytest.mark.parametrize(("levels", "status"), [(45, 200), (49, 400), (400, 400)])
def test_deep_nesting_is_a_400_not_a_crash(levels: int, status: int) -> None:
    """A schema a few hundred levels deep used to exhaust the stack in jsonschema (500)."""
    schema = _deep_schema(levels)
    bodies = {
        "/v1/messages": {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "x"}],
                         "tools": [{"name": "t", "input_schema": schema}]},
        CHAT: {"model": "m", "messages": MSG, "tools": [{"type": "function", "function": {"name": "t", "parameters": schema}}]},
        CONVERSE: {"messages": [USER], "toolConfig": {"tools": [{"toolSpec": {"name": "t", "inputSchema": {"json": schema}}}]}},
    }
    with ServerThread(create_app(ScriptedBackend(lambda r: "ok"))) as srv:
        for path, body in bodies.items():
            r = httpx2.post(srv.url + path, json=body, timeout=30)
            assert r.status_code == status, (path, r.text[:300])
            if status == 400:
                assert "nested deeper than 100 levels" in r.text
