"""The ``<thinking>`` section of the prompt-based format <-> ThinkingBlock.

By default the section is text like any other (SPEC section 2: "nothing may depend on those
tags"); ``decode_response(..., thinking=True)`` reads a leading one as a thinking block, and
every thinking block is rendered as a section where it stands. What text cannot hold (a
signature, a redacted block, thinking in a user turn) is refused in strict mode and
otherwise left out with a log line."""

from __future__ import annotations

import logging

import pytest
from hypothesis import given
from hypothesis import strategies as st
from legacy_seed_example import FIRST_CALL, PRICE, TICKER

from tooluse.cli.convert import convert_document
from tooluse.codecs.legacy import (
    FUNCTION_CALLS_STOP,
    decode_response,
    encode_request,
    encode_response,
    render_thinking,
    split_thinking,
)
from tooluse.errors import ConversionError
from tooluse.messages import (
    Message,
    RedactedThinkingBlock,
    Request,
    Response,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)

# The seeds' chain-of-thought answer (001), as the model writes it in this format.
SEED_THOUGHT = ("Necesito usar get_weather, y el usuario quiere SF, que probablemente sea "
                "San Francisco, CA.")
CALL = ToolUseBlock(id="toolu_1", name="get_ticker_symbol", input={"company_name": "General Motors"})


def _loss_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "tooluse.codecs"]


def test_by_default_the_section_is_text_as_the_spec_says() -> None:
    completion = f"<thinking>{SEED_THOUGHT}</thinking>\n\n" + FIRST_CALL.removesuffix(FUNCTION_CALLS_STOP)
    response = decode_response(completion, [PRICE, TICKER], id_factory=lambda: "toolu_1")
    assert response.content == [TextBlock(text=f"<thinking>{SEED_THOUGHT}</thinking>"), CALL]


def test_asked_the_leading_section_is_a_thinking_block_before_the_calls() -> None:
    completion = f"\n<thinking>{SEED_THOUGHT}</thinking>\n\n" + FIRST_CALL.removesuffix(FUNCTION_CALLS_STOP)
    response = decode_response(completion, [PRICE, TICKER], id_factory=lambda: "toolu_1",
                               stop_sequence=FUNCTION_CALLS_STOP, thinking=True)
    assert response.content == [ThinkingBlock(text=SEED_THOUGHT), CALL]
    assert response.stop_reason == "tool_use"


def test_only_a_leading_section_is_thinking() -> None:
    later = decode_response("Sure.\n<thinking>x</thinking>", thinking=True)
    assert later.content == [TextBlock(text="Sure.\n<thinking>x</thinking>")]
    both = decode_response("<thinking>a</thinking>\n\nThe answer <thinking>b</thinking>", thinking=True)
    assert both.content == [ThinkingBlock(text="a"), TextBlock(text="The answer <thinking>b</thinking>")]


def test_an_unclosed_section_is_cut_thinking_unless_a_call_begins_in_it() -> None:
    cut = decode_response("<thinking>I should look up", truncated=True, thinking=True)
    assert cut.content == [ThinkingBlock(text="I should look up")] and cut.stop_reason == "max_tokens"
    completion = "<thinking>GM first\n" + FIRST_CALL.removesuffix(FUNCTION_CALLS_STOP)
    calls = decode_response(completion, [PRICE, TICKER], id_factory=lambda: "toolu_1", thinking=True)
    assert calls.content == [TextBlock(text="<thinking>GM first"), CALL]  # the call is not lost


def test_response_round_trip_with_thinking_text_and_calls() -> None:
    response = Response(content=[
        ThinkingBlock(text="A&B <Co> is listed; </thinking> is just a word here.\n"),
        TextBlock(text="Looking it up."), CALL], stop_reason="tool_use")
    text = encode_response(response)
    assert text.startswith("<thinking>\nA&amp;B &lt;Co&gt; is listed; &lt;/thinking&gt;")
    back = decode_response(text, [PRICE, TICKER], id_factory=lambda: "toolu_1", thinking=True)
    assert back.content == response.content and back.stop_reason == "tool_use"


@given(st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=40))
def test_any_thinking_text_comes_back_exactly(text: str) -> None:
    block = ThinkingBlock(text=text)
    thought, rest = split_thinking(render_thinking(block) + "\n\nok")
    if text:
        assert (thought, rest) == (block, "ok")
    else:  # nothing to write: no section at all
        assert render_thinking(block) == "" and thought is None


def test_summary_parts_are_written_after_the_text() -> None:
    assert render_thinking(ThinkingBlock(text="t", summary=["s1", "", "s2"])) == (
        "<thinking>t\n\ns1\n\ns2</thinking>")


def _history(*thinking: ThinkingBlock | RedactedThinkingBlock) -> Request:
    return Request(tools=[PRICE, TICKER], messages=[
        Message(role="user", content="GM price?"),
        Message(role="assistant", content=[*thinking, TextBlock(text="Let me check."), CALL]),
        Message(role="user", content=[ToolResultBlock(tool_use_id="toolu_1", content="GM")]),
    ])


def test_history_thinking_is_its_section_in_the_assistant_turn() -> None:
    prompt = encode_request(_history(ThinkingBlock(text="Ticker first.")))
    assert prompt.turns[1].text == "<thinking>Ticker first.</thinking>\n\nLet me check.\n\n" + FIRST_CALL


@pytest.mark.parametrize("block, where, says", [
    (ThinkingBlock(text="Ticker first.", signature="EqQBCkYI"), ("messages", 1, "content", 0, "signature"),
     "signature"),
    (RedactedThinkingBlock(data="EmwKAhgB"), ("messages", 1, "content", 0), "redacted"),
])
def test_what_text_cannot_hold(block: ThinkingBlock | RedactedThinkingBlock, where: tuple[object, ...],
                               says: str, caplog: pytest.LogCaptureFixture) -> None:
    with pytest.raises(ConversionError, match=says) as info:
        encode_request(_history(block))
    assert info.value.path == where
    caplog.set_level(logging.INFO, logger="tooluse.codecs")
    turn = encode_request(_history(block), strict=False).turns[1].text
    assert "EqQBCkYI" not in turn and "EmwKAhgB" not in turn
    assert turn.startswith("<thinking>Ticker first.</thinking>" if isinstance(block, ThinkingBlock)
                           else "Let me check.")
    assert [says in line for line in _loss_lines(caplog)] == [True]


def test_thinking_in_a_user_turn_is_refused_or_logged(caplog: pytest.LogCaptureFixture) -> None:
    request = Request(messages=[Message(role="user", content=[TextBlock(text="hi"), ThinkingBlock(text="odd")])])
    with pytest.raises(ConversionError, match="assistant turn"):
        encode_request(request)
    caplog.set_level(logging.INFO, logger="tooluse.codecs")
    assert encode_request(request, strict=False).turns[0].text == "hi"
    assert len(_loss_lines(caplog)) == 1


def test_a_response_is_never_refused_for_its_thinking(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="tooluse.codecs")
    text = encode_response(Response(content=[
        ThinkingBlock(text="hm", signature="sig"), RedactedThinkingBlock(data="opaque"), TextBlock(text="Hi")]))
    assert text == "<thinking>hm</thinking>\n\nHi"
    assert len(_loss_lines(caplog)) == 2


def test_convert_a_chat_request_with_reasoning_to_legacy() -> None:
    chat = {"model": "m", "messages": [
        {"role": "user", "content": "GM price?"},
        {"role": "assistant", "content": None, "reasoning_content": "Ticker first.",
         "tool_calls": [{"id": "toolu_1", "type": "function", "function": {
             "name": "get_ticker_symbol", "arguments": "{\"company_name\": \"General Motors\"}"}}]},
        {"role": "tool", "tool_call_id": "toolu_1", "content": "GM"}]}
    rendered = convert_document(chat, "openai", "legacy")
    assert "Assistant: <thinking>Ticker first.</thinking>\n\n<function_calls>" in rendered
