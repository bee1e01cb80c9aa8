"""AWS Bedrock Converse API <-> the neutral model.

Requests are the JSON body of ``POST /model/{modelId}/converse`` (or the keyword arguments
of boto3's ``converse``: a ``modelId`` key is accepted, and image ``bytes`` may be raw bytes
as boto3 takes them or base64 text as the HTTP body carries them). Decoding enforces the
rules Converse users trip on, with ValidationException-style messages that name the field:
the conversation starts with a user turn and alternates (Converse does not merge turns),
``toolConfig`` is present whenever the history holds ``toolUse``/``toolResult``, every
``toolUse`` is answered in the next turn, names and ids match ``[a-zA-Z0-9_-]{1,64}``.

What Converse cannot carry, and what encoding does about it (``strict=True`` raises
:class:`ConversionError`; ``strict=False`` applies the fallback):

- tool choice ``none``: no such choice. Fallback: without tool blocks in the history the
  ``toolConfig`` is left out (the model then cannot call tools, which is what ``none``
  means); with them, the tools stay and ``toolChoice`` is left out.
- ``disable_parallel_tool_use``: no such setting. Fallback: dropped.
- images by URL, or of a type other than png/jpeg/gif/webp. Fallback: a text placeholder.
- tool blocks in the history but no tools: Converse requires ``toolConfig``. Fallback:
  a minimal ``toolSpec`` per tool name used in the history.

``top_k`` travels as ``additionalModelRequestFields: {"top_k": k}`` (how Anthropic models on
Bedrock take it) and ``metadata`` as ``requestMetadata``. A response's ``stop_sequence``
travels as ``additionalModelResponseFields: {"stop_sequence": s}`` (what Bedrock returns for
Anthropic models); Converse responses have no id and no model, so those are not carried.

Reasoning is carried both ways (:mod:`.reasoning`): ``reasoningContent`` blocks (history,
responses, stream deltas) are thinking blocks, signatures and redacted bytes byte for byte,
and the reasoning setting in ``additionalModelRequestFields`` (``thinking``,
``reasoning_config`` or Nova's ``reasoningConfig``) is :attr:`Request.reasoning`.

The package's modules: :mod:`._wire` (pydantic wire models and shared constants),
:mod:`.requests` (request decoding and encoding, boto3 binary mode included),
:mod:`.responses`, :mod:`.stream` (ConverseStream events), :mod:`.reasoning` (reasoning
blocks and settings), :mod:`.cache` (``cachePoint`` blocks, the usage's cache counts) and :mod:`.errors` (error bodies, backend errors). This module re-exports what callers use.
"""

from __future__ import annotations

from ._wire import IMAGE_FORMATS
from ._wire import TARGET as TARGET
from .errors import ERROR_TYPES, backend_error, error_body
from .requests import decode_request, encode_request
from .responses import decode_response, encode_response
from .stream import decode_events, encode_events

__all__ = [
    "ERROR_TYPES",
    "IMAGE_FORMATS",
    "backend_error",
    "decode_events",
    "decode_request",
    "decode_response",
    "encode_events",
    "encode_request",
    "encode_response",
    "error_body",
]
