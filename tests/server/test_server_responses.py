"""The openai SDK's ``client.responses``, unchanged except for base_url, against the gateway
(``POST /v1/responses``, stored responses, ``GET``/``DELETE``, ``input_items``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2 as httpx
import openai
import pytest
from pydantic import BaseModel

from tooluse.backend import Backend
from tooluse.backends.scripted import ScriptedBackend, from_spec
from tooluse.errors import BackendError
from tooluse.messages import Request, TextBlock
from tooluse.server import ServerThread, create_app
from tooluse.server.stores.responses import SqliteResponseStore
from tooluse.stream import BlockStart, MessageStart, TextDelta

# a real client: a 4xx the policy does not explain fails the test (recording.py)
pytestmark = pytest.mark.client

WEATHER = {"type": "function", "name": "get_weather", "description": "Weather in a city.",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                          "required": ["city"], "additionalProperties": False},
           "strict": True}
LOOP = '[{"call": "get_weather", "input": {"city": "Paris"}}, "It is 18 C in Paris."]'


def client(url: str, key: str = "k") -> openai.OpenAI:
    return openai.OpenAI(base_url=url + "/v1", api_key=key, max_retries=0, timeout=20)


@pytest.fixture()
def loop_server() -> Any:
    backend = from_spec(LOOP)
    with ServerThread(create_app(backend)) as srv:
        yield srv, backend


def test_text(loop_server: Any) -> None:
    srv, backend = loop_server
    out = client(srv.url).responses.create(model="gpt-test", input="Hello", instructions="Be brief.")
    assert out.status == "completed" and out.output_text == "It is 18 C in Paris."
    assert out.model == "gpt-test" and out.instructions == "Be brief."
    assert backend.requests[-1].system_text() == "Be brief."


@pytest.mark.provokes_4xx(400, "Previous response with id")
def test_function_tool_loop_with_function_call_output(loop_server: Any) -> None:
    srv, backend = loop_server
    c = client(srv.url)
    first = c.responses.create(model="m", input="Weather in Paris?", tools=[WEATHER], store=False)
    (call,) = first.output
    assert call.type == "function_call" and json.loads(call.arguments) == {"city": "Paris"}
    history: list[Any] = [{"role": "user", "content": "Weather in Paris?"},
                          *[item.model_dump(exclude_none=True) for item in first.output],
                          {"type": "function_call_output", "call_id": call.call_id,
                           "output": "18 C"}]
    second = c.responses.create(model="m", input=history, tools=[WEATHER], store=False)
    assert second.output_text == "It is 18 C in Paris."
    assert backend.requests[-1].messages[-1].tool_results[0].text() == "18 C"
    with pytest.raises(openai.BadRequestError, match="not found"):  # store: false kept nothing
        c.responses.create(model="m", previous_response_id=first.id, input="again")


@pytest.mark.provokes_4xx(404, "not found")
def test_previous_response_id_chains_and_is_readable(loop_server: Any) -> None:
    srv, backend = loop_server
    c = client(srv.url)
    first = c.responses.create(model="m", input="Weather in Paris?", tools=[WEATHER],
                               instructions="first instructions")
    call = first.output[0]
    assert call.type == "function_call"
    second = c.responses.create(model="m", previous_response_id=first.id, tools=[WEATHER],
                                input=[{"type": "function_call_output", "call_id": call.call_id,
                                        "output": "18 C"}])
    assert second.output_text == "It is 18 C in Paris." and second.previous_response_id == first.id
    seen = backend.requests[-1]
    assert [m.role for m in seen.messages] == ["user", "assistant", "user"]
    assert seen.system_text() == ""  # instructions are not carried over
    assert c.responses.retrieve(second.id).output_text == "It is 18 C in Paris."
    items = c.responses.input_items.list(second.id)
    assert [i.type for i in items.data] == ["function_call_output"]
    assert [i.type for i in c.responses.input_items.list(first.id, order="asc").data] == ["message"]
    c.responses.delete(first.id)
    with pytest.raises(openai.NotFoundError):
        c.responses.retrieve(first.id)


def test_stream_helper_and_raw_events(loop_server: Any) -> None:
    srv, _ = loop_server
    c = client(srv.url)
    with c.responses.stream(model="m", input="Weather in Paris?", tools=[WEATHER]) as stream:
        kinds = [event.type for event in stream]
        final = stream.get_final_response()
    assert kinds[:3] == ["response.created", "response.in_progress", "response.output_item.added"]
    assert "response.function_call_arguments.delta" in kinds and kinds[-1] == "response.completed"
    assert final.output[0].type == "function_call"
    raw = list(c.responses.create(model="m", previous_response_id=final.id, stream=True, input=[
        {"type": "function_call_output", "call_id": final.output[0].call_id, "output": "x"}]))
    assert [e.sequence_number for e in raw] == list(range(len(raw)))
    text = "".join(e.delta for e in raw if e.type == "response.output_text.delta")
    assert text == "It is 18 C in Paris."
    # a streamed response is stored too, and chains
    assert c.responses.retrieve(raw[-1].response.id).output_text == text


class Weather(BaseModel):
    city: str
    celsius: int


def test_parse_with_a_pydantic_model() -> None:
    class Structured(ScriptedBackend):
        structured_output = True

    def answer(request: Request) -> str:
        assert request.response_schema is not None
        assert set(request.response_schema["properties"]) == {"city", "celsius"}
        return json.dumps({"city": "Paris", "celsius": 18})

    with ServerThread(create_app(Structured(answer))) as srv:
        parsed = client(srv.url).responses.parse(model="m", input="Paris?", text_format=Weather)
    assert parsed.output_parsed == Weather(city="Paris", celsius=18)


@pytest.mark.provokes_4xx(400, "structured output")
def test_structured_output_refused_where_it_cannot_be_guaranteed(loop_server: Any) -> None:
    srv, _ = loop_server
    with pytest.raises(openai.BadRequestError, match="structured output"):
        client(srv.url).responses.parse(model="m", input="Paris?", text_format=Weather)


@pytest.mark.provokes_4xx(401)
@pytest.mark.provokes_4xx(400)
@pytest.mark.provokes_4xx(404)
@pytest.mark.provokes_4xx(429)
def test_errors_in_openai_shape() -> None:
    backend = ScriptedBackend([BackendError("slow", kind="rate_limit")])
    with ServerThread(create_app(backend, api_keys=["good"])) as srv:
        with pytest.raises(openai.AuthenticationError):
            client(srv.url, "bad").responses.create(model="m", input="x")
        with pytest.raises(openai.BadRequestError) as info:
            client(srv.url, "good").responses.create(model="m", input="x", tools=[
                {"type": "function", "name": "bad name", "parameters": {"type": "object"}}])  # type: ignore[list-item]
        body = info.value.body
        assert isinstance(body, dict) and body["param"] == "tools.[0].name"
        with pytest.raises(openai.BadRequestError, match="API.s own servers"):
            client(srv.url, "good").responses.create(model="m", input="x", tools=[
                {"type": "file_search", "vector_store_ids": ["v"]}])
        with pytest.raises(openai.RateLimitError):
            client(srv.url, "good").responses.create(model="m", input="x")
        with pytest.raises(openai.NotFoundError):
            client(srv.url, "good").responses.retrieve("resp_nope")


@pytest.mark.parametrize("body", [b"", b"[]", b"{", b'{"model": "m", "input": 5}',
                                  b'{"model": "m", "input": [{"type": "message"}]}',
                                  b'{"model": "m", "input": "x", "stream": "yes"}'])
@pytest.mark.provokes_4xx(400)
def test_bad_input_is_a_400_never_a_500(loop_server: Any, body: bytes) -> None:
    srv, _ = loop_server
    got = httpx.post(srv.url + "/v1/responses", content=body,
                     headers={"content-type": "application/json"})
    assert got.status_code == 400 and "error" in got.json()


@pytest.mark.provokes_4xx(413)
@pytest.mark.provokes_4xx(404, "no such endpoint")
def test_body_cap_and_unknown_paths() -> None:
    with ServerThread(create_app(from_spec("hi"), max_body_bytes=100)) as srv:
        got = httpx.post(srv.url + "/v1/responses", content=b'{"model": "m", "input": "' +
                         b"x" * 200 + b'"}')
        assert got.status_code == 413 and got.json()["error"]["type"] == "invalid_request_error"
        missing = httpx.get(srv.url + "/v1/responses/r/nothing")
        assert missing.status_code == 404 and "error" in missing.json()


def test_web_search_is_dropped_so_codex_default_tools_work(loop_server: Any) -> None:
    srv, backend = loop_server
    out = client(srv.url).responses.create(model="m", input="hi", tools=[
        WEATHER, {"type": "web_search"}], store=False)
    assert out.output[0].type == "function_call"
    assert [t.name for t in backend.requests[-1].tools] == ["get_weather"]


def test_error_after_the_stream_started_is_an_error_event_and_failed() -> None:
    class Dies(Backend):
        def stream(self, request: Request) -> Any:
            yield MessageStart(id="x", model="m")
            yield BlockStart(index=0, block=TextBlock(text=""))
            yield TextDelta(index=0, text="partial")
            raise BackendError("backend fell over", kind="unavailable")

    with ServerThread(create_app(Dies())) as srv:
        events = list(client(srv.url).responses.create(model="m", input="x", stream=True))
    assert [e.type for e in events[-2:]] == ["error", "response.failed"]
    assert events[-1].response.error is not None
    assert "backend fell over" in events[-1].response.error.message


def test_previous_response_id_survives_a_gateway_restart(tmp_path: Path) -> None:
    path = tmp_path / "responses.sqlite3"
    with ServerThread(create_app(from_spec(LOOP), responses_store=str(path))) as srv:
        first = client(srv.url).responses.create(model="m", input="Weather?", tools=[WEATHER])
    call = first.output[0]
    assert call.type == "function_call"
    backend = from_spec(LOOP)
    with ServerThread(create_app(backend, responses_store=str(path))) as srv:
        second = client(srv.url).responses.create(
            model="m", previous_response_id=first.id, tools=[WEATHER],
            input=[{"type": "function_call_output", "call_id": call.call_id, "output": "18 C"}])
    assert second.output_text == "It is 18 C in Paris."
    assert backend.requests[-1].messages[0].text() == "Weather?"


def test_store_is_bounded_by_count(tmp_path: Path) -> None:
    store = SqliteResponseStore(tmp_path / "s.sqlite3", max_responses=3)
    for n in range(5):
        store.put(f"resp_{n}", {"id": f"resp_{n}"}, [], {})
    assert len(store) == 3 and store.get("resp_1") is None and store.get("resp_4") is not None
    assert store.delete("resp_4") and not store.delete("resp_4")
    store.close()
    with pytest.raises(OSError, match="cannot open the responses store"):
        SqliteResponseStore(tmp_path)  # a directory


def test_same_conversation_reaches_the_backend_as_through_chat(loop_server: Any) -> None:
    srv, backend = loop_server
    c = client(srv.url)
    c.chat.completions.create(model="m", messages=[{"role": "system", "content": "S"},
                                                   {"role": "user", "content": "hi"}])
    via_chat = backend.requests[-1]
    c.responses.create(model="m", instructions="S", input="hi", store=False)
    assert backend.requests[-1] == via_chat
