"""Processes for the routing tests: fake upstreams (fake_upstream.py) and ``tooluse serve
--config`` gateways, each started as its own process on a free port of 127.0.0.1, each
stopped by its own process id (a gateway with workers by its own process group)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx2

from tooluse.server.thread import free_port

FAKE = Path(__file__).with_name("fake_upstream.py")


def _wait(url: str, proc: subprocess.Popen[bytes], log: Path, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{url}: the process exited ({proc.returncode}): "
                               f"{log.read_text()[-2000:]}")
        try:
            if httpx2.get(url, timeout=2, trust_env=False).status_code < 500:
                return
        except httpx2.TransportError:
            pass
        time.sleep(0.05)
    raise RuntimeError(f"{url} did not answer within {timeout:g} s: {log.read_text()[-2000:]}")


class FakeUpstream:
    """One fake upstream process (see fake_upstream.py)."""

    def __init__(self, name: str, folder: Path, *flags: str) -> None:
        self.name = name
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.output = folder / f"upstream-{name}.log"
        with self.output.open("wb") as out:
            self.proc = subprocess.Popen(
                [sys.executable, str(FAKE), "--port", str(self.port), "--name", name, *flags],
                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        _wait(self.url + "/", self.proc, self.output)

    def log(self) -> list[dict[str, Any]]:
        """The model requests it got, oldest first."""
        entries: list[dict[str, Any]] = httpx2.get(self.url + "/_log", timeout=10,
                                                   trust_env=False).json()
        return entries

    def control(self, **settings: Any) -> None:
        httpx2.post(self.url + "/_control", json=settings, timeout=10, trust_env=False)

    def kill(self) -> None:
        """SIGKILL, as a crashed box: no goodbye to its connections."""
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)


@contextmanager
def fake_upstreams(folder: Path, *names: str, flags: Sequence[str] = ()
                   ) -> Iterator[list[FakeUpstream]]:
    with ExitStack() as stack:
        started = []
        for name in names:
            upstream = FakeUpstream(name, folder, *flags)
            stack.callback(upstream.stop)
            started.append(upstream)
        yield started


class Gateway:
    """``tooluse serve --config FILE`` (and ``extra`` flags) in its own process group."""

    def __init__(self, config: Path, folder: Path, *extra: str,
                 env: dict[str, str] | None = None) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.output = folder / f"gateway-{self.port}.log"
        full_env = {**os.environ, "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1",
                    "XDG_CACHE_HOME": str(folder / "cache"), **(env or {})}
        with self.output.open("wb") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "tooluse.cli", "serve", "--config", str(config),
                 "--port", str(self.port), "--log-level", "warning", *extra],
                stdout=out, stderr=subprocess.STDOUT, env=full_env, start_new_session=True)
        _wait(self.url + "/health", self.proc, self.output, timeout=120)

    def text(self) -> str:
        return self.output.read_text(errors="replace")

    def hangup(self) -> None:
        os.kill(self.proc.pid, signal.SIGHUP)

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)

    def __enter__(self) -> Gateway:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def write_config(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def served_by(upstreams: Sequence[FakeUpstream]) -> dict[str, int]:
    """How many model requests each upstream got."""
    return {u.name: len(u.log()) for u in upstreams}


def dumps(value: Any) -> str:
    return json.dumps(value)
