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
