"""Server processes for the benchmark: start, wait until ready, account CPU, stop.

Every server runs as its own subprocess in a new session, so that it (and any worker it
forks) can be stopped by its own process-group id — never by name — and so that the CPU
time of exactly that group can be read from ``/proc``. CPU seconds per request are far less
disturbed than wall-clock figures by other work on a shared machine, which is why the report
gives both.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import httpx2

__all__ = ["ServerProcess", "StartupError", "free_port"]

_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


class StartupError(RuntimeError):
    """A server exited or did not answer in time; the message ends with its log's tail."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _stat_fields(pid: str) -> list[str] | None:
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: split after the last ')'.
    return raw[raw.rindex(")") + 2 :].split()


class ServerProcess:
    """One server under test (or the upstream), started with :meth:`start`."""

    def __init__(
        self,
        name: str,
        argv: Sequence[str],
        *,
        ready_url: str,
        log_path: Path,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
    ) -> None:
        self.name = name
        self.argv = list(argv)
        self.ready_url = ready_url
        self.log_path = log_path
        self.env = dict(env) if env is not None else None
        self.cwd = cwd
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        log = self.log_path.open("wb")
        try:
            self.proc = subprocess.Popen(
                self.argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=self.env,
                cwd=self.cwd,
                start_new_session=True,
            )
        finally:
            log.close()

    def log_tail(self, lines: int = 25) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])

    def wait_ready(self, timeout: float) -> float:
        """Poll ``ready_url`` until it answers below 500; return seconds it took."""
        assert self.proc is not None, "start() first"
        start = time.monotonic()
        while True:
            code = self.proc.poll()
            if code is not None:
                raise StartupError(
                    f"{self.name} exited with status {code} before it was ready; "
                    f"command: {' '.join(self.argv)}\n--- {self.log_path} ---\n{self.log_tail()}"
                )
            try:
                resp = httpx2.get(self.ready_url, timeout=2.0, trust_env=False)
                if resp.status_code < 500:
                    return time.monotonic() - start
            except httpx2.HTTPError:
                pass
            if time.monotonic() - start > timeout:
                raise StartupError(
                    f"{self.name} did not answer {self.ready_url} within {timeout:.0f} s\n"
                    f"--- {self.log_path} ---\n{self.log_tail()}"
                )
            time.sleep(0.2)

    def _group_pids(self) -> list[str]:
        if self.proc is None:
            return []
        sid = str(self.proc.pid)
        pids = []
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                fields = _stat_fields(entry)
                if fields is not None and fields[3] == sid:  # field 6: session id
                    pids.append(entry)
        return pids

    def cpu_seconds(self) -> float:
        """User + system CPU time of every process in the server's session so far."""
        total = 0
        for pid in self._group_pids():
            fields = _stat_fields(pid)
            if fields is not None:
                # utime, stime, cutime, cstime are fields 14-17 (11-14 after the name).
                total += sum(int(v) for v in fields[11:15])
        return total / _CLOCK_TICKS

    def rss_mib(self) -> float:
        """Resident memory of the server's processes, in MiB."""
        return self._status_mib("VmRSS")

    def peak_rss_mib(self) -> float:
        """The most resident memory each of the server's processes has had, summed, in MiB."""
        return self._status_mib("VmHWM")

    def _status_mib(self, field: str) -> float:
        kib = 0
        for pid in self._group_pids():
            try:
                for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                    if line.startswith(f"{field}:"):
                        kib += int(line.split()[1])
            except OSError:
                continue
        return kib / 1024

    def stop(self, grace: float = 10.0) -> None:
        """SIGTERM the server's process group, then SIGKILL whatever is left after ``grace``."""
        if self.proc is None:
            return
        pgid = self.proc.pid
        if self.proc.poll() is None:
            try:
                os.killpg(pgid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                pass
        try:
            os.killpg(pgid, signal.SIGKILL)  # any worker the server forked and left behind
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
