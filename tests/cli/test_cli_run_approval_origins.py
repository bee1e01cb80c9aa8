"""`tooluse run` and `tooluse demo` on a scripted model: --approve asks on the terminal
before each call of a tool that is not read-only (y runs it; n, anything else or no input
denies it); a call the backend edited or added is marked, one line per change, and --json
holds each call's origin; the summary line counts the calls that ended in an error;
--preset reaches the backend as preset=NAME."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import cli_side_effect_tools as bank
import pytest

from tooluse.backends.scripted import ScriptedBackend
from tooluse.cli import build_parser, main
from tooluse.cli.demo import run_demo
from tooluse.cli.run import run_command
from tooluse.messages import CallOrigin, Response, ToolUseBlock, ValueChange

HERE = Path(__file__).resolve().parent
TRANSFER = "cli_side_effect_tools:transfer_money"
EDITED = CallOrigin(source="edited", changes=[
    ValueChange(parameter="amount", before=500, after=50, rule="stated_units"),
    ValueChange(parameter="to", kind="added", after="Bob", rule="written_names")])
ADDED = CallOrigin(source="added", rule="fan_out")


def pay(*calls: ToolUseBlock) -> ScriptedBackend:
    return ScriptedBackend([Response(content=list(calls), stop_reason="tool_use"), "Done."])


def transfer(amount: float, id: str = "toolu_1", origin: CallOrigin | None = None,
             name: str = "transfer_money") -> ToolUseBlock:
    return ToolUseBlock(id=id, name=name, input={"amount": amount, "to": "Bob"}, origin=origin)


def run(argv: list[str], backend: Any, stdin: str | None = None) -> tuple[int, str, str]:
    args = build_parser().parse_args(["run", *argv])
    out, err = io.StringIO(), io.StringIO()
    status = run_command(args, backend, out=out, err=err,
                         inp=io.StringIO(stdin) if stdin is not None else io.StringIO())
    return status, out.getvalue(), err.getvalue()


@pytest.fixture(autouse=True)
def _empty_ledger() -> None:
    bank.SENT.clear()


# -- --approve ------------------------------------------------------------------------------

def test_approve_y_runs_the_call() -> None:
    status, out, err = run(["--approve", "--tool", TRANSFER, "Pay Bob 5"], pay(transfer(5)),
                           stdin="y\n")
    assert status == 0, err
    assert 'Approve transfer_money(amount=5, to="Bob")? [y/N] y' in err
    assert "approved transfer_money: the user approved this call" in out
    assert "result  transfer_money -> sent 5 EUR to Bob" in out
    assert "1 tool call(s), none ended in an error." in out
    assert bank.SENT == [(5, "Bob")]


@pytest.mark.parametrize("answer", ["n\n", "\n", "maybe\n", ""])
def test_anything_but_yes_denies_the_call(answer: str) -> None:
    status, out, err = run(["--approve", "--tool", TRANSFER, "Pay Bob 5"], pay(transfer(5)),
                           stdin=answer)
    assert status == 0, err
    assert bank.SENT == []
    assert "denied  transfer_money: the user denied this call; it is not run" in out
    assert "error   transfer_money -> The user denied this call of tool 'transfer_money'" in out
    assert "1 tool call(s), 1 ended in an error, 1 of them denied approval" in out
    if not answer:
        assert "(no answer: standard input is at its end) -> denied" in err


def test_approve_asks_about_each_call_and_shows_where_it_came_from() -> None:
    backend = pay(transfer(5, id="a"), transfer(50, id="b", origin=EDITED))
    status, _, err = run(["--approve", "--tool", TRANSFER, "q"], backend, stdin="n\ny\n")
    assert status == 0
    assert err.count("[y/N]") == 2
    assert ("Approve transfer_money(amount=50, to=\"Bob\") [not as the model wrote it: edited: "
            "amount 500 -> 50 (stated_units); to added \"Bob\" (written_names)]? [y/N] y") in err
    assert bank.SENT == [(50, "Bob")]


def test_without_approve_a_tool_that_requires_approval_is_denied_unasked() -> None:
    backend = pay(transfer(500, name="guarded_transfer", id="a"),
                  transfer(5, name="guarded_transfer", id="b"))
    status, out, err = run(["--tool", "cli_side_effect_tools:guarded_transfer", "q"], backend)
    assert status == 0
    assert "[y/N]" not in err
    assert ("denied  guarded_transfer: it needs approval and no one was asked; it is not run "
            "(tooluse run --approve asks)") in out
    assert bank.SENT == [(5, "Bob")]
    assert "2 tool call(s), 1 ended in an error, 1 of them denied approval" in out


def test_approve_in_another_process_reads_stdin(tmp_path: Path) -> None:
    """The real command line: the answer is piped on stdin, the prompt goes to stderr."""
    script = json.dumps([{"call": "transfer_money", "input": {"amount": 5, "to": "Bob"}},
                         "Done."])
    ledger = tmp_path / "ledger"
    env = {**os.environ, "TOOLUSE_TEST_LEDGER": str(ledger),
           "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    for answer, sent in (("n\n", ""), ("y\n", "5 Bob\n")):
        done = subprocess.run(
            [sys.executable, "-m", "tooluse.cli", "run", "--backend", f"scripted:{script}",
             "--tool", TRANSFER, "--approve", "Pay Bob 5"],
            input=answer, capture_output=True, text=True, env=env, timeout=120, check=False)
        assert done.returncode == 0, done.stderr
        assert "Approve transfer_money(" in done.stderr and "[y/N]" in done.stderr
        assert "[y/N]" not in done.stdout
        assert (ledger.read_text() if ledger.exists() else "") == sent


# -- origins --------------------------------------------------------------------------------

def test_calls_not_as_the_model_wrote_them_are_marked() -> None:
    backend = pay(transfer(5, id="a"), transfer(50, id="b", origin=EDITED),
                  transfer(7, id="c", origin=ADDED))
    status, out, _ = run(["--tool", TRANSFER, "q"], backend)
    assert status == 0
    lines = out.splitlines()
    model = lines.index('  call    transfer_money(amount=5, to="Bob")')
    edited = lines.index('  call    transfer_money(amount=50, to="Bob")')
    added = lines.index('  call    transfer_money(amount=7, to="Bob")')
    assert not lines[model + 1].startswith("    ")
    assert lines[edited + 1:edited + 3] == [
        "    edited  amount 500 -> 50 (stated_units)",
        '    edited  to added "Bob" (written_names)']
    assert lines[added + 1] == "    ADDED   by rule fan_out: the model did not write this call"
    assert ("Not as the model wrote them: 1 call(s) edited, 1 call(s) added by rules "
            "(marked above).") in out


def test_a_run_of_the_models_own_calls_says_nothing_extra() -> None:
    status, out, _ = run(["--tool", TRANSFER, "q"], pay(transfer(5)))
    assert status == 0
    assert "edited" not in out and "ADDED" not in out and "Not as the model" not in out


def test_json_holds_each_calls_origin_and_errors() -> None:
    backend = pay(transfer(5, id="a"), transfer(50, id="b", origin=EDITED),
                  ToolUseBlock(id="c", name="transfer_money", input={"amount": "x"},
                               origin=ADDED))
    status, out, _ = run(["--json", "--tool", TRANSFER, "q"], backend)
    assert status == 0
    document = json.loads(out)
    calls = document["calls"]
    assert [c["source"] for c in calls] == ["model", "edited", "added"]
    assert calls[0]["origin"] is None
    assert calls[1]["origin"]["changes"][0] == {"parameter": "amount", "kind": "changed",
                                                "before": 500, "after": 50,
                                                "rule": "stated_units"}
    assert calls[2]["origin"] == {"source": "added", "rule": "fan_out", "changes": [],
                                  "steered_by": []}
    assert [c["error"] for c in calls] == [False, False, True]
    assert document["errors"] == 1
    tool_uses = [b for m in document["messages"] for b in m["content"]
                 if b["type"] == "tool_use"]
    assert tool_uses[2]["origin"]["rule"] == "fan_out"


def test_the_demo_marks_origins_and_counts_errors() -> None:
    backend = ScriptedBackend([
        Response(content=[ToolUseBlock(id="a", name="get_ticker_symbol",
                                       input={"company_name": "Nowhere Inc"})],
                 stop_reason="tool_use"),
        Response(content=[ToolUseBlock(id="b", name="get_current_stock_price",
                                       input={"symbol": "GM"},
                                       origin=CallOrigin(source="added", rule="plan"))],
                 stop_reason="tool_use"),
        "It is $38.50.",
    ])
    out = io.StringIO()
    assert run_demo(backend, out=out) == 0
    text = out.getvalue()
    assert "error   get_ticker_symbol -> TickerNotFound: no ticker symbol found" in text
    assert "    ADDED   by rule plan: the model did not write this call" in text
    assert "2 tool call(s), 1 ended in an error (the error lines above)." in text
    assert "Not as the model wrote them: 0 call(s) edited, 1 call(s) added by rules" in text


# -- --preset ---------------------------------------------------------------------------------

class _Captured(Exception):
    pass


@pytest.mark.parametrize("command", [["run", "--tool", TRANSFER, "q"], ["demo"]])
def test_preset_reaches_the_backend_as_an_option(command: list[str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[str, dict[str, Any]]] = []

    def load(spec: str, options: dict[str, Any], name: str) -> Any:
        seen.append((spec, dict(options)))
        raise _Captured

    module = "tooluse.cli.run" if command[0] == "run" else "tooluse.cli.demo"
    monkeypatch.setattr(f"{module}.load_cli_backend", load)
    monkeypatch.setattr(f"{module}.start_local_load", lambda *a, **k: None)
    with pytest.raises(_Captured):
        main([*command, "--backend", "scripted", "--preset", "en-bfcl", "-o", "k=v"])
    ((spec, options),) = seen
    assert spec == "scripted" and options == {"preset": "en-bfcl", "k": "v"}


def test_demo_options_reach_the_local_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[str, dict[str, Any]]] = []

    def load(spec: str, options: dict[str, Any], name: str) -> Any:
        seen.append((spec, dict(options)))
        raise _Captured

    monkeypatch.setattr("tooluse.cli.demo.load_cli_backend", load)
    monkeypatch.setattr("tooluse.cli.demo.start_local_load", lambda *a, **k: None)
    with pytest.raises(_Captured):
        main(["demo", "--preset", "en-bfcl", "--threads", "2", "--no-grammar"])
    ((spec, options),) = seen
    assert spec == "local"
    assert options == {"grammar": False, "n_threads": 2, "n_ctx": 4096, "preset": "en-bfcl"}


def test_help_documents_preset_approve_and_an_mcp_example(
        capsys: pytest.CaptureFixture[str]) -> None:
    for command in (["run"], ["demo"], ["eval", "bfcl"]):
        with pytest.raises(SystemExit):
            main([*command, "--help"])
        text = " ".join(capsys.readouterr().out.split())
        assert "--preset NAME" in text and "en-bfcl (English, fitted on BFCL)" in text
        assert "docs/local.md" in text
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    text = capsys.readouterr().out
    assert 'tooluse run --mcp "python -m mcp_server_time" --tool-choice any' in text
    assert "--approve" in text


def test_the_demo_note_does_not_claim_the_model_wrote_a_changed_call() -> None:
    backend = ScriptedBackend([
        Response(content=[ToolUseBlock(id="a", name="get_ticker_symbol",
                                       input={"company_name": "General Motors"})],
                 stop_reason="tool_use"),
        Response(content=[ToolUseBlock(id="b", name="get_current_stock_price",
                                       input={"symbol": "GM"}, origin=CallOrigin(
                                           source="edited", changes=[ValueChange(
                                               parameter="symbol", before="gm", after="GM",
                                               rule="upper")]))],
                 stop_reason="tool_use"),
        "It is $38.50.",
    ])
    out = io.StringIO()
    assert run_demo(backend, out=out) == 0
    text = out.getvalue()
    assert "the model wrote every input" not in text
    assert "every input except the calls marked above" in text
