"""Self-consistency (``-o self_consistency=K``), without a model: a fake text model writes
one answer per seed and scores each answer from a table."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from tooluse.backends.local_options import LocalOptions
from tooluse.messages import Message, Request, ToolChoice, ToolSpec
from tooluse.prompting import PromptToolsBackend, TextEnd, ToolGrammar
from tooluse.prompting.consistency import Consistency, Sample, answer_key, choose

WEATHER = ToolSpec(name="get_weather", description="Current weather in a city.", input_schema={
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})


def call(city: str) -> str:
    return ("<function_calls>\n<invoke>\n<tool_name>get_weather</tool_name>\n<parameters>\n"
            f"<city>{city}</city>\n</parameters>\n</invoke>\n</function_calls>")


class SeededText:
    """Writes ``answers[0]`` greedy and ``answers[seed]`` when sampled; scores an answer by
    ``scores``, keyed by its text (-10 if absent). Records every generation's options."""

    model = "fake"

    def __init__(self, answers: list[str], scores: dict[str, float] | None = None) -> None:
        self.answers, self.scores = answers, scores or {}
        self.asked: list[dict[str, Any]] = []

    def score_continuations(self, messages: Sequence[dict[str, str]],
                            continuations: Sequence[str], *, prefill: str = "") -> list[float]:
        return [self.scores.get(c, -10.0) for c in continuations]

    def generate_text(self, messages: Sequence[dict[str, str]], *, prefill: str = "",
                      stop: Sequence[str] = (), max_tokens: int = 1024,
                      temperature: float = 0.0, top_p: float | None = None,
                      top_k: int | None = None, seed: int | None = None,
                      grammar: ToolGrammar | None = None) -> Iterator[str | TextEnd]:
        self.asked.append({"temperature": temperature, "seed": seed, "grammar": grammar})
        yield self.answers[0 if temperature <= 0 else int(seed or 0)]
        yield TextEnd(reason="end", output_tokens=7)


def _request(choice: str = "auto") -> Request:
    return Request(messages=[Message(role="user", content="Weather in Oslo?")], tools=[WEATHER],
                   tool_choice=ToolChoice(type=choice), max_tokens=64)  # type: ignore[arg-type]


def test_the_majority_of_the_answers_wins_and_its_calls_say_so() -> None:
    text = SeededText([call("Osl"), call("Oslo"), call("Oslo"), "It is sunny."])
    backend = PromptToolsBackend(text, consistency=Consistency(4))
    response = backend.complete(_request())
    assert [c.input for c in response.tool_uses] == [{"city": "Oslo"}]
    origin = response.tool_uses[0].origin
    assert response.tool_uses[0].source == "model" and origin is not None \
        and origin.steered_by == ["self_consistency"]
    # the greedy answer first, then the samples, each with its own seed, all under the grammar
    assert [(a["temperature"], a["seed"]) for a in text.asked] == \
        [(0.0, None), (0.7, 1), (0.7, 2), (0.7, 3)]
    assert all(a["grammar"] is not None for a in text.asked)
    timings = backend.last_end.timings if backend.last_end else {}
    assert timings["self_consistency_votes"] == 2.0 and timings["self_consistency_chosen"] == 1.0
    assert timings["self_consistency_tokens"] == 28.0 and timings["self_consistency_s"] >= 0


def test_the_greedy_answer_kept_is_the_model_s_own_and_ties_go_by_likelihood() -> None:
    greedy = call("Oslo")
    text = SeededText([greedy, call("Bergen"), call("Oslo")],
                      scores={call("Bergen"): -1.0, greedy: -3.0})
    response = PromptToolsBackend(text, consistency=Consistency(3)).complete(_request())
    assert [c.input for c in response.tool_uses] == [{"city": "Oslo"}]
    assert response.tool_uses[0].origin is None or not response.tool_uses[0].origin.steered_by
    # one vote each: the likeliest answer
    text = SeededText([greedy, call("Bergen")], scores={call("Bergen"): -1.0, greedy: -3.0})
    response = PromptToolsBackend(text, consistency=Consistency(2)).complete(_request())
    assert [c.input for c in response.tool_uses] == [{"city": "Bergen"}]
    # by likelihood alone, whatever the votes
    text = SeededText([greedy, greedy, call("Bergen")], scores={call("Bergen"): -1.0})
    likeliest = PromptToolsBackend(text, consistency=Consistency(3, choice="likelihood"))
    assert [c.input for c in likeliest.complete(_request()).tool_uses] == [{"city": "Bergen"}]


def test_a_text_answer_can_win_and_calls_are_compared_order_free() -> None:
    text = SeededText([call("Oslo"), "Sunny.", "Sunny!"])
    response = PromptToolsBackend(text, consistency=Consistency(3)).complete(_request())
    assert not response.tool_uses and response.text() in ("Sunny.", "Sunny!")
    two = ("<function_calls>\n" + "\n".join(
        f"<invoke>\n<tool_name>get_weather</tool_name>\n<parameters>\n<city>{c}</city>\n"
        "</parameters>\n</invoke>" for c in cities) + "\n</function_calls>"
        for cities in (("Oslo", "Rome"), ("Rome", "Oslo")))
    first, second = two
    assert answer_key(first, [WEATHER]) == answer_key(second, [WEATHER]) != ()
    assert answer_key("No call.", [WEATHER]) == ()
    samples = [Sample("a", TextEnd("end"), ("x",), -5.0), Sample("b", TextEnd("end"), ("y",), -1.0),
               Sample("c", TextEnd("end"), ("x",), -4.0)]
    assert choose(samples, "majority") == (2, 2)
    assert choose(samples, "likelihood") == (1, 1)


def test_off_by_default_one_greedy_generation_and_bad_settings_refused() -> None:
    text = SeededText([call("Osl"), call("Oslo"), call("Oslo")])
    response = PromptToolsBackend(text).complete(_request())
    assert [c.input for c in response.tool_uses] == [{"city": "Osl"}]
    assert [(a["temperature"], a["seed"]) for a in text.asked] == [(0.0, None)]
    assert LocalOptions().self_consistency == 0
    options = LocalOptions.from_options({"self_consistency": "5",
                                         "self_consistency_choice": "likelihood",
                                         "self_consistency_temperature": "0.5"})
    assert (options.self_consistency, options.self_consistency_choice,
            options.self_consistency_temperature) == (5, "likelihood", 0.5)
    with pytest.raises(ValueError, match="must be one of"):
        LocalOptions.from_options({"self_consistency_choice": "vote"})
    for bad in ({"samples": 1}, {"samples": 3, "temperature": 0.0},
                {"samples": 3, "choice": "vote"}):
        with pytest.raises(ValueError):
            Consistency(**bad)  # type: ignore[arg-type]
    # a request that asks for sampling itself, or no tools: one generation as asked
    text = SeededText([call("Osl"), call("Oslo"), call("Oslo")])
    warm = _request().model_copy(update={"temperature": 0.9})
    PromptToolsBackend(text, consistency=Consistency(3)).complete(warm)
    assert len(text.asked) == 1
