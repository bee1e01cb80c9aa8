"""Fixtures for the gateway tests: a scripted model that is a function of the request, and
the gateway running under uvicorn on 127.0.0.1 so the real SDK clients can talk to it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

# every gateway the tests start records its traffic; a `client` test fails on a 4xx the
# policy does not explain (tests/server/recording.py)
from recording import _client_traffic  # noqa: F401, E402

from tooluse.backends.scripted import ScriptedBackend
from tooluse.messages import Request, Response, TextBlock, ToolResultBlock, ToolUseBlock, Usage
from tooluse.server import ServerThread, create_app


def _value_for(schema: dict[str, Any], text: str) -> Any:
    kind = schema.get("type")
    if "enum" in schema:
        return schema["enum"][0]
    if kind == "integer":
        return len(text)
    if kind == "number":
        return len(text) / 2
    if kind == "boolean":
        return True
    if kind == "array":
        return [_value_for(schema.get("items", {"type": "string"}), text)]
    if kind == "object":
        return {}
    return text


def tool_input(spec_schema: dict[str, Any], text: str) -> dict[str, Any]:
    """Inputs derived from the request: every property filled from the last user text."""
    props = spec_schema.get("properties", {})
    return {name: _value_for(sub, text) for name, sub in props.items()}


def scripted_model(request: Request) -> Response:
    """A deterministic 'model': answers tool results with text, otherwise calls tools.

    - the last user turn holds tool results -> text quoting them ("ok: ..." / "error: ...");
    - tools present and tool_choice not ``none`` -> calls the chosen (or first) tool with
      inputs derived from the user's text; with "both" in the text and two tools, calls two;
    - otherwise echoes the user's text.
    """
    last = request.messages[-1]
    results = [b for b in last.content if isinstance(b, ToolResultBlock)]
    usage = Usage(input_tokens=sum(len(m.text()) for m in request.messages), output_tokens=5)
    if results:
        text = "; ".join(
            f"{'error' if r.is_error else 'ok'}: {r.text()}" for r in results
        )
        return Response(content=[TextBlock(text=text)], stop_reason="end_turn", usage=usage)
    user_text = last.text()
    choice = request.tool_choice
    if request.tools and (choice is None or choice.type != "none"):
        tools = request.tools
        if choice is not None and choice.type == "tool":
            tools = [t for t in tools if t.name == choice.name]
        chosen = tools[:2] if "both" in user_text else tools[:1]
        content: list[Any] = []
        if choice is None or choice.type == "auto":
            content.append(TextBlock(text="<thinking>I will use a tool.</thinking>"))
        for n, spec in enumerate(chosen):
            content.append(
                ToolUseBlock(
                    id=f"toolu_{len(request.messages):02d}{n}",
                    name=spec.name,
                    input=tool_input(spec.input_schema, user_text),
                )
            )
        return Response(content=content, stop_reason="tool_use", usage=usage)
    return Response(content=[TextBlock(text=f"echo: {user_text}")], stop_reason="end_turn", usage=usage)


@pytest.fixture()
def backend() -> ScriptedBackend:
    return ScriptedBackend(scripted_model, model="scripted-model", chunk_size=5)


@pytest.fixture()
def server(backend: ScriptedBackend) -> Iterator[ServerThread]:
    with ServerThread(create_app(backend)) as running:
        yield running


WEATHER_TOOL = {
    "name": "get_weather",
    "description": "Get the current weather in a given location. Use it whenever the user "
    "asks about weather; it returns a short text.",
    "input_schema": {
        "type": "object",
        "properties": {
            "location": {"type": "string", "description": "City and state"},
            "days": {"type": "integer", "description": "How many days"},
        },
        "required": ["location"],
    },
}
TIME_TOOL = {
    "name": "get_time",
    "description": "Get the current time in a given time zone.",
    "input_schema": {
        "type": "object",
        "properties": {"timezone": {"type": "string"}},
        "required": ["timezone"],
    },
}


@pytest.fixture()
def tools() -> list[dict[str, Any]]:
    return [json.loads(json.dumps(WEATHER_TOOL)), json.loads(json.dumps(TIME_TOOL))]


@pytest.fixture(scope="session")
def scripted_model_fn() -> Any:
    """:func:`scripted_model` for tests that build their own backend around it (importing
    ``conftest`` by name is ambiguous: tests/codecs/legacy has one too)."""
    return scripted_model


@pytest.fixture(scope="session")
def tls_cert(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str, str]:
    """A throwaway CA and a certificate for 127.0.0.1 signed by it: (ca.pem, cert.pem, key.pem)."""
    trustme = pytest.importorskip("trustme")
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1", "localhost")
    folder = tmp_path_factory.mktemp("tls")
    ca_path, cert_path, key_path = (str(folder / n) for n in ("ca.pem", "cert.pem", "key.pem"))
    ca.cert_pem.write_to_path(ca_path)
    cert.cert_chain_pems[0].write_to_path(cert_path)
    cert.private_key_pem.write_to_path(key_path)
    return ca_path, cert_path, key_path
