"""The official anthropic SDK, unchanged except for base_url, against the gateway."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest

from tooluse.backends.scripted import ScriptedBackend
from tooluse.server import ServerThread, create_app

# a real client: a 4xx the policy does not explain fails the test (recording.py)
pytestmark = pytest.mark.client


def client(url: str, key: str = "test-key") -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=url, api_key=key, max_retries=0, timeout=20)


def test_create_with_tools_auto(server: ServerThread, backend: ScriptedBackend, tools: list[dict[str, Any]]) -> None:
    msg = client(server.url).messages.create(
        model="claude-test",
        max_tokens=100,
        tools=tools,
        messages=[{"role": "user", "content": "Paris"}],
    )
    assert msg.stop_reason == "tool_use"
    assert msg.content[0].type == "text" and "<thinking>" in msg.content[0].text
    call = msg.content[1]
    assert call.type == "tool_use"
    assert call.name == "get_weather"
    assert call.input == {"location": "Paris", "days": 5}
    assert msg.model == "claude-test"
    seen = backend.requests[-1]
    assert [t.name for t in seen.tools] == ["get_weather", "get_time"]
    assert seen.tool_choice is None and seen.max_tokens == 100


@pytest.mark.parametrize(
    ("choice", "expected_names", "neutral_type"),
    [
        ({"type": "auto"}, ["get_weather"], "auto"),
        ({"type": "any"}, ["get_weather"], "any"),
        ({"type": "tool", "name": "get_time"}, ["get_time"], "tool"),
        ({"type": "none"}, [], "none"),
    ],
)
def test_create_each_tool_choice(
    server: ServerThread,
    backend: ScriptedBackend,
    tools: list[dict[str, Any]],
    choice: dict[str, Any],
    expected_names: list[str],
    neutral_type: str,
) -> None:
    msg = client(server.url).messages.create(
        model="m", max_tokens=50, tools=tools, tool_choice=choice,  # type: ignore[arg-type]
        messages=[{"role": "user", "content": "Rome"}],
    )
    names = [b.name for b in msg.content if b.type == "tool_use"]
    assert names == expected_names
    assert msg.stop_reason == ("tool_use" if expected_names else "end_turn")
    seen = backend.requests[-1].tool_choice
    assert seen is not None and seen.type == neutral_type
    if neutral_type == "tool":
        assert seen.name == "get_time"


def test_disable_parallel_tool_use_is_enforced(
    server: ServerThread, backend: ScriptedBackend, tools: list[dict[str, Any]]
) -> None:
    c = client(server.url)
    both = c.messages.create(
        model="m", max_tokens=50, tools=tools, tool_choice={"type": "any"},
        messages=[{"role": "user", "content": "both please"}],
    )
    assert [b.name for b in both.content if b.type == "tool_use"] == ["get_weather", "get_time"]
    one = c.messages.create(
        model="m", max_tokens=50, tools=tools,
        tool_choice={"type": "any", "disable_parallel_tool_use": True},
        messages=[{"role": "user", "content": "both please"}],
    )
    assert [b.name for b in one.content if b.type == "tool_use"] == ["get_weather"]
    assert backend.requests[-1].tool_choice.disable_parallel_tool_use  # type: ignore[union-attr]
    # and in a stream: the second call's events are dropped, indices stay contiguous
    with c.messages.stream(
        model="m", max_tokens=50, tools=tools,
        tool_choice={"type": "any", "disable_parallel_tool_use": True},
        messages=[{"role": "user", "content": "both please"}],
    ) as stream:
        final = stream.get_final_message()
    assert [b.name for b in final.content if b.type == "tool_use"] == ["get_weather"]


def test_stream_accumulates_tool_input(server: ServerThread, tools: list[dict[str, Any]]) -> None:
    events: list[str] = []
    with client(server.url).messages.stream(
        model="m", max_tokens=100, tools=tools,
        messages=[{"role": "user", "content": "a rather long city name, Llanfairpwllgwyngyll"}],
    ) as stream:
        for event in stream:
            events.append(event.type)
        final = stream.get_final_message()
    call = next(b for b in final.content if b.type == "tool_use")
    text = "a rather long city name, Llanfairpwllgwyngyll"
    assert call.input == {"location": text, "days": len(text)}
    assert final.stop_reason == "tool_use"
    assert events[0] == "message_start"
    assert "input_json" in events and "text" in events
    assert events[-1] == "message_stop"


def test_tool_result_round_trip_and_is_error(
    server: ServerThread, backend: ScriptedBackend, tools: list[dict[str, Any]]
) -> None:
    c = client(server.url)
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Oslo"}]
    first = c.messages.create(model="m", max_tokens=100, tools=tools, messages=messages)
    call = next(b for b in first.content if b.type == "tool_use")
    messages.append({"role": "assistant", "content": first.content})
    messages.append({
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "-3 C, snow"}],
    })
    second = c.messages.create(model="m", max_tokens=100, tools=tools, messages=messages)
    assert second.stop_reason == "end_turn"
    assert second.content[0].text == "ok: -3 C, snow"  # type: ignore[union-attr]
    seen = backend.requests[-1].messages[-1].tool_results[0]
    assert seen.tool_use_id == call.id and not seen.is_error

    messages[-1] = {
        "role": "user",
        "content": [{
            "type": "tool_result", "tool_use_id": call.id, "is_error": True,
            "content": [{"type": "text", "text": "ConnectionError: weather service down"}],
        }],
    }
    third = c.messages.create(model="m", max_tokens=100, tools=tools, messages=messages)
    assert third.content[0].text == "error: ConnectionError: weather service down"  # type: ignore[union-attr]
    assert backend.requests[-1].messages[-1].tool_results[0].is_error


def test_text_only_stream(server: ServerThread) -> None:
    with client(server.url).messages.stream(
        model="m", max_tokens=10, messages=[{"role": "user", "content": "hello there"}]
    ) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert text == "echo: hello there"
    assert final.stop_reason == "end_turn"


@pytest.mark.provokes_4xx(401)
def test_api_key_bearer_and_x_api_key() -> None:
    backend = ScriptedBackend(lambda r: "fine")
    with ServerThread(create_app(backend, api_keys=["sekret"])) as srv:
        # the SDK sends the key its own way (Bearer in anthropic 2.x)
        ok = client(srv.url, "sekret").messages.create(
            model="m", max_tokens=5, messages=[{"role": "user", "content": "x"}]
        )
        assert ok.content[0].text == "fine"  # type: ignore[union-attr]
        with pytest.raises(anthropic.AuthenticationError) as info:
            client(srv.url, "wrong").messages.create(
                model="m", max_tokens=5, messages=[{"role": "user", "content": "x"}]
            )
        assert info.value.status_code == 401
        assert info.value.body["error"]["type"] == "authentication_error"  # type: ignore[index]
        import httpx2

        body = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "x"}]}
        r = httpx2.post(f"{srv.url}/v1/messages", json=body, headers={
            "x-api-key": "sekret", "anthropic-version": "2023-06-01",
            "anthropic-beta": "tools-2024-05-16"})
        assert r.status_code == 200 and r.headers["request-id"].startswith("req_")
        r = httpx2.post(f"{srv.url}/v1/messages", json=body)
        assert r.status_code == 401
        assert r.json()["error"]["type"] == "authentication_error"


def test_images_stop_sequences_and_system_reach_the_backend(server: ServerThread, backend: ScriptedBackend) -> None:
    png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
    client(server.url).messages.create(
        model="m", max_tokens=20, system="be brief", stop_sequences=["</answer>"],
        messages=[{"role": "user", "content": [
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png}},
            {"type": "text", "text": "what is this?"},
        ]}],
    )
    seen = backend.requests[-1]
    assert seen.system_text() == "be brief"
    assert seen.stop_sequences == ["</answer>"]
    image = seen.messages[0].content[0]
    assert image.type == "image" and image.data == png and image.media_type == "image/png"  # type: ignore[union-attr]
