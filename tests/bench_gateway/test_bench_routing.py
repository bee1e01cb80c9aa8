"""The routing benchmark's own parts: its tooluse config is one the gateway serves (six
routes, the benchmarked name reaching the sixth through a glob, the failover route with a
fallback and no cooldown), the upstream's ``--status`` makes the failing upstream the
failover needs, and the whole benchmark runs (tooluse's paths, a few requests)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "gateway"
sys.path.insert(0, str(BENCH))

from upstream import Upstream  # noqa: E402


def _load(name: str, file: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, BENCH / file)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


routing_bench = _load("bench_gateway_routing", "routing.py")


def test_the_tooluse_config_routes_as_the_benchmark_says(tmp_path: Path) -> None:
    from tooluse.server.route_config import load_config
    from tooluse.server.routes import RouteTable

    path = tmp_path / "routes.toml"
    routing_bench.tooluse_config(path, "http://127.0.0.1:9", "http://127.0.0.1:8")
    config = load_config(path)
    table = RouteTable.build(config)
    try:
        assert len(table.routes) == 6
        routed = table.match(routing_bench.ROUTED)
        assert routed is table.routes[5] and routed.name == "bench-*"
        failover = table.match(routing_bench.FAILOVER)
        assert failover is not None and failover.entry is not None
        assert failover.entry.cooldown == 0 and failover.entry.fallbacks == ("bench-spare",)
        assert [r.name for r in table.chain(failover)] == ["bench-failover", "bench-spare"]
    finally:
        table.close()


def test_litellm_gets_the_same_routes_and_fallbacks(tmp_path: Path) -> None:
    path = tmp_path / "litellm.yaml"
    routing_bench.litellm_config(path, "http://127.0.0.1:9", "http://127.0.0.1:8")
    text = path.read_text()
    for name in ("claude-opus-*", "claude-haiku-*", "gpt-*", "bench-failover", "bench-spare",
                 "bench-*"):
        assert f'model_name: "{name}"' in text
    assert '{"bench-failover": ["bench-spare"]}' in text and "num_retries: 0" in text


def test_a_failing_upstream_answers_its_status_in_the_wire_format() -> None:
    up = Upstream(status=529)
    status, _, body = up.answer("POST", "/v1/messages", b'{"model": "m", "tools": [{}]}')
    assert status == 529
    assert json.loads(body)["error"]["type"] == "overloaded_error"
    status, _, body = up.answer("POST", "/v1/chat/completions", b'{"model": "m"}')
    assert status == 529 and "bench upstream: 529" in json.loads(body)["error"]["message"]
    assert up.served["failed"] == 2 and up.served["anthropic"] == 0


@pytest.mark.slow
def test_the_benchmark_runs(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH / "routing.py"), "--no-litellm", "--rounds", "1",
         "--requests", "20", "--warmup", "5", "--no-write"],
        capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    assert "routing adds" in out and "a failover adds" in out
    for label in ("tooluse --backend (no routing)", "tooluse --config, failover"):
        row = next(line for line in out.splitlines() if line.startswith(f"| {label}"))
        assert row.rstrip().endswith("| 0 |"), row  # no errors
    assert "failed attempt's own time, as the gateway timed it" in out
