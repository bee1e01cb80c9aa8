"""The gateway: the Anthropic Messages, Bedrock Converse, OpenAI Chat Completions and OpenAI
Responses APIs, with tool use, over any tooluse backend (see ``docs/server.md``)."""

from .app import create_app
from .errors import GatewayError
from .http.body import DEFAULT_MAX_BODY_BYTES
from .http.eventstream import encode_event, encode_exception, encode_frame
from .thread import ServerThread

__all__ = [
    "DEFAULT_MAX_BODY_BYTES",
    "GatewayError",
    "ServerThread",
    "create_app",
    "encode_event",
    "encode_exception",
    "encode_frame",
]
