"""tooluse: tool use (function calling) for every language model.

The public API in one place:

- tools: :class:`Tool`, :func:`tool`, :class:`ToolSet` (``tooluse.tools``);
- the neutral conversation model: :class:`Message`, :class:`Request`, :class:`Response` and
  the content blocks (``tooluse.messages``), with streaming events in ``tooluse.stream``;
- the tool loop: :class:`Runner`, :func:`extract` (``tooluse.runner``);
- backends: :class:`Backend`, :func:`load_backend` (``tooluse.backends``);
- wire formats: one codec module per format in ``tooluse.codecs`` (``anthropic``,
  ``bedrock``, ``openai``, ``legacy``), :func:`get_codec`;
- the gateway: ``tooluse.server.create_app`` (needs the ``server`` extra, not imported here).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._lazy import lazy_exports

if TYPE_CHECKING:
    from .backends import Backend, available_backends, load_backend, register_backend
    from .codecs import get_codec
    from .errors import (
        BackendError,
        ConversionError,
        ToolDefinitionError,
        ToolInputError,
        ToolUseError,
        WireFormatError,
    )
    from .messages import (
        CallOrigin,
        ImageBlock,
        JsonBlock,
        Message,
        Request,
        Response,
        TextBlock,
        ToolChoice,
        ToolResultBlock,
        ToolSpec,
        ToolUseBlock,
        Usage,
        ValueChange,
    )
    from .runner import (
        ExtractionError,
        MaxIterationsExceeded,
        Runner,
        RunnerError,
        RunResult,
        ToolError,
        ToolRetriesExhausted,
        aextract,
        extract,
    )
    from .tools import Tool, ToolSet, tool

__version__ = "0.1.0"

__all__ = [
    "Backend",
    "BackendError",
    "CallOrigin",
    "ConversionError",
    "ExtractionError",
    "ImageBlock",
    "JsonBlock",
    "MaxIterationsExceeded",
    "Message",
    "Request",
    "Response",
    "RunResult",
    "Runner",
    "RunnerError",
    "TextBlock",
    "Tool",
    "ToolChoice",
    "ToolDefinitionError",
    "ToolError",
    "ToolInputError",
    "ToolResultBlock",
    "ToolRetriesExhausted",
    "ToolSet",
    "ToolSpec",
    "ToolUseBlock",
    "ToolUseError",
    "Usage",
    "ValueChange",
    "WireFormatError",
    "__version__",
    "aextract",
    "available_backends",
    "extract",
    "get_codec",
    "load_backend",
    "register_backend",
    "tool",
]

# The public names are imported on first use (PEP 562, tooluse/_lazy.py), not by ``import
# tooluse``: ``from tooluse import Runner``, ``tooluse.Runner`` and ``tooluse.runner`` work as
# before, and a process pays only for the parts it uses. Type checkers read the imports above.
_EXPORTS: dict[str, str] = {
    "Backend": ".backends",
    "BackendError": ".errors",
    "CallOrigin": ".messages",
    "ConversionError": ".errors",
    "ExtractionError": ".runner",
    "ImageBlock": ".messages",
    "JsonBlock": ".messages",
    "MaxIterationsExceeded": ".runner",
    "Message": ".messages",
    "Request": ".messages",
    "Response": ".messages",
    "RunResult": ".runner",
    "Runner": ".runner",
    "RunnerError": ".runner",
    "TextBlock": ".messages",
    "Tool": ".tools",
    "ToolChoice": ".messages",
    "ToolDefinitionError": ".errors",
    "ToolError": ".runner",
    "ToolInputError": ".errors",
    "ToolResultBlock": ".messages",
    "ToolRetriesExhausted": ".runner",
    "ToolSet": ".tools",
    "ToolSpec": ".messages",
    "ToolUseBlock": ".messages",
    "ToolUseError": ".errors",
    "Usage": ".messages",
    "ValueChange": ".messages",
    "WireFormatError": ".errors",
    "aextract": ".runner",
    "available_backends": ".backends",
    "extract": ".runner",
    "get_codec": ".codecs",
    "load_backend": ".backends",
    "register_backend": ".backends",
    "tool": ".tools",
}

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__, globals())
