"""``tooluse serve``: run the gateway (Messages, Converse, Chat Completions, Responses) under
uvicorn, in one process or, with ``--workers N``, in N (:mod:`tooluse.server.workers`),
over one backend (``--backend``) or the routes of a config file (``--config``,
docs/routing.md; ``--check`` prints its route table, SIGHUP reloads it)."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Literal

from ..backends.options import (
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_READ_TIMEOUT,
    DEFAULT_TIMEOUT,
    RetryPolicy,
    UpstreamOptions,
)
from ..errors import BackendError
from ._backend import parse_pairs, start_local_load

__all__ = ["register"]


def register(sub: Any) -> None:
    p = sub.add_parser(
        "serve",
        help="serve the Messages, Converse, Chat Completions and Responses APIs with tool use",
        description="Serve POST /v1/messages (Anthropic), POST /model/{id}/converse[-stream] "
        "(Bedrock), POST /v1/chat/completions and POST /v1/responses (OpenAI) over one "
        "backend, or over a config's routes (--config). Every API works with every backend.",
    )
    _add_backend_flags(p)
    _add_http_flags(p)
    _add_upstream_flags(p)
    _add_server_tool_flags(p)
    _add_kept_flags(p)
    p.add_argument("--log-level", default="info")
    p.set_defaults(func=_run)


def _add_backend_flags(p: argparse.ArgumentParser) -> None:
    """What serves: a config's routes, or one backend with its options and preset."""
    p.add_argument(
        "--config", metavar="FILE", default=None,
        help="route model names to backends as this TOML file says: [[models]] with a name "
        "or glob, a backend spec or a list of deployments (balanced), fallbacks, options, "
        "preset, context_window, timeouts; [[keys]] with allowed models and rpm/tpm "
        "limits, their usage kept per key and model (docs/routing.md). Instead of --backend, "
        "-o, --preset, --slots and the --upstream-* flags. SIGHUP reloads it without "
        "dropping requests in flight")
    p.add_argument(
        "--check", action="store_true",
        help="with --config: build every route as serving would, print the route table and "
        "exit (2 with the one-line error for a broken config)")
    p.add_argument(
        "--backend",
        default=None,
        metavar="SPEC",
        help="backend spec: local, local:/path/model.gguf, scripted[:TEXT], "
        "scripted:call:NAME {JSON}, scripted:[STEPS] (a tool loop offline; docs/server.md), "
        "anthropic:MODEL, bedrock:MODEL_ID, openai:URL#MODEL (native tools), "
        "openai-prompt:URL#MODEL (prompt-based tools for models without), "
        "openai-responses:URL#MODEL (a Responses API upstream) (default: local)",
    )
    p.add_argument(
        "--option", "-o", action="append", default=[], metavar="KEY=VALUE",
        help="backend option, repeatable, as for tooluse run and eval (local: n_threads=2, "
        "copy_values=0, model=PATH, a preset's rule such as fan_out=0...)")
    p.add_argument(
        "--preset", metavar="NAME", default=None,
        help="an opt-in set of question-reading rules for a prompt-based backend, e.g. "
        "en-bfcl (English, fitted on BFCL: it edits and adds calls, each recorded in the "
        "x-tooluse-call-origins header and the log; see docs/local.md). Default: none, "
        "the calls are the model's")


def _add_http_flags(p: argparse.ArgumentParser) -> None:
    """Where and how it listens: address, keys, credentials, caps, slots, workers, TLS."""
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8080)
    p.add_argument(
        "--api-key",
        action="append",
        dest="api_keys",
        metavar="KEY",
        help="accept this key (repeatable); without any (and no [[keys]] in a --config), no "
        "key is required. Beside a config's keys, it may use every model, without limits. "
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
        "--slots", type=int, default=None, metavar="N",
        help="local backend: requests decoded at once, each in its own sequence of the "
        "model's context with its own prompt cache, in one batch per step (1: one at a "
        "time; default: two per core, at most 8, fewer if memory is short; /health shows "
        "their use). Same as -o slots=N")
    p.add_argument(
        "--workers", type=int, default=1, metavar="N",
        help="remote backends: serve from N processes (uvicorn workers) on one port, each with "
        "its own backend connection; what outlives a request is in the shared "
        "--responses-store (and --trace) file or URL. Not for the local backend, which would "
        "load the model N times: use --slots there (default: 1)")
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


def _add_upstream_flags(p: argparse.ArgumentParser) -> None:
    upstream = p.add_argument_group(
        "upstream", "bounds on calls to an HTTP backend (anthropic:, openai:, openai-prompt:). "
        "A silent upstream is answered with each API's native timeout error within "
        "--upstream-timeout seconds. bedrock: takes them too, but botocore has no deadline for "
        "a whole call: there --upstream-timeout is its read timeout. See docs/server.md")
    upstream.add_argument(
        "--upstream-timeout", type=float, default=None, metavar="SECONDS",
        help="deadline of a backend call until its answer starts, retries and their waits "
        f"included (default {DEFAULT_TIMEOUT:g})")
    upstream.add_argument(
        "--upstream-connect-timeout", type=float, default=None, metavar="SECONDS",
        help=f"seconds to open a connection to the upstream (default {DEFAULT_CONNECT_TIMEOUT:g})")
    upstream.add_argument(
        "--upstream-read-timeout", type=float, default=None, metavar="SECONDS",
        help=f"longest silence allowed while a stream is awaited or read "
        f"(default {DEFAULT_READ_TIMEOUT:g})")
    upstream.add_argument(
        "--upstream-retries", type=int, default=None, metavar="N",
        help="retries of a failed call (429, 5xx, timeouts, connection errors) before its "
        f"answer starts, with backoff honouring retry-after (default {RetryPolicy.max_retries})")


def _add_server_tool_flags(p: argparse.ArgumentParser) -> None:
    hosted = p.add_argument_group(
        "server tools", "the tools the gateway runs for the model when the backend cannot: a "
        "tool search over deferred tools (Messages tool_search_tool_*, Responses tool_search) "
        "and MCP servers named by the client (Messages mcp_servers, the Responses mcp tool). "
        "See docs/server.md")
    hosted.add_argument(
        "--allow-mcp-host", action="append", default=[], metavar="HOST",
        help="an MCP host name, address or network (10.0.0.0/8) clients may name although it "
        "is not public (repeatable); without it only public addresses over http(s) are reached")
    hosted.add_argument(
        "--server-tool-turns", type=int, default=None, metavar="N",
        help="model turns one request may take while the gateway runs its searches and MCP "
        "calls; then the answer stops with pause_turn (default 8)")
    hosted.add_argument(
        "--server-tool-timeout", type=float, default=None, metavar="SECONDS",
        help="seconds one request may take while the gateway runs its searches and MCP calls "
        "(default 300)")


def _add_kept_flags(p: argparse.ArgumentParser) -> None:
    """What outlives a request: stored responses and traces."""
    p.add_argument(
        "--responses-store",
        metavar="PATH|URL",
        default=None,
        help="where /v1/responses keeps responses (store: true) for previous_response_id "
        "and GET: a SQLite file, ':memory:' (gone on exit), or a postgresql:// URL that "
        "replicas share (the [postgres] extra) (default: ~/.cache/tooluse/responses.sqlite3)",
    )
    p.add_argument(
        "--trace", nargs="?", const="", default=None, metavar="PATH",
        help="keep a trace of every model request (the request, the prompt and raw output of "
        "a text model, the calls with their origin and validation, the response) in a "
        "bounded SQLite file (default: $TOOLUSE_TRACE_DB or ~/.cache/tooluse/traces.db) and "
        "serve the trace page at /trace; tooluse logs reads them. Off by default")


_UpstreamKey = Literal["timeout", "connect_timeout", "read_timeout", "max_retries"]

#: ``tooluse serve`` flag -> the backend option it sets (tooluse.backends.options).
_UPSTREAM_OPTIONS: dict[str, _UpstreamKey] = {
    "upstream_timeout": "timeout",
    "upstream_connect_timeout": "connect_timeout",
    "upstream_read_timeout": "read_timeout",
    "upstream_retries": "max_retries",
}


def _upstream_flags(args: argparse.Namespace) -> bool:
    return any(getattr(args, flag, None) is not None for flag in _UPSTREAM_OPTIONS)


def _upstream_options(args: argparse.Namespace) -> UpstreamOptions:
    """The backend options the --upstream-* flags set; ValueError for a bad value."""
    options: UpstreamOptions = {}
    for flag, option in _UPSTREAM_OPTIONS.items():
        value = getattr(args, flag, None)
        if value is None:
            continue
        if option == "max_retries" and value < 0 or option != "max_retries" and not value > 0:
            raise ValueError(f"--{flag.replace('_', '-')} must be "
                             f"{'>= 0' if option == 'max_retries' else '> 0'}, not {value}")
        options[option] = value
    return options


def _responses_store(args: argparse.Namespace) -> str:
    """Where /v1/responses keeps responses (``--responses-store``, else the default path)."""
    path = getattr(args, "responses_store", None)
    if path:
        return str(path)
    from ..server.stores.responses import default_store_path

    return str(default_store_path())


def _trace_path(args: argparse.Namespace) -> str | None:
    """Where ``--trace`` keeps traces (None: not tracing)."""
    if args.trace is None:
        return None
    if args.trace:
        return str(args.trace)
    from ..trace.store import default_path

    return str(default_path())


def _set_slots(args: argparse.Namespace, options: dict[str, Any]) -> None:
    """``--slots`` into the local backend's options, or serve's default there (from the
    cores and memory: :func:`~tooluse.llama.model.default_slots`) when neither
    it nor ``-o slots`` is given; ValueError for a bad value or another backend."""
    local = args.backend.partition(":")[0] == "local"
    if args.slots is not None:
        if args.slots < 1:
            raise ValueError(f"--slots must be a positive integer, not {args.slots}")
        if not local:
            raise ValueError("--slots is for the local backend (a remote backend serves "
                             "concurrent requests itself)")
        options["slots"] = args.slots
    elif local and "slots" not in options:
        from ..llama.model import default_model_path, default_slots

        given = options.get("model_path") or options.get("model") \
            or args.backend.partition(":")[2] or None
        try:
            size = os.path.getsize(given or default_model_path())
        except (OSError, BackendError):
            size = 0  # the backend reports a missing model itself
        options["slots"] = default_slots(model_bytes=size)


def _check_workers(args: argparse.Namespace, schemes: list[str]) -> None:
    """ValueError when ``--workers`` cannot serve as asked (``schemes``: the backends')."""
    if args.workers < 1:
        raise ValueError(f"--workers must be a positive integer, not {args.workers}")
    if args.workers == 1:
        return
    if "local" in schemes:
        raise ValueError("--workers is for remote backends: each worker would load the local "
                         "model again and they would share the cores; use --slots N to serve "
                         "N requests at once from one model")
    if args.responses_store == ":memory:":
        raise ValueError("--responses-store :memory: is one process's: with --workers give a "
                         "file or a postgresql:// URL the workers share")


#: Flags a config replaces (its entries set them per model), by their dest.
_NOT_WITH_CONFIG = {"backend": "--backend", "option": "-o/--option", "preset": "--preset",
                    "slots": "--slots", **{k: "--" + k.replace("_", "-") for k in _UPSTREAM_OPTIONS}}


def _config_conflict(args: argparse.Namespace) -> str | None:
    """The flag given beside ``--config`` that the config replaces, if any."""
    for dest, flag in _NOT_WITH_CONFIG.items():
        value = getattr(args, dest, None)
        if value not in (None, []):
            return flag
    return None


def _load_config_text(path: str) -> tuple[str, Any]:
    """The config file's text and its checked form (:class:`ConfigError` if broken)."""
    from ..server.route_config import ConfigError, parse_config

    try:
        text = open(path, encoding="utf-8").read()  # noqa: SIM115 - read at once
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the config: {exc}") from None
    return text, parse_config(text, path)


def _check_config(path: str) -> int:
    """``--config FILE --check``: every route built (then closed), the table printed."""
    from ..server.route_config import ConfigError
    from ..server.routes import RouteTable

    try:
        _, config = _load_config_text(path)
        table = RouteTable.build(config)
    except ConfigError as exc:
        print(f"tooluse serve: {exc}", file=sys.stderr)
        return 2
    try:
        print(table.describe())
    finally:
        table.close()
    return 0


class _Refused(Exception):
    """A flag the gateway cannot start with: its one-line message, and exit status 2."""


def _run(args: argparse.Namespace) -> int:
    try:
        if args.check and not args.config:
            raise _Refused("tooluse serve: --check checks a config: give --config FILE")
        if args.config:
            conflict = _config_conflict(args)
            if conflict is not None:
                raise _Refused(f"tooluse serve: {conflict} is set per model in the config file "
                               "(docs/routing.md), not beside --config")
            if args.check:
                return _check_config(args.config)
        elif args.backend is None:
            args.backend = "local"
        keys = list(args.api_keys or [])
        keys += [k.strip() for k in os.environ.get("TOOLUSE_API_KEYS", "").split(",") if k.strip()]
        credentials = _aws_credentials(args)
        _check_flags(args)
        backend_options, config_text = _backend_options(args)
        if not _upstream_flags(args) and not args.config:
            # loads while the gateway is imported and built
            start_local_load(args.backend, backend_options)
        return _serve(args, keys, credentials, backend_options, config_text)
    except _Refused as exc:
        print(exc, file=sys.stderr)
        return 2


def _check_flags(args: argparse.Namespace) -> None:
    """The numbers and files the flags name, checked before anything loads."""
    for name in ("max_body_bytes", "max_concurrency", "server_tool_turns"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise _Refused(f"--{name.replace('_', '-')} must be a positive integer, not {value}")
    if args.server_tool_timeout is not None and not args.server_tool_timeout > 0:
        raise _Refused(f"--server-tool-timeout must be > 0 seconds, not {args.server_tool_timeout}")
    if args.ssl_keyfile and not args.ssl_certfile:
        raise _Refused("--ssl-keyfile needs --ssl-certfile")
    for name in ("ssl_certfile", "ssl_keyfile"):
        path = getattr(args, name)
        if path and not os.path.isfile(path):
            raise _Refused(f"--{name.replace('_', '-')}: no such file: {path}")


def _aws_credentials(args: argparse.Namespace) -> dict[str, str]:
    credentials: dict[str, str] = {}
    for item in args.aws_credentials or []:
        key_id, sep, secret = item.partition(":")
        if not sep or not key_id or not secret:
            raise _Refused(f"--aws-credentials expects ACCESS_KEY_ID:SECRET, got {item!r}")
        credentials[key_id] = secret
    return credentials


def _backend_options(args: argparse.Namespace) -> tuple[dict[str, Any], str | None]:
    """The ``-o`` options (with the preset and the slots) and a config file's checked text;
    the backends named are checked against ``--workers``."""
    try:
        backend_options: dict[str, Any] = parse_pairs(args.option, "=", "KEY=VALUE")
    except ValueError as exc:
        raise _Refused(f"--option {exc}") from None
    if args.preset:
        backend_options["preset"] = args.preset
    config_text: str | None = None
    try:
        if args.config:
            from ..server.route_config import ConfigError

            try:
                config_text, checked = _load_config_text(args.config)
            except ConfigError as exc:
                raise _Refused(f"tooluse serve: {exc}") from None
            _check_workers(args, [s.partition(":")[0] for m in checked.models for s in m.specs])
        else:
            _check_workers(args, [args.backend.partition(":")[0]])
            _set_slots(args, backend_options)
    except ValueError as exc:
        raise _Refused(f"tooluse serve: {exc}") from None
    return backend_options, config_text


def _serve(args: argparse.Namespace, keys: list[str], credentials: dict[str, str],
           backend_options: dict[str, Any], config_text: str | None) -> int:
    """Build the gateway (once, so a bad option is one line) and serve it."""
    import ssl

    try:
        import uvicorn

        from ..server.workers import close_app, log_to_stderr, serve_workers
    except ImportError as exc:  # pragma: no cover - depends on the installed extras
        raise _Refused(f"tooluse serve needs the 'server' extra: pip install 'tooluse[server]' "
                       f"({exc})") from None
    _start_telemetry()
    config, app = _build(args, keys, credentials, backend_options, config_text)
    log_to_stderr(args.log_level)
    _announce(args, app)
    server = {"host": args.host, "port": args.port, "log_level": args.log_level,
              "ssl_certfile": args.ssl_certfile, "ssl_keyfile": args.ssl_keyfile}
    try:
        if args.workers == 1:
            if args.config:
                _reload_on_hangup(app)
            uvicorn.run(app, **server)
            return 0
        close_app(app)  # each worker builds its own from the same options
        if args.ssl_certfile:  # checked here: a worker's error would not reach this process
            ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER).load_cert_chain(
                args.ssl_certfile, args.ssl_keyfile)
        serve_workers(config, args.workers, **server)
    except ssl.SSLError as exc:
        raise _Refused(f"tooluse serve: cannot use the certificate: {exc}") from None
    return 0


def _start_telemetry() -> None:
    """OpenTelemetry as the standard OTEL_* variables say (docs/opentelemetry.md)."""
    from ..telemetry import SdkMissing, configure_from_env

    try:
        if configure_from_env():
            print("tooluse serve: OpenTelemetry spans on (OTEL_* variables)", file=sys.stderr)
    except SdkMissing as exc:
        print(f"tooluse serve: OpenTelemetry stays off: {exc}", file=sys.stderr)
    except ValueError as exc:
        raise _Refused(f"tooluse serve: cannot start: {exc}") from None


def _build(args: argparse.Namespace, keys: list[str], credentials: dict[str, str],
           backend_options: dict[str, Any], config_text: str | None) -> tuple[Any, Any]:
    """The workers' config and the app built from it (with workers too: a bad option is one
    line here, not one per worker)."""
    from ..server import DEFAULT_MAX_BODY_BYTES
    from ..server.workers import ServeConfig, build_app

    try:
        upstream = _upstream_options(args)
        config = ServeConfig(
            backend=args.backend or "",
            options={**backend_options, **upstream},
            app={"api_keys": keys, "aws_credentials": credentials,
                 "max_body_bytes": args.max_body_bytes or DEFAULT_MAX_BODY_BYTES,
                 "max_concurrency": args.max_concurrency,
                 "responses_store": _responses_store(args), "trace": _trace_path(args),
                 "allow_mcp_hosts": list(args.allow_mcp_host),
                 "server_tool_turns": args.server_tool_turns,
                 "server_tool_timeout": args.server_tool_timeout},
            log_level=args.log_level,
        )
        if config_text is not None:
            config["config_path"], config["config_text"] = args.config, config_text
        try:
            app = build_app(config)
        except TypeError as exc:
            if upstream:
                raise ValueError(
                    f"it takes no {', '.join(sorted(upstream))} option (the --upstream-* "
                    "flags are for HTTP and Bedrock backends)") from None
            raise ValueError(f"it does not take these options ({exc})") from None
    except (ValueError, ImportError, OSError, BackendError) as exc:
        if args.config:  # a ConfigError is already the one line, naming the file
            raise _Refused(f"tooluse serve: {exc}") from None
        raise _Refused(f"tooluse serve: cannot start with backend {args.backend!r}: {exc}"
                       ) from None
    return config, app


def _announce(args: argparse.Namespace, app: Any) -> None:
    """The one line of what serves where (and where the traces go)."""
    scheme = "https" if args.ssl_certfile else "http"
    preset = getattr(getattr(app.state.gateway.backend, "assist", None), "name", "none")
    serving = (f"config: {args.config}, {len(app.state.gateway.router.table.routes)} model "
               "routes" if args.config else f"backend: {args.backend}")
    print(f"tooluse gateway on {scheme}://{args.host}:{args.port} ({serving}"
          + (f", preset: {preset}" if preset != "none" and not args.config else "")
          + (f", {args.workers} workers" if args.workers > 1 else "") + ")",
          file=sys.stderr, flush=True)
    if app.state.trace_store is not None:
        print(f"traces in {app.state.trace_store.path}, page at {scheme}://{args.host}:"
              f"{args.port}/trace", file=sys.stderr, flush=True)


def _reload_on_hangup(app: Any) -> None:
    """SIGHUP reads the config again (in a thread: new backends may take a while to load);
    requests in flight finish as they started, a broken file changes nothing."""
    import signal
    import threading

    from ..server.app import reload_app

    def reload() -> None:
        try:
            print(f"tooluse serve: {reload_app(app)}", file=sys.stderr, flush=True)
        except (ValueError, OSError, BackendError) as exc:
            print(f"tooluse serve: reload refused, still serving the previous config: {exc}",
                  file=sys.stderr, flush=True)

    signal.signal(signal.SIGHUP,
                  lambda signum, frame: threading.Thread(target=reload, daemon=True).start())
