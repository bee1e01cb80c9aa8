"""Reading a request body under a size cap, and parsing it as a JSON object.

The cap is enforced *while* reading: a declared ``Content-Length`` over the cap is refused
before a byte is read, and a chunked body is refused as soon as the running total passes
the cap, so an oversized upload never sits whole in memory. Every way a body can be
malformed (not UTF-8, not JSON, nesting deep enough to exhaust the parser, not an object,
a string holding an unpaired UTF-16 surrogate escape) becomes a 400 ``invalid_request``
:class:`GatewayError`, never an unhandled exception.

A body that sends more than the cap is *drained* (read and dropped, for at most
:data:`DRAIN_SECONDS` and :data:`DRAIN_BYTES`) before the 413 is answered: a client that
writes its whole body before reading (urllib, most simple clients) would otherwise see the
connection closed under it — a broken pipe — instead of the 413.
"""

from __future__ import annotations

import json
import re
from typing import Any

import anyio
from starlette.requests import ClientDisconnect, Request

from ..._jsonvalue import json_type
from ..errors import GatewayError

__all__ = ["DEFAULT_MAX_BODY_BYTES", "parse_json_object", "read_body"]

#: 32 MiB: room for a few base64 images in a conversation, small enough to refuse abuse.
DEFAULT_MAX_BODY_BYTES = 32 * 1024 * 1024
#: Deepest nesting of arrays/objects accepted. Everything downstream (pydantic, the
#: JSON Schema meta-validator, grammar builders, ``json.dumps``) recurses over these
#: values, and a tool schema a few hundred levels deep exhausts Python's stack in
#: jsonschema; refusing it here, with the path, keeps that a 400 rather than a 500.
MAX_JSON_DEPTH = 100
#: How long, and how many bytes, an oversize body is read and dropped before the 413, so
#: the client can read it (after that the connection is closed under the client anyway).
DRAIN_SECONDS = 5.0
DRAIN_BYTES = 256 * 1024 * 1024
#: A ``\\uD800``-``\\uDFFF`` escape: the only way a surrogate can get into a parsed string
#: (UTF-8 cannot encode one, so the decode step refuses raw ones). ``json`` keeps an
#: unpaired one as a lone surrogate, which nothing downstream can encode.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _too_large(limit: int, size: int | None = None) -> GatewayError:
    got = f"{size} bytes" if size is not None else "more bytes"
    return GatewayError(
        f"request body too large: {got} exceed the limit of {limit} bytes",
        "request_too_large",
    )


async def read_body(request: Request, max_bytes: int) -> bytes:
    """The request body, refusing anything over ``max_bytes`` as early as possible.

    Past the cap nothing more is kept, but the rest is read and dropped (bounded by
    :data:`DRAIN_SECONDS` and :data:`DRAIN_BYTES`) so the client is still reading when
    the 413 comes.
    """
    too_large: GatewayError | None = None
    declared = request.headers.get("content-length")
    if declared is not None:
        try:
            size = int(declared)
        except ValueError:
            raise GatewayError("invalid Content-Length header", "invalid_request") from None
        if size > max_bytes:
            too_large = _too_large(max_bytes, size)
    chunks: list[bytes] = []
    total = 0
    with anyio.CancelScope() as drain:
        if too_large is not None:
            drain.deadline = anyio.current_time() + DRAIN_SECONDS
        try:
            async for chunk in request.stream():
                total += len(chunk)
                if too_large is None:
                    if total <= max_bytes:
                        chunks.append(chunk)
                        continue
                    too_large = _too_large(max_bytes)
                    chunks.clear()
                    drain.deadline = anyio.current_time() + DRAIN_SECONDS
                if total > max_bytes + DRAIN_BYTES:
                    break
        except ClientDisconnect:
            if too_large is None:
                raise GatewayError(
                    "client disconnected while sending the body", "invalid_request"
                ) from None
    if too_large is not None:
        raise too_large
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
    _check_depth(value, surrogates=_SURROGATE_ESCAPE.search(text) is not None)
    return value


def _check_depth(value: Any, limit: int = MAX_JSON_DEPTH, *, surrogates: bool = False) -> None:
    """Refuse nesting deeper than ``limit``, naming where (iterative: no recursion); with
    ``surrogates``, also refuse any key or string holding an unpaired surrogate."""
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
            for k, v in item.items():
                if surrogates and _SURROGATE.search(k):
                    raise _lone_surrogate(k, path, "key")
                if isinstance(v, (dict, list)):
                    stack.append((v, (*path, k)))
                elif surrogates and isinstance(v, str) and _SURROGATE.search(v):
                    raise _lone_surrogate(v, (*path, k), "string")
        elif isinstance(item, list):
            for i, v in enumerate(item):
                if isinstance(v, (dict, list)):
                    stack.append((v, (*path, i)))
                elif surrogates and isinstance(v, str) and _SURROGATE.search(v):
                    raise _lone_surrogate(v, (*path, i), "string")
        elif surrogates and isinstance(item, str) and _SURROGATE.search(item):
            raise _lone_surrogate(item, path, "string")


def _lone_surrogate(text: str, path: tuple[str | int, ...], what: str) -> GatewayError:
    """The 400 for a string holding an unpaired surrogate. The message quotes the string
    with the surrogate written as its escape (and the path is cleaned the same way), so the
    error itself can be encoded as UTF-8."""
    match = _SURROGATE.search(text)
    assert match is not None
    safe = tuple(_escaped(p) if isinstance(p, str) else p for p in path)
    where = ".".join(str(p) for p in safe) or "the body"
    quoted = _escaped(text if len(text) <= 40 else text[:40] + "...")
    return GatewayError(
        f"{where}: the {what} '{quoted}' holds an unpaired "
        f"UTF-16 surrogate (\\u{ord(match.group()):04x} at character {match.start()}); "
        "a surrogate escape must be a high one followed by a low one",
        "invalid_request",
        path=safe,
    )


def _escaped(text: str) -> str:
    """``text`` with every surrogate written as its ``\\uXXXX`` escape."""
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def _json_type(value: Any) -> str:
    """The JSON type of a parsed value as the error says it: ``null``, ``a number``, ``an
    array``..."""
    name = json_type(value)
    if name == "integer":
        name = "number"
    return name if name == "null" else f"{'an' if name[0] in 'aeiou' else 'a'} {name}"
