"""Client-side constrained decoding (``client_grammar=True``): the decoding loop against a
scripted model, reading logprobs answers, and the requests the backend sends."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest

from tooluse.backends._client_grammar import (
    Candidate,
    Position,
    StepResult,
    constrained_generate,
    step_result_from_chat,
)
from tooluse.backends.openai_prompt import OpenAIChatTextBackend, OpenAIPromptBackend
from tooluse.errors import BackendError
from tooluse.messages import Message, Request, ToolChoice, ToolSpec, ToolUseBlock
from tooluse.prompting import TextEnd, tool_call_grammar
from tooluse.stream import accumulate

URL = "http://127.0.0.1:9/v1"
WEATHER = ToolSpec(name="get_weather", description="Weather.", input_schema={
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})
TIME = ToolSpec(name="get_time", description="Time.", input_schema={
    "type": "object", "properties": {"zone": {"type": "string"}}, "required": ["zone"]})
STOP = ["</function_calls>"]


def pos(chosen: str, *others: str) -> Position:
    """A generated token and its alternatives, best first (log-probs descending)."""
    tokens = [chosen, *others]
    return Position(chosen.encode(), [Candidate(t.encode(), -float(i)) for i, t in enumerate(tokens)])


class Model:
    """A scripted model: one StepResult per request; records what it was asked."""

    def __init__(self, *answers: StepResult) -> None:
        self.answers = list(answers)
        self.asked: list[tuple[str, int]] = []

    def __call__(self, continuation: str, n: int) -> StepResult:
        self.asked.append((continuation, n))
        return self.answers.pop(0)


def generate(model: Model, choice: ToolChoice, **kw: Any) -> tuple[str, TextEnd]:
    grammar = tool_call_grammar([WEATHER, TIME], choice)
    items = list(constrained_generate(model, grammar, stop=STOP, **kw))
    end = items.pop()
    assert isinstance(end, TextEnd)
    return "".join(str(i) for i in items), end


ANY_ONE = ToolChoice(type="any", disable_parallel_tool_use=True)


def test_a_model_that_follows_the_grammar_needs_few_requests() -> None:
    # "get_" is fixed by the grammar (both tools start with it): not asked for. After "w",
    # the rest of the name and the tags are fixed too; the model's own tokens are taken
    # while they match them.
    model = Model(StepResult([pos("w"), pos("eather"), pos("</")]),
                  StepResult([pos("Paris"), pos("</"), pos("city")]))
    text, end = generate(model, ANY_ONE)
    assert text == ("get_weather</tool_name>\n<parameters>\n<city>Paris</city>\n"
                    "</parameters>\n</invoke>\n")
    assert (end.reason, end.stop_sequence) == ("stop", "</function_calls>")
    assert end.timings["requests"] == 2
    assert model.asked[0] == ("get_", 16)
    # The second request continues after the fixed text, asking for about twice what the
    # model got right before (3 tokens).
    assert model.asked[1] == ("get_weather</tool_name>\n<parameters>\n<city>", 6)


def test_a_refused_token_is_replaced_by_the_best_allowed_candidate() -> None:
    model = Model(StepResult([pos("weather_report", "t", "w"), pos("IGNORED")]),
                  StepResult([pos(" UTC", "UTC"), pos("IGNORED")]),
                  StepResult([pos("</")]))
    text, end = generate(model, ANY_ONE)
    # "weather_report" and " UTC" (a leading blank) are not allowed; what followed the
    # refused token was dropped.
    assert text.startswith("get_time</tool_name>\n<parameters>\n<zone>UTC</zone>")
    assert model.asked[1][0] == "get_time</tool_name>\n<parameters>\n<zone>"
    assert end.stop_sequence == "</function_calls>"


def test_stuck_after_a_call_closes_the_block() -> None:
    # Parallel calls allowed: after </invoke> the grammar wants "\n<invoke>" or
    # "\n</function_calls>"; the model writes "\n<" then "function_results" (not allowed, no
    # allowed candidate): the block is closed with the rest of the stop string.
    model = Model(StepResult([pos("t")]), StepResult([pos("UTC"), pos("</")]),
                  StepResult([pos("function_results", "tool")]))
    text, end = generate(model, ToolChoice(type="any"))
    assert model.asked[2][0].endswith("</invoke>\n<")  # "\n<" is common to both ways on
    assert text.endswith("<zone>UTC</zone>\n</parameters>\n</invoke>\n")
    assert (end.reason, end.stop_sequence) == ("stop", "</function_calls>")


def test_stuck_inside_a_value_ends_without_inventing_text() -> None:
    model = Model(StepResult([pos("t")]), StepResult([pos("U"), pos("\n\n", "\n")]))
    text, end = generate(model, ANY_ONE)
    assert text == "get_time</tool_name>\n<parameters>\n<zone>U"
    assert end.reason == "end" and end.stop_sequence is None


def test_end_of_turn_where_the_grammar_may_end() -> None:
    auto = ToolChoice(type="auto")
    model = Model(StepResult([pos("It"), pos(" is"), pos(" late.")], ended=True))
    text, end = generate(model, auto)
    assert text == "It is late." and end.reason == "end" and end.timings["requests"] == 1
    # The model's end-of-turn token where text may end.
    model = Model(StepResult([pos("Hi"), Position(b"", [Candidate(b"", 0.0)]), pos("X")]))
    text, end = generate(model, auto)
    assert text == "Hi" and end.reason == "end"
    # "<" starts a call block in auto mode: the grammar then writes the opening itself.
    model = Model(StepResult([pos("Hi"), pos("<")]))
    text, end = generate(model, auto, max_tokens=2)
    assert text == "Hi<function_calls>\n<invoke>\n<tool_name>get_" and end.reason == "length"


def test_max_tokens_counts_sampled_tokens() -> None:
    model = Model(StepResult([pos("t")]), StepResult([pos("U"), pos("T")]),
                  StepResult([pos("C")]))
    text, end = generate(model, ANY_ONE, max_tokens=4)
    assert end.reason == "length" and text.endswith("<zone>UTC")
    assert model.asked[2][1] == 1  # never asks beyond the budget


def test_temperature_samples_among_allowed_candidates_only() -> None:
    picks = set()
    for seed in range(20):
        model = Model(StepResult([Position(b"x", [Candidate(b"x", 0.0), Candidate(b"w", -0.1),
                                                  Candidate(b"t", -0.2)])]),
                      StepResult([pos("A"), pos("</")]))
        text, _ = generate(model, ANY_ONE, temperature=1.0, seed=seed)
        picks.add(text[:5])
    assert picks == {"get_w", "get_t"}


# -- reading the server's answer --------------------------------------------------------------


def chat_answer(tokens: list[tuple[str, list[tuple[str, float]]]], finish: str = "length",
                **extra: Any) -> dict[str, Any]:
    content = [{"token": t, "logprob": alts[0][1] if alts else 0.0, "bytes": None,
                "top_logprobs": [{"token": a, "logprob": lp, "bytes": None} for a, lp in alts]}
               for t, alts in tokens]
    return {"choices": [{"index": 0, "message": {"role": "assistant",
                                                 "content": "".join(t for t, _ in tokens)},
                         "logprobs": {"content": content}, "finish_reason": finish, **extra}],
            "usage": {"prompt_tokens": 40, "completion_tokens": len(tokens)}}


def test_step_result_from_chat() -> None:
    data = chat_answer([("Par", [("Par", -0.1), ("Lon", -2.0)]), ("is", [("is", -0.01)])])
    data["choices"][0]["logprobs"]["content"][1]["bytes"] = [0xC3, 0xA9]  # bytes win
    result = step_result_from_chat(data)
    assert [p.chosen for p in result.positions] == [b"Par", b"\xc3\xa9"]
    assert [c.data for c in result.positions[0].candidates] == [b"Par", b"Lon"]
    assert (result.input_tokens, result.output_tokens, result.ended) == (40, 2, False)
    ended = step_result_from_chat({"choices": [{"message": {"content": ""},
                                                "finish_reason": "stop"}]})
    assert ended.ended and ended.positions == []
    with pytest.raises(ValueError, match="logprobs"):
        step_result_from_chat({"choices": [{"message": {"content": "x"},
                                            "finish_reason": "length"}]})
    with pytest.raises(ValueError):
        step_result_from_chat([1])


# -- the backend's requests -------------------------------------------------------------------


def test_backend_sends_one_token_requests_that_grow_the_assistant_message() -> None:
    answers = [chat_answer([("w", [("w", -0.1)]), ("eather", [("eather", -0.1)])]),
               chat_answer([("Oslo", [("Oslo", -0.1)]), ("</", [("</", -0.2)])])]
    bodies: list[dict[str, Any]] = []

    def handle(request: httpx2.Request) -> httpx2.Response:
        bodies.append(json.loads(request.content))
        return httpx2.Response(200, json=answers.pop(0))

    backend = OpenAIPromptBackend("m", base_url=URL, client_grammar=True,
                                  transport=httpx2.MockTransport(handle))
    assert backend.grammar is True
    request = Request(model="m", max_tokens=50, tools=[WEATHER, TIME],
                      messages=[Message(role="user", content="Weather in Oslo?")],
                      tool_choice=ToolChoice(type="any", disable_parallel_tool_use=True))
    response = accumulate(backend.stream(request))
    [call] = [b for b in response.content if isinstance(b, ToolUseBlock)]
    assert (call.name, call.input) == ("get_weather", {"city": "Oslo"})
    assert len(bodies) == 2
    first, second = bodies
    assert (first["logprobs"], first["top_logprobs"], first["stream"]) == (True, 20, False)
    assert first["max_tokens"] == 16 and "grammar" not in first and "stop" not in first
    prefill = "<function_calls>\n<invoke>\n<tool_name>"
    assert first["messages"][-1] == {"role": "assistant", "content": prefill + "get_"}
    assert second["messages"][-1]["content"] == (
        prefill + "get_weather</tool_name>\n<parameters>\n<city>")
    assert second["messages"][:-1] == first["messages"][:-1]
    assert backend.text_model.last_end is not None
    assert backend.text_model.last_end.timings["requests"] == 2


def test_server_without_logprobs_is_a_clear_error() -> None:
    def handle(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, json={"choices": [{"index": 0, "message": {
            "role": "assistant", "content": "w"}, "finish_reason": "length"}]})

    backend = OpenAIPromptBackend("m", base_url=URL, client_grammar=True,
                                  transport=httpx2.MockTransport(handle))
    request = Request(model="m", max_tokens=50, tools=[WEATHER, TIME],
                      messages=[Message(role="user", content="Weather?")],
                      tool_choice=ToolChoice(type="any"))
    with pytest.raises(BackendError, match="logprobs") as info:
        accumulate(backend.stream(request))
    assert info.value.kind == "invalid_request"


def test_client_grammar_needs_a_continuing_server() -> None:
    with pytest.raises(ValueError, match="continues a final assistant message"):
        OpenAIChatTextBackend("m", base_url=URL, client_grammar=True, prefill="none")
    with pytest.raises(ValueError, match="candidates"):
        OpenAIChatTextBackend("m", base_url=URL, client_grammar=True, candidates=0)
