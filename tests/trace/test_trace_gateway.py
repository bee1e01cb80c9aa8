"""Gateway traces (create_app(trace=...)): one per request, never mixed between concurrent
requests; the request as received (keys redacted), the response as sent (streams too), the
error of a bad request; the /trace page and its API behind the gateway's key."""

from __future__ import annotations

import base64
import json
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx2 as httpx
from trace_fakes import WEATHER_WIRE, city_backend

from tooluse.server import ServerThread
from tooluse.server.app import create_app
from tooluse.trace.store import TraceStore


def _wait(store: TraceStore, count: int) -> list[dict[str, Any]]:
    """The stored traces once ``count`` are in (the writer stores after the answer)."""
    deadline = time.monotonic() + 10
    while len(store) < count and time.monotonic() < deadline:
        time.sleep(0.01)
    store.flush()
    assert len(store) == count
    return [store.get(item["id"]) for item in store.list(count)]  # type: ignore[misc]


def _messages(question: str, **extra: Any) -> dict[str, Any]:
    return {"model": "m", "max_tokens": 200, "tools": [WEATHER_WIRE],
            "tool_choice": {"type": "any"},
            "messages": [{"role": "user", "content": question}], **extra}


def test_two_concurrent_requests_each_get_their_own_trace() -> None:
    store = TraceStore()
    # Each generation waits until both requests are generating: they are in flight together.
    app = create_app(city_backend(together=2), trace=store)
    with ServerThread(app) as server, ThreadPoolExecutor(2) as pool:
        def ask(city: str) -> httpx.Response:
            if city == "Paris":
                return httpx.post(server.url + "/v1/messages", json=_messages(
                    f"Weather in {city}?"), headers={"x-api-key": "sk-paris"}, timeout=30)
            return httpx.post(server.url + "/v1/chat/completions", timeout=30, json={
                "model": "m", "messages": [{"role": "user", "content": f"Weather in {city}?"}],
                "tools": [{"type": "function", "function": {
                    "name": "get_weather", "parameters": WEATHER_WIRE["input_schema"]}}],
                "tool_choice": "required"})
        answers = list(pool.map(ask, ["Paris", "Tokyo"]))
    assert [a.status_code for a in answers] == [200, 200]
    traces = {t["api"]: t for t in _wait(store, 2)}
    for api, city, other in (("messages", "Paris", "Tokyo"), ("chat_completions", "Tokyo", "Paris")):
        trace = traces[api]
        text = json.dumps(trace)
        assert city in text and other not in text, api
        [turn] = trace["turns"]
        assert turn["prompt"][-1]["content"] == f"Weather in {city}?"
        assert f"<city>{city}</city>" in turn["raw"]
        [call] = turn["calls"]
        assert call["input"] == {"city": city} and call["valid"]
        assert f"<city>{city}</city>" in turn["raw"][call["span"][0]:call["span"][1]]
        assert trace["status"] == 200
    assert traces["messages"]["request"]["headers"]["x-api-key"] == "[redacted]"
    assert "sk-paris" not in json.dumps(traces["messages"])
    sent = traces["messages"]["response"]
    assert sent["content"][0]["input"] == {"city": "Paris"}  # the body as sent
    assert traces["chat_completions"]["response"]["choices"][0]["message"]["tool_calls"][0][
        "function"]["arguments"] == json.dumps({"city": "Tokyo"})


def test_concurrent_scripted_requests_and_a_stream_do_not_mix() -> None:
    store = TraceStore()
    app = create_app("scripted", trace=store)  # echoes the last user text
    words = [f"word{i}" for i in range(8)]
    with ServerThread(app) as server, ThreadPoolExecutor(8) as pool:
        def ask(word: str) -> int:
            body = {"model": "m", "max_tokens": 20, "stream": word.endswith(("1", "5")),
                    "messages": [{"role": "user", "content": word}]}
            return httpx.post(server.url + "/v1/messages", json=body, timeout=30).status_code
        assert list(pool.map(ask, words)) == [200] * 8
    traces = _wait(store, 8)
    for trace in traces:
        word = trace["request"]["body"]["messages"][0]["content"]
        [turn] = trace["turns"]
        assert turn["request"]["messages"][0]["content"][0]["text"] == word
        assert turn["response"]["content"][0]["text"] == word
        others = [w for w in words if w != word]
        assert not any(w in json.dumps(trace) for w in others)
        if trace["request"]["body"]["stream"]:
            assert isinstance(trace["response"], str)  # the SSE text as written
            assert "event: message_stop" in trace["response"] and word in trace["response"]


def test_a_bad_request_is_traced_with_the_error_as_sent() -> None:
    store = TraceStore()
    with ServerThread(create_app("scripted", trace=store)) as server:
        answer = httpx.post(server.url + "/v1/messages", content=b"{not json",
                            headers={"content-type": "application/json"})
        counted = httpx.post(server.url + "/v1/messages/count_tokens", json={
            "model": "m", "messages": [{"role": "user", "content": "hi"}]})
    assert answer.status_code == 400 and counted.status_code == 200
    [trace] = _wait(store, 1)  # count_tokens runs no model: not traced
    assert trace["status"] == 400 and trace["summary"]["status"] == "error"
    assert trace["turns"] == []
    assert trace["response"]["error"]["type"] == "invalid_request_error"
    assert trace["request"]["body"] == "{not json"


def test_without_trace_there_is_no_trace_page_and_no_middleware() -> None:
    app = create_app("scripted")
    assert app.state.trace_store is None
    assert not app.user_middleware
    with ServerThread(app) as server:
        assert httpx.get(server.url + "/trace").status_code == 404


def test_trace_page_and_api_want_the_gateway_key() -> None:
    store = TraceStore()
    app = create_app("scripted:hello", trace=store, api_keys=["sk-page"])
    with ServerThread(app) as server:
        url = server.url
        assert httpx.post(url + "/v1/messages", json=_messages("hi"),
                          headers={"x-api-key": "sk-page"}).status_code == 200
        [trace] = _wait(store, 1)
        for path in ("/trace", "/trace/trace.js", "/trace/api/traces",
                     f"/trace/api/traces/{trace['id']}"):
            denied = httpx.get(url + path)
            assert denied.status_code == 401, path
            assert denied.headers["www-authenticate"].startswith("Basic")
            assert httpx.get(url + path, headers={"x-api-key": "wrong"}).status_code == 401
        basic = "Basic " + base64.b64encode(b"any:sk-page").decode()
        for headers in ({"x-api-key": "sk-page"}, {"authorization": "Bearer sk-page"},
                        {"authorization": basic}):
            page = httpx.get(url + "/trace", headers=headers)
            assert page.status_code == 200 and "tooluse traces" in page.text
            listed = httpx.get(url + "/trace/api/traces", headers=headers).json()
            assert [t["id"] for t in listed["traces"]] == [trace["id"]]
        one = httpx.get(f"{url}/trace/api/traces/{trace['id']}", headers={"x-api-key": "sk-page"})
        assert one.json()["id"] == trace["id"]
        assert httpx.get(url + "/trace/api/traces/nope",
                         headers={"x-api-key": "sk-page"}).status_code == 404
        assert httpx.get(url + "/trace/api/traces?limit=x",
                         headers={"x-api-key": "sk-page"}).status_code == 400
        assert httpx.get(url + "/trace/evil.html",
                         headers={"x-api-key": "sk-page"}).status_code == 404
        # The page itself is offline: nothing it loads comes from another host.
        html = httpx.get(url + "/trace", headers={"x-api-key": "sk-page"}).text
        assert "http://" not in html and "https://" not in html


def test_the_store_given_by_path_is_closed_with_the_app(tmp_path: Any) -> None:
    db = tmp_path / "traces.db"
    with ServerThread(create_app("scripted:hi", trace=str(db))) as server:
        assert httpx.post(server.url + "/v1/messages", json=_messages("hi")).status_code == 200
    # The lifespan closed the store, which stored what was pending first.
    reopened = TraceStore(db)
    assert len(reopened) == 1
    reopened.close()


def test_converse_and_responses_requests_are_traced_whole_and_streamed() -> None:
    """The middleware traces every API, not only Messages and Chat: a Converse request and a
    Responses request, each whole and streamed, get a trace naming their API, with the
    call the text model wrote and the body as sent."""
    store = TraceStore()
    converse = {"messages": [{"role": "user", "content": [{"text": "Weather in Lima?"}]}],
                "toolConfig": {"tools": [{"toolSpec": {
                    "name": "get_weather", "description": "Current weather in a city.",
                    "inputSchema": {"json": WEATHER_WIRE["input_schema"]}}}],
                    "toolChoice": {"any": {}}}}
    responses = {"model": "m", "input": "Weather in Quito?", "tool_choice": "required",
                 "tools": [{"type": "function", "name": "get_weather",
                            "parameters": WEATHER_WIRE["input_schema"]}]}
    with ServerThread(create_app(city_backend(), trace=store)) as server:
        sent = [
            httpx.post(server.url + "/model/m/converse", json=converse, timeout=30),
            httpx.post(server.url + "/model/m/converse-stream", json=converse, timeout=30),
            httpx.post(server.url + "/v1/responses", json=responses, timeout=30),
            httpx.post(server.url + "/v1/responses", json={**responses, "stream": True},
                       timeout=30),
        ]
    assert [a.status_code for a in sent] == [200] * 4
    traces = _wait(store, 4)
    by_api: dict[str, list[dict[str, Any]]] = {}
    for trace in traces:
        by_api.setdefault(trace["api"], []).append(trace)
    assert {api: len(found) for api, found in by_api.items()} == {"converse": 2, "responses": 2}
    for trace in traces:
        city = "Lima" if trace["api"] == "converse" else "Quito"
        assert city in json.dumps(trace["request"])
        [turn] = trace["turns"]
        [call] = turn["calls"]
        assert call["input"] == {"city": city} and call["valid"]
        assert trace["status"] == 200 and city in json.dumps(trace["response"])
