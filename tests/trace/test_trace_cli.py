"""tooluse logs (list, show, --json, -q, -n) and tooluse serve --trace's path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from trace_fakes import WEATHER, city_backend

from tooluse.cli import build_parser, main
from tooluse.cli.serve import _trace_path
from tooluse.messages import Message, Request
from tooluse.trace import Trace, tracing
from tooluse.trace.store import TraceStore


def _fill(path: Path, cities: list[str]) -> list[str]:
    store = TraceStore(path)
    ids = []
    for city in cities:
        trace = Trace(source="runner", api="runner", backend="prompt")
        request = Request(messages=[Message(role="user", content=f"Weather in {city}?")],
                          tools=[WEATHER], tool_choice={"type": "any"})
        with tracing(trace):
            turn = trace.begin_turn(request)
            turn.finish(city_backend().complete(request))
        trace.sent(None)
        ids.append(store.add(trace)["id"])
    store.close()
    return ids


def test_logs_lists_newest_first_and_searches(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "t.db"
    ids = _fill(db, ["Paris", "Oslo", "Lima"])
    assert main(["logs", "--db", str(db)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:4] == ["ID", "TIME", "API", "MODEL"]
    assert [line.split()[0] for line in lines[1:]] == ids[::-1]
    assert "get_weather" in lines[1] and "city-text" in lines[1]
    assert main(["logs", "--db", str(db), "-n", "1"]) == 0
    assert [line.split()[0] for line in capsys.readouterr().out.splitlines()[1:]] == [ids[2]]
    assert main(["logs", "--db", str(db), "-q", "oslo", "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert [item["id"] for item in found] == [ids[1]] and found[0]["calls"] == 1
    assert main(["logs", "--db", str(db), "-q", "Madrid"]) == 0
    assert capsys.readouterr().out.strip() == "no traces holding 'Madrid'"


def test_logs_shows_one_trace_prompt_raw_output_and_calls(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "t.db"
    [trace_id] = _fill(db, ["Quito"])
    assert main(["logs", "--db", str(db), trace_id[:5]]) == 0
    out = capsys.readouterr().out
    assert f"trace {trace_id}" in out
    assert "-- prompt --" in out and "Weather in Quito?" in out
    # The prefill between « », the call block between ⟦call id: and ⟧.
    assert "«<function_calls>\n" in out.replace("    ", "")
    assert "⟦toolu_" in out and "<city>Quito</city>" in out
    assert 'get_weather {"city": "Quito"}' in out and "model · valid" in out
    assert "3 forced" in out and "12 cached" in out
    assert main(["logs", "--db", str(db), trace_id, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["id"] == trace_id


def test_logs_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["logs", "--db", str(tmp_path / "none.db")]) == 1
    assert "no traces at" in capsys.readouterr().err
    db = tmp_path / "t.db"
    _fill(db, ["Paris"])
    assert main(["logs", "--db", str(db), "nope"]) == 1
    assert "no trace 'nope'" in capsys.readouterr().err
    assert main(["logs", "--db", str(db), "-n", "0"]) == 2


def test_serve_trace_flag(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    parser = build_parser()
    assert _trace_path(parser.parse_args(["serve"])) is None
    assert _trace_path(parser.parse_args(["serve", "--trace=/x/t.db"])) == "/x/t.db"
    monkeypatch.setenv("TOOLUSE_TRACE_DB", str(tmp_path / "env.db"))
    assert _trace_path(parser.parse_args(["serve", "--trace"])) == str(tmp_path / "env.db")


def test_logs_serve_serves_the_page_over_the_file(tmp_path: Path) -> None:
    import subprocess
    import sys
    import time

    import httpx2 as httpx

    from tooluse.server.thread import free_port

    db = tmp_path / "t.db"
    [trace_id] = _fill(db, ["Cairo"])
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "tooluse.cli", "logs", "--db", str(db),
                               "--serve", "--port", str(port)], stderr=subprocess.PIPE)
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                listed = httpx.get(url + "/trace/api/traces", timeout=2)
                break
            except httpx.HTTPError:
                assert server.poll() is None and time.monotonic() < deadline
                time.sleep(0.1)
        assert [t["id"] for t in listed.json()["traces"]] == [trace_id]
        one = httpx.get(f"{url}/trace/api/traces/{trace_id}").json()
        assert one["turns"][0]["calls"][0]["input"] == {"city": "Cairo"}
        assert "tooluse traces" in httpx.get(url + "/trace").text
    finally:
        server.terminate()
        server.wait(10)
