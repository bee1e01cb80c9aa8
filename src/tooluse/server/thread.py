"""Running the gateway under uvicorn in a background thread (:class:`ServerThread`).

:class:`ServerThread` starts uvicorn on a free port of 127.0.0.1 in a background thread and
waits until it accepts connections, which is what tests and in-process benchmarks need to
point an unmodified SDK client at the gateway.
"""

from __future__ import annotations

import socket
import threading
import time
from types import TracebackType
from typing import Any, Self

import uvicorn

__all__ = ["ServerThread", "free_port"]


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


class ServerThread:
    """``with ServerThread(app) as server: server.url`` — uvicorn in a daemon thread.

    With ``ssl_certfile`` (and ``ssl_keyfile``) it serves HTTPS and :attr:`url` says so.
    """

    def __init__(
        self,
        app: Any,
        *,
        host: str = "127.0.0.1",
        port: int | None = None,
        log_level: str = "warning",
        ssl_certfile: str | None = None,
        ssl_keyfile: str | None = None,
    ) -> None:
        self.host = host
        self.port = port or free_port(host)
        self.scheme = "https" if ssl_certfile else "http"
        config = uvicorn.Config(
            app,
            host=host,
            port=self.port,
            log_level=log_level,
            lifespan="on",
            access_log=False,
            ssl_certfile=ssl_certfile,
            ssl_keyfile=ssl_keyfile,
        )
        self.server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self.server.run, name="tooluse-gateway", daemon=True)

    @property
    def url(self) -> str:
        return f"{self.scheme}://{self.host}:{self.port}"

    def start(self, timeout: float = 20.0) -> Self:
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if not self._thread.is_alive():
                raise RuntimeError("the gateway failed to start")
            if time.monotonic() > deadline:
                raise TimeoutError(f"the gateway did not start within {timeout} s")
            time.sleep(0.01)
        return self

    def stop(self, timeout: float = 10.0) -> None:
        self.server.should_exit = True
        self._thread.join(timeout)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
