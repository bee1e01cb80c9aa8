"""Streaming run events, structured output with extract(), and the seeds' stock-price run."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from pydantic import BaseModel, Field

from tooluse.backends.scripted import ScriptedBackend
from tooluse.messages import Request, Response, TextBlock, ToolChoice, ToolUseBlock
from tooluse.runner import (
    ExtractionError,
    FinalEvent,
    MessageEvent,
    RetryEvent,
    Runner,
    TextDeltaEvent,
    ToolCallEvent,
    ToolCallStartEvent,
    ToolInputDeltaEvent,
    ToolResultEvent,
    aextract,
    extract,
    extract_result,
    output_tool,
)


def lookup(query: str, limit: int = 3) -> list[str]:
    """Search a catalogue.

    Args:
        query: What to look for.
        limit: How many hits at most.
    """
    return [f"{query}-{i}" for i in range(limit)]


def tool_turn(*items: tuple[str, str, dict[str, Any]], text: str | None = None) -> Response:
    content: list[Any] = [TextBlock(text=text)] if text else []
    content += [ToolUseBlock(id=i, name=n, input=a) for i, n, a in items]
    return Response(content=content, stop_reason="tool_use")


def collapse(events: list[Any]) -> list[str]:
    """Event types with consecutive deltas of one kind folded together."""
    out: list[str] = []
    for e in events:
        if out and out[-1] == e.type and e.type in ("text_delta", "tool_input_delta"):
            continue
        out.append(e.type)
    return out


def test_stream_event_order_and_partial_input() -> None:
    script = [
        tool_turn(("c1", "lookup", {"query": "lamps and tables", "limit": 2}), text="Searching."),
        "Found lamps.",
    ]
    backend = ScriptedBackend(script, chunk_size=5)
    events = list(Runner(backend, [lookup]).stream("find lamps"))
    assert collapse(events) == [
        "text_delta",
        "tool_call_start",
        "tool_input_delta",
        "tool_call",
        "message",
        "tool_result",
        "text_delta",
        "message",
        "final",
    ]
    text = "".join(e.text for e in events[:5] if isinstance(e, TextDeltaEvent))
    assert text == "Searching."
    start = next(e for e in events if isinstance(e, ToolCallStartEvent))
    assert (start.id, start.name) == ("c1", "lookup")
    deltas = [e for e in events if isinstance(e, ToolInputDeltaEvent)]
    assert len(deltas) > 3
    assert "".join(d.partial_json for d in deltas) == '{"query": "lamps and tables", "limit": 2}'
    # The parsed input is the same live object, complete at the end.
    assert deltas[-1].input == {"query": "lamps and tables", "limit": 2}
    call = next(e for e in events if isinstance(e, ToolCallEvent)).call
    assert call.input == {"query": "lamps and tables", "limit": 2}
    result = next(e for e in events if isinstance(e, ToolResultEvent))
    assert result.call.id == "c1" and result.result.content[0].value == [  # type: ignore[union-attr]
        "lamps and tables-0",
        "lamps and tables-1",
    ]
    final = events[-1]
    assert isinstance(final, FinalEvent) and final.result.text == "Found lamps."
    assert sum(isinstance(e, MessageEvent) for e in events) == 2


def test_stream_partial_input_grows_while_streaming() -> None:
    backend = ScriptedBackend([tool_turn(("c1", "lookup", {"query": "abcdefghij" * 3})), "ok"], chunk_size=4)
    seen: list[str] = []
    for event in Runner(backend, [lookup]).stream("?"):
        if isinstance(event, ToolInputDeltaEvent) and isinstance(event.input, dict):
            seen.append(str(event.input.get("query", "")))
    lengths = [len(s) for s in seen]
    assert lengths == sorted(lengths) and lengths[0] < 30 and lengths[-1] == 30
    assert len(set(lengths)) > 4  # the value shows up partially, not only at the end


def test_stream_results_for_refused_calls_and_retry_event() -> None:
    cut = Response(content=[ToolUseBlock(id="c0", name="lookup", input={})], stop_reason="max_tokens")
    script = [cut, tool_turn(("c1", "nope", {}), ("c2", "lookup", {"query": "x", "limit": 1})), "done"]
    events = list(Runner(ScriptedBackend(script), [lookup], max_tokens=50).stream("?"))
    retry = [e for e in events if isinstance(e, RetryEvent)]
    assert len(retry) == 1 and retry[0].max_tokens == 200
    results = [e for e in events if isinstance(e, ToolResultEvent)]
    assert [r.call.id for r in results] == ["c1", "c2"]
    assert results[0].result.is_error and not results[1].result.is_error


def test_async_stream_matches_sync_stream() -> None:
    script = [tool_turn(("c1", "lookup", {"query": "q", "limit": 1}), text="Hm."), "Done."]
    sync_types = [e.type for e in Runner(ScriptedBackend(script), [lookup]).stream("?")]

    async def collect() -> list[str]:
        runner = Runner(ScriptedBackend(script), [lookup])
        return [e.type async for e in runner.astream("?")]

    assert anyio.run(collect) == sync_types


class Address(BaseModel):
    """A postal address."""

    street: str
    city: str
    postcode: str = Field(pattern=r"^\d{5}$")


def test_extract_pydantic_model() -> None:
    backend = ScriptedBackend(
        [tool_turn(("x1", "Address", {"street": "1 Rue A", "city": "Paris", "postcode": "75001"}))]
    )
    address = extract(backend, Address, "1 Rue A, 75001 Paris")
    assert isinstance(address, Address)
    assert address.postcode == "75001"
    (request,) = backend.requests
    assert request.tool_choice == ToolChoice(type="tool", name="Address")
    assert [t.name for t in request.tools] == ["Address"]


def test_extract_retries_invalid_output_with_is_error() -> None:
    backend = ScriptedBackend(
        [
            tool_turn(("x1", "Address", {"street": "1 Rue A", "postcode": "7500"})),
            tool_turn(("x2", "Address", {"street": "1 Rue A", "city": "Paris", "postcode": "75001"})),
        ]
    )
    result = extract_result(backend, Address, "1 Rue A, 75001 Paris")
    assert result.output == Address(street="1 Rue A", city="Paris", postcode="75001")
    error = backend.requests[1].messages[-1].tool_results[0]
    assert error.is_error and error.tool_use_id == "x1"
    assert "'city'" in error.text() and "postcode" in error.text()
    # Still forced on the retry.
    assert backend.requests[1].tool_choice == ToolChoice(type="tool", name="Address")


def test_extract_budget_exhausted() -> None:
    bad = tool_turn(("x", "Address", {"street": 5}))
    backend = ScriptedBackend([bad, bad, bad, bad])
    with pytest.raises(ExtractionError) as info:
        extract(backend, Address, "?", max_validation_retries=2)
    assert len(backend.requests) == 2
    assert info.value.problems


def test_extract_json_schema_and_async() -> None:
    schema = {
        "type": "object",
        "properties": {"summary": {"type": "string"}, "score": {"type": "number"}},
        "required": ["summary", "score"],
    }
    backend = ScriptedBackend([tool_turn(("s1", "record_summary", {"summary": "ok", "score": 0.5}))])
    value = anyio.run(lambda: aextract(backend, schema, "text", name="record_summary"))
    assert value == {"summary": "ok", "score": 0.5}


def test_extract_when_model_ignores_the_forced_tool() -> None:
    backend = ScriptedBackend(["Here is JSON: {}", tool_turn(("x", "Address", {"street": "s", "city": "c", "postcode": "12345"}))])
    address = extract(backend, Address, "?")
    assert address.city == "c"
    assert "Address" in backend.requests[1].messages[-1].text()


def test_extract_options_reach_the_request_and_unknown_ones_are_refused() -> None:
    backend = ScriptedBackend(
        [tool_turn(("x1", "Address", {"street": "s", "city": "c", "postcode": "12345"}))]
    )
    extract(backend, Address, "?", system="Be exact.", max_tokens=77, temperature=0.2)
    (request,) = backend.requests
    assert (request.system_text(), request.max_tokens, request.temperature) == \
        ("Be exact.", 77, 0.2)
    with pytest.raises(TypeError, match="unknown options: bogus"):
        extract(backend, Address, "?", bogus=1)  # type: ignore[call-overload]


def test_run_with_an_output_tool_runs_other_tools_until_the_output_call() -> None:
    """The public driver extract() uses: Runner.run(output=tool) runs ordinary tools as
    usual and ends at the first valid call of the output tool, its parsed input the output."""
    record = output_tool(Address)
    backend = ScriptedBackend([
        tool_turn(("l1", "lookup", {"query": "Paris", "limit": 1})),
        tool_turn(("x1", "Address", {"street": "1 Rue A", "city": "Paris", "postcode": "75001"})),
    ])
    runner = Runner(backend, [lookup, record])
    result = runner.run("Where?", output=record)
    assert result.output == Address(street="1 Rue A", city="Paris", postcode="75001")
    assert backend.requests[1].messages[-1].tool_results[0].text() == '["Paris-0"]'
    assert anyio.run(lambda: Runner(ScriptedBackend([tool_turn(
        ("x2", "Address", {"street": "s", "city": "c", "postcode": "12345"}))]), [record])
        .arun("?", output=record)).output.city == "c"
    with pytest.raises(ValueError, match="not one of this runner's tools"):
        Runner(backend, [lookup]).run("?", output=record)


# -- the seeds' worked example (legacy tool-use document) ---------------------------------

def get_ticker_symbol(company_name: str) -> str:
    """Gets the stock ticker symbol for a company searched by name.

    Args:
        company_name: The name of the company.
    """
    symbols = {"General Motors": "GM"}
    if company_name not in symbols:
        raise KeyError(f"no ticker for {company_name!r}")
    return symbols[company_name]


def get_current_stock_price(symbol: str) -> str:
    """Gets the current stock price for a company.

    Args:
        symbol: The stock symbol of the company to get the price for.
    """
    prices = {"GM": "38.50"}
    if symbol not in prices:
        raise ValueError(f"unknown symbol {symbol!r}")
    return prices[symbol]


# What the model writes in the seed, up to the </function_calls> stop sequence.
SEED_TURNS = [
    "<scratchpad>\nTo answer this I need the ticker symbol, then its price.</scratchpad>\n\n"
    "<function_calls>\n<invoke>\n<tool_name>get_ticker_symbol</tool_name>\n<parameters>\n"
    "<company_name>General Motors</company_name>\n</parameters>\n</invoke>\n",
    "<function_calls>\n<invoke>\n<tool_name>get_current_stock_price</tool_name>\n<parameters>\n"
    "<symbol>GM</symbol>\n</parameters>\n</invoke>\n",
    "<answer>\nThe current stock price of General Motors is $38.50.\n</answer>",
]


def test_seed_stock_price_conversation() -> None:
    from tooluse.codecs.legacy import parse_completion, render_function_results

    turns = iter(SEED_TURNS)
    counter = iter(range(1, 10))

    def model(request: Request) -> Response:
        parsed = parse_completion(
            next(turns), request.tools, id_factory=lambda: f"toolu_{next(counter):02d}"
        )
        assert not parsed.problems
        return Response(
            content=parsed.content, stop_reason="tool_use" if parsed.tool_uses else "end_turn"
        )

    backend = ScriptedBackend(model)
    result = Runner(backend, [get_ticker_symbol, get_current_stock_price]).run(
        "What is the current stock price of General Motors?"
    )
    calls = result.tool_calls
    assert [(c.name, c.input) for c, _ in calls] == [
        ("get_ticker_symbol", {"company_name": "General Motors"}),
        ("get_current_stock_price", {"symbol": "GM"}),
    ]
    assert [r.text() for _, r in calls if r is not None] == ["GM", "38.50"]
    assert "$38.50" in result.text
    assert result.iterations == 3
    # The results turn as the legacy prompt would show it to the model.
    first_results = result.messages[2].tool_results
    xml = render_function_results([("get_ticker_symbol", first_results[0])])
    assert "<tool_name>get_ticker_symbol</tool_name>" in xml and "GM" in xml
