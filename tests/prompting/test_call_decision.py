"""The call decision from the model's likelihood (``-o call_decision=...``), without a model:
a fake text model scores continuations from a table."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from tooluse.backends.local_options import LocalOptions
from tooluse.messages import Message, Request, ToolChoice, ToolResultBlock, ToolSpec, ToolUseBlock
from tooluse.prompting import PromptToolsBackend, TextEnd, ToolGrammar
from tooluse.prompting.decide import CALL_OPENER, Decision, decides, decision_scores

WEATHER = ToolSpec(name="get_weather", description="Current weather in a city.", input_schema={
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})
BODY = "get_weather</tool_name>\n<parameters>\n<city>Oslo</city>\n</parameters>\n</invoke>\n" \
    "</function_calls>"


class ScoringText:
    """Scores the call opener by whether the last user turn is empty, "Yes"/"No" from a
    table; writes one output and records what it was asked."""

    model = "fake"

    def __init__(self, opener: float, output: str, empty_opener: float = -9.0) -> None:
        self.opener, self.empty_opener, self.output = opener, empty_opener, output
        self.scored: list[tuple[list[dict[str, str]], list[str]]] = []
        self.asked: list[dict[str, Any]] = []

    def score_continuations(self, messages: Sequence[dict[str, str]],
                            continuations: Sequence[str], *, prefill: str = "") -> list[float]:
        self.scored.append((list(messages), list(continuations)))
        empty = messages[-1]["content"] == ""
        table = {CALL_OPENER: self.empty_opener if empty else self.opener,
                 "Yes": -1.0, "No": -3.0}
        return [table.get(c, -20.0) for c in continuations]

    def generate_text(self, messages: Sequence[dict[str, str]], *, prefill: str = "",
                      stop: Sequence[str] = (), max_tokens: int = 1024,
                      temperature: float = 0.0, top_p: float | None = None,
                      top_k: int | None = None,
                      grammar: ToolGrammar | None = None) -> Iterator[str | TextEnd]:
        self.asked.append({"prefill": prefill, "grammar": grammar})
        yield self.written(prefill)
        yield TextEnd(reason="end")

    def written(self, prefill: str) -> str:
        return self.output


def _request(*messages: Message) -> Request:
    return Request(messages=list(messages) or [Message(role="user", content="Weather in Oslo?")],
                   tools=[WEATHER], tool_choice=ToolChoice(type="auto"), max_tokens=64)


def test_scores_read_the_opener_whole_against_an_emptied_turn_and_yes_against_no() -> None:
    text = ScoringText(opener=-4.0, output="")
    messages = [{"role": "system", "content": "tools"}, {"role": "user", "content": "Oslo?"}]
    scores = decision_scores(lambda m, c: text.score_continuations(m, c), messages)
    assert scores == {"opener": -4.0, "contrast": 5.0, "yes_no": 2.0}
    # contrast empties the last user turn only; yes_no asks in that turn, after the request
    emptied = [m for m, c in text.scored if m[-1]["content"] == ""]
    assert emptied and emptied[0][0] == messages[0]
    asked = next(m for m, c in text.scored if c == ["Yes", "No"])
    assert asked[-1]["content"].startswith("Oslo?\n\n") and "Yes or No" in asked[-1]["content"]
    with pytest.raises(ValueError, match="call_decision must be one of"):
        Decision("maybe", 0.0)  # type: ignore[arg-type]


def test_a_score_at_the_threshold_starts_the_call_and_records_the_rule() -> None:
    text = ScoringText(opener=-5.0, output=BODY)
    backend = PromptToolsBackend(text, decision=Decision("opener", -6.0))
    response = backend.complete(_request())
    assert [(c.name, c.input) for c in response.tool_uses] == [("get_weather", {"city": "Oslo"})]
    assert text.asked[0]["prefill"].endswith("<invoke>\n<tool_name>")
    call = response.tool_uses[0]
    assert call.source == "model" and call.origin is not None \
        and call.origin.steered_by == ["call_decision"]
    assert backend.last_end is not None and backend.last_end.timings["decide_score"] == -5.0


def test_a_score_below_the_threshold_leaves_the_choice_to_the_model() -> None:
    text = ScoringText(opener=-8.0, output="It is sunny.")
    backend = PromptToolsBackend(text, decision=Decision("opener", -6.0))
    response = backend.complete(_request())
    assert response.text() == "It is sunny." and not response.tool_uses
    grammar = text.asked[0]["grammar"]
    # nothing forced, nothing ruled out: the model may still open a call itself
    assert text.asked[0]["prefill"] == "" and grammar is not None
    assert grammar.matcher.matches(b"<function_calls>\n<invoke>\n<tool_name>get_weather"
                                   b"</tool_name>\n<parameters>\n<city>Oslo</city>\n"
                                   b"</parameters>\n</invoke>\n</function_calls>")
    # the model's own call carries no steering
    text = ScoringText(opener=-8.0, output="<function_calls>\n<invoke>\n<tool_name>" + BODY)
    response = PromptToolsBackend(text, decision=Decision("opener", -6.0)).complete(_request())
    assert response.tool_uses and response.tool_uses[0].origin is None \
        or not response.tool_uses[0].origin.steered_by


def test_no_decision_after_a_tool_result_or_under_other_choices() -> None:
    call = ToolUseBlock(id="toolu_1", name="get_weather", input={"city": "Oslo"})
    after = _request(Message(role="user", content="Weather in Oslo?"),
                     Message(role="assistant", content=[call]),
                     Message(role="user", content=[ToolResultBlock(tool_use_id="toolu_1",
                                                                   content="sunny")]))
    assert not decides(after) and decides(_request())
    text = ScoringText(opener=0.0, output="It is sunny.")
    backend = PromptToolsBackend(text, decision=Decision("opener", -6.0))
    assert backend.complete(after).text() == "It is sunny."
    assert not text.scored and text.asked[0]["prefill"] == ""
    assert backend.last_end is not None and "decide_score" not in backend.last_end.timings
    forced = _request().model_copy(update={"tool_choice": ToolChoice(type="any")})
    text = ScoringText(opener=-30.0, output=BODY)
    PromptToolsBackend(text, decision=Decision("opener", -6.0)).complete(forced)
    assert all(c != [CALL_OPENER] for _, c in text.scored)


def test_options_need_a_threshold_for_a_model_given_by_path() -> None:
    options = LocalOptions.from_options({"call_decision": "opener"})
    assert options.call_decision == "opener"
    with pytest.raises(ValueError, match="needs call_decision_threshold"):
        options.resolved(default_model=False)
    given = LocalOptions.from_options({"call_decision": "contrast",
                                       "call_decision_threshold": "-1.5"})
    assert given.resolved(default_model=False).call_decision_threshold == -1.5
    with pytest.raises(ValueError, match="must be one of"):
        LocalOptions.from_options({"call_decision": "sometimes"}).resolved(default_model=True)


class MoreCallsText(ScoringText):
    """Writes a first call (Oslo), then where reopened a call to the next city; gives
    another ``<invoke>`` ``margins[n]`` against closing after ``n`` calls."""

    def __init__(self, margins: list[float], cities: list[str]) -> None:
        super().__init__(opener=0.0, output="")
        self.margins, self.cities = margins, cities

    def score_continuations(self, messages: Sequence[dict[str, str]],
                            continuations: Sequence[str], *, prefill: str = "") -> list[float]:
        self.scored.append((list(messages), list(continuations)))
        if list(continuations) == ["\n<invoke>", "\n</function_calls>"]:
            return [self.margins[prefill.count("<invoke>") - 1], 0.0]
        return [-20.0 for _ in continuations]

    def written(self, prefill: str) -> str:
        city = self.cities[prefill.count("<invoke>") - 1] if prefill else self.cities[0]
        body = f"get_weather</tool_name>\n<parameters>\n<city>{city}</city>\n</parameters>\n" \
            "</invoke>\n</function_calls>"
        return body if prefill else "<function_calls>\n<invoke>\n<tool_name>" + body


def test_more_calls_while_another_invoke_is_likely_enough() -> None:
    text = MoreCallsText(margins=[-1.0, -1.5, -6.0], cities=["Oslo", "Rome", "Bern", "Kyiv"])
    backend = PromptToolsBackend(text, more_calls_margin=-2.0)
    response = backend.complete(_request())
    assert [c.input["city"] for c in response.tool_uses] == ["Oslo", "Rome", "Bern"]
    first, *more = response.tool_uses
    assert first.origin is None or not first.origin.steered_by
    assert all(c.source == "model" and c.origin is not None
               and c.origin.steered_by == ["more_calls"] for c in more)
    # each further call reopened the block after the calls before it; the model names the tool
    assert text.asked[1]["prefill"].endswith("</invoke>\n<invoke>\n<tool_name>")
    assert text.asked[2]["prefill"].count("<invoke>") == 3
    assert backend.last_end is not None and backend.last_end.timings["more_calls"] == 2.0
    assert backend.last_end.timings["more_calls_margin"] == -6.0
    # without the margin: the model's one call
    text = MoreCallsText(margins=[-1.0], cities=["Oslo", "Rome"])
    assert len(PromptToolsBackend(text).complete(_request()).tool_uses) == 1
    assert len(text.asked) == 1


def test_more_calls_end_at_a_repeated_call_and_under_one_call() -> None:
    text = MoreCallsText(margins=[0.0, 0.0, 0.0], cities=["Oslo", "Oslo", "Rome"])
    response = PromptToolsBackend(text, more_calls_margin=-2.0).complete(_request())
    assert [c.input["city"] for c in response.tool_uses] == ["Oslo"]
    assert len(text.asked) == 2  # the repeat was tried once, dropped, and the turn ended
    one = _request().model_copy(update={"tool_choice": ToolChoice(
        type="auto", disable_parallel_tool_use=True)})
    text = MoreCallsText(margins=[0.0], cities=["Oslo", "Rome"])
    assert len(PromptToolsBackend(text, more_calls_margin=-2.0).complete(one).tool_uses) == 1
