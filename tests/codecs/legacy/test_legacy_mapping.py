"""Whole requests and responses: encode_request, decode_response, encode_response."""

from __future__ import annotations

import pytest
from legacy_seed_example import FIRST_CALL, PRICE, TICKER

from tooluse.codecs.legacy import (
    FUNCTION_CALLS_STOP,
    decode_response,
    encode_request,
    encode_response,
    render_function_results,
)
from tooluse.errors import ConversionError
from tooluse.messages import (
    ImageBlock,
    JsonBlock,
    Message,
    Request,
    Response,
    TextBlock,
    ToolChoice,
    ToolResultBlock,
    ToolUseBlock,
)

PIXEL = ImageBlock(media_type="image/png", data="iVBORw0KGgo=")


def _request(**kwargs: object) -> Request:
    return Request(tools=[PRICE, TICKER], messages=[Message(role="user", content="GM price?")],
                   **kwargs)  # type: ignore[arg-type]


def test_tool_choice_any_prefills_the_opening_of_a_call() -> None:
    prompt = encode_request(_request(tool_choice=ToolChoice(type="any")))
    assert prompt.prefill == "<function_calls>\n<invoke>\n<tool_name>"
    assert prompt.render().endswith("Assistant: <function_calls>\n<invoke>\n<tool_name>")
    # The completion continues the prefill; parsing both gives the call.
    completion = ("get_ticker_symbol</tool_name>\n<parameters>\n<company_name>General Motors"
                  "</company_name>\n</parameters>\n</invoke>\n")
    response = decode_response(completion, [PRICE, TICKER], prefill=prompt.prefill,
                               stop_sequence=FUNCTION_CALLS_STOP)
    assert response.stop_reason == "tool_use"
    assert response.content[0] == ToolUseBlock(
        id=response.tool_uses[0].id, name="get_ticker_symbol",
        input={"company_name": "General Motors"},
    )


def test_tool_choice_tool_prefills_the_name_too() -> None:
    prompt = encode_request(_request(tool_choice=ToolChoice(type="tool", name="get_ticker_symbol")))
    assert prompt.prefill == "<function_calls>\n<invoke>\n<tool_name>get_ticker_symbol</tool_name>\n"
    response = decode_response("<parameters>\n<company_name>GM</company_name>\n</parameters>\n"
                               "</invoke>\n", [PRICE, TICKER], prefill=prompt.prefill)
    assert [(c.name, c.input) for c in response.tool_uses] == [
        ("get_ticker_symbol", {"company_name": "GM"})
    ]


def test_tool_choice_none_keeps_the_tools_in_the_prompt() -> None:
    # As the Messages API does: the same tool system prompt as under auto (so a tool
    # loop's text-only last turn shares its prompt prefix), no prefill.
    prompt = encode_request(_request(system="Be brief.", tool_choice=ToolChoice(type="none")))
    auto = encode_request(_request(system="Be brief."))
    assert "<tool_description>" in auto.system and auto.system.endswith("\n\nBe brief.")
    assert prompt.system == auto.system
    assert prompt.prefill is None


def test_disable_parallel_tool_use_asks_for_one_call() -> None:
    choice = ToolChoice(type="auto", disable_parallel_tool_use=True)
    assert "at most one tool" in encode_request(_request(tool_choice=choice)).system


def test_images_are_refused_with_their_path() -> None:
    request = Request(messages=[Message(role="user", content=[TextBlock(text="see"), PIXEL])])
    with pytest.raises(ConversionError) as info:
        encode_request(request)
    assert info.value.path == ("messages", 0, "content", 1)
    assert "messages.0.content.1" in str(info.value)


def test_an_image_in_a_tool_result_is_refused_with_its_path() -> None:
    request = _request()
    request.messages.extend([
        Message(role="assistant", content=[ToolUseBlock(id="t1", name="get_ticker_symbol",
                                                        input={"company_name": "GM"})]),
        Message(role="user", content=[
            TextBlock(text="here"),
            ToolResultBlock(tool_use_id="t1", content=[TextBlock(text="chart:"), PIXEL]),
        ]),
    ])
    with pytest.raises(ConversionError) as info:
        encode_request(request)
    assert info.value.path == ("messages", 2, "content", 1, "content", 1)
    assert "get_ticker_symbol" in str(info.value) and "image" in str(info.value)


def test_results_for_unknown_calls_are_refused() -> None:
    request = _request()
    request.messages.append(Message(role="assistant", content="hm"))
    request.messages.append(
        Message(role="user", content=[ToolResultBlock(tool_use_id="ghost", content="x")])
    )
    with pytest.raises(ConversionError, match="ghost"):
        encode_request(request)


def test_parallel_calls_and_their_results_share_one_block_each() -> None:
    calls = [
        ToolUseBlock(id="a", name="get_ticker_symbol", input={"company_name": "GM"}),
        ToolUseBlock(id="b", name="get_ticker_symbol", input={"company_name": "Ford"}),
    ]
    results = [
        ToolResultBlock(tool_use_id="a", content="GM"),
        ToolResultBlock(tool_use_id="b", content="not found", is_error=True),
        ToolResultBlock(tool_use_id="a", content=[JsonBlock(value={"ok": True})]),
    ]
    request = _request()
    request.messages.append(Message(role="assistant", content=calls))
    request.messages.append(Message(role="user", content=[*results, TextBlock(text="thanks")]))
    prompt = encode_request(request)
    assert prompt.turns[1].text.count("<function_calls>") == 1
    assert prompt.turns[1].text.count("<invoke>") == 2
    expected = render_function_results(
        [("get_ticker_symbol", r) for r in results]
    )
    assert prompt.turns[2].text == expected + "\n\nthanks"
    assert "<error>\nnot found\n</error>" in expected
    assert '<stdout>\n{"ok": true}\n</stdout>' in expected


def test_stop_reasons() -> None:
    tools = [PRICE, TICKER]
    partial = "<function_calls>\n<invoke>\n<tool_name>get_ticker_symbol</tool_name>\n<param"
    cut = decode_response(partial, tools, truncated=True)
    assert cut.stop_reason == "max_tokens" and cut.tool_uses == []
    assert cut.text() == partial  # nothing lost
    assert decode_response("Hi", tools, truncated=True).stop_reason == "max_tokens"
    assert decode_response("Hi", tools).stop_reason == "end_turn"
    own = decode_response("Hi", tools, stop_sequence="\n\nHuman:")
    assert (own.stop_reason, own.stop_sequence) == ("stop_sequence", "\n\nHuman:")
    calls = decode_response(FIRST_CALL.removesuffix(FUNCTION_CALLS_STOP), tools,
                            stop_sequence=FUNCTION_CALLS_STOP)
    assert (calls.stop_reason, calls.stop_sequence) == ("tool_use", None)
    assert calls.id.startswith("msg_")
    broken = decode_response(FIRST_CALL.replace("get_ticker_symbol", "nope"), tools,
                             stop_sequence=FUNCTION_CALLS_STOP)
    assert broken.stop_reason == "end_turn" and "nope" in broken.text()


def test_encode_response_round_trips_through_decode() -> None:
    response = Response(content=[
        TextBlock(text="<thinking>two lookups</thinking>"),
        ToolUseBlock(id="x", name="get_ticker_symbol", input={"company_name": "A&B <Co>"}),
        ToolUseBlock(id="y", name="get_current_stock_price", input={"symbol": "AB"}),
    ], stop_reason="tool_use")
    text = encode_response(response)
    assert text.count("<function_calls>") == 1 and text.endswith(FUNCTION_CALLS_STOP)
    back = decode_response(text, [PRICE, TICKER], id_factory=iter(["x", "y"]).__next__)
    assert back.content == response.content
    assert back.stop_reason == "tool_use"


def test_encode_response_refuses_non_text_blocks() -> None:
    with pytest.raises(ConversionError):
        encode_response(Response(content=[PIXEL]))


def test_assistant_last_turn_is_continued() -> None:
    request = _request(tool_choice=ToolChoice(type="any"))
    request.messages.append(Message(role="assistant", content="Let me check."))
    rendered = encode_request(request).render()
    assert rendered.endswith("Assistant: Let me check.\n<function_calls>\n<invoke>\n<tool_name>")


def test_lenient_encoding_writes_image_placeholders() -> None:
    request = _request()
    request.messages[0] = Message(role="user", content=[TextBlock(text="see "), PIXEL])
    request.messages.extend([
        Message(role="assistant", content=[ToolUseBlock(id="t1", name="get_ticker_symbol",
                                                        input={"company_name": "GM"})]),
        Message(role="user", content=[
            ToolResultBlock(tool_use_id="t1", content=[TextBlock(text="chart:"), PIXEL]),
        ]),
    ])
    prompt = encode_request(request, strict=False)
    assert prompt.turns[0].text == "see [image omitted: image/png image]"
    assert "<stdout>\nchart:\n[image omitted: image/png image]\n</stdout>" in prompt.turns[2].text


def test_misplaced_tool_blocks_are_refused_as_by_the_other_codecs() -> None:
    call = ToolUseBlock(id="t1", name="get_ticker_symbol", input={"company_name": "GM"})
    in_user = Request(messages=[Message(role="user", content=[call])])
    with pytest.raises(ConversionError, match="assistant turn") as info:
        encode_request(in_user, strict=False)
    assert info.value.path == ("messages", 0, "content", 0)
    in_assistant = Request(messages=[
        Message(role="user", content="q"),
        Message(role="assistant", content=[ToolResultBlock(tool_use_id="t1")]),
    ])
    with pytest.raises(ConversionError, match="user turn"):
        encode_request(in_assistant)
