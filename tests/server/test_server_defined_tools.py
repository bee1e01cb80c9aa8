"""Tools the vendors define by type and the client runs (Anthropic's bash, text editor,
memory and computer; OpenAI's local_shell, shell and apply_patch) on a backend that knows
none of them: the model sees their documented schemas, calls them by name, and the client
gets the call in its API's own shape. What only the vendor runs stays refused, saying why."""

from __future__ import annotations

from collections.abc import Iterator

import anthropic
import openai
import pytest

from tooluse.backends.scripted import ScriptedBackend, from_spec
from tooluse.server import ServerThread, create_app


@pytest.fixture()
def calls_first_tool() -> Iterator[tuple[ServerThread, ScriptedBackend]]:
    backend = from_spec("call")
    with ServerThread(create_app(backend)) as srv:
        yield srv, backend


def test_anthropic_defined_client_tools(calls_first_tool: tuple[ServerThread, ScriptedBackend]
                                        ) -> None:
    srv, backend = calls_first_tool
    client = anthropic.Anthropic(base_url=srv.url, api_key="k", max_retries=0)
    for tool, name in [({"type": "bash_20250124", "name": "bash"}, "bash"),
                       ({"type": "text_editor_20250728", "name": "str_replace_based_edit_tool"},
                        "str_replace_based_edit_tool"),
                       ({"type": "memory_20250818", "name": "memory"}, "memory"),
                       ({"type": "computer_20250124", "name": "computer", "display_width_px": 800,
                         "display_height_px": 600}, "computer")]:
        message = client.beta.messages.create(
            model="m", max_tokens=100, messages=[{"role": "user", "content": "go"}],
            tools=[tool])  # type: ignore[list-item]
        (use,) = message.content
        assert use.type == "tool_use" and use.name == name  # type: ignore[union-attr]
        spec = backend.requests[-1].tools[0]
        assert spec.name == name and spec.input_schema["type"] == "object"
        assert set(use.input) == set(spec.input_schema.get("required", []))  # type: ignore[union-attr]


def test_vendor_run_tools_are_refused_saying_why(
        calls_first_tool: tuple[ServerThread, ScriptedBackend]) -> None:
    srv, _ = calls_first_tool
    client = anthropic.Anthropic(base_url=srv.url, api_key="k", max_retries=0)
    with pytest.raises(anthropic.BadRequestError) as info:
        client.messages.create(model="m", max_tokens=100,
                               messages=[{"role": "user", "content": "go"}],
                               tools=[{"type": "web_search_20250305", "name": "web_search"}])
    assert "tool type 'web_search_20250305' runs on the anthropic API's own servers " \
        "(Anthropic searches the web for the model)" in str(info.value)
    # a type the gateway does not know (a newer tool family, with no name): refused without
    # claiming who runs it
    with pytest.raises(anthropic.BadRequestError) as info:
        client.messages.create(model="m", max_tokens=100,
                               messages=[{"role": "user", "content": "go"}],
                               tools=[{"type": "computer_toolset_20260801"}])  # type: ignore[list-item]
    assert "tools.0: tool type 'computer_toolset_20260801' is not known to this gateway: " \
        "only the anthropic API takes it" in str(info.value)
    assert "own servers" not in str(info.value)


@pytest.mark.parametrize(("tool", "item"), [({"type": "local_shell"}, "local_shell_call"),
                                            ({"type": "shell"}, "shell_call"),
                                            ({"type": "apply_patch"}, "apply_patch_call")])
def test_openai_client_run_tools(calls_first_tool: tuple[ServerThread, ScriptedBackend],
                                 tool: dict[str, str], item: str) -> None:
    srv, _ = calls_first_tool
    client = openai.OpenAI(base_url=srv.url + "/v1", api_key="k", max_retries=0)
    response = client.responses.create(model="m", input="go", tools=[tool])  # type: ignore[list-item]
    (call,) = response.output
    assert call.type == item
    events = list(client.responses.create(model="m", input="go", tools=[tool],  # type: ignore[list-item]
                                          stream=True))
    assert events[-1].response.output[0].type == item  # type: ignore[union-attr]
