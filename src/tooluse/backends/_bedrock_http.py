"""Bedrock's Converse API called natively async: the HTTP backends' plumbing, SigV4-signed.

boto3 has no async client, so the async calls of :class:`~.bedrock.BedrockBackend` used to
run boto3 in a worker thread, and a gateway stream in front of Bedrock paid for the thread
and for botocore's generic request machinery (the figures: docs/benchmarks/code.md). The
Converse API is a JSON API
over HTTP, which :mod:`tooluse.codecs.bedrock` already speaks in its JSON form, so the async
calls go through the plumbing every HTTP backend shares (:mod:`._upstream`: aiohttp, the
retries, the timeouts), with what only Bedrock has:

- the endpoint, the region, the credentials and the signing name are those of the boto3
  client :class:`~.bedrock.BedrockBackend` built (so ``AWS_ENDPOINT_URL_BEDROCK_RUNTIME``,
  profiles, instance roles and refreshed credentials work as there), and each request is
  signed with botocore's own SigV4 signer (``Authorization: Bearer`` instead when
  ``AWS_BEARER_TOKEN_BEDROCK`` is set, as boto3 does);
- errors are read from ``x-amzn-ErrorType`` and ``{"message"}`` and mapped as botocore's are
  (:func:`~.bedrock.error_from_code`);
- ``ConverseStream`` answers in AWS event-stream frames, read with botocore's own parser:
  ``event`` frames become the payloads the codec decodes, ``exception`` and ``error``
  frames a :class:`~tooluse.errors.BackendError`, a broken frame an ``api`` error.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from typing import Any
from urllib.parse import quote

import httpx2

from ..codecs import bedrock as codec
from ..errors import BackendError
from ..messages import Request, Response
from ..stream import StreamEvent
from ._http import HTTPBackend
from ._upstream import Upstream

__all__ = ["BedrockHTTP"]

ErrorMapper = Callable[[str, str, "int | None"], BackendError]


class _BedrockUpstream(Upstream):
    """The plumbing, reading an error's code from ``x-amzn-ErrorType`` (not the body)."""

    map_error: ErrorMapper

    def failure(self, response: httpx2.Response) -> BackendError:
        try:
            body = json.loads(response.content) if response.content else {}
        except ValueError:
            body = {}
        body = body if isinstance(body, dict) else {}
        code = (response.headers.get("x-amzn-errortype") or str(body.get("__type") or "")
                or str(body.get("code") or "")).split(":")[0].rpartition("#")[2]
        message = str(body.get("message") or body.get("Message")
                      or response.text[:500] or f"HTTP {response.status_code}")
        error = self.map_error(code, f"bedrock: {code or 'error'}: {message}",
                               response.status_code)
        if error.retry_after is None:
            from ._retry import parse_retry_after

            error.retry_after = parse_retry_after(response.headers)
        return error


class BedrockHTTP(HTTPBackend):
    """The async half of :class:`~.bedrock.BedrockBackend` (built by it, not by users)."""

    name = "bedrock"

    def __init__(self, model: str | None, *, client: Any, credentials: Any,
                 map_error: ErrorMapper, max_retries: int, read_timeout: float,
                 connect_timeout: float) -> None:
        from ._retry import RetryPolicy

        # botocore has no deadline for a whole call, only its read timeout per attempt
        options: dict[str, Any] = {
            "retry": RetryPolicy(max_retries=max_retries), "read_timeout": read_timeout,
            "timeout": read_timeout * (max_retries + 1), "connect_timeout": connect_timeout}
        super().__init__(model, base_url=client.meta.endpoint_url, **options)
        self.upstream = _BedrockUpstream(self.name, self._error, **options)
        self.upstream.map_error = map_error
        self._map_error = map_error
        self._region = client.meta.region_name
        self._signing_name = client.meta.service_model.signing_name
        self._credentials = credentials

    # -- HTTP hooks -------------------------------------------------------------------------
    def _path(self, request: Request, *, stream: bool) -> str:
        model = request.model or self.model or ""
        return f"/model/{quote(model, safe='~')}/converse" + ("-stream" if stream else "")

    def _encode(self, request: Request, *, stream: bool) -> dict[str, Any]:
        return codec.encode_request(request)

    def _sign(self, url: str, body: bytes, headers: dict[str, str]) -> dict[str, str]:
        token = os.environ.get("AWS_BEARER_TOKEN_BEDROCK")
        if token:
            return {**headers, "authorization": f"Bearer {token}"}
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest

        if self._credentials is None:
            raise BackendError("bedrock: Unable to locate credentials", kind="authentication")
        signed = AWSRequest(method="POST", url=url, data=body, headers=dict(headers))
        SigV4Auth(self._credentials.get_frozen_credentials(), self._signing_name,
                  self._region).add_auth(signed)
        return dict(signed.headers.items())

    def _decode(self, data: Any) -> Response:
        return codec.decode_response(data)

    def _decode_events(self, payloads: Iterable[Any]) -> Iterator[StreamEvent]:
        return codec.decode_events(payloads)

    def _error(self, body: Any, status: int | None) -> BackendError:
        message = body.get("message") if isinstance(body, dict) else None
        return self._map_error("error", f"bedrock: {message or body}", status)

    def _wrap_decode_error(self, exc: Exception) -> BackendError:
        return BackendError(f"bedrock: malformed Converse answer: {exc}", kind="api")

    # -- the event stream -------------------------------------------------------------------
    async def _apayload_batches(self, response: httpx2.Response) -> AsyncIterator[list[Any]]:
        from botocore.eventstream import ParserError

        from ._eventstream_frames import FrameBuffer

        url = str(response.request.url)
        frames = FrameBuffer()
        try:
            async for chunk in response.aiter_bytes():
                frames.add_data(chunk)
                batch: list[Any] = []
                try:
                    for headers, payload in frames:
                        batch.append(self._payload_of(headers, payload))
                except (BackendError, ParserError):
                    if batch:
                        yield batch
                    raise
                if batch:
                    yield batch
        except ParserError as exc:
            raise BackendError(f"bedrock: malformed Converse stream: {exc}", kind="api") from None
        except httpx2.TransportError as exc:
            raise self.upstream.transport_error(exc, url) from None

    def _payload_of(self, headers: dict[str, Any], payload: bytes) -> dict[str, Any]:
        kind = headers.get(":message-type")
        if kind == "event":
            try:
                return {str(headers.get(":event-type")): json.loads(payload)}
            except ValueError:
                raise BackendError(f"bedrock: malformed Converse stream event: "
                                   f"{payload[:200]!r}", kind="api") from None
        if kind == "exception":
            code = str(headers.get(":exception-type") or "error")
            try:
                message = str(json.loads(payload).get("message") or payload[:500])
            except (ValueError, AttributeError):
                message = payload[:500].decode("utf-8", "replace")
            raise self._map_error(code, f"bedrock: {code}: {message}", None)
        code = str(headers.get(":error-code") or "error")
        raise self._map_error(code, f"bedrock: {code}: {headers.get(':error-message')}", None)
