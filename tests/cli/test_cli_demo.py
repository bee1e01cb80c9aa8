"""`tooluse demo` on a scripted backend: the plan of tool choices, the output, the notes
(the real model runs it in tests/llama)."""

from __future__ import annotations

import io

from tooluse.backends.scripted import ScriptedBackend
from tooluse.cli.demo import DEMO_PLAN, run_demo
from tooluse.messages import Response, ToolUseBlock


def _call(name: str, **args: str) -> Response:
    return Response(content=[ToolUseBlock(id=f"toolu_{name}", name=name, input=args)],
                    stop_reason="tool_use")


def test_the_seed_plan_names_each_turn_and_the_output_says_so() -> None:
    backend = ScriptedBackend([_call("get_ticker_symbol", company_name="General Motors"),
                               _call("get_current_stock_price", symbol="GM"),
                               "General Motors trades at $38.50."])
    out = io.StringIO()
    assert run_demo(backend, out=out) == 0
    text = out.getvalue()
    assert [r.tool_choice.name if r.tool_choice and r.tool_choice.type == "tool"
            else r.tool_choice.type if r.tool_choice else None
            for r in backend.requests] == DEMO_PLAN.split(",")
    assert "[model turn 1] tool_choice=get_ticker_symbol" in text
    assert "[model turn 3] tool_choice=none" in text
    assert text.index("get_ticker_symbol -> GM") < text.index(
        'call    get_current_stock_price(symbol="GM")')
    assert "get_current_stock_price -> 38.50" in text
    assert "Note: tool_choice named the tool of 2 turn(s)" in text


def test_left_to_choose_the_notes_say_what_the_model_skipped() -> None:
    backend = ScriptedBackend([_call("get_current_stock_price", symbol="GM"),
                               "It is $38.50."])
    out = io.StringIO()
    assert run_demo(backend, tool_choice="any", out=out) == 0
    text = out.getvalue()
    assert backend.requests[0].tool_choice is not None
    assert backend.requests[0].tool_choice.type == "any"
    assert "[model turn 2] tool_choice=auto" in text
    assert "Note: the model never called get_ticker_symbol." in text
    assert "named the tool" not in text


def test_a_plan_naming_an_unknown_tool_is_a_clear_error() -> None:
    out = io.StringIO()
    assert run_demo(ScriptedBackend([]), tool_choice="get_ticker_symbol,nope", out=out) == 2
    assert "--tool-choice 'get_ticker_symbol,nope'" in out.getvalue()
    assert "not one of the tools" in out.getvalue()
