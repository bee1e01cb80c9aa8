"""The one table of wire APIs: every route the app serves is an API's, and the app's
errors, the traces and the OpenAPI document all take a path's API from it."""

from __future__ import annotations

import pytest
from starlette.routing import Route
from starlette.testclient import TestClient

from tooluse.backends.scripted import ScriptedBackend
from tooluse.server import create_app
from tooluse.server.apis.openapi import openapi_document
from tooluse.server.apis.table import APIS, DEFAULT, api_of_path
from tooluse.server.tracing import api_of_path as traced_api


def _concrete(path: str) -> str:
    return (path.replace("{model_id:path}", "some/model").replace("{response_id}", "resp_1")
            .replace("{modelId}", "m"))


def test_every_route_belongs_to_its_own_api() -> None:
    for api in APIS:
        for route in api.routes:
            assert api_of_path(_concrete(route.path)) is api, route.path
    names = [api.name for api in APIS]
    assert len(set(names)) == len(names)


def test_an_api_is_named_as_its_wire_api() -> None:
    """A trace says ``chat_completions`` where the telemetry's WireApi says it (the trace
    used to say ``chat``)."""
    for api in APIS:
        if api.traced:
            assert api.name == api.wire.name
    assert traced_api("/v1/chat/completions") == "chat_completions"
    assert traced_api("/model/m/converse-stream") == "converse"
    assert traced_api("/v1/responses") == "responses"
    assert traced_api("/v1/messages/count_tokens") is None
    assert traced_api("/elsewhere") == DEFAULT.name == "messages"


def test_openapi_document_lists_every_api_path() -> None:
    documented = set(openapi_document()["paths"])
    for api in APIS:
        for route in api.routes:
            assert isinstance(route, Route)
            template = route.path.replace("{model_id:path}/", "{modelId}/").replace(
                "{model_id:path}", "{model_id}")
            assert template in documented, route.path


@pytest.mark.parametrize(("method", "path", "shape"), [
    ("PUT", "/v1/responses", "openai"),
    ("POST", "/v1/responses/resp_1/input_items", "openai"),
    ("GET", "/v1/responses/resp_1/nothing", "openai"),
    ("POST", "/v1/models", "openai"),
    ("GET", "/v1/messages", "anthropic"),
    ("GET", "/v1/messages/count_tokens", "anthropic"),
    ("GET", "/model/m/converse", "bedrock"),
    ("DELETE", "/v1/chat/completions", "openai"),
])
def test_unknown_paths_and_methods_answer_in_the_apis_shape(method: str, path: str,
                                                            shape: str) -> None:
    with TestClient(create_app(ScriptedBackend(["x"]))) as client:
        answer = client.request(method, path)
    assert answer.status_code in (404, 405)
    body = answer.json()
    if shape == "anthropic":
        assert body["type"] == "error" and body["error"]["type"] in ("not_found_error",
                                                                    "invalid_request_error")
    elif shape == "bedrock":
        assert answer.headers["x-amzn-errortype"] and "message" in body
    else:
        assert set(body["error"]) >= {"message", "type", "param", "code"}


def test_models_errors_take_the_anthropic_shape_for_the_anthropic_sdk() -> None:
    with TestClient(create_app(ScriptedBackend(["x"]))) as client:
        answer = client.post("/v1/models", headers={"anthropic-version": "2023-06-01"})
    assert answer.status_code == 405
    assert answer.json()["type"] == "error"
