"""``tooluse serve --workers N`` as a subprocess: requests are answered by several worker
processes (which one is read from the OS: the process holding the server's end of the TCP
connection), and a Responses chain continues on another worker through the shared store."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tooluse.server.thread import free_port

pytestmark = pytest.mark.skipif(not Path("/proc/net/tcp").exists(),
                                reason="reads the connections' owners from Linux's /proc")

KEY = "k1"
#: A tool loop offline: the first turn calls get_weather, the next answers.
SCRIPT = ('scripted:[{"call": "get_weather", "input": {"city": "Paris"}}, '
          '"It is 18 C in Paris."]')
TOOLS = [{"type": "function", "name": "get_weather", "description": "Weather in a city",
          "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                         "required": ["city"]}}]


def _children(pid: int) -> set[int]:
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rpartition(")")[2].split()[1]) == pid:
                found.add(int(entry))
    return found


def _inode(server_port: int, client_port: int) -> int:
    """The inode of the server's end of the connection from ``client_port`` (0: none yet)."""
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local, remote = fields[1], fields[2]
        if int(local.rpartition(":")[2], 16) == server_port and \
                int(remote.rpartition(":")[2], 16) == client_port:
            return int(fields[9])
    return 0


def _owner(workers: set[int], server_port: int, conn: http.client.HTTPConnection) -> int:
    """The worker process holding the server's end of ``conn``."""
    assert conn.sock is not None
    client_port = conn.sock.getsockname()[1]
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        inode = _inode(server_port, client_port)
        for pid in workers if inode else ():
            try:
                fds = os.listdir(f"/proc/{pid}/fd")
            except OSError:
                continue
            for fd in fds:
                try:
                    if os.readlink(f"/proc/{pid}/fd/{fd}") == f"socket:[{inode}]":
                        return pid
                except OSError:
                    continue
        time.sleep(0.02)
    raise AssertionError(f"no worker holds the connection from port {client_port}")


def _post(conn: http.client.HTTPConnection, path: str, body: dict[str, Any]) -> dict[str, Any]:
    conn.request("POST", path, json.dumps(body),
                 {"content-type": "application/json", "authorization": f"Bearer {KEY}",
                  "anthropic-version": "2023-06-01"})
    response = conn.getresponse()
    data = json.loads(response.read())
    assert response.status == 200, data
    return data


@pytest.fixture()
def gateway(tmp_path: Path) -> Iterator[tuple[int, set[int]]]:
    """``tooluse serve --workers 2`` on a SQLite Responses store file: its port and its
    worker processes."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "tooluse.cli", "serve", "--backend", SCRIPT, "--workers", "2",
         "--port", str(port), "--api-key", KEY, "--log-level", "warning",
         "--responses-store", str(tmp_path / "responses.sqlite3")],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            workers = _children(proc.pid)
            try:
                ready = httpx2.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code
            except httpx2.TransportError:
                ready = 0
            # both workers started (a resource tracker is a child too: at least 2 besides it)
            if ready == 200 and len(workers) >= 3:
                break
            if proc.poll() is not None or time.monotonic() > deadline:
                out = proc.stdout.read().decode() if proc.stdout else ""
                pytest.fail(f"tooluse serve --workers 2 did not start: {out}")
            time.sleep(0.1)
        yield port, workers
    finally:
        proc.terminate()
        out = proc.communicate(timeout=20)[0].decode()
    assert "2 workers" in out and "Traceback" not in out, out


def test_requests_are_answered_by_two_worker_processes(gateway: tuple[int, set[int]]) -> None:
    """Requests 8 at a time until both workers have answered some (up to 400): on an idle
    machine the kernel may hand one worker every connection of a sequential client (40 in a
    row went to one worker once), which would leave the claim untested, not false."""
    from concurrent.futures import ThreadPoolExecutor

    port, workers = gateway

    def one(k: int) -> int:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        try:
            answer = _post(conn, "/v1/messages", {
                "model": "m", "max_tokens": 50, "tools": [
                    {"name": "get_weather", "input_schema": TOOLS[0]["parameters"]}],
                "messages": [{"role": "user", "content": f"Weather in Paris? ({k})"}]})
            assert answer["content"][0] == {"type": "tool_use", "id": answer["content"][0]["id"],
                                            "name": "get_weather", "input": {"city": "Paris"}}
            return _owner(workers, port, conn)
        finally:
            conn.close()

    served: dict[int, int] = {}
    with ThreadPoolExecutor(8) as pool:
        for start in range(0, 400, 8):
            for pid in pool.map(one, range(start, start + 8)):
                served[pid] = served.get(pid, 0) + 1
            if len(served) == 2:
                break
    assert len(served) == 2, served  # both workers answered
    assert set(served) <= workers


def test_a_kept_alive_connection_is_answered_without_a_delayed_ack_wait(
        gateway: tuple[int, set[int]]) -> None:
    """The workers' connections have TCP_NODELAY: with the socket uvicorn binds for its
    workers they did not (Kludex/uvicorn#3149), and every answer on a kept-alive
    connection waited ~40 ms for the client's delayed ACK."""
    port, _ = gateway
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    took = []
    try:
        for _ in range(15):
            started = time.perf_counter()
            conn.request("GET", "/health")
            response = conn.getresponse()
            assert response.status == 200 and json.loads(response.read())["status"] == "ok"
            took.append(time.perf_counter() - started)
    finally:
        conn.close()
    took.sort()
    assert took[len(took) // 2] < 0.03, took  # 40 ms and more each with Nagle on


def test_a_responses_chain_continues_on_another_worker(gateway: tuple[int, set[int]]) -> None:
    port, workers = gateway
    first_conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    first = _post(first_conn, "/v1/responses",
                  {"model": "m", "input": "Weather in Paris?", "tools": TOOLS})
    first_worker = _owner(workers, port, first_conn)
    first_conn.close()
    call = first["output"][0]
    assert call["type"] == "function_call" and json.loads(call["arguments"]) == {"city": "Paris"}
    for _ in range(200):  # a connection the other worker took
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.connect()
        if _owner(workers, port, conn) != first_worker:
            break
        conn.close()
    else:
        pytest.fail("every connection went to the first worker")
    try:
        second = _post(conn, "/v1/responses", {
            "model": "m", "previous_response_id": first["id"], "tools": TOOLS,
            "input": [{"type": "function_call_output", "call_id": call["call_id"],
                       "output": "18 C"}]})
        assert second["output"][-1]["content"][0]["text"] == "It is 18 C in Paris."
        assert second["previous_response_id"] == first["id"]
        # the first response is read back through this worker too, from the shared file
        conn.request("GET", f"/v1/responses/{first['id']}",
                     headers={"authorization": f"Bearer {KEY}"})
        again = conn.getresponse()
        assert again.status == 200 and json.loads(again.read())["output"] == first["output"]
    finally:
        conn.close()


@pytest.mark.parametrize(("args", "message"), [
    (["--backend", "local"], "use --slots N"),
    (["--backend", "local:/nonexistent/model.gguf"], "use --slots N"),
    (["--backend", "scripted:x", "--responses-store", ":memory:"], "one process's"),
    (["--backend", "scripted:x", "--workers", "0"], "--workers must be a positive integer"),
])
def test_workers_refuse_what_they_cannot_serve(args: list[str], message: str) -> None:
    out = subprocess.run([sys.executable, "-m", "tooluse.cli", "serve", "--workers", "2", *args],
                         capture_output=True, text=True, timeout=60, check=False)
    assert out.returncode == 2
    assert message in out.stderr and len(out.stderr.strip().splitlines()) == 1
