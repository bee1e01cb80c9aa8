"""Wire-format codecs: each translates one API's JSON (or the legacy XML prompt) to and from
the neutral model of :mod:`tooluse.messages` and :mod:`tooluse.stream`.

Every JSON codec module (``anthropic``, ``bedrock``, ``openai``, ``responses``) offers the same
functions, described by :class:`Codec`: ``decode_request``, ``encode_request(req, *, strict=True)``,
``decode_response``, ``encode_response``, ``encode_events`` and ``decode_events``. The legacy
codec has another shape (:class:`LegacyCodec`): a request becomes a text prompt, a response
is completion text, and there is no event stream. :func:`get_codec` picks one by name, so a
caller converting between formats never imports them one by one.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol, cast, overload

if TYPE_CHECKING:  # annotations only: importing this package stays cheap
    from ..messages import Request, Response, ToolSpec
    from ..stream import StreamEvent
    from .legacy import LegacyPrompt

__all__ = ["CODEC_NAMES", "JSON_CODECS", "Codec", "LegacyCodec", "get_codec"]

JSON_CODECS = ("anthropic", "bedrock", "openai", "responses")
CODEC_NAMES = (*JSON_CODECS, "legacy")

JsonCodecName = Literal["anthropic", "bedrock", "openai", "responses"]


class Codec(Protocol):
    """What each JSON codec module offers (a module satisfies it as it is)."""

    def decode_request(self, data: Any, /) -> Request: ...

    def encode_request(self, req: Request, /, *, strict: bool = True) -> dict[str, Any]: ...

    def decode_response(self, data: Any, /) -> Response: ...

    def encode_response(self, resp: Response, /) -> dict[str, Any]: ...

    def encode_events(self, events: Iterable[StreamEvent], /) -> Iterator[dict[str, Any]]: ...

    def decode_events(self, events: Iterable[Any], /) -> Iterator[StreamEvent]: ...


class LegacyCodec(Protocol):
    """The legacy codec: requests become a :class:`~tooluse.codecs.legacy.LegacyPrompt`,
    responses are completion text; there is no event stream and no request decoding."""

    def encode_request(self, request: Request, /, *, strict: bool = True) -> LegacyPrompt: ...

    def decode_response(
        self, text: str, tools: Sequence[ToolSpec] | None = None, /
    ) -> Response: ...

    def encode_response(self, response: Response, /) -> str: ...


@overload
def get_codec(name: JsonCodecName) -> Codec: ...
@overload
def get_codec(name: Literal["legacy"]) -> LegacyCodec: ...
@overload
def get_codec(name: str) -> Codec | LegacyCodec: ...
def get_codec(name: str) -> Codec | LegacyCodec:
    """The codec module called ``name`` (one of :data:`CODEC_NAMES`).

    Imported lazily: the legacy codec and the others stay independent, and importing
    :mod:`tooluse.codecs` costs nothing until a codec is used.
    """
    if name not in CODEC_NAMES:
        raise ValueError(f"unknown format {name!r}; expected one of {', '.join(CODEC_NAMES)}")
    return cast("Codec | LegacyCodec", importlib.import_module(f"{__name__}.{name}"))


if TYPE_CHECKING:  # mypy checks that each codec module satisfies its protocol
    from . import anthropic, bedrock, legacy, openai, responses

    _JSON_MODULES: tuple[Codec, ...] = (anthropic, bedrock, openai, responses)
    _LEGACY_MODULE: LegacyCodec = legacy
