"""The tool-running loop: run a conversation with tools over any backend until the model
answers; structured output via a forced tool (:func:`extract`); streamed run events; an
``approve`` callback for tools that require approval; each call's origin on the result."""

from __future__ import annotations

from .errors import (
    ExtractionError,
    IncompleteToolCall,
    MaxIterationsExceeded,
    RunnerError,
    ToolRetriesExhausted,
)
from .events import (
    ApprovalDecisionEvent,
    ApprovalRequestEvent,
    FinalEvent,
    MessageEvent,
    RetryEvent,
    RunEvent,
    TextDeltaEvent,
    ToolCallEvent,
    ToolCallStartEvent,
    ToolInputDeltaEvent,
    ToolResultEvent,
)
from .extract import ExtractOptions, aextract, extract, extract_result, output_tool
from .loop import Approver, Prompt, Runner, make_tool_choice
from .results import ToolError, result_content
from .run_result import RunResult

__all__ = [
    "ApprovalDecisionEvent",
    "ApprovalRequestEvent",
    "Approver",
    "ExtractOptions",
    "ExtractionError",
    "FinalEvent",
    "IncompleteToolCall",
    "MaxIterationsExceeded",
    "MessageEvent",
    "Prompt",
    "RetryEvent",
    "RunEvent",
    "RunResult",
    "Runner",
    "RunnerError",
    "TextDeltaEvent",
    "ToolCallEvent",
    "ToolCallStartEvent",
    "ToolError",
    "ToolInputDeltaEvent",
    "ToolResultEvent",
    "ToolRetriesExhausted",
    "aextract",
    "extract",
    "extract_result",
    "make_tool_choice",
    "output_tool",
    "result_content",
]
