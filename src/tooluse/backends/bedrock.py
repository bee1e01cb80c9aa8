"""AWS Bedrock's Converse API (``converse`` / ``converse_stream``) as a backend, via boto3.

The Converse wire format is :mod:`tooluse.codecs.bedrock`'s job; its JSON form carries
image bytes and redacted reasoning as base64 text (as the HTTP API and the gateway do), while
boto3 wants raw ``bytes`` and hands back raw ``bytes``. This module converts at exactly that
boundary, and maps botocore's errors (``ClientError`` codes such as ``ThrottlingException``,
missing credentials, connection failures) to :class:`~tooluse.errors.BackendError` kinds.

Credentials and region come from boto3's standard chain (environment, ``~/.aws``, instance
role); ``region=`` / ``profile=`` override them, or pass your own ``client=`` (a
``bedrock-runtime`` client; tests pass one wrapped in botocore's ``Stubber``). Retries are
botocore's own (``standard`` mode, ``max_retries`` retries), so they are not doubled here.

Reasoning is forwarded as it came: a Converse client's reasoning setting
(``additionalModelRequestFields``) and history ``reasoningContent`` go up unchanged, a Messages
client's ``thinking`` as Claude's ``thinking`` field, and the model's reasoning comes back as
thinking blocks, streamed in order.

Spec: ``bedrock:MODEL_ID`` or ``bedrock:MODEL_ID?region=eu-west-1&profile=dev``.
"""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator, Iterator
from typing import Any
from urllib.parse import parse_qsl

import anyio
import anyio.to_thread

from ..backend import Backend
from ..codecs import bedrock as codec
from ..errors import BackendError, BackendErrorKind, WireFormatError
from ..messages import Request, Response
from ..stream import StreamEvent, checked
from ._bedrock_http import BedrockHTTP

__all__ = ["BedrockBackend", "error_from_botocore", "error_from_code", "from_spec"]

# Codes the Converse codec's table (the API's documented errors) does not list, but which
# botocore raises before or around a call: credential problems and quota errors.
_EXTRA_KINDS: dict[str, BackendErrorKind] = {
    "InvalidSignatureException": "authentication",
    "ExpiredTokenException": "authentication",
    "ExpiredToken": "authentication",
    "IncompleteSignature": "authentication",
    "UnrecognizedClientException": "authentication",
    "ServiceQuotaExceededException": "rate_limit",
    "TooManyRequestsException": "rate_limit",
    "ModelNotReadyException": "unavailable",
}


def error_from_code(code: str, message: str, status: int | None) -> BackendError:
    """The :class:`BackendError` of a Bedrock error code (botocore's ``Error.Code``, an
    ``x-amzn-ErrorType``, an exception frame's type) and HTTP status."""
    mapped = codec.backend_error(code or "error", message, status)
    name = code[:1].upper() + code[1:]
    if name in _EXTRA_KINDS:
        mapped.kind = _EXTRA_KINDS[name]
    elif mapped.kind == "api" and status is not None and 400 <= status < 500:
        mapped.kind = "invalid_request"
    return mapped


def error_from_botocore(exc: Exception) -> BackendError | None:
    """The :class:`BackendError` a botocore exception means, or ``None`` if not botocore's."""
    try:
        from botocore import exceptions as bx
    except ImportError:  # pragma: no cover - boto3 is an extra
        return None
    if isinstance(exc, bx.ClientError):
        error = exc.response.get("Error", {}) if isinstance(exc.response, dict) else {}
        code = str(error.get("Code") or "")
        message = str(error.get("Message") or exc)
        meta = exc.response.get("ResponseMetadata", {}) if isinstance(exc.response, dict) else {}
        status = meta.get("HTTPStatusCode") if isinstance(meta, dict) else None
        status = status if isinstance(status, int) else None
        return error_from_code(code, f"bedrock: {code or 'error'}: {message}", status)
    if isinstance(exc, bx.NoCredentialsError | bx.PartialCredentialsError):
        return BackendError(f"bedrock: {exc}", kind="authentication")
    if isinstance(exc, bx.NoRegionError):
        return BackendError(
            "bedrock: no AWS region; set AWS_REGION or use bedrock:MODEL?region=...",
            kind="invalid_request",
        )
    if isinstance(exc, bx.ParamValidationError):
        return BackendError(f"bedrock: {exc}", kind="invalid_request")
    if isinstance(exc, bx.ReadTimeoutError | bx.ConnectTimeoutError):
        return BackendError(f"bedrock: {exc}", kind="timeout")
    if isinstance(exc, bx.EndpointConnectionError | bx.ConnectionClosedError):
        return BackendError(f"bedrock: {exc}", kind="unavailable")
    if isinstance(exc, bx.BotoCoreError):
        return BackendError(f"bedrock: {exc}", kind="api")
    return None


def _bytes_to_base64(value: Any) -> Any:
    """boto3 → wire JSON: raw bytes (images, redacted reasoning) become base64 text."""
    if isinstance(value, list):
        return [_bytes_to_base64(v) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, dict):
        return {k: _bytes_to_base64(v) for k, v in value.items()}
    return value


class BedrockBackend(Backend):
    """Converse via a boto3 ``bedrock-runtime`` client (made lazily unless ``client=``)."""

    name = "bedrock"
    forwards = frozenset({"bedrock"})

    def __init__(
        self,
        model_id: str | None = None,
        *,
        client: Any = None,
        region: str | None = None,
        profile: str | None = None,
        max_retries: int = 2,
        timeout: float = 600.0,
        connect_timeout: float | None = None,
        read_timeout: float | None = None,
    ) -> None:
        self.model = model_id
        self.region = region
        self.profile = profile
        self.max_retries = int(max_retries)
        # botocore has no deadline for a whole call: ``timeout`` is its read timeout unless
        # ``read_timeout`` is given (the names match the HTTP backends' options).
        self.timeout = float(timeout)
        self.read_timeout = float(read_timeout) if read_timeout is not None else self.timeout
        self.connect_timeout = (float(connect_timeout) if connect_timeout is not None
                                else min(10.0, self.read_timeout))
        if min(self.read_timeout, self.connect_timeout) <= 0 or self.max_retries < 0:
            raise ValueError("bedrock: timeouts must be > 0 seconds and max_retries >= 0")
        self._client = client
        #: boto3's session, when this backend made the client (its credentials sign the
        #: async calls, which go over HTTP: ._bedrock_http)
        self._session: Any = None
        self._http: BedrockHTTP | None = None

    @property
    def client(self) -> Any:
        if self._client is None:
            try:
                import boto3
                from botocore.config import Config
            except ImportError as exc:  # pragma: no cover - boto3 is an extra
                raise BackendError(
                    "bedrock: boto3 is not installed (pip install 'tooluse[bedrock]')",
                    kind="invalid_request",
                ) from exc
            session = boto3.Session(profile_name=self.profile) if self.profile else boto3.Session()
            config = Config(
                retries={"max_attempts": self.max_retries + 1, "mode": "standard"},
                read_timeout=self.read_timeout,
                connect_timeout=self.connect_timeout,
            )
            try:
                self._client = session.client(
                    "bedrock-runtime", region_name=self.region, config=config
                )
                self._session = session
            except Exception as exc:
                mapped = error_from_botocore(exc)
                if mapped is None:
                    raise
                raise mapped from None
        return self._client

    def _params(self, request: Request) -> dict[str, Any]:
        model_id = request.model or self.model
        if not model_id:
            raise BackendError(
                "bedrock: no model id given (bedrock:MODEL_ID or model= on the request)",
                kind="invalid_request",
            )
        # binary=True: boto3 takes image bytes as bytes, the JSON wire form as base64.
        data = codec.encode_request(request.model_copy(update={"model": model_id}), binary=True)
        data["modelId"] = model_id
        return data

    def complete(self, request: Request) -> Response:
        params = self._params(request)
        try:
            data = self.client.converse(**params)
        except Exception as exc:
            mapped = error_from_botocore(exc)
            if mapped is None:
                raise
            raise mapped from None
        data = _bytes_to_base64({k: v for k, v in data.items() if k != "ResponseMetadata"})
        try:
            response = codec.decode_response(data)
        except WireFormatError as exc:
            raise BackendError(f"bedrock: malformed Converse answer: {exc}", kind="api") from None
        if response.model is None:
            response.model = params["modelId"]
        return response

    def stream(self, request: Request) -> Iterator[StreamEvent]:
        params = self._params(request)
        try:
            answer = self.client.converse_stream(**params)
            events = answer["stream"]
            try:
                yield from checked(codec.decode_events(_without_metadata(events)),
                                   source="bedrock")
            finally:
                close = getattr(events, "close", None)
                if callable(close):
                    close()
        except WireFormatError as exc:
            raise BackendError(f"bedrock: malformed Converse stream: {exc}", kind="api") from None
        except Exception as exc:
            mapped = error_from_botocore(exc)
            if mapped is None:
                raise
            raise mapped from None


    # -- async: natively, over HTTP, where this backend made the boto3 client ---------------
    def _async_http(self) -> BedrockHTTP | None:
        """The async caller, or None when the client was given (a stub, a wrapped client:
        the calls must go through it, so boto3 runs in a worker thread)."""
        if self._http is None:
            client = self.client
            if self._session is None:
                return None
            self._http = BedrockHTTP(
                self.model, client=client, credentials=self._session.get_credentials(),
                map_error=error_from_code, max_retries=self.max_retries,
                read_timeout=self.read_timeout, connect_timeout=self.connect_timeout)
        return self._http

    async def acomplete(self, request: Request) -> Response:
        http = await anyio.to_thread.run_sync(self._async_http) if self._http is None \
            else self._http
        if http is None:
            return await anyio.to_thread.run_sync(self.complete, request)
        if not (request.model or self.model):
            self._params(request)  # the error boto3's path gives
        response = await http.acomplete(request)
        if response.model is None:
            response.model = request.model or self.model
        return response

    async def astream(self, request: Request) -> AsyncIterator[StreamEvent]:
        http = await anyio.to_thread.run_sync(self._async_http) if self._http is None \
            else self._http
        if http is None:
            async for event in super().astream(request):
                yield event
            return
        if not (request.model or self.model):
            self._params(request)
        async for event in http.astream(request):
            yield event

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None
        self.close()


def _without_metadata(events: Any) -> Iterator[dict[str, Any]]:
    for event in events:
        if isinstance(event, dict):
            yield event


def from_spec(rest: str, **options: Any) -> BedrockBackend:
    """``bedrock:MODEL_ID`` or ``bedrock:MODEL_ID?region=R&profile=P``."""
    model_id, _, query = rest.partition("?")
    for key, value in parse_qsl(query, keep_blank_values=False, strict_parsing=False):
        if key not in ("region", "profile"):
            raise ValueError(f"bedrock spec: unknown option {key!r} (known: region, profile)")
        options.setdefault(key, value)
    return BedrockBackend(model_id or None, **options)
