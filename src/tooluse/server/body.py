"""Reading a request body under a size cap, and parsing it as a JSON object.

The cap is enforced *while* reading: a declared ``Content-Length`` over the cap is refused
before a byte is read, and a chunked body is refused as soon as the running total passes
the cap, so an oversized upload never sits whole in memory. Every way a body can be
malformed (not UTF-8, not JSON, nesting deep enough to exhaust the parser, not an object)
becomes a 400 ``invalid_request`` :class:`GatewayError`, never an unhandled exception.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import ClientDisconnect, Request

from .errors import GatewayError

__all__ = ["DEFAULT_MAX_BODY_BYTES", "parse_json_object", "read_body"]

#: 32 MiB: room for a few base64 images in a conversation, small enough to refuse abuse.
DEFAULT_MAX_BODY_BYTES = 32 * 1024 * 1024
#: Deepest nesting of arrays/objects accepted. Everything downstream (pydantic, the
#: JSON Schema meta-validator, grammar builders, ``json.dumps``) recurses over these
#: values, and a tool schema a few hundred levels deep exhausts Python's stack in
#: jsonschema; refusing it here, with the path, keeps that a 400 rather than a 500.
MAX_JSON_DEPTH = 100


def _too_large(limit: int, size: int | None = None) -> GatewayError:
    got = f"{size} bytes" if size is not None else "more bytes"
    return GatewayError(
        f"request body too large: {got} exceed the limit of {limit} bytes",
        "request_too_large",
    )


async def read_body(request: Request, max_bytes: int) -> bytes:
    """The request body, refusing anything over ``max_bytes`` as early as possible."""
    declared = request.headers.get("content-length")
    if declared is not None:
        try:
            size = int(declared)
        except ValueError:
            raise GatewayError("invalid Content-Length header", "invalid_request") from None
        if size > max_bytes:
            raise _too_large(max_bytes, size)
    chunks: list[bytes] = []
    total = 0
    try:
        async for chunk in request.stream():
            total += len(chunk)
            if total > max_bytes:
                raise _too_large(max_bytes)
            chunks.append(chunk)
    except ClientDisconnect:
        raise GatewayError("client disconnected while sending the body", "invalid_request") from None
    return b"".join(chunks)


def parse_json_object(body: bytes) -> dict[str, Any]:
    """Parse ``body`` as one JSON object; say precisely what is wrong otherwise."""
    if not body.strip():
        raise GatewayError("request body is empty; expected a JSON object", "invalid_request")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise GatewayError(
            f"request body is not UTF-8 (byte {exc.start})", "invalid_request"
        ) from None
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise GatewayError(
            f"request body is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}",
            "invalid_request",
        ) from None
    except ValueError as exc:  # NaN / Infinity
        raise GatewayError(f"request body is not valid JSON: {exc}", "invalid_request") from None
    except RecursionError:
        raise GatewayError("request body is nested too deeply", "invalid_request") from None
    if not isinstance(value, dict):
        raise GatewayError(
            f"request body must be a JSON object, not {_json_type(value)}", "invalid_request"
        )
    _check_depth(value)
    return value


def _check_depth(value: Any, limit: int = MAX_JSON_DEPTH) -> None:
    """Refuse nesting deeper than ``limit``, naming where (iterative: no recursion)."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(value, ())]
    while stack:
        item, path = stack.pop()
        if len(path) >= limit:
            where = ".".join(str(p) for p in path[:6])
            raise GatewayError(
                f"request body is nested deeper than {limit} levels (at {where}...)",
                "invalid_request",
                path=path[:6],
            )
        if isinstance(item, dict):
            stack.extend((v, (*path, k)) for k, v in item.items() if isinstance(v, (dict, list)))
        elif isinstance(item, list):
            stack.extend((v, (*path, i)) for i, v in enumerate(item) if isinstance(v, (dict, list)))


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return type(value).__name__
