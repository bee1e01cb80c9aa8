"""How many answers the conformance tests validated, by API, kind, schema and version."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any


class Tally:
    """Answers validated: (API, kind of answer, schema, its version) -> how many."""

    def __init__(self) -> None:
        self.counts: Counter[tuple[str, str, str, str]] = Counter()

    def check(self, api: str, kind: str, schema: str, version: str, instance: Any,
              errors: Callable[[Any], list[str]]) -> None:
        """Assert ``instance`` conforms (``errors`` says why not) and count it."""
        found = errors(instance)
        assert not found, (f"{api} {kind} is not a valid {schema} ({version}):\n"
                           + "\n".join(found[:10]) + f"\n-- the answer: {instance!r:.3000}")
        self.counts[(api, kind, schema, version)] += 1


#: The one tally of a test run (printed by conftest.py at its end).
TALLY = Tally()
