"""``tooluse convert``: translate a request, response or event stream between tool-use
formats.

Reads JSON from stdin (or ``--input``), writes the converted JSON to stdout. ``--to legacy``
writes text instead: the rendered prompt for a request, the completion text for a response.
Bad input exits with status 1 and one line on stderr saying what is wrong and where (the
codecs' field path), never a traceback: this is a tool for inspecting documents that may be
malformed.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any, TextIO, cast

from ..codecs import JSON_CODECS, Codec, get_codec
from ..errors import ToolUseError

if TYPE_CHECKING:
    from ..messages import Request

__all__ = ["convert_document", "register"]


def register(sub: Any) -> None:
    p = sub.add_parser(
        "convert",
        help="convert a request/response between Anthropic, Bedrock, OpenAI and legacy XML",
        description="Convert a tool-use request (default), response (--response) or event "
        "stream (--stream, one JSON event per line) from one format to another. Reads JSON "
        "on stdin; writes JSON (text for --to legacy) on stdout.",
    )
    p.add_argument("--from", dest="source", required=True, choices=JSON_CODECS)
    p.add_argument("--to", dest="target", required=True, choices=(*JSON_CODECS, "legacy"))
    kind = p.add_mutually_exclusive_group()
    kind.add_argument("--response", action="store_true", help="the input is a response")
    kind.add_argument("--stream", action="store_true",
                      help="the input is stream events, one JSON object per line (or a JSON array)")
    p.add_argument("--model-id", help="the model: a Converse body names none (it is in the URL); "
                   "for other inputs it replaces the body's model")
    p.add_argument("--lenient", action="store_true",
                   help="use the documented fallbacks where the target cannot carry something "
                   "(default: fail with the reason)")
    p.add_argument("--input", "-i", help="read from this file instead of stdin")
    p.set_defaults(func=_run)


def _load(text: str, stream: bool) -> Any:
    if not stream:
        return json.loads(text)
    stripped = text.strip()
    if stripped.startswith("["):
        return json.loads(stripped)
    events = []
    for line in stripped.splitlines():
        line = line.strip()
        if line.startswith("data:"):  # tolerate pasted SSE
            line = line[5:].strip()
        if not line or line.startswith("event:") or line == "[DONE]":
            continue
        events.append(json.loads(line))
    return events


def convert_document(
    data: Any,
    source: str,
    target: str,
    *,
    response: bool = False,
    stream: bool = False,
    model_id: str | None = None,
    strict: bool = True,
) -> Any:
    """Convert one decoded JSON document; returns JSON-ready data (or text for legacy)."""
    from ..codecs import bedrock

    src = _json_codec(source)
    if stream:
        if target == "legacy":
            raise ValueError("--stream cannot be converted to legacy (it has no event stream)")
        return list(_json_codec(target).encode_events(src.decode_events(data)))
    if response:
        resp = src.decode_response(data)
        if target == "legacy":
            return get_codec("legacy").encode_response(resp)  # the completion text
        return _json_codec(target).encode_response(resp)
    req: Request = (
        bedrock.decode_request(data, model_id=model_id) if source == "bedrock"
        else src.decode_request(data)
    )
    if model_id is not None and source != "bedrock":
        req = req.model_copy(update={"model": model_id})
    if target == "legacy":
        return get_codec("legacy").encode_request(req, strict=strict).render()
    return _json_codec(target).encode_request(req, strict=strict)


def _json_codec(name: str) -> Codec:
    if name not in JSON_CODECS:
        raise ValueError(f"unknown JSON format {name!r}; expected one of {', '.join(JSON_CODECS)}")
    return cast(Codec, get_codec(name))


def _run(args: argparse.Namespace, stdin: TextIO | None = None, stdout: TextIO | None = None) -> int:
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    try:
        if args.input:
            with open(args.input, encoding="utf-8") as handle:
                text = handle.read()
        else:
            text = stdin.read()
        data = _load(text, args.stream)
        out = convert_document(
            data, args.source, args.target, response=args.response, stream=args.stream,
            model_id=args.model_id, strict=not args.lenient,
        )
    except json.JSONDecodeError as exc:
        return _fail(f"input is not valid JSON: {exc}")
    except (ToolUseError, ValueError, OSError) as exc:
        return _fail(str(exc))
    if isinstance(out, str):
        stdout.write(out if out.endswith("\n") else out + "\n")
    elif args.stream:
        for event in out:
            stdout.write(json.dumps(event, ensure_ascii=False) + "\n")
    else:
        stdout.write(json.dumps(out, ensure_ascii=False, indent=2) + "\n")
    return 0


def _fail(reason: str) -> int:
    print(f"tooluse convert: {reason.splitlines()[0] if reason else 'failed'}", file=sys.stderr)
    return 1
