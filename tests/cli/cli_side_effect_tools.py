"""Tools with side effects for the ``tooluse run --approve`` tests (``--tool
cli_side_effect_tools:NAME``): every transfer that really runs is appended to ``SENT`` and,
when ``TOOLUSE_TEST_LEDGER`` names a file, written there (for a run in another process)."""

from __future__ import annotations

import os

from tooluse.tools import tool

SENT: list[tuple[float, str]] = []


def transfer_money(amount: float, to: str) -> str:
    """Send money to an account.

    Args:
        amount: How much, in euros.
        to: The account to credit.
    """
    SENT.append((amount, to))
    ledger = os.environ.get("TOOLUSE_TEST_LEDGER")
    if ledger:
        with open(ledger, "a", encoding="utf-8") as handle:
            handle.write(f"{amount:g} {to}\n")
    return f"sent {amount:g} EUR to {to}"


@tool(requires_approval=lambda input: input["amount"] > 100)
def guarded_transfer(amount: float, to: str) -> str:
    """Send money to an account; more than 100 EUR needs the user's approval.

    Args:
        amount: How much, in euros.
        to: The account to credit.
    """
    return transfer_money(amount, to)


def get_balance() -> str:
    """The account's balance."""
    return "100 EUR"
