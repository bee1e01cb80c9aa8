"""Property: no body, however mangled, makes any endpoint answer 500 or a non-native shape.

Bodies are valid requests with one random subtree replaced by random JSON (so they get
past the first checks and reach deep validation), plus arbitrary JSON documents.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx2
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tooluse.backends.scripted import ScriptedBackend
from tooluse.server import create_app

TOOL_SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
VALID: dict[str, dict[str, Any]] = {
    "/v1/messages": {
        "model": "m", "max_tokens": 10, "system": "s",
        "tools": [{"name": "get_weather", "description": "d", "input_schema": TOOL_SCHEMA}],
        "tool_choice": {"type": "auto"},
        "messages": [
            {"role": "user", "content": "w?"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "X"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "sun", "is_error": False}]},
        ],
    },
    "/model/m/converse": {
        "system": [{"text": "s"}],
        "inferenceConfig": {"maxTokens": 10},
        "toolConfig": {"tools": [{"toolSpec": {"name": "get_weather", "description": "d", "inputSchema": {"json": TOOL_SCHEMA}}}],
                       "toolChoice": {"auto": {}}},
        "messages": [
            {"role": "user", "content": [{"text": "w?"}]},
            {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "get_weather", "input": {"city": "X"}}}]},
            {"role": "user", "content": [{"toolResult": {"toolUseId": "t1", "content": [{"json": {"t": 1}}], "status": "success"}}]},
        ],
    },
    "/v1/chat/completions": {
        "model": "m", "max_tokens": 10,
        "tools": [{"type": "function", "function": {"name": "get_weather", "description": "d", "parameters": TOOL_SCHEMA}}],
        "tool_choice": "auto",
        "messages": [
            {"role": "system", "content": "s"},
            {"role": "user", "content": "w?"},
            {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"X\"}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "sun"},
        ],
    },
}

# text may hold lone surrogates (json.dumps sends them as \\udXXX escapes, as a client can)
texts = st.text(st.characters(exclude_categories=()) | st.sampled_from(["\ud800", "\udfff"]), max_size=20)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 2**70) | st.floats(allow_nan=False) | texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=8,
)


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += paths(v, (*prefix, i))
    return out


def replaced(doc: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    copy = json.loads(json.dumps(doc))
    target = copy
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = new
    return copy


APP = create_app(ScriptedBackend(lambda r: "ok"))


async def call(path: str, body: bytes) -> httpx2.Response:
    transport = httpx2.ASGITransport(app=APP)
    async with httpx2.AsyncClient(transport=transport, base_url="http://gw") as client:
        return await client.post(path, content=body, headers={"content-type": "application/json"})


def check_native(path: str, response: httpx2.Response) -> None:
    assert response.status_code < 500, (path, response.status_code, response.text)
    if response.status_code == 200:
        return
    body = response.json()
    if path.startswith("/model/"):
        assert set(body) == {"message"} and response.headers["x-amzn-errortype"]
    elif path.startswith("/v1/chat"):
        assert set(body["error"]) == {"message", "type", "param", "code"}
    else:
        assert body["type"] == "error" and body["error"]["type"] == "invalid_request_error"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), endpoint=st.sampled_from(sorted(VALID)))
def test_mutated_requests_never_500(data: st.DataObject, endpoint: str) -> None:
    valid = VALID[endpoint]
    where = data.draw(st.sampled_from(paths(valid)))
    body = replaced(valid, where, data.draw(json_values))
    response = asyncio.run(call(endpoint, json.dumps(body).encode()))
    check_native(endpoint, response)


@settings(max_examples=60, deadline=None)
@given(raw=st.binary(max_size=64) | json_values.map(lambda v: json.dumps(v).encode()),
       endpoint=st.sampled_from(sorted(VALID)))
def test_arbitrary_bodies_never_500(raw: bytes, endpoint: str) -> None:
    check_native(endpoint, asyncio.run(call(endpoint, raw)))


def test_valid_bodies_pass() -> None:
    for endpoint, body in VALID.items():
        response = asyncio.run(call(endpoint, json.dumps(body).encode()))
        assert response.status_code == 200, (endpoint, response.text)
