"""A plain HTTP client of the gateway's four APIs for the routing tests: one request, JSON or
streamed, read to its end and judged complete or not (a stream is complete only with its
API's terminal event and no error event), so a load of a thousand requests can count
failures exactly."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import httpx2
from botocore.eventstream import EventStreamBuffer

APIS = ("messages", "chat", "converse", "responses")


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    text: str | None  # the answer's text when it is complete
    model: str | None
    error: str | None  # why it is not an answer

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def attempts(self) -> list[tuple[str, str]]:
        """The ``x-tooluse-attempts`` header's tries, ``(target, why)`` (their times left
        out: each is ``TARGET=WHY 1.23ms``)."""
        value = self.headers.get("x-tooluse-attempts")
        if not value:
            return []
        out = []
        for item in value.split(", "):
            target, _, rest = item.rpartition("=")
            why, _, took = rest.partition(" ")
            assert took.endswith("ms") and float(took[:-2]) >= 0, value
            out.append((target, why))
        return out


def request_of(api: str, model: str, prompt: str, stream: bool) -> tuple[str, dict[str, Any]]:
    """The path and body of a one-question request in ``api``."""
    if api == "messages":
        return "/v1/messages", {"model": model, "max_tokens": 50, "stream": stream,
                                "messages": [{"role": "user", "content": prompt}]}
    if api == "chat":
        body: dict[str, Any] = {"model": model, "stream": stream,
                                "messages": [{"role": "user", "content": prompt}]}
        return "/v1/chat/completions", body
    if api == "converse":
        return (f"/model/{model}/converse" + ("-stream" if stream else ""),
                {"messages": [{"role": "user", "content": [{"text": prompt}]}]})
    if api == "responses":
        return "/v1/responses", {"model": model, "input": prompt, "stream": stream,
                                 "store": False}
    raise ValueError(api)


def judge(api: str, stream: bool, status: int, headers: dict[str, str], body: bytes) -> Answer:
    """Read a whole HTTP answer of ``api``."""
    def fail(why: str) -> Answer:
        return Answer(status, headers, None, None, f"{status}: {why}: {body[:300]!r}")

    if status != 200:
        return fail("not 200")
    try:
        if not stream:
            data = json.loads(body)
            if api == "messages":
                return Answer(status, headers, data["content"][0]["text"], data["model"], None)
            if api == "chat":
                return Answer(status, headers, data["choices"][0]["message"]["content"],
                              data["model"], None)
            if api == "converse":
                return Answer(status, headers,
                              data["output"]["message"]["content"][0]["text"], None, None)
            text = "".join(p["text"] for item in data["output"] if item["type"] == "message"
                           for p in item["content"])
            return Answer(status, headers, text, data["model"], None)
        if api == "converse":
            return _judge_eventstream(status, headers, body)
        return _judge_sse(api, status, headers, body)
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        return fail(f"unreadable ({exc!r})")


def _judge_sse(api: str, status: int, headers: dict[str, str], body: bytes) -> Answer:
    text, model, done = "", None, False
    for block in body.decode().split("\n\n"):
        lines = [line for line in block.splitlines() if line.startswith("data:")]
        if not lines:
            continue
        raw = "".join(line[5:].strip() for line in lines)
        if raw == "[DONE]":
            done = api == "chat"
            continue
        data = json.loads(raw)
        kind = data.get("type")
        if kind == "error" or "error" in data and api == "chat":
            return Answer(status, headers, None, None, f"error event: {raw[:300]}")
        if api == "messages":
            if kind == "message_start":
                model = data["message"]["model"]
            elif kind == "content_block_delta":
                text += data["delta"].get("text", "")
            done = done or kind == "message_stop"
        elif api == "chat":
            model = data.get("model", model)
            for choice in data.get("choices", []):
                text += choice["delta"].get("content") or ""
        else:  # responses
            if kind == "response.output_text.delta":
                text += data["delta"]
            elif kind in ("response.failed", "response.incomplete"):
                return Answer(status, headers, None, None, f"{kind}: {raw[:300]}")
            elif kind == "response.completed":
                model = data["response"]["model"]
                done = True
    if not done:
        return Answer(status, headers, None, None, "the stream ended without its end")
    return Answer(status, headers, text, model, None)


def _judge_eventstream(status: int, headers: dict[str, str], body: bytes) -> Answer:
    buffer = EventStreamBuffer()
    buffer.add_data(body)
    text, done = "", False
    for message in buffer:
        kind = message.headers.get(":message-type")
        event = message.headers.get(":event-type") or message.headers.get(":exception-type")
        if kind != "event":
            return Answer(status, headers, None, None, f"exception frame {event}")
        data = json.loads(message.payload)
        if event == "contentBlockDelta":
            text += data["delta"].get("text", "")
        done = done or event == "messageStop"
    if not done:
        return Answer(status, headers, None, None, "the stream ended without messageStop")
    return Answer(status, headers, text, None, None)


def call(url: str, api: str, model: str, *, stream: bool = False, prompt: str = "hello",
         key: str | None = None, client: httpx2.Client | None = None) -> Answer:
    path, body = request_of(api, model, prompt, stream)
    headers = {"authorization": f"Bearer {key}"} if key else {}
    own = client is None
    client = client or httpx2.Client(timeout=60, trust_env=False)
    try:
        response = client.post(url + path, json=body, headers=headers)
    finally:
        if own:
            client.close()
    return judge(api, stream, response.status_code, dict(response.headers), response.content)


async def acall(client: httpx2.AsyncClient, url: str, api: str, model: str, *,
                stream: bool = False, prompt: str = "hello") -> Answer:
    path, body = request_of(api, model, prompt, stream)
    try:
        response = await client.post(url + path, json=body)
    except httpx2.TransportError as exc:
        return Answer(0, {}, None, None, f"transport: {exc!r}")
    return judge(api, stream, response.status_code, dict(response.headers), response.content)
