"""The seed's stock-price conversation, rendered and parsed (seeds 000/002/003)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from legacy_seed_example import (
    ANSWER,
    FIRST_CALL,
    FIRST_RESULT,
    PRICE,
    SCRATCHPAD,
    SECOND_CALL,
    SECOND_RESULT,
    TICKER,
)

from tooluse.codecs.legacy import (
    FUNCTION_CALLS_STOP,
    CallItem,
    LegacyParser,
    TextItem,
    decode_response,
    encode_request,
    encode_response,
    parse_completion,
    render_function_calls,
    render_function_results,
    render_tools_prompt,
)
from tooluse.messages import Message, Request, TextBlock, ToolResultBlock, ToolUseBlock

QUESTION = "What is the current stock price of General Motors?"


def _conversation() -> Request:
    return Request(
        tools=[PRICE, TICKER],
        messages=[
            Message(role="user", content=QUESTION),
            Message(
                role="assistant",
                content=[
                    TextBlock(text=SCRATCHPAD),
                    ToolUseBlock(id="toolu_1", name="get_ticker_symbol",
                                 input={"company_name": "General Motors"}),
                ],
            ),
            Message(role="user", content=[ToolResultBlock(tool_use_id="toolu_1", content="GM")]),
            Message(
                role="assistant",
                content=[ToolUseBlock(id="toolu_2", name="get_current_stock_price",
                                      input={"symbol": "GM"})],
            ),
            Message(role="user",
                    content=[ToolResultBlock(tool_use_id="toolu_2", content="38.50")]),
        ],
    )


def test_calls_and_results_render_in_the_seeds_exact_shape() -> None:
    first = ToolUseBlock(id="x", name="get_ticker_symbol", input={"company_name": "General Motors"})
    assert render_function_calls([first]) == FIRST_CALL
    second = ToolUseBlock(id="y", name="get_current_stock_price", input={"symbol": "GM"})
    assert render_function_calls([second]) == SECOND_CALL
    assert render_function_results(
        [("get_ticker_symbol", ToolResultBlock(tool_use_id="x", content="GM"))]
    ) == FIRST_RESULT
    assert render_function_results(
        [("get_current_stock_price", ToolResultBlock(tool_use_id="y", content="38.50"))]
    ) == SECOND_RESULT


def test_error_result_uses_the_seeds_error_shape() -> None:
    failed = ToolResultBlock(tool_use_id="x", content="TickerNotFound: ACME", is_error=True)
    assert render_function_results([("get_ticker_symbol", failed)]) == (
        "<function_results>\n<error>\nTickerNotFound: ACME\n</error>\n</function_results>"
    )


def test_system_prompt_has_the_seeds_frame_and_both_tools() -> None:
    prompt = render_tools_prompt([PRICE, TICKER])
    assert prompt.startswith(
        "In this environment you have access to a set of tools you can use to answer the "
        "user's question.\n\nYou may call them like this:\n<function_calls>\n<invoke>\n"
        "<tool_name>$TOOL_NAME</tool_name>\n<parameters>\n"
        "<$PARAMETER_NAME>$PARAMETER_VALUE</$PARAMETER_NAME>\n...\n</parameters>\n</invoke>\n"
        "</function_calls>\n"
    )
    assert "Here are the tools available:\n<tools>\n<tool_description>\n" in prompt
    assert prompt.rstrip().endswith("</tool_description>\n</tools>")
    assert prompt.count("<tool_description>") == 2
    assert (
        "<parameter>\n<name>company_name</name>\n<type>string</type>\n"
        "<description>The name of the company. Required.</description>\n</parameter>"
    ) in prompt
    assert "<tool_name>get_current_stock_price</tool_name>" in prompt


def test_whole_conversation_encodes_to_the_seeds_turns() -> None:
    prompt = encode_request(_conversation())
    assert prompt.system == render_tools_prompt([PRICE, TICKER])
    assert [t.role for t in prompt.turns] == ["user", "assistant", "user", "assistant", "user"]
    assert prompt.turns[0].text == QUESTION
    assert prompt.turns[1].text == SCRATCHPAD + "\n\n" + FIRST_CALL
    assert prompt.turns[2].text == FIRST_RESULT
    assert prompt.turns[3].text == SECOND_CALL
    assert prompt.turns[4].text == SECOND_RESULT
    assert prompt.prefill is None
    assert FUNCTION_CALLS_STOP in prompt.stop_sequences
    rendered = prompt.render()
    assert rendered.startswith("System: In this environment")
    assert "\n\nUser: " + QUESTION + "\n\nAssistant: <scratchpad>" in rendered
    assert rendered.endswith(SECOND_RESULT + "\n\nAssistant:")


def test_the_models_turns_parse_back_into_the_calls() -> None:
    tools = [PRICE, TICKER]
    # What the model returns: the stop sequence removed </function_calls>.
    first = SCRATCHPAD + "\n\n" + FIRST_CALL.removesuffix(FUNCTION_CALLS_STOP)
    parsed = parse_completion(first, tools)
    assert parsed.problems == []
    assert [type(b).__name__ for b in parsed.content] == ["TextBlock", "ToolUseBlock"]
    assert parsed.content[0] == TextBlock(text=SCRATCHPAD)
    call = parsed.tool_uses[0]
    assert (call.name, call.input) == ("get_ticker_symbol", {"company_name": "General Motors"})
    assert re.fullmatch(r"toolu_[0-9A-Za-z]{24}", call.id)

    response = decode_response(SECOND_CALL.removesuffix(FUNCTION_CALLS_STOP), tools,
                               stop_sequence=FUNCTION_CALLS_STOP)
    assert response.stop_reason == "tool_use"
    assert [(b.name, b.input) for b in response.tool_uses] == [
        ("get_current_stock_price", {"symbol": "GM"})
    ]

    final = decode_response(ANSWER, tools)
    assert final.stop_reason == "end_turn"
    assert final.content == [TextBlock(text=ANSWER)]
    assert "$38.50" in final.text()


def test_streaming_the_first_turn_yields_text_then_the_call() -> None:
    parser = LegacyParser([PRICE, TICKER])
    items = []
    text = SCRATCHPAD + "\n\n" + FIRST_CALL.removesuffix(FUNCTION_CALLS_STOP)
    for i in range(0, len(text), 3):
        items.extend(parser.feed(text[i:i + 3]))
        if any(isinstance(x, CallItem) for x in items):
            # The call is out as soon as </invoke> has arrived, before close().
            assert text[: i + 3].rstrip().endswith("</invoke>")
    items.extend(parser.close())
    assert "".join(x.text for x in items if isinstance(x, TextItem)).startswith(SCRATCHPAD)
    assert [x.block.input for x in items if isinstance(x, CallItem)] == [
        {"company_name": "General Motors"}
    ]


def test_response_encodes_as_the_models_text() -> None:
    response = decode_response(SCRATCHPAD + "\n\n" + FIRST_CALL, [PRICE, TICKER])
    assert encode_response(response) == SCRATCHPAD + "\n\n" + FIRST_CALL


@pytest.mark.parametrize("seed", ["000_*.txt", "002_*.txt", "003_*.txt"])
def test_the_seed_documents_own_blocks_parse(shared_dir: Path, seed: str) -> None:
    """The translated documents' own XML: their calls parse, their results never do."""
    matches = sorted((shared_dir / "seeds").glob(seed))
    if not matches:
        pytest.skip(f"seed {seed} not present")
    text = matches[0].read_text(encoding="utf-8")
    blocks = re.findall(r"<function_calls>\n<invoke>\n.*?</function_calls>", text, flags=re.DOTALL)
    calls = []
    for block in blocks:
        if "$TOOL_NAME" in block or "function_name" in block:
            continue  # the format's template, not a call
        parsed = parse_completion(block, [PRICE, TICKER])
        assert parsed.problems == []
        calls.extend((c.name, c.input) for c in parsed.tool_uses)
    assert calls == [
        ("get_ticker_symbol", {"company_name": "General Motors"}),
        ("get_current_stock_price", {"symbol": "GM"}),
    ]
    results = re.findall(r"<function_results>\n.*?</function_results>", text, flags=re.DOTALL)
    assert len(results) >= 3
    for block in results:
        parsed = parse_completion(block, [PRICE, TICKER])
        assert parsed.tool_uses == [] and parsed.problems == []
        assert "".join(b.text for b in parsed.content if isinstance(b, TextBlock)) == block
