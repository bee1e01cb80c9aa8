"""The gateway built from ``tooluse serve``'s options, in one process or in N workers.

``tooluse serve --workers N`` runs N uvicorn worker processes on one socket. uvicorn starts
each worker afresh and builds its app by name, so the options travel to the workers in the
environment: :func:`config_to_env` puts the parsed options (a :class:`ServeConfig`, JSON) in
``TOOLUSE_SERVE_CONFIG``, and each worker's :func:`app_from_env`
(``tooluse.server.workers:app_from_env``, an app factory) builds its own gateway with
:func:`build_app`, the same call the single process makes. The variable holds the API keys
and AWS secrets given on the command line: it goes only to the workers ``tooluse serve``
starts (as their parent's environment does).

Workers share nothing in memory: each has its backend, its ``max_concurrency`` and its
stream threads (with a config, its own deployments' cooldowns and counts of requests in
flight). What outlives a request is in the stores they share by path or URL: the Responses
store (a SQLite file on one machine, ``postgresql://`` across machines), the trace store (a
SQLite file) and a config's usage store, whose counts make the keys' limits hold across
workers.

A config travels as its text, read once by ``tooluse serve``: every worker serves the same
routes. SIGHUP makes :func:`serve_workers` read the file again, build it once to check it
(a broken file is one error line, and the workers keep serving the old one), then replace
the workers one by one, each new one ready before an old one stops, and each old one
finishing its requests in flight (uvicorn's graceful restart).
"""

from __future__ import annotations

import json
import logging
import os
import sys
from typing import Any, NotRequired, TypedDict

from starlette.applications import Starlette

from ..backends.registry import load_backend
from ..telemetry import configure_from_env
from .app import create_app
from .route_config import parse_config

__all__ = ["APP_FACTORY", "ENV_VAR", "ServeConfig", "app_from_env", "build_app", "close_app",
           "config_to_env", "log_to_stderr", "reread_config", "serve_workers"]

#: The environment variable holding a worker's :class:`ServeConfig` as JSON.
ENV_VAR = "TOOLUSE_SERVE_CONFIG"
#: What each worker imports to build its app.
APP_FACTORY = "tooluse.server.workers:app_from_env"


class ServeConfig(TypedDict):
    """What ``tooluse serve`` parsed: JSON values only, so it crosses to the workers."""

    #: The backend spec (``anthropic:MODEL``, ``openai:URL#MODEL``, ``scripted:...``).
    backend: str
    #: Its options (``-o KEY=VALUE``, the ``--upstream-*`` flags); empty: the spec alone.
    options: dict[str, Any]
    #: :func:`~.app.create_app`'s keyword arguments (``api_keys``, ``responses_store``...).
    app: dict[str, Any]
    #: uvicorn's log level, also that of the gateway's own lines (:func:`log_to_stderr`).
    log_level: str
    #: ``--config``: the file (named in errors, read again on SIGHUP) and its text.
    config_path: NotRequired[str]
    config_text: NotRequired[str]


def build_app(config: ServeConfig) -> Starlette:
    """The gateway ``config`` describes; it closes its backend on shutdown. Raises what
    :func:`~tooluse.backends.registry.load_backend` and :func:`~.app.create_app` raise
    (a ``TypeError`` for options the backend does not take)."""
    if "config_text" in config:
        checked = parse_config(config["config_text"], config.get("config_path", "<config>"))
        return create_app(config=checked, close_backend=True, **config["app"])
    backend: Any = config["backend"]
    if config["options"]:
        backend = load_backend(config["backend"], **config["options"])
    return create_app(backend, close_backend=True, **config["app"])


def close_app(app: Starlette) -> None:
    """Close what :func:`build_app` opened, for an app that never served (its lifespan
    closes them otherwise): ``tooluse serve`` builds one to check the options before it
    starts the workers."""
    app.state.gateway.router.close()
    app.state.responses_store.close()
    if app.state.trace_store is not None:
        app.state.trace_store.close()


def config_to_env(config: ServeConfig) -> None:
    """Put ``config`` where :func:`app_from_env` reads it (this process's environment,
    inherited by the workers uvicorn starts)."""
    os.environ[ENV_VAR] = json.dumps(config)


def app_from_env() -> Starlette:
    """A worker's gateway: :func:`build_app` over the :class:`ServeConfig` in
    ``TOOLUSE_SERVE_CONFIG``, with the gateway's log lines and OpenTelemetry set up as
    ``tooluse serve`` sets them in one process (which already reported any problem)."""
    text = os.environ.get(ENV_VAR)
    if not text:
        raise RuntimeError(f"{ENV_VAR} is not set: this factory serves the workers that "
                           "tooluse serve --workers starts")
    config: ServeConfig = json.loads(text)
    try:
        configure_from_env()
    except ValueError:
        pass  # tooluse serve said why, once, before starting the workers
    log_to_stderr(config["log_level"])
    return build_app(config)


def serve_workers(config: ServeConfig, workers: int, **options: Any) -> None:
    """Serve ``config`` from ``workers`` uvicorn worker processes on one socket until
    stopped; ``options`` are :class:`uvicorn.Config`'s (host, port, log level, TLS).

    As ``uvicorn.run(APP_FACTORY, factory=True, workers=N)`` does, but the socket is handed
    to the workers as a TCP socket: uvicorn's says protocol 0, so asyncio leaves Nagle's
    algorithm on for every connection it accepts (it sets ``TCP_NODELAY`` only on
    ``IPPROTO_TCP`` sockets) and each answer on a kept-alive connection waits ~40 ms for the
    client's delayed ACK (Kludex/uvicorn#3149)."""
    import socket

    import uvicorn
    from uvicorn.supervisors import Multiprocess

    class Supervisor(Multiprocess):
        def handle_hup(self) -> None:
            if reread_config(config):
                super().handle_hup()

    config_to_env(config)
    settings = uvicorn.Config(APP_FACTORY, factory=True, workers=workers, **options)
    bound = settings.bind_socket()
    tcp = socket.socket(bound.family, bound.type, socket.IPPROTO_TCP, fileno=bound.detach())
    tcp.set_inheritable(True)
    try:
        Supervisor(settings, sockets=[tcp]).run()
    except KeyboardInterrupt:
        pass
    finally:
        tcp.close()


def reread_config(config: ServeConfig) -> bool:
    """SIGHUP with workers: read ``config``'s file again and build it once; if it serves,
    it becomes ``config``'s (and the workers' to come) and True; else one error line and
    False (the workers keep the config they have)."""
    path = config.get("config_path")
    if path is None:
        return True  # --backend: a restart serves the same
    log = logging.getLogger("tooluse.server")
    try:
        with open(path, encoding="utf-8") as file:
            text = file.read()
        close_app(build_app({**config, "config_text": text}))
    except Exception as exc:  # noqa: BLE001 - whatever it is, the workers keep serving
        log.error("reload refused, the workers keep the previous config: %s", exc)
        return False
    config["config_text"] = text
    config_to_env(config)
    log.info("%s: reloaded; replacing the workers one by one", path)
    return True


def log_to_stderr(level: str) -> None:
    """The gateway's own log lines (``tooluse.*``: call origins, policy notes) on stderr at
    ``level``, beside uvicorn's."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(levelname)s:     %(name)s: %(message)s"))
    logger = logging.getLogger("tooluse")
    logger.addHandler(handler)
    try:
        logger.setLevel(logging.DEBUG if level.lower() == "trace" else level.upper())
    except ValueError:
        logger.setLevel(logging.INFO)
    logger.propagate = False
