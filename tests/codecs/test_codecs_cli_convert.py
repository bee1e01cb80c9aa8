"""`tooluse convert`: through ``tooluse.cli.main`` with stdin patched, and one real subprocess."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tooluse.cli import main
from tooluse.codecs import anthropic, bedrock, openai
from tooluse.stream import events_from_response

SEEDS = Path(__file__).resolve().parents[1] / "fixtures" / "seeds"


def seed_text(name: str) -> str:
    return (SEEDS / name).read_text(encoding="utf-8")


def run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], stdin: str, *args: str) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    code = main(["convert", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_anthropic_to_bedrock_request(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(monkeypatch, capsys, seed_text("anthropic_request_tool_result_error.json"),
                         "--from", "anthropic", "--to", "bedrock")
    assert code == 0 and err == ""
    body = json.loads(out)
    assert body["messages"][2]["content"][0]["toolResult"]["status"] == "error"
    assert anthropic.decode_request(json.loads(seed_text("anthropic_request_tool_result_error.json"))) == \
        bedrock.decode_request(body)


def test_bedrock_to_openai_with_model_id(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(monkeypatch, capsys, seed_text("bedrock_request_top_song_forced.json"),
                       "--from", "bedrock", "--to", "openai", "--model-id", "gpt-4o")
    assert code == 0
    body = json.loads(out)
    assert body["model"] == "gpt-4o"
    assert body["tool_choice"] == {"type": "function", "function": {"name": "top_song"}}
    openai.decode_request(body)


def test_cannot_carry_fails_with_one_line_unless_lenient(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    text = seed_text("anthropic_request_tool_result_error.json")
    code, out, err = run(monkeypatch, capsys, text, "--from", "anthropic", "--to", "openai")
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and "messages.2.content.0.is_error" in err and "Traceback" not in err
    code, out, _ = run(monkeypatch, capsys, text, "--from", "anthropic", "--to", "openai", "--lenient")
    assert code == 0 and json.loads(out)["messages"][-1]["content"].startswith("Error: ")


@pytest.mark.parametrize(("stdin", "expected"), [
    ("{not json", "input is not valid JSON"),
    ('{"model": "m", "messages": []}', "max_tokens: Field required"),
    ('{"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": [{"type": "tool_result"}]}]}',
     "messages.0.content.0.tool_use_id: Field required"),
])
def test_bad_input(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], stdin: str, expected: str) -> None:
    code, out, err = run(monkeypatch, capsys, stdin, "--from", "anthropic", "--to", "bedrock")
    assert code == 1 and out == ""
    assert err.startswith("tooluse convert: ") and expected in err and err.count("\n") == 1


def test_responses_and_legacy(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(monkeypatch, capsys, seed_text("bedrock_response_tool_use.json"),
                       "--from", "bedrock", "--to", "anthropic", "--response")
    assert code == 0 and json.loads(out)["content"][0]["name"] == "top_song"
    code, out, _ = run(monkeypatch, capsys, seed_text("bedrock_response_tool_use.json"),
                       "--from", "bedrock", "--to", "legacy", "--response")
    assert code == 0 and "<tool_name>top_song</tool_name>" in out and "<sign>WZPZ</sign>" in out
    code, out, _ = run(monkeypatch, capsys, seed_text("anthropic_request_stock_price.json"),
                       "--from", "anthropic", "--to", "legacy")
    assert code == 0 and out.startswith("System: ") and "General Motors" in out


def test_stream_conversion(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    resp = anthropic.decode_response(json.loads(seed_text("anthropic_response_tool_use.json")))
    lines = "".join(json.dumps(e) + "\n" for e in anthropic.encode_events(events_from_response(resp, chunk_size=5)))
    code, out, _ = run(monkeypatch, capsys, lines, "--from", "anthropic", "--to", "bedrock", "--stream")
    assert code == 0
    events = [json.loads(line) for line in out.splitlines()]
    assert events[0] == {"messageStart": {"role": "assistant"}}
    from tooluse.stream import accumulate
    got = accumulate(bedrock.decode_events(events))
    assert got.content == resp.content and got.stop_reason == "tool_use"


def test_subprocess(tmp_path: Path) -> None:
    src = tmp_path / "req.json"
    src.write_text(seed_text("anthropic_request_get_weather.json"), encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "tooluse.cli", "convert", "--from", "anthropic", "--to", "openai",
                           "--input", str(src)], capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    body: Any = json.loads(proc.stdout)
    assert body["tools"][0]["function"]["name"] == "get_weather"
    bad = subprocess.run([sys.executable, "-m", "tooluse.cli", "convert", "--from", "openai", "--to", "anthropic"],
                         input="[1]", capture_output=True, text=True, timeout=60, check=False)
    assert bad.returncode == 1 and "Traceback" not in bad.stderr and bad.stderr.startswith("tooluse convert: ")


def test_image_to_legacy_fails_unless_lenient(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    body = json.dumps({"model": "m", "max_tokens": 9, "messages": [{"role": "user", "content": [
        {"type": "text", "text": "look"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
    ]}]})
    code, out, err = run(monkeypatch, capsys, body, "--from", "anthropic", "--to", "legacy")
    assert code == 1 and out == "" and "messages.0.content.1" in err
    code, out, _ = run(monkeypatch, capsys, body, "--from", "anthropic", "--to", "legacy", "--lenient")
    assert code == 0 and "look" in out and "image" in out
