"""Many clients on one local model: queue, slots and llama_cpp.server side by side.

Each configuration is a server process on the bundled model (SmolLM2-135M), started fresh:

- ``queue``: ``tooluse serve --backend local --slots 1`` (one sequence, one request at a
  time: the code before slots);
- ``slots``: ``tooluse serve --backend local --slots N`` (N sequences decoded together;
  ``--slots`` not given: serve's default from the cores and memory);
- ``llama_cpp``: ``python -m llama_cpp.server`` from llama-cpp-python, the in-Python peer
  (OpenAI Chat Completions, ``chatml-function-calling``; the [bench] extra installs its
  dependencies through [test]);
- ``floor``: llama.cpp's own batched decode of N sequences of a request's shape (60 tokens
  of its own, 36 decoded), in this process, nothing else (``bench/speed_slots_floor.py``): what
  N clients cost against one at best on this machine.

For 1, 2, 4 and 8 clients at once (threads with the anthropic SDK; the openai SDK for
llama_cpp.server), on two workloads — ``same`` (every client the same tool set) and
``mixed`` (a different tool set per client) — one one-tool request each with
``tool_choice: any`` (llama_cpp.server: the tool named), 64 tokens at most. A warm-up round
first (untimed), then ``--rounds`` timed rounds, all clients released together. Per row:
the wall time of a round (median), its multiple of one client's (``× one``: client 0's
request, the same one each round, its prompt wholly cached) and of the same requests sent
alone one after another (``× solo``: the mean of each client's median latency alone; a
queue of N takes N× it), p50/p99 latency per request, output tokens/s, and the server's
memory (RSS after the row, and its peak).

Targets: 4 clients ≤ 1.6× one client's wall time, 8 ≤ 2.5×, one client no
slower than ``queue``. Run it on a quiet machine: ``bench/speed_slots.sh``.

    python bench/speed_slots.py [--configs queue,slots,llama_cpp,floor] [--clients 1,2,4,8]
                          [--workloads same,mixed] [--rounds 5] [--slots N] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2

QUESTIONS = [
    "What is the weather in Paris?", "What time is it in Tokyo?",
    "How much is Apple stock?", "Convert 100 dollars to euros.",
    "Is it raining in Rome?", "Translate 'good morning' into Spanish.",
    "How far is Berlin from Munich?", "Find a flight from Oslo to Madrid.",
]


def _tool(name: str, description: str, **props: str) -> dict[str, Any]:
    return {"name": name, "description": description, "input_schema": {
        "type": "object", "properties": {k: {"type": v} for k, v in props.items()},
        "required": list(props)}}


TOOL_SETS = [
    [_tool("get_weather", "Get the current weather in a city", location="string")],
    [_tool("get_time", "Get the current time in a time zone", zone="string")],
    [_tool("get_stock_price", "Get the latest price of a stock", ticker="string")],
    [_tool("convert_currency", "Convert an amount between currencies", amount="number",
           source="string", target="string")],
    [_tool("get_forecast", "Get the weather forecast for a city", city="string", days="integer")],
    [_tool("translate", "Translate a text", text="string", language="string")],
    [_tool("get_distance", "Distance between two cities", origin="string",
           destination="string")],
    [_tool("search_flights", "Search flights between two airports", origin="string",
           destination="string")],
]


def _rss(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) of ``pid`` in bytes (its peak: VmHWM)."""
    found = {"VmRSS": 0, "VmHWM": 0}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in found:
                found[key] = int(value.split()[0]) * 1024
    except OSError:
        pass
    return found["VmRSS"], found["VmHWM"]


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Server:
    """A server process for one configuration, waited for until it answers."""

    def __init__(self, config: str, slots: int | None) -> None:
        self.config = config
        self.port = _free_port()
        env = {**os.environ, "TOOLUSE_PROMPT_CACHE": "off"}
        if config == "llama_cpp":
            from tooluse.llama.model import default_model_path

            threads = str(max(1, min(os.cpu_count() or 1, 8)))
            command = [sys.executable, str(Path(__file__).resolve().parent / "peers" / "plain_llama.py"),
                       "-m", "llama_cpp.server", "--model",
                       str(default_model_path()), "--port", str(self.port),
                       "--chat_format", "chatml-function-calling", "--n_ctx", "8192",
                       "--n_threads", threads, "--n_threads_batch", threads]
            self.probe = "/v1/models"
        else:
            command = [sys.executable, "-m", "tooluse.cli", "serve", "--backend", "local",
                       "--port", str(self.port), "--log-level", "warning",
                       "--responses-store", ":memory:"]
            if config == "queue":
                command += ["--slots", "1"]
            elif slots:
                command += ["--slots", str(slots)]
            self.probe = "/health"
        # Its log goes to a file, not a pipe: llama.cpp writes ~200 KB to stderr while
        # loading (llama_cpp.server is verbose), and a pipe nobody reads fills at 64 KB and
        # blocks the server before it answers.
        self.log = tempfile.TemporaryFile(mode="w+")
        self.process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL,
                                        stderr=self.log, text=True)
        self.url = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{config} server exited: {self._log_tail()}")
            try:
                if httpx2.get(self.url + self.probe, timeout=2).status_code == 200:
                    return
            except httpx2.HTTPError:
                pass
            time.sleep(0.3)
        self.stop()
        raise RuntimeError(f"{config} server did not start: {self._log_tail()}")

    def _log_tail(self) -> str:
        self.log.seek(0)
        return self.log.read()[-2000:]

    def health(self) -> dict[str, Any]:
        try:
            body: dict[str, Any] = httpx2.get(self.url + "/health", timeout=5).json()
            return body
        except (httpx2.HTTPError, ValueError):
            return {}

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()


def _client(server: Server) -> Callable[[int, str], int]:
    """A function sending client ``i``'s request (workload ``same`` or ``mixed``) and
    returning the output tokens."""
    if server.config == "llama_cpp":
        import openai

        oa = openai.OpenAI(base_url=server.url + "/v1", api_key="k", max_retries=0,
                           timeout=600)

        def send_openai(i: int, workload: str) -> int:
            tools = TOOL_SETS[0 if workload == "same" else i % len(TOOL_SETS)]
            functions = [{"type": "function", "function": {
                "name": t["name"], "description": t["description"],
                "parameters": t["input_schema"]}} for t in tools]
            answer = oa.chat.completions.create(
                model="local", max_tokens=64, tools=functions,  # type: ignore[arg-type]
                tool_choice={"type": "function", "function": {"name": tools[0]["name"]}},
                messages=[{"role": "user", "content": QUESTIONS[i % len(QUESTIONS)]}])
            return answer.usage.completion_tokens if answer.usage else 0

        return send_openai
    import anthropic

    an = anthropic.Anthropic(base_url=server.url, api_key="k", max_retries=0, timeout=600)

    def send(i: int, workload: str) -> int:
        tools = TOOL_SETS[0 if workload == "same" else i % len(TOOL_SETS)]
        message = an.messages.create(
            model="local", max_tokens=64, tools=tools,  # type: ignore[arg-type]
            tool_choice={"type": "any"},
            messages=[{"role": "user", "content": QUESTIONS[i % len(QUESTIONS)]}])
        if not any(b.type == "tool_use" for b in message.content):
            raise RuntimeError(f"no tool call in the answer: {message.content}")
        return message.usage.output_tokens

    return send


def _round(send: Callable[[int, str], int], clients: int,
           workload: str) -> tuple[float, list[float], int]:
    """All clients at once: (wall time, latencies, output tokens)."""
    barrier = threading.Barrier(clients + 1)
    latencies: list[float] = [0.0] * clients
    tokens: list[int] = [0] * clients
    errors: list[BaseException] = []

    def one(i: int) -> None:
        barrier.wait()
        started = time.perf_counter()
        try:
            tokens[i] = send(i, workload)
        except BaseException as exc:  # noqa: BLE001 - reported after the round
            errors.append(exc)
        latencies[i] = time.perf_counter() - started

    threads = [threading.Thread(target=one, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    barrier.wait()
    started = time.perf_counter()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - started
    if errors:
        raise RuntimeError(f"{len(errors)} of {clients} requests failed: {errors[0]!r}")
    return wall, latencies, sum(tokens)


def _solo(send: Callable[[int, str], int], clients: int, workload: str,
          rounds: int) -> list[float]:
    """Each client's request alone: clients 0, 1, ... one after another (each after a
    different request, as in a queue), ``rounds`` times; each one's median latency.

    The yardstick of a round of N clients is the mean of the first N: a queue of N takes N
    times it. Client 0's request repeated (``x_one``'s yardstick) is the cheapest case: its
    whole prompt is in the cache from the time before, and its question asks for no value
    scoring, so the other clients' requests cost more than it even when alone."""
    send(0, workload)  # warm-up
    times: list[list[float]] = [[] for _ in range(clients)]
    for _ in range(rounds):
        for i in range(clients):
            started = time.perf_counter()
            send(i, workload)
            times[i].append(time.perf_counter() - started)
    return [statistics.median(t) for t in times]


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def run(configs: list[str], clients: list[int], workloads: list[str], rounds: int,
        slots: int | None) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for config in configs:
        if config == "floor":  # llama.cpp's own batched decode, in this process
            from speed_slots_floor import measure

            rows += measure(clients, prompt=60, decode=36, rounds=rounds)
            continue
        server = Server(config, slots)
        try:
            send = _client(server)
            for workload in workloads:
                one_wall: float | None = None
                solo = _solo(send, max(clients), workload, rounds)
                for count in clients:
                    _round(send, count, workload)  # warm-up: caches filled, threads started
                    walls, latencies, tokens = [], [], 0
                    for _ in range(rounds):
                        wall, lat, out = _round(send, count, workload)
                        walls.append(wall)
                        latencies += lat
                        tokens += out
                    wall = statistics.median(walls)
                    if count == 1:
                        one_wall = wall
                    rss, peak = _rss(server.process.pid)
                    row = {
                        "config": config, "workload": workload, "clients": count,
                        "wall_s": round(wall, 3),
                        "x_one": round(wall / one_wall, 2) if one_wall else None,
                        "x_solo": round(wall / statistics.mean(solo[:count]), 2),
                        "p50_s": round(_percentile(latencies, 0.5), 3),
                        "p99_s": round(_percentile(latencies, 0.99), 3),
                        "tokens_per_s": round(tokens / sum(walls), 1),
                        "rss_mb": round(rss / 2**20), "peak_rss_mb": round(peak / 2**20),
                        "slots": server.health().get("slots"),
                    }
                    rows.append(row)
                    print(json.dumps(row), flush=True)
        finally:
            server.stop()
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    head = ("| config | workload | clients | wall s | × one | × solo | p50 s | p99 s "
            "| tokens/s | RSS MB | peak MB |\n"
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    lines = [head]
    for r in rows:
        lines.append(f"| {r['config']} | {r['workload']} | {r['clients']} | {r['wall_s']} | "
                     f"{r['x_one']} | {r.get('x_solo')} | {r['p50_s']} | {r['p99_s']} | {r['tokens_per_s']} | "
                     f"{r['rss_mb']} | {r['peak_rss_mb']} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--configs", default="queue,slots,llama_cpp,floor")
    parser.add_argument("--clients", default="1,2,4,8")
    parser.add_argument("--workloads", default="same,mixed")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--slots", type=int, default=None,
                        help="slots of the slots configuration (default: serve's default)")
    parser.add_argument("--out", type=Path, default=None, help="write the rows as JSON here")
    args = parser.parse_args(argv)
    configs = [c for c in args.configs.split(",") if c]
    unknown = set(configs) - {"queue", "slots", "llama_cpp", "floor"}
    if unknown:
        parser.error(f"unknown configuration(s): {', '.join(sorted(unknown))}")
    clients = [int(c) for c in args.clients.split(",") if c]
    workloads = [w for w in args.workloads.split(",") if w]
    if set(workloads) - {"same", "mixed"}:
        parser.error("workloads are same and mixed")
    rows = run(configs, clients, workloads, max(1, args.rounds), args.slots)
    print(table(rows))
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
