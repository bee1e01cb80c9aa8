"""The ``scripted:`` spec syntax (text, tool calls, steps of an agent loop) and the bounded
request history of the scripted backend."""

from __future__ import annotations

import pytest

from tooluse.backends import load_backend
from tooluse.backends.scripted import ScriptedBackend
from tooluse.messages import (
    Message,
    Request,
    TextBlock,
    ToolChoice,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
)
from tooluse.stream import accumulate

READ = ToolSpec(name="Read", input_schema={
    "type": "object", "properties": {"file_path": {"type": "string"}, "limit": {"type": "integer"},
                                     "mode": {"enum": ["text", "bytes"]}},
    "required": ["file_path", "mode"]})
LIST = ToolSpec(name="List", input_schema={"type": "object", "properties": {}})


def ask(backend: ScriptedBackend, *messages: Message, tools: list[ToolSpec] | None = None,
        choice: ToolChoice | None = None) -> tuple[list[str], list[ToolUseBlock]]:
    request = Request(messages=list(messages) or [Message(role="user", content="go")],
                      tools=tools if tools is not None else [LIST, READ], tool_choice=choice)
    response = accumulate(backend.stream(request))
    texts = [b.text for b in response.content if isinstance(b, TextBlock)]
    return texts, response.tool_uses


def test_text_spec_is_unchanged() -> None:
    assert ask(load_backend("scripted:hello"))[0] == ["hello"]


def test_call_spec_calls_the_named_tool_with_the_given_input() -> None:
    backend = load_backend('scripted:call:Read {"file_path": "/x", "mode": "text"}')
    texts, calls = ask(backend)
    assert texts == [] and [(c.name, c.input) for c in calls] == [("Read", {"file_path": "/x", "mode": "text"})]


def test_bare_call_calls_the_forced_tool_with_an_input_from_its_schema() -> None:
    backend = load_backend("scripted:call")
    _, calls = ask(backend, choice=ToolChoice(type="tool", name="Read"))
    assert [(c.name, c.input) for c in calls] == [("Read", {"file_path": "", "mode": "text"})]
    _, calls = ask(backend)  # nothing forced: the first tool
    assert [c.name for c in calls] == ["List"]


def test_steps_follow_the_agent_loop_by_assistant_turns() -> None:
    backend = load_backend(
        'scripted:[{"text": "Reading.", "call": "Read", "input": {"file_path": "a", "mode": "text"}}, "Done."]')
    texts, calls = ask(backend)
    assert texts == ["Reading."] and calls[0].name == "Read"
    history = [
        Message(role="user", content="go"),
        Message(role="assistant", content=[calls[0]]),
        Message(role="user", content=[ToolResultBlock(tool_use_id=calls[0].id, content="data")]),
    ]
    assert ask(backend, *history) == (["Done."], [])
    # past the end the last step repeats; a step needs no state, so clients may interleave
    assert ask(backend, *history, Message(role="assistant", content="Done."),
               Message(role="user", content="again"))[0] == ["Done."]
    assert ask(backend)[1][0].name == "Read"


def test_a_call_step_answers_text_to_a_request_without_that_tool() -> None:
    backend = load_backend('scripted:[{"call": "Read"}, "the answer"]')
    assert ask(backend, tools=[]) == (["the answer"], [])
    backend = load_backend('scripted:[{"text": "no tools here", "call": "Read"}]')
    assert ask(backend, tools=[LIST]) == (["no tools here"], [])


@pytest.mark.parametrize(("spec", "problem"), [
    ("scripted:[]", "non-empty"),
    ("scripted:[1]", "step 0"),
    ('scripted:[{"call": 5}]', "call must be"),
    ('scripted:[{"input": {}}]', "input without call"),
    ('scripted:[{"call": "x", "input": []}]', "input must be"),
    ("scripted:call:Read {not json", "not JSON"),
    ("scripted:[not json", "not a JSON list"),
])
def test_bad_specs_say_what_is_wrong(spec: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        load_backend(spec)


def test_history_is_bounded() -> None:
    backend = ScriptedBackend(lambda request: "ok", history=3)
    for n in range(10):
        backend.complete(Request(messages=[Message(role="user", content=f"m{n}")]))
    assert [r.messages[0].text() for r in backend.requests] == ["m7", "m8", "m9"]
    assert backend.served == 10
    quiet = ScriptedBackend(lambda request: "ok", history=0)
    quiet.complete(Request(messages=[Message(role="user", content="x")]))
    assert len(quiet.requests) == 0 and quiet.served == 1


def test_default_history_keeps_the_last_hundred() -> None:
    backend = load_backend("scripted:ok")
    for n in range(150):
        backend.complete(Request(messages=[Message(role="user", content=str(n))]))
    assert len(backend.requests) == 100 and backend.requests[0].messages[0].text() == "50"
