"""tooluse: tool use (function calling) for every language model."""

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

__version__ = "0.1.0"

__all__ = [
    "BackendError",
    "ConversionError",
    "ImageBlock",
    "JsonBlock",
    "Message",
    "Request",
    "Response",
    "TextBlock",
    "ToolChoice",
    "ToolDefinitionError",
    "ToolInputError",
    "ToolResultBlock",
    "ToolSpec",
    "ToolUseBlock",
    "ToolUseError",
    "Usage",
    "WireFormatError",
    "__version__",
]
