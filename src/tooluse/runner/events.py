"""What :meth:`Runner.stream` yields while a run goes on.

The backend's events (:mod:`tooluse.stream`) describe one model turn in wire terms; these
describe the *run* in the terms a UI needs: text as it is written, a tool call as soon as it
starts, its input parsed so far while it streams (so a form can fill in live), the call once
complete (with its :class:`~tooluse.messages.CallOrigin` when a backend changed or added
it), each approval asked for and its decision, each tool's result as it is known, each
finished assistant turn, and the final result. They are plain dataclasses: cheap to make,
one per backend delta.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..messages import CallOrigin, Response, ToolResultBlock, ToolUseBlock
from .run_result import RunResult

__all__ = [
    "ApprovalDecisionEvent",
    "ApprovalRequestEvent",
    "FinalEvent",
    "MessageEvent",
    "RetryEvent",
    "RunEvent",
    "TextDeltaEvent",
    "ToolCallEvent",
    "ToolCallStartEvent",
    "ToolInputDeltaEvent",
    "ToolResultEvent",
]


@dataclass(frozen=True)
class TextDeltaEvent:
    """More of the model's text."""

    index: int
    text: str
    type: str = "text_delta"


@dataclass(frozen=True)
class ToolCallStartEvent:
    """The model began a tool call; its input follows. ``origin``: where the call came
    from, when the backend says (None: as the model wrote it; see
    :attr:`ToolUseBlock.origin <tooluse.messages.ToolUseBlock.origin>`)."""

    index: int
    id: str
    name: str
    type: str = "tool_call_start"
    origin: CallOrigin | None = None


@dataclass(frozen=True)
class ToolInputDeltaEvent:
    """More of a tool call's input. ``partial_json`` is the new fragment; ``input`` is the
    input parsed so far (incrementally: the parser keeps its state between fragments).
    ``input`` is the parser's live object, filled in further by later fragments — copy it to
    keep this moment's view."""

    index: int
    id: str
    name: str
    partial_json: str
    input: Any
    type: str = "tool_input_delta"


@dataclass(frozen=True)
class ToolCallEvent:
    """A tool call is complete (its input is final; it has not run yet). ``call.origin``
    says where it came from (None: as the model wrote it; ``call.source`` is ``model``,
    ``edited`` or ``added``)."""

    index: int
    call: ToolUseBlock
    type: str = "tool_call"


@dataclass(frozen=True)
class ApprovalRequestEvent:
    """The runner is about to ask its ``approve`` callback whether ``call`` (of ``tool``,
    which requires approval) may run; an :class:`ApprovalDecisionEvent` follows."""

    call: ToolUseBlock
    tool: str
    type: str = "approval_request"


@dataclass(frozen=True)
class ApprovalDecisionEvent:
    """The decision on a call that needs approval. ``approved`` False: the call is not run
    and the model gets an error result. ``asked`` False: there was no ``approve`` callback
    to ask, so the call was denied unasked."""

    call: ToolUseBlock
    tool: str
    approved: bool
    asked: bool
    type: str = "approval"


@dataclass(frozen=True)
class ToolResultEvent:
    """A tool ran (or was refused: unknown tool, invalid input, approval denied); ``result``
    goes back to the model. Emitted in call order once the turn's calls have all finished."""

    call: ToolUseBlock
    result: ToolResultBlock
    type: str = "tool_result"


@dataclass(frozen=True)
class MessageEvent:
    """One assistant turn is complete."""

    response: Response
    type: str = "message"


@dataclass(frozen=True)
class RetryEvent:
    """The turn just streamed is discarded and asked for again (it was cut off by
    ``max_tokens`` inside a tool call); a UI should drop what it showed of it."""

    reason: str
    max_tokens: int
    type: str = "retry"


@dataclass(frozen=True)
class FinalEvent:
    """The run is over; ``result`` is what :meth:`Runner.run` would have returned."""

    result: RunResult
    type: str = "final"


RunEvent = (
    TextDeltaEvent
    | ToolCallStartEvent
    | ToolInputDeltaEvent
    | ToolCallEvent
    | ApprovalRequestEvent
    | ApprovalDecisionEvent
    | ToolResultEvent
    | MessageEvent
    | RetryEvent
    | FinalEvent
)
