"""Approval for side effects: a tool that requires approval runs only when the runner's
``approve`` callback says yes. A denied call, and any such call when there is no callback,
is not run and goes back to the model as an ``is_error`` result; the stream shows the
question and the decision. All four drivers (run, arun, stream, astream), sync and async
callbacks, on the scripted backend."""

from __future__ import annotations

from typing import Any

import anyio
import anyio.lowlevel
import pytest

from tooluse.backends.scripted import ScriptedBackend
from tooluse.messages import CallOrigin, Response, ToolUseBlock, ValueChange
from tooluse.runner import (
    ApprovalDecisionEvent,
    ApprovalRequestEvent,
    FinalEvent,
    Runner,
    RunResult,
    ToolCallEvent,
    ToolResultEvent,
)
from tooluse.tools import Tool


class Bank:
    """A side effect the tests can see: every transfer that really ran."""

    def __init__(self) -> None:
        self.sent: list[tuple[float, str]] = []

    def tool(self, requires_approval: Any = True) -> Tool:
        def transfer_money(amount: float, to: str) -> str:
            """Send money to an account.

            Args:
                amount: How much, in euros.
                to: The account to credit.
            """
            self.sent.append((amount, to))
            return f"sent {amount:g} EUR to {to}"

        return Tool.from_function(transfer_money, requires_approval=requires_approval)


def transfer(amount: float, to: str = "Bob", id: str = "toolu_1",
             origin: CallOrigin | None = None) -> Response:
    return Response(content=[ToolUseBlock(id=id, name="transfer_money",
                                          input={"amount": amount, "to": to}, origin=origin)],
                    stop_reason="tool_use")


def backend(*turns: Response | str) -> ScriptedBackend:
    return ScriptedBackend([*turns, "Done."])


def only_result(result: RunResult) -> Any:
    ((_, res),) = result.tool_calls
    assert res is not None
    return res


class Recorder:
    """An approve callback that answers ``answer`` and keeps what it was asked."""

    def __init__(self, answer: Any) -> None:
        self.answer = answer
        self.asked: list[tuple[ToolUseBlock, Tool]] = []

    def __call__(self, call: ToolUseBlock, tool: Tool) -> Any:
        self.asked.append((call, tool))
        return self.answer


def test_an_approved_call_runs() -> None:
    bank, approve = Bank(), Recorder(True)
    result = Runner(backend(transfer(50)), [bank.tool()], approve=approve).run("Pay Bob 50")
    assert bank.sent == [(50, "Bob")]
    res = only_result(result)
    assert not res.is_error and res.text() == "sent 50 EUR to Bob"
    ((call, tool),) = approve.asked
    assert call.name == "transfer_money" and call.input == {"amount": 50, "to": "Bob"}
    assert tool.name == "transfer_money"
    assert result.text == "Done."


def test_a_denied_call_is_not_run_and_the_model_is_told() -> None:
    bank, model = Bank(), backend(transfer(5000))
    result = Runner(model, [bank.tool()], approve=Recorder(False)).run("Pay Bob 5000")
    assert bank.sent == []
    res = only_result(result)
    assert res.is_error
    assert res.text() == "The user denied this call of tool 'transfer_money', so it was not run."
    # the model's next turn sees that result
    (sent,) = model.requests[-1].messages[-1].tool_results
    assert sent.is_error and "denied" in sent.text()
    assert result.text == "Done."


def test_without_a_callback_the_call_is_denied_unasked() -> None:
    bank = Bank()
    result = Runner(backend(transfer(5)), [bank.tool()]).run("Pay Bob 5")
    assert bank.sent == []
    res = only_result(result)
    assert res.is_error
    assert "needs the user's approval" in res.text()
    assert "no approve callback" in res.text() and "not run" in res.text()


def test_a_predicate_asks_only_for_the_calls_it_names() -> None:
    bank, approve = Bank(), Recorder(False)
    tool = bank.tool(requires_approval=lambda input: input["amount"] > 100)
    both = Response(content=[
        ToolUseBlock(id="a", name="transfer_money", input={"amount": 50, "to": "Ann"}),
        ToolUseBlock(id="b", name="transfer_money", input={"amount": 500, "to": "Bob"}),
    ], stop_reason="tool_use")
    result = Runner(backend(both), [tool], approve=approve).run("Pay Ann 50 and Bob 500")
    assert bank.sent == [(50, "Ann")]
    assert [c.input["amount"] for c, _ in approve.asked] == [500]
    (_, ra), (_, rb) = result.tool_calls
    assert ra is not None and not ra.is_error
    assert rb is not None and rb.is_error and "denied" in rb.text()


def test_tools_that_need_no_approval_are_not_asked_about() -> None:
    def get_balance() -> str:
        """The account's balance."""
        return "100 EUR"

    approve = Recorder(False)
    call = Response(content=[ToolUseBlock(id="a", name="get_balance", input={})],
                    stop_reason="tool_use")
    result = Runner(backend(call), [get_balance, Bank().tool()], approve=approve).run("?")
    assert approve.asked == []
    assert only_result(result).text() == "100 EUR"


def test_invalid_input_is_refused_before_anyone_is_asked() -> None:
    approve = Recorder(True)
    bad = Response(content=[ToolUseBlock(id="a", name="transfer_money",
                                         input={"amount": "lots"})], stop_reason="tool_use")
    result = Runner(backend(bad), [Bank().tool()], approve=approve).run("?")
    assert approve.asked == []
    assert "Invalid input" in only_result(result).text()


def test_the_callback_sees_the_calls_origin() -> None:
    origin = CallOrigin(source="edited", changes=[
        ValueChange(parameter="amount", before=500, after=50, rule="stated_units")])
    approve = Recorder(True)
    Runner(backend(transfer(50, origin=origin)), [Bank().tool()], approve=approve).run("?")
    ((call, _),) = approve.asked
    assert call.origin == origin and call.source == "edited"


def test_the_callback_cannot_change_the_call() -> None:
    bank = Bank()

    def meddle(call: ToolUseBlock, tool: Tool) -> bool:
        call.input["amount"] = 1_000_000
        return True

    Runner(backend(transfer(5)), [bank.tool()], approve=meddle).run("?")
    assert bank.sent == [(5, "Bob")]


def test_an_answer_that_is_not_a_bool_is_an_error() -> None:
    with pytest.raises(TypeError, match="True or False"):
        Runner(backend(transfer(5)), [Bank().tool()], approve=Recorder("yes")).run("?")


def test_an_async_callback_from_sync_run() -> None:
    bank = Bank()

    async def approve(call: ToolUseBlock, tool: Tool) -> bool:
        await anyio.lowlevel.checkpoint()
        return call.input["amount"] < 100

    Runner(backend(transfer(5)), [bank.tool()], approve=approve).run("?")
    assert bank.sent == [(5, "Bob")]


@pytest.mark.parametrize("is_async", [False, True])
@pytest.mark.parametrize("answer", [True, False])
def test_arun_takes_sync_and_async_callbacks(is_async: bool, answer: bool) -> None:
    bank = Bank()
    asked: list[str] = []

    def sync_approve(call: ToolUseBlock, tool: Tool) -> bool:
        asked.append(call.id)
        return answer

    async def async_approve(call: ToolUseBlock, tool: Tool) -> bool:
        await anyio.lowlevel.checkpoint()
        return sync_approve(call, tool)

    runner = Runner(backend(transfer(5)), [bank.tool()],
                    approve=async_approve if is_async else sync_approve)
    result = anyio.run(runner.arun, "Pay Bob 5")
    assert asked == ["toolu_1"]
    assert bank.sent == ([(5, "Bob")] if answer else [])
    assert only_result(result).is_error is (not answer)


def _approval_events(events: list[Any]) -> list[tuple[str, Any]]:
    shown = []
    for event in events:
        if isinstance(event, ToolCallEvent):
            shown.append(("call", event.call.id))
        elif isinstance(event, ApprovalRequestEvent):
            shown.append(("asked", event.tool))
        elif isinstance(event, ApprovalDecisionEvent):
            shown.append(("decided", (event.approved, event.asked)))
        elif isinstance(event, ToolResultEvent):
            shown.append(("result", event.result.is_error))
    return shown


@pytest.mark.parametrize("answer", [True, False])
def test_the_stream_shows_the_question_and_the_decision(answer: bool) -> None:
    runner = Runner(backend(transfer(5)), [Bank().tool()], approve=Recorder(answer))
    events = list(runner.stream("Pay Bob 5"))
    assert _approval_events(events) == [
        ("call", "toolu_1"), ("asked", "transfer_money"), ("decided", (answer, True)),
        ("result", not answer)]
    assert isinstance(events[-1], FinalEvent)


def test_the_stream_shows_a_denial_without_a_callback() -> None:
    events = list(Runner(backend(transfer(5)), [Bank().tool()]).stream("Pay Bob 5"))
    assert _approval_events(events) == [
        ("call", "toolu_1"), ("decided", (False, False)), ("result", True)]


def test_astream_with_an_async_callback() -> None:
    bank = Bank()

    async def approve(call: ToolUseBlock, tool: Tool) -> bool:
        return True

    async def collect() -> list[Any]:
        runner = Runner(backend(transfer(5)), [bank.tool()], approve=approve)
        return [event async for event in runner.astream("Pay Bob 5")]

    events = anyio.run(collect)
    assert _approval_events(events) == [
        ("call", "toolu_1"), ("asked", "transfer_money"), ("decided", (True, True)),
        ("result", False)]
    assert bank.sent == [(5, "Bob")]


def test_a_resumed_run_asks_about_the_unanswered_calls() -> None:
    bank, approve = Bank(), Recorder(True)
    saved = [
        {"role": "user", "content": [{"type": "text", "text": "Pay Bob 5"}]},
        transfer(5).to_message(),
    ]
    Runner(ScriptedBackend(["Done."]), [bank.tool()], approve=approve).run(messages=saved)
    assert len(approve.asked) == 1 and bank.sent == [(5, "Bob")]


def test_approve_must_be_callable() -> None:
    with pytest.raises(TypeError, match="approve"):
        Runner(backend(), [Bank().tool()], approve=True)  # type: ignore[arg-type]


def test_an_async_callback_from_sync_run_inside_an_event_loop() -> None:
    """Sync code called from async code: the callback runs on a loop of its own."""
    bank = Bank()

    async def approve(call: ToolUseBlock, tool: Tool) -> bool:
        await anyio.lowlevel.checkpoint()
        return True

    async def main() -> None:
        Runner(backend(transfer(5)), [bank.tool()], approve=approve).run("?")

    anyio.run(main)
    assert bank.sent == [(5, "Bob")]
