"""The gateway's CPU per proxied request as an instruction count, steady on a busy machine.

Wall-clock times and even CPU seconds move with whatever else the machine runs; the number
of instructions the gateway executes per request does not. This runs ``tooluse serve``
under ``valgrind --tool=callgrind`` in front of the instant fake upstream (``upstream.py``),
sends it ``--small`` and then, in a second run, ``--large`` requests one after another, and
reports (instructions of the large run − of the small run) ÷ (large − small): the start-up,
the imports and the shutdown cancel out, what is left is one request's cost, kernel time
aside (callgrind counts user-space instructions).

    python bench/gateway/instructions.py                      # all four APIs, JSON and stream
    python bench/gateway/instructions.py --python OTHER_VENV/bin/python   # another version
    python bench/gateway/instructions.py --config routes.toml --model bench-model --wires anthropic

``--config FILE`` serves ``tooluse serve --config FILE`` instead of ``--backend``, so a routed
path (a route table, fallbacks, a failover) is measured the same way: ``{upstream}`` in the
file stands for the fake upstream's URL; ``--model`` is the model name the requests ask for.
``--config routing`` writes the route table of ``routing.py`` (six routes, the benchmarked
name matched by a glob; ``--model bench-failover`` measures its failover, the first try
answering 529).

Needs valgrind (Debian: ``apt-get install valgrind``). A run takes a minute or two per row
(Python under callgrind is ~50x slower).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import canned
import httpx2
from loadgen import Endpoint, latency
from procs import ServerProcess, free_port

SPECS = {"anthropic": "anthropic:{up}#{model}", "openai": "openai:{up}/v1#{model}",
         "responses": "openai-responses:{up}/v1#{model}", "converse": "bedrock:{model}"}
AWS = {"AWS_ACCESS_KEY_ID": "AKIDBENCH", "AWS_SECRET_ACCESS_KEY": "bench-secret",
       "AWS_DEFAULT_REGION": "us-east-1", "AWS_EC2_METADATA_DISABLED": "true"}


def _instructions(python: str, wire: str, stream: bool, requests: int, upstream: str,
                  logs: Path, config: Path | None = None, model: str = canned.MODEL) -> int:
    port = free_port()
    out = logs / f"callgrind-{wire}-{stream}-{requests}.txt"
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env.update({"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k", **AWS,
                "AWS_ENDPOINT_URL_BEDROCK_RUNTIME": upstream})
    serve = (["--config", str(config)] if config is not None
             else ["--backend", SPECS[wire].format(up=upstream, model=model)])
    argv = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
            f"--log-file={out}", python, "-m", "tooluse.cli", "serve", *serve,
            "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"]
    server = ServerProcess(f"gw-{wire}", argv, ready_url=f"http://127.0.0.1:{port}/",
                           log_path=logs / f"gw-{wire}.log", env=env)
    server.start()
    try:
        server.wait_ready(600)
        endpoint = Endpoint(f"http://127.0.0.1:{port}", wire, model)  # type: ignore[arg-type]
        result = asyncio.run(latency(endpoint, stream=stream, warmup=0, requests=requests))
        if result.errors:
            raise RuntimeError(f"{wire}: {result.errors} errors, first: {result.first_error}")
    finally:
        assert server.proc is not None
        server.proc.send_signal(signal.SIGTERM)
        try:
            server.proc.wait(120)
        except subprocess.TimeoutExpired:
            server.stop()
    for _ in range(50):
        found = re.search(r"Collected : (\d+)", out.read_text()) if out.exists() else None
        if found:
            return int(found.group(1))
        time.sleep(0.2)
    raise RuntimeError(f"no instruction count in {out}")


def _upstream(logs: Path, name: str, *extra: str) -> tuple[ServerProcess, str]:
    port = free_port()
    server = ServerProcess(name, [sys.executable, str(HERE / "upstream.py"), "--port",
                                  str(port), *extra],
                           ready_url=f"http://127.0.0.1:{port}/stats",
                           log_path=logs / f"{name}.log")
    server.start()
    return server, f"http://127.0.0.1:{port}"


def _config(given: str, upstream: str, fail: str, logs: Path) -> Path:
    """The route table to serve: ``given``'s text with ``{upstream}`` filled in, or
    routing.py's table (``fail``: its failing upstream)."""
    path = logs / "routes.toml"
    if given == "routing":
        import routing
        routing.tooluse_config(path, upstream, fail)
    else:
        path.write_text(Path(given).read_text().replace("{upstream}", upstream))
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--python", default=sys.executable,
                        help="the Python (venv) whose tooluse is measured")
    parser.add_argument("--wires", nargs="+", choices=list(SPECS), default=list(SPECS))
    parser.add_argument("--modes", nargs="+", choices=["json", "stream"],
                        default=["json", "stream"])
    parser.add_argument("--small", type=int, default=20)
    parser.add_argument("--large", type=int, default=120)
    parser.add_argument("--config", help="a route table (TOML; {upstream} is the fake "
                        "upstream's URL) served with --config instead of --backend; "
                        "'routing' for routing.py's")
    parser.add_argument("--model", default=canned.MODEL, help="the model the requests ask for")
    args = parser.parse_args(argv)
    logs = Path(tempfile.mkdtemp(prefix="tooluse-instructions-"))
    upstream, url = _upstream(logs, "upstream")
    failing, fail = _upstream(logs, "failing", "--status", "529")
    print(f"| API | mode | instructions per request ({args.python}) |")
    print("|---|---|---:|")
    try:
        upstream.wait_ready(60)
        failing.wait_ready(60)
        config = _config(args.config, url, fail, logs) if args.config else None
        for wire in args.wires:
            for mode in args.modes:
                stream = mode == "stream"
                small = _instructions(args.python, wire, stream, args.small, url, logs,
                                      config, args.model)
                large = _instructions(args.python, wire, stream, args.large, url, logs,
                                      config, args.model)
                per = (large - small) / (args.large - args.small)
                print(f"| {wire} | {mode} | {per / 1e6:.2f} M |", flush=True)
    finally:
        upstream.stop()
        failing.stop()
    _ = httpx2  # the load generator's client
    return 0


if __name__ == "__main__":
    sys.exit(main())
