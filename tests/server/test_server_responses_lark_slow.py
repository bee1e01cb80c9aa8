"""Custom tools with a Lark grammar on the bundled local model, through ``/v1/responses`` with
the openai SDK: every call's text is in the language of the tool's grammar (checked with
llguidance's own matcher on the text alone), whole and streamed."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import openai
import pytest

from tooluse.server import ServerThread, create_app

# a real client: a 4xx the policy does not explain fails the test (recording.py)
pytestmark = [pytest.mark.slow, pytest.mark.client]

llguidance = pytest.importorskip("llguidance")

CALC = 'start: op " " NUM " " NUM\nop: "add" | "sub" | "mul" | "div"\nNUM: /[0-9]{1,6}/\n'
# the shape of Codex's apply_patch grammar, cut down, with bounded lines and hunks (the 135M
# model, unbounded, writes "+---+---+..." or line after line until max_output_tokens: an
# incomplete response with no call, which says nothing about the grammar)
PATCH = r"""
start: begin_patch hunk{1,2} end_patch
begin_patch: "*** Begin Patch" LF
end_patch: "*** End Patch" LF?
hunk: add_hunk | delete_hunk
add_hunk: "*** Add File: " filename LF add_line{1,3}
delete_hunk: "*** Delete File: " filename LF
filename: /[A-Za-z0-9_.\/-]{1,40}/
add_line: "+" /[^\n]{0,40}/ LF
%import common.LF
"""
TOOLS = {
    "calc": {"type": "custom", "name": "calc",
             "description": "Arithmetic on two whole numbers: an operation and two numbers.",
             "format": {"type": "grammar", "syntax": "lark", "definition": CALC}},
    "apply_patch": {"type": "custom", "name": "apply_patch",
                    "description": "Create or delete files with a patch.",
                    "format": {"type": "grammar", "syntax": "lark", "definition": PATCH}},
}


class _Bytes:
    """A tokenizer of one token per byte (and an end token): matches text exactly."""

    def __init__(self) -> None:
        self.eos_token_id = 256
        self.bos_token_id = None
        self.tokens = [bytes([i]) for i in range(256)] + [b"<eos>"]
        self.special_token_ids = [256]

    def __call__(self, text: bytes | str) -> list[int]:
        return list(text if isinstance(text, bytes) else text.encode())


def matches(lark: str, text: str) -> bool:
    tokenizer = llguidance.LLTokenizer(llguidance.TokenizerWrapper(_Bytes()))
    matcher = llguidance.LLMatcher(tokenizer, llguidance.grammar_from("lark", lark), log_level=0)
    assert not matcher.is_error(), matcher.get_error()
    return bool(matcher.consume_tokens(list(text.encode())) and matcher.is_accepting())


@pytest.fixture(scope="module")
def client() -> Iterator[openai.OpenAI]:
    pytest.importorskip("llama_cpp")
    try:
        app = create_app("local")
    except (ImportError, OSError, FileNotFoundError) as exc:
        pytest.skip(f"local model unavailable: {exc}")
    with ServerThread(app) as srv:
        yield openai.OpenAI(base_url=srv.url + "/v1", api_key="k", max_retries=0, timeout=300)


@pytest.mark.parametrize(("name", "question"), [
    ("calc", "What is 12 times 7?"),
    ("calc", "Subtract 250 from 1000."),
    ("apply_patch", "Create a file hello.txt containing the line 'hi there'."),
    ("apply_patch", "Delete the file old/notes.md."),
])
def test_every_forced_call_matches_the_lark_grammar(client: openai.OpenAI, name: str,
                                                    question: str) -> None:
    out = client.responses.create(model="m", input=question, tools=[TOOLS[name]],
                                  tool_choice={"type": "custom", "name": name},
                                  max_output_tokens=150, store=False)
    calls = [item for item in out.output if item.type == "custom_tool_call"]
    assert calls and out.status == "completed", out
    for call in calls:
        assert call.name == name
        assert matches(TOOLS[name]["format"]["definition"], call.input), call.input


def test_required_with_two_grammars_streamed(client: openai.OpenAI) -> None:
    deltas: list[str] = []
    with client.responses.stream(model="m", input="Create a file a.txt that says hello.",
                                 tools=list(TOOLS.values()), tool_choice="required",
                                 max_output_tokens=150, store=False) as stream:
        for event in stream:
            if event.type == "response.custom_tool_call_input.delta":
                deltas.append(event.delta)
        final: Any = stream.get_final_response()
    calls = [item for item in final.output if item.type == "custom_tool_call"]
    assert calls, final
    for call in calls:
        assert matches(TOOLS[call.name]["format"]["definition"], call.input), call.input
    assert "".join(deltas) == "".join(call.input for call in calls)
