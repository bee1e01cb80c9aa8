"""PromptToolsBackend over a fake text model: prompt building, parsing calls back, stream
events, stop reasons, tool_choice handling — no real model needed."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from tooluse.errors import BackendError
from tooluse.messages import (
    ImageBlock,
    Message,
    Request,
    TextBlock,
    ToolChoice,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
)
from tooluse.presets.en_bfcl import EnBfcl
from tooluse.prompting import PromptToolsBackend, TextEnd, ToolGrammar, build_text_prompt
from tooluse.stream import BlockStart, BlockStop, TextDelta, ToolInputDelta, accumulate

TICKER = ToolSpec(
    name="get_ticker_symbol",
    description="Gets the stock ticker symbol for a company searched by name.",
    input_schema={"type": "object", "properties": {"company_name": {"type": "string"}},
                  "required": ["company_name"]},
)
PRICE = ToolSpec(
    name="get_current_stock_price",
    description="Gets the current stock price for a company.",
    input_schema={"type": "object", "properties": {"symbol": {"type": "string"},
                                                   "days": {"type": "integer"}},
                  "required": ["symbol"]},
)
QUESTION = Message(role="user", content="What is the current stock price of General Motors?")


class FakeText:
    """Replays scripted completions in small chunks; records what it was asked."""

    model = "fake"

    def __init__(self, *completions: str | tuple[str, TextEnd]) -> None:
        self.completions = list(completions)
        self.calls: list[dict[str, Any]] = []

    def generate_text(self, messages: Sequence[dict[str, str]], *, prefill: str = "",
                      stop: Sequence[str] = (), max_tokens: int = 1024,
                      temperature: float = 0.0, top_p: float | None = None,
                      top_k: int | None = None,
                      grammar: ToolGrammar | None = None) -> Iterator[str | TextEnd]:
        self.calls.append(dict(messages=list(messages), prefill=prefill, stop=list(stop),
                               max_tokens=max_tokens, temperature=temperature,
                               grammar=grammar))
        item = self.completions.pop(0)
        text, end = item if isinstance(item, tuple) else (item, TextEnd(reason="end"))
        for stop_string in stop:  # what a real backend does with stop strings
            if stop_string in text:
                text = text[: text.index(stop_string)]
                end = TextEnd(reason="stop", stop_sequence=stop_string)
        for i in range(0, len(text), 5):
            yield text[i : i + 5]
        end.input_tokens, end.output_tokens = 100, len(text) // 4
        yield end


CALL_PRICE = ("<invoke>\n<tool_name>get_current_stock_price</tool_name>\n<parameters>\n"
              "<symbol>GM</symbol>\n<days>3</days>\n</parameters>\n</invoke>\n")


def test_prompt_has_tools_system_text_turns_and_stop() -> None:
    req = Request(system="Be brief.", messages=[
        QUESTION,
        Message(role="assistant", content=[ToolUseBlock(id="t1", name="get_ticker_symbol",
                                                        input={"company_name": "GM"})]),
        Message(role="user", content=[ToolResultBlock(tool_use_id="t1", content="GM")]),
    ], tools=[TICKER, PRICE])
    messages, prefill, stops, grammar = build_text_prompt(req)
    system = messages[0]
    assert system["role"] == "system"
    assert "<tool_name>get_ticker_symbol</tool_name>" in system["content"]
    assert system["content"].rstrip().endswith("Be brief.")
    assert [m["role"] for m in messages[1:]] == ["user", "assistant", "user"]
    assert messages[2]["content"].startswith("<function_calls>")
    assert "<function_results>" in messages[3]["content"] and "GM" in messages[3]["content"]
    assert prefill == "" and "</function_calls>" in stops
    assert grammar is not None and "get_current_stock_price" in grammar.gbnf
    _, _, _, no_grammar = build_text_prompt(req, grammar=False)
    assert no_grammar is None
    json_style, *_ = build_text_prompt(req, style="json")
    assert '"input_schema"' in json_style[0]["content"]


def test_tool_choice_any_tool_and_none_shape_the_prompt() -> None:
    any_req = Request(messages=[QUESTION], tools=[TICKER, PRICE],
                      tool_choice=ToolChoice(type="any"))
    _, prefill, _, grammar = build_text_prompt(any_req)
    assert prefill == "<function_calls>\n<invoke>\n<tool_name>"
    _, prefill, _, _ = build_text_prompt(any_req, grammar=False)
    assert prefill == "<function_calls>\n<invoke>\n<tool_name>"
    tool_req = any_req.model_copy(update={"tool_choice": ToolChoice(type="tool",
                                                                    name="get_ticker_symbol")})
    _, prefill, _, _ = build_text_prompt(tool_req)
    assert "<tool_name>get_ticker_symbol</tool_name>" in prefill
    none_req = any_req.model_copy(update={"tool_choice": ToolChoice(type="none")})
    messages, prefill, stops, grammar = build_text_prompt(none_req)
    any_messages, *_ = build_text_prompt(any_req)
    # The tools stay described (the same system prompt, so the same cached prefix); the
    # grammar and the stop string forbid calls.
    assert messages[0] == any_messages[0] and "get_ticker_symbol" in messages[0]["content"]
    assert prefill == "" and "<function_calls>" in stops
    assert grammar is not None and "function_calls" not in grammar.gbnf


def test_the_none_reminder_goes_after_the_shared_prefix_and_only_under_none() -> None:
    note = "\n\nAnswer from the results."
    none_req = Request(messages=[QUESTION], tools=[TICKER, PRICE],
                       tool_choice=ToolChoice(type="none"))
    plain, *_ = build_text_prompt(none_req)
    reminded, *_ = build_text_prompt(none_req, none_reminder=note)
    # Everything but the last user turn is unchanged (the cached prefix), which gains the note.
    assert reminded[:-1] == plain[:-1]
    assert reminded[-1] == {"role": "user", "content": plain[-1]["content"] + note}
    # Not under other choices, nor when the tools are left out of the prompt.
    auto_req = none_req.model_copy(update={"tool_choice": ToolChoice(type="auto")})
    assert build_text_prompt(auto_req, none_reminder=note)[0] == build_text_prompt(auto_req)[0]
    left_out, *_ = build_text_prompt(none_req, tools_under_none=False, none_reminder=note)
    assert all(note not in m["content"] for m in left_out)
    fake = FakeText("GM is at 38.50.")
    backend = PromptToolsBackend(fake, none_reminder=note)
    assert backend.complete(none_req).text() == "GM is at 38.50."
    assert fake.calls[-1]["messages"][-1]["content"].endswith(note)


def test_calls_come_back_as_tool_use_blocks_with_ids() -> None:
    fake = FakeText("<function_calls>\n" + CALL_PRICE + "</function_calls>")
    backend = PromptToolsBackend(fake)
    resp = backend.complete(Request(messages=[QUESTION], tools=[TICKER, PRICE]))
    assert resp.stop_reason == "tool_use"
    (call,) = resp.tool_uses
    assert call.name == "get_current_stock_price" and call.input == {"symbol": "GM", "days": 3}
    assert call.id.startswith("toolu_")
    assert fake.calls[0]["temperature"] == 0.0  # greedy by default


def test_stream_emits_text_then_a_tool_block_when_invoke_closes() -> None:
    fake = FakeText("Let me look.\n\n<function_calls>\n" + CALL_PRICE + "</function_calls>")
    events = list(PromptToolsBackend(fake).stream(
        Request(messages=[QUESTION], tools=[TICKER, PRICE])))
    kinds = [type(e).__name__ for e in events]
    assert kinds[0] == "MessageStart" and kinds[-1] == "MessageStop"
    starts = [e for e in events if isinstance(e, BlockStart)]
    assert [s.block.type for s in starts] == ["text", "tool_use"]
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert text == "Let me look."  # the blank line before the call block is format
    tool_index = starts[1].index
    deltas = [e for e in events if isinstance(e, ToolInputDelta)]
    assert deltas and all(d.index == tool_index for d in deltas)
    assert any(isinstance(e, BlockStop) and e.index == tool_index for e in events)
    resp = accumulate(events)
    assert resp.stop_reason == "tool_use" and resp.tool_uses[0].input["symbol"] == "GM"
    assert resp.usage.input_tokens == 100


def test_forced_prefill_is_parsed_but_not_repeated_as_text() -> None:
    completion = CALL_PRICE.split("<tool_name>", 1)[1] + "</function_calls>"
    fake = FakeText(completion)
    resp = PromptToolsBackend(fake).complete(Request(
        messages=[QUESTION], tools=[TICKER, PRICE], tool_choice=ToolChoice(type="any")))
    assert fake.calls[0]["prefill"] == "<function_calls>\n<invoke>\n<tool_name>"
    assert [b.type for b in resp.content] == ["tool_use"]


def test_plain_answer_is_end_turn() -> None:
    fake = FakeText("The price is $38.50.")
    resp = PromptToolsBackend(fake).complete(Request(messages=[QUESTION], tools=[PRICE]))
    assert resp.stop_reason == "end_turn" and resp.text() == "The price is $38.50."


def test_user_stop_sequence_and_max_tokens() -> None:
    fake = FakeText("one two STOP three")
    resp = PromptToolsBackend(fake).complete(Request(messages=[QUESTION],
                                                     stop_sequences=["STOP"]))
    assert resp.stop_reason == "stop_sequence" and resp.stop_sequence == "STOP"
    assert resp.text() == "one two "  # text before a stop sequence is kept as written
    cut = ("<function_calls>\n<invoke>\n<tool_name>get_current_stock_price</tool_name>\n"
           "<parameters>\n<symbol>G", TextEnd(reason="length"))
    resp = PromptToolsBackend(FakeText(cut)).complete(Request(messages=[QUESTION],
                                                              tools=[PRICE], max_tokens=7))
    assert resp.stop_reason == "max_tokens" and not resp.tool_uses
    assert "<symbol>G" in resp.text()  # what the model wrote is kept


def test_repeated_call_ends_the_turn_without_a_duplicate() -> None:
    fake = FakeText("<function_calls>\n" + CALL_PRICE + CALL_PRICE + CALL_PRICE)
    resp = PromptToolsBackend(fake).complete(Request(messages=[QUESTION], tools=[PRICE]))
    assert len(resp.tool_uses) == 1 and resp.stop_reason == "tool_use"


def test_asking_again_for_a_known_result_gets_a_text_answer() -> None:
    history = [
        QUESTION,
        Message(role="assistant", content=[ToolUseBlock(id="t1", name="get_current_stock_price",
                                                        input={"symbol": "GM", "days": 3})]),
        Message(role="user", content=[ToolResultBlock(tool_use_id="t1", content="38.50")]),
    ]
    fake = FakeText("<function_calls>\n" + CALL_PRICE, "It is $38.50.")
    backend = PromptToolsBackend(fake)
    resp = backend.complete(Request(messages=history, tools=[PRICE]))
    assert resp.text() == "It is $38.50." and resp.stop_reason == "end_turn"
    assert not resp.tool_uses
    retry = fake.calls[1]
    assert retry["messages"] == fake.calls[0]["messages"]  # same prompt: cache reused
    assert retry["grammar"] is not None and "function_calls" not in retry["grammar"].gbnf
    assert backend.last_end is not None and backend.last_end.timings["retried_after_repeat"]


def test_images_cannot_go_into_a_text_prompt() -> None:
    req = Request(messages=[Message(role="user", content=[
        ImageBlock(media_type="image/png", data="AAAA"), TextBlock(text="what is it?")])])
    with pytest.raises(BackendError, match="image") as info:
        PromptToolsBackend(FakeText("x")).complete(req)
    assert info.value.kind == "invalid_request"


def test_unknown_forced_tool_is_an_invalid_request() -> None:
    req = Request(messages=[QUESTION], tools=[PRICE],
                  tool_choice=ToolChoice(type="tool", name="nope"))
    with pytest.raises(BackendError) as info:
        PromptToolsBackend(FakeText("x")).complete(req)
    assert info.value.kind == "invalid_request"


# A small model without a grammar copies the tool description format into its call: the
# second <parameter> makes the call malformed ("given more than once"); what follows is junk.
_COPIED = ("<function_calls>\n<invoke>\n<tool_name>get_current_stock_price</tool_name>\n"
           "<parameters>\n<parameter>\n<name>symbol</name>\n</parameter>\n"
           "<parameter>\n<name>days</name>\n</parameter>\n")
_JUNK = "</parameters>\n</tool_description>\n" + "<function_calls>\n" * 40


def test_a_call_that_can_no_longer_parse_ends_the_turn_early() -> None:
    backend = PromptToolsBackend(FakeText(_COPIED + _JUNK), grammar=False)
    resp = backend.complete(Request(messages=[QUESTION], tools=[PRICE]))
    assert not resp.tool_uses and resp.stop_reason == "end_turn"
    text = resp.text()
    assert text.startswith(_COPIED.rstrip("\n")[:60])  # what was written is kept as text
    # It stopped at the second <parameter> (known to be a duplicate when it opens).
    assert "<name>symbol</name>" in text and text.count("<parameter>") == 2
    assert "tool_description" not in text
    assert backend.last_end is not None
    assert backend.last_end.timings["stopped_at_malformed_call"] == 1.0


def test_stopping_at_a_malformed_call_can_be_turned_off() -> None:
    backend = PromptToolsBackend(FakeText(_COPIED + _JUNK), grammar=False,
                                 stop_on_malformed_call=False)
    resp = backend.complete(Request(messages=[QUESTION], tools=[PRICE]))
    assert not resp.tool_uses and resp.text().count("<function_calls>") == 41
    assert backend.last_end is not None
    assert "stopped_at_malformed_call" not in backend.last_end.timings


def test_a_good_call_before_a_malformed_one_is_kept() -> None:
    bad = "<invoke>\n<tool_name>no_such_tool</tool_name>\n" + "blah " * 50
    backend = PromptToolsBackend(FakeText("<function_calls>\n" + CALL_PRICE + bad),
                                 grammar=False)
    resp = backend.complete(Request(messages=[QUESTION], tools=[PRICE]))
    assert [c.input["symbol"] for c in resp.tool_uses] == ["GM"]
    assert "no_such_tool" in resp.text() and resp.text().count("blah") < 5


def test_response_schema_is_structured_output_under_the_grammar() -> None:
    """output_config.format / response_schema: the text answer is one JSON value of the
    schema (the grammar accepts it and nothing else), and the schema is in the prompt."""
    from tooluse.messages import Message, Request, ToolSpec
    from tooluse.prompting import build_text_prompt

    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"],
              "additionalProperties": False}
    request = Request(messages=[Message(role="user", content="count")], response_schema=schema)
    messages, prefill, _, grammar = build_text_prompt(request)
    assert grammar is not None and prefill == ""
    assert '"required": ["n"]' in messages[0]["content"]
    matcher = grammar.matcher
    assert matcher.matches(b'{"n": 3}') or matcher.matches(b'{"n":3}')
    assert not matcher.advance(matcher.initial, b"Sure! ")
    assert not matcher.matches(b'{"m": 3}')
    tools = [ToolSpec(name="add", input_schema={"type": "object", "properties": {}})]
    _, _, _, with_tools = build_text_prompt(request.model_copy(update={"tools": tools}))
    assert with_tools is not None
    both = with_tools.matcher
    assert both.advance(both.initial, b'{"n"')
    assert both.advance(both.initial, b"<function_calls>\n<invoke>\n")
    assert not both.advance(both.initial, b"plain text")
    assert build_text_prompt(request, grammar=False)[3] is None  # no grammar: no guarantee


def test_asked_more_reopens_the_call_block_where_the_question_asks_the_same_again() -> None:
    def ask(question: str, *completions: str) -> tuple[FakeText, list[dict[str, Any]]]:
        fake = FakeText(*completions)
        backend = PromptToolsBackend(fake, assist=EnBfcl(only=("asked_more", "fan_out")))  # type: ignore[arg-type]
        response = backend.complete(Request(
            messages=[Message(role="user", content=question)], tools=[TICKER],
            tool_choice=ToolChoice(type="any"), max_tokens=64))
        assert response.stop_reason == "tool_use"
        return fake, [dict(b.input) for b in response.tool_uses]

    first = ("get_ticker_symbol</tool_name>\n<parameters>\n<company_name>Ford</company_name>\n"
             "</parameters>\n</invoke>\n</function_calls>")
    again = "The ticker of Ford, and then do the same for the maker of the Model 3."
    fake, calls = ask(again, first, "<company_name>Tesla</company_name>\n</parameters>\n"
                                    "</invoke>\n</function_calls>")
    assert calls == [{"company_name": "Ford"}, {"company_name": "Tesla"}]
    # The second generation continues the block after the model's own call.
    assert fake.calls[1]["prefill"] == (
        fake.calls[0]["prefill"] + first.removesuffix("</function_calls>")
        + "<invoke>\n<tool_name>get_ticker_symbol</tool_name>\n<parameters>\n")
    # The further call is forced to the same tool, and no call after it (the grammar of
    # tool_choice "tool" with parallel calls off).
    grammar = fake.calls[1]["grammar"]
    assert grammar.key[1:4] == ("tool", "get_ticker_symbol", True)
    assert grammar.prefill.endswith("<tool_name>get_ticker_symbol</tool_name>\n<parameters>\n")
    # A repeat of the first call is dropped, as any repeat.
    _, calls = ask(again, first, "<company_name>Ford</company_name>\n</parameters>\n"
                                 "</invoke>\n</function_calls>")
    assert calls == [{"company_name": "Ford"}]
    # No cue in the question, or a list fan_out completes: one generation only.
    for question in ("The ticker of Ford.",
                     "The tickers of Ford, Honda and Kia, then the same for their owners."):
        fake, calls = ask(question, first)
        assert len(fake.calls) == 1
    assert calls == [{"company_name": "Ford"}, {"company_name": "Honda"},
                     {"company_name": "Kia"}]


def test_asked_more_stays_within_max_tokens_and_drops_a_call_the_limit_cuts() -> None:
    first = ("get_ticker_symbol</tool_name>\n<parameters>\n<company_name>Ford</company_name>\n"
             "</parameters>\n</invoke>\n</function_calls>")
    fake = FakeText(first, ("<company_name>Tes", TextEnd(reason="length")))
    backend = PromptToolsBackend(fake, assist=EnBfcl(only=("asked_more",)))  # type: ignore[arg-type]
    response = backend.complete(Request(
        messages=[Message(role="user", content="Ford's ticker, then the same for Tesla.")],
        tools=[TICKER], tool_choice=ToolChoice(type="any"), max_tokens=64))
    # The further generation gets what the first left of the limit (FakeText counts
    # len(text) // 4 tokens), and its cut call is not part of the answer.
    assert fake.calls[1]["max_tokens"] == 64 - len(first.removesuffix("</function_calls>")) // 4
    assert [b.input for b in response.tool_uses] == [{"company_name": "Ford"}]
    assert response.stop_reason == "tool_use" and response.text() == ""


def test_a_forced_call_repeating_the_conversation_is_returned_not_dropped() -> None:
    """Under ``any`` the answer must hold a call: when the one call the model writes repeats
    a call the conversation already made (a small model does, on a second turn), it is
    returned rather than dropped into an empty turn; under ``auto`` the model is asked for
    text instead, as before."""
    earlier = ToolUseBlock(id="toolu_1", name="get_ticker_symbol",
                           input={"company_name": "General Motors"})
    history = [QUESTION, Message(role="assistant", content=[earlier]),
               Message(role="user", content=[ToolResultBlock(tool_use_id="toolu_1",
                                                             content="GM")])]
    again = ("get_ticker_symbol</tool_name>\n<parameters>\n<company_name>General Motors"
             "</company_name>\n</parameters>\n</invoke>\n</function_calls>")
    forced = PromptToolsBackend(FakeText(again)).complete(Request(
        messages=history, tools=[TICKER, PRICE], tool_choice=ToolChoice(type="any")))
    assert forced.stop_reason == "tool_use"
    assert [(b.name, b.input) for b in forced.tool_uses] == [
        ("get_ticker_symbol", {"company_name": "General Motors"})]
    text = PromptToolsBackend(FakeText("<function_calls>\n<invoke>\n<tool_name>" + again,
                                       "GM trades at 38.50.")).complete(Request(
        messages=history, tools=[TICKER, PRICE], tool_choice=ToolChoice(type="auto")))
    assert not text.tool_uses and text.text() == "GM trades at 38.50."


def test_deferred_tools_stay_out_of_the_prompt_until_loaded() -> None:
    """A deferred tool (defer_loading) is in a text model's prompt only once the history
    loads it: a tool reference in a result (a client's own tool search) or a search."""
    from tooluse.messages import Request, ToolReferenceBlock, ToolResultBlock, ToolSpec, ToolUseBlock
    from tooluse.prompting.text_prompt import build_text_prompt

    spec = {"type": "object", "properties": {"q": {"type": "string"}}}
    tools = [ToolSpec(name="ToolSearch", input_schema=spec),
             ToolSpec(name="DeferredToolPlaceholder", input_schema=spec, deferred=True),
             ToolSpec(name="get_weather", input_schema=spec, deferred=True)]
    request = Request(messages=[{"role": "user", "content": "weather?"}], tools=tools)  # type: ignore[list-item]
    seen: list[Request] = []

    class Recorder(PromptToolsBackend):
        def _prompt(self, request: Request) -> Any:
            seen.append(request)
            return build_text_prompt(request)

    backend = Recorder(FakeText("fine", "fine"), grammar=False)
    backend.complete(request)
    assert [t.name for t in seen[-1].tools] == ["ToolSearch"]
    loaded = request.model_copy(update={"messages": [
        *request.messages,
        Message(role="assistant", content=[ToolUseBlock(id="t", name="ToolSearch", input={})]),
        Message(role="user", content=[ToolResultBlock(
            tool_use_id="t", content=[ToolReferenceBlock(name="get_weather")])])]})
    backend.complete(loaded)
    assert [t.name for t in seen[-1].tools] == ["ToolSearch", "get_weather"]
