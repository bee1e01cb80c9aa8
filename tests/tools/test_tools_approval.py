"""A tool says whether its calls need the user's approval: ``requires_approval`` (a flag or a
predicate on the input) on every way of making a tool; ``read_only`` is a hint. The runner's
side (asking, denying) is tests/runner/test_runner_approval.py."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from tooluse.errors import ToolDefinitionError
from tooluse.messages import ToolSpec
from tooluse.tools import Tool, ToolSet, as_tool, tool


def transfer_money(amount: float, to: str) -> str:
    """Send money to an account.

    Args:
        amount: How much, in euros.
        to: The account to credit.
    """
    return f"sent {amount} to {to}"


def test_a_tool_needs_no_approval_by_default() -> None:
    t = Tool.from_function(transfer_money)
    assert t.requires_approval is False
    assert t.needs_approval({"amount": 5, "to": "x"}) is False
    assert t.read_only is False


def test_requires_approval_true_on_every_constructor() -> None:
    class Transfer(BaseModel):
        amount: float

    made = [
        Tool.from_function(transfer_money, requires_approval=True),
        tool(requires_approval=True)(transfer_money),
        Tool.from_model(Transfer, requires_approval=True),
        Tool.from_schema("t", "", {"type": "object"}, requires_approval=True),
        Tool.from_spec(ToolSpec(name="t", input_schema={"type": "object"}),
                       requires_approval=True),
        Tool("t", requires_approval=True),
        as_tool({"name": "t", "input_schema": {"type": "object"}, "requires_approval": True}),
    ]
    for t in made:
        assert t.requires_approval is True
        assert t.needs_approval({}) is True


def test_a_predicate_on_the_input_decides_per_call() -> None:
    t = Tool.from_function(transfer_money,
                           requires_approval=lambda input: input["amount"] > 100)
    assert t.needs_approval({"amount": 500, "to": "x"}) is True
    assert t.needs_approval({"amount": 50, "to": "x"}) is False


def test_a_predicate_that_fails_counts_as_needs_approval() -> None:
    t = Tool.from_function(transfer_money, requires_approval=lambda input: input["missing"] > 1)
    assert t.needs_approval({"amount": 5, "to": "x"}) is True


def test_the_decorator_keeps_the_function_callable() -> None:
    @tool(requires_approval=True)
    def delete_file(path: str) -> str:
        """Delete a file."""
        return f"deleted {path}"

    assert delete_file("a") == "deleted a"
    assert delete_file.needs_approval({"path": "a"})


def test_with_approval_returns_a_copy() -> None:
    t = Tool.from_function(transfer_money)
    asked = t.with_approval()
    assert asked.needs_approval({}) and not t.needs_approval({})
    assert asked.name == t.name and asked.function is t.function
    assert not asked.with_approval(False).needs_approval({})
    # a set rebuilt from the copies keeps names and functions
    rebuilt = ToolSet([x.with_approval(True) for x in ToolSet([transfer_money])])
    assert rebuilt["transfer_money"].needs_approval({})


@pytest.mark.parametrize("rule", ["yes", 1, None])
def test_a_rule_that_is_neither_flag_nor_function_is_refused(rule: Any) -> None:
    with pytest.raises(ToolDefinitionError, match="requires_approval"):
        Tool.from_function(transfer_money, requires_approval=rule)


def test_read_only_is_a_hint_kept_on_copies() -> None:
    t = Tool("clock", read_only=True)
    assert t.read_only and t.with_name("clock2").read_only and t.with_approval().read_only
