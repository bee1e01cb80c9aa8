"""Why a run stopped without an answer.

Every one of these carries ``messages``: the whole conversation up to the failure, with
every tool call answered, so nothing is lost and the caller can inspect it, save it, or
resume it (``Runner.run(messages=err.messages)``) after fixing the cause.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import ToolUseError
from ..messages import Message

__all__ = [
    "ExtractionError",
    "IncompleteToolCall",
    "MaxIterationsExceeded",
    "RunnerError",
    "ToolRetriesExhausted",
]


class RunnerError(ToolUseError):
    """Base class: the tool loop stopped before the model gave its answer."""

    def __init__(self, message: str, messages: Sequence[Message] = ()) -> None:
        self.message = message
        self.messages = list(messages)
        super().__init__(message)


class MaxIterationsExceeded(RunnerError):
    """The model kept calling tools for ``max_iterations`` turns."""


class ToolRetriesExhausted(RunnerError):
    """The same tool was called with invalid input too many times in a row (or an unknown
    tool was asked for again and again). ``tool`` names it; ``problems`` are the last ones."""

    def __init__(
        self, message: str, messages: Sequence[Message] = (), *, tool: str, problems: Sequence[str]
    ) -> None:
        self.tool = tool
        self.problems = list(problems)
        super().__init__(message, messages)


class IncompleteToolCall(RunnerError):
    """The answer was cut off by ``max_tokens`` inside a tool call even after the retry with
    a larger ``max_tokens``."""


class ExtractionError(RunnerError):
    """``extract()`` got no valid structured output within its retry budget."""

    def __init__(
        self, message: str, messages: Sequence[Message] = (), *, problems: Sequence[str] = ()
    ) -> None:
        self.problems = list(problems)
        super().__init__(message, messages)
