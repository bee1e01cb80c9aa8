"""``tooluse serve``: run the gateway (Messages, Converse, Chat Completions) under uvicorn."""

from __future__ import annotations

import argparse
import os
import ssl
import sys
from typing import Any

__all__ = ["register"]


def register(sub: Any) -> None:
    p = sub.add_parser(
        "serve",
        help="serve the Messages, Converse and Chat Completions APIs with tool use",
        description="Serve POST /v1/messages (Anthropic), POST /model/{id}/converse[-stream] "
        "(Bedrock) and POST /v1/chat/completions (OpenAI) over one backend. "
        "Every API works with every backend.",
    )
    p.add_argument(
        "--backend",
        default="local",
        metavar="SPEC",
        help="backend spec: local, local:/path/model.gguf, scripted[:TEXT], "
        "anthropic:MODEL, bedrock:MODEL_ID, openai:URL#MODEL (native tools), "
        "openai-prompt:URL#MODEL (prompt-based tools for models without) (default: local)",
    )
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8080)
    p.add_argument(
        "--api-key",
        action="append",
        dest="api_keys",
        metavar="KEY",
        help="accept this key (repeatable); without any, no key is required. "
        "Also read from TOOLUSE_API_KEYS (comma-separated).",
    )
    p.add_argument(
        "--aws-credentials",
        action="append",
        metavar="ACCESS_KEY_ID:SECRET",
        help="verify Converse SigV4 signatures against these credentials (repeatable)",
    )
    p.add_argument("--max-body-bytes", type=int, default=None, help="request body cap (413 above)")
    p.add_argument(
        "--max-concurrency",
        type=int,
        default=None,
        help="requests run on the backend at once; others queue",
    )
    p.add_argument(
        "--ssl-certfile",
        metavar="PEM",
        help="serve HTTPS with this certificate (PEM; may also hold the key). Needed for "
        "Bedrock API keys: botocore sends a bearer token only over TLS. See docs/server.md",
    )
    p.add_argument(
        "--ssl-keyfile",
        metavar="PEM",
        help="the certificate's private key (PEM), if --ssl-certfile does not hold it",
    )
    p.add_argument("--log-level", default="info")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    try:
        import uvicorn

        from ..server import DEFAULT_MAX_BODY_BYTES, create_app
    except ImportError as exc:  # pragma: no cover - depends on the installed extras
        print(f"tooluse serve needs the 'server' extra: pip install 'tooluse[server]' ({exc})",
              file=sys.stderr)
        return 2
    keys = list(args.api_keys or [])
    keys += [k.strip() for k in os.environ.get("TOOLUSE_API_KEYS", "").split(",") if k.strip()]
    credentials: dict[str, str] = {}
    for item in args.aws_credentials or []:
        key_id, sep, secret = item.partition(":")
        if not sep or not key_id or not secret:
            print(f"--aws-credentials expects ACCESS_KEY_ID:SECRET, got {item!r}", file=sys.stderr)
            return 2
        credentials[key_id] = secret
    for name in ("max_body_bytes", "max_concurrency"):
        value = getattr(args, name)
        if value is not None and value < 1:
            print(f"--{name.replace('_', '-')} must be a positive integer, not {value}", file=sys.stderr)
            return 2
    if args.ssl_keyfile and not args.ssl_certfile:
        print("--ssl-keyfile needs --ssl-certfile", file=sys.stderr)
        return 2
    for name in ("ssl_certfile", "ssl_keyfile"):
        path = getattr(args, name)
        if path and not os.path.isfile(path):
            print(f"--{name.replace('_', '-')}: no such file: {path}", file=sys.stderr)
            return 2
    try:
        app = create_app(
            args.backend,
            api_keys=keys,
            aws_credentials=credentials,
            max_body_bytes=args.max_body_bytes or DEFAULT_MAX_BODY_BYTES,
            max_concurrency=args.max_concurrency,
        )
    except (ValueError, ImportError, OSError) as exc:
        print(f"tooluse serve: cannot start with backend {args.backend!r}: {exc}", file=sys.stderr)
        return 2
    scheme = "https" if args.ssl_certfile else "http"
    print(f"tooluse gateway on {scheme}://{args.host}:{args.port} (backend: {args.backend})",
          file=sys.stderr, flush=True)
    try:
        uvicorn.run(
            app,
            host=args.host,
            port=args.port,
            log_level=args.log_level,
            ssl_certfile=args.ssl_certfile,
            ssl_keyfile=args.ssl_keyfile,
        )
    except ssl.SSLError as exc:
        print(f"tooluse serve: cannot use the certificate: {exc}", file=sys.stderr)
        return 2
    return 0
