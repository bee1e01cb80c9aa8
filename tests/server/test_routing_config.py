"""``tooluse serve --config FILE``: a broken config is one line naming the file, the entry and
what is wrong, with exit status 2 (a table of broken files); ``--check`` prints the route
table; the flags a config replaces are refused beside it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tooluse.cli import main
from tooluse.server.route_config import ConfigError, parse_config

GOOD = """
[[models]]
name = "claude-sonnet-*"
backend = "scripted:from sonnet"
fallbacks = ["local-big"]

[[models]]
name = "local-big"
backend = ["openai-prompt:http://10.0.0.5:8080/v1#qwen3", "openai-prompt:http://10.0.0.6:8080/v1#qwen3"]
context_window = 8192
timeout = 30

[[keys]]
key = "sk-team-a-0123456789"
name = "team-a"
models = ["local-*", "claude-haiku-*"]
rpm = 60
"""

#: (what is broken, the file's text, what its one line says after "FILE: ")
BROKEN: list[tuple[str, str, str]] = [
    ("not TOML", '[[models]]\nname = "a\n',
     "not valid TOML: "),
    ("no models", 'usage_store = "x.db"\n',
     "no [[models]] entry: a config routes model names to backends"),
    ("unknown top-level key", '[[models]]\nname = "a"\nbackend = "scripted"\n[[modles]]\n',
     "the top level: unknown key 'modles' (known: models, keys, usage_store)"),
    ("unknown key in a model", '[[models]]\nname = "a"\nbackend = "scripted"\nfallback = ["b"]\n',
     "[[models]] #1 ('a'): unknown key 'fallback' (known: name, backend, fallbacks, options, "
     "preset, context_window, timeout, connect_timeout, read_timeout, cooldown)"),
    ("no name", '[[models]]\nbackend = "scripted"\n',
     "[[models]] #1: name is missing"),
    ("no backend", '[[models]]\nname = "a"\n',
     "[[models]] #1 ('a'): backend is missing"),
    ("backend not a spec", '[[models]]\nname = "a"\nbackend = 3\n',
     "[[models]] #1 ('a'): backend must be a backend spec or a non-empty list of them, not 3"),
    ("empty deployments", '[[models]]\nname = "a"\nbackend = []\n',
     "[[models]] #1 ('a'): backend must be a backend spec or a non-empty list of them, not []"),
    ("unknown backend", '[[models]]\nname = "a"\nbackend = "anthropc:claude"\n',
     "[[models]] #1 ('a'): backend 'anthropc:claude': unknown backend 'anthropc' (known: "),
    ("fallback naming no model",
     '[[models]]\nname = "a"\nbackend = "scripted"\nfallbacks = ["b"]\n',
     "[[models]] #1 ('a'): fallbacks: 'b' names no [[models]] entry"),
    ("fallback to itself",
     '[[models]]\nname = "a"\nbackend = "scripted"\nfallbacks = ["a"]\n',
     "[[models]] #1 ('a'): fallbacks: it names itself"),
    ("a cycle",
     '[[models]]\nname = "a"\nbackend = "scripted"\nfallbacks = ["b"]\n'
     '[[models]]\nname = "b"\nbackend = "scripted"\nfallbacks = ["c"]\n'
     '[[models]]\nname = "c"\nbackend = "scripted"\nfallbacks = ["a"]\n',
     "[[models]] #1 ('a'): fallbacks form a cycle: a -> b -> c -> a"),
    ("a name twice",
     '[[models]]\nname = "a"\nbackend = "scripted"\n[[models]]\nname = "a"\nbackend = "scripted"\n',
     "[[models]] #2 ('a'): the name is already that of [[models]] #1 ('a')"),
    ("a bad context window",
     '[[models]]\nname = "a"\nbackend = "scripted"\ncontext_window = "8k"\n',
     "[[models]] #1 ('a'): context_window must be a whole number of tokens > 0, not '8k'"),
    ("a bad timeout", '[[models]]\nname = "a"\nbackend = "scripted"\ntimeout = 0\n',
     "[[models]] #1 ('a'): timeout must be a number of seconds > 0, not 0"),
    ("an option the backend does not take",
     '[[models]]\nname = "a"\nbackend = "anthropic:http://127.0.0.1:9#m"\n'
     'options = { temprature = 1 }\n',
     "[[models]] #1 ('a'): backend 'anthropic:http://127.0.0.1:9#m' does not take these "
     "options (AnthropicBackend() got an unexpected keyword argument 'temprature')"),
    ("deployments naming their model and not",
     '[[models]]\nname = "a"\nbackend = ["openai:http://127.0.0.1:9/v1#m", '
     '"openai:http://127.0.0.1:8/v1"]\n',
     "[[models]] #1 ('a'): its deployments must all name their model or none may"),
    ("a key given twice over",
     '[[models]]\nname = "a"\nbackend = "scripted"\n[[keys]]\nkey = "k1"\nkey_env = "K"\n',
     "[[keys]] #1: give the key as key = \"...\" or key_env = \"VARIABLE\" (one of them)"),
    ("a key variable not set",
     '[[models]]\nname = "a"\nbackend = "scripted"\n[[keys]]\nkey_env = "TOOLUSE_NO_SUCH_VAR"\n',
     "[[keys]] #1: key_env: the environment variable TOOLUSE_NO_SUCH_VAR is not set (or empty)"),
    ("a bad rpm",
     '[[models]]\nname = "a"\nbackend = "scripted"\n[[keys]]\nkey = "k1"\nrpm = -5\n',
     "[[keys]] #1: rpm must be a whole number > 0, not -5"),
    ("an unknown key field",
     '[[models]]\nname = "a"\nbackend = "scripted"\n[[keys]]\nkey = "k1"\nmodel = ["a"]\n',
     "[[keys]] #1: unknown key 'model' (known: key, key_env, name, models, rpm, tpm)"),
    ("the same key twice",
     '[[models]]\nname = "a"\nbackend = "scripted"\n[[keys]]\nkey = "sk-same-secret"\n'
     '[[keys]]\nkey = "sk-same-secret"\nname = "b"\n',
     "[[keys]] #2 ('b'): the same key as [[keys]] #1"),
]


@pytest.mark.parametrize(("what", "text", "line"), BROKEN, ids=[b[0] for b in BROKEN])
def test_a_broken_config_is_one_line_and_exit_2(
    what: str, text: str, line: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "gateway.toml"
    path.write_text(text)
    status = main(["serve", "--config", str(path)])
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert status == 2, err
    assert len(lines) == 1, err
    assert lines[0].startswith(f"tooluse serve: {path}: {line}"), (what, lines[0])
    assert "sk-same-secret" not in err and "k1" not in err.replace(str(path), "")


def test_there_are_at_least_ten_broken_files() -> None:
    assert len(BROKEN) >= 10


def test_a_broken_config_exits_2_from_the_real_command(tmp_path: Path) -> None:
    path = tmp_path / "gateway.toml"
    path.write_text('[[models]]\nname = "a"\nbackend = "scripted"\nfallbacks = ["nope"]\n')
    done = subprocess.run([sys.executable, "-m", "tooluse.cli", "serve", "--config", str(path)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2
    assert done.stderr.strip() == (f"tooluse serve: {path}: [[models]] #1 ('a'): fallbacks: "
                                   "'nope' names no [[models]] entry")


def test_check_prints_the_route_table(tmp_path: Path) -> None:
    path = tmp_path / "gateway.toml"
    path.write_text(GOOD + '\n[[models]]\nname = "gpt-*"\n'
                    'backend = "openai:https://user:secret@example.invalid/v1"\n')
    done = subprocess.run([sys.executable, "-m", "tooluse.cli", "serve", "--config", str(path),
                           "--check"], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.splitlines()[0] == f"{path}: 3 model route(s), 1 key(s)"
    assert "claude-sonnet-*  scripted:from sonnet" in out
    assert "local-big        openai-prompt:http://10.0.0.5:8080/v1#qwen3" in out
    assert "openai-prompt:http://10.0.0.6:8080/v1#qwen3" in out
    assert "8192" in out and "its model" in out and "client's name" in out
    assert "key team-a: models local-*, claude-haiku-*; rpm 60" in out
    assert "(no '*' route: other model names are answered 404)" in out
    assert "secret" not in out and "sk-team-a-0123456789" not in out  # no password, no key


def test_check_of_a_broken_config_is_its_one_line(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "gateway.toml"
    path.write_text('[[models]]\nname = "a"\nbackend = "nope:x"\n')
    assert main(["serve", "--config", str(path), "--check"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


@pytest.mark.parametrize("flags", [["--backend", "scripted"], ["-o", "n_threads=1"],
                                   ["--preset", "en-bfcl"], ["--upstream-timeout", "5"],
                                   ["--slots", "2"]])
def test_flags_a_config_replaces_are_refused_beside_it(
    flags: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "gateway.toml"
    path.write_text(GOOD)
    assert main(["serve", "--config", str(path), *flags]) == 2
    err = capsys.readouterr().err
    assert "is set per model in the config file" in err and err.count("\n") == 1


def test_check_needs_a_config(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--check"]) == 2
    assert "--check checks a config" in capsys.readouterr().err


def test_workers_refuse_a_config_with_a_local_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "gateway.toml"
    path.write_text('[[models]]\nname = "*"\nbackend = "local"\n')
    assert main(["serve", "--config", str(path), "--workers", "2"]) == 2
    assert "--workers is for remote backends" in capsys.readouterr().err


def test_the_parsed_config_keeps_order_fallbacks_and_keys() -> None:
    config = parse_config(GOOD, "g.toml")
    assert [m.name for m in config.models] == ["claude-sonnet-*", "local-big"]
    assert config.models[1].options == {"timeout": 30.0}
    assert [e.name for e in config.chain(config.models[0])] == ["claude-sonnet-*", "local-big"]
    key = config.keys[0]
    assert key.allows("local-big") and key.allows("claude-haiku-4-5")
    assert not key.allows("claude-sonnet-4-5")
    assert "sk-team-a" not in repr(key) and "sk-team-a" not in repr(config)


def test_a_key_may_come_from_the_environment() -> None:
    text = '[[models]]\nname = "a"\nbackend = "scripted"\n[[keys]]\nkey_env = "TEAM_KEY"\n'
    config = parse_config(text, "g.toml", env={"TEAM_KEY": "sk-from-env"})
    assert config.keys[0].secret == "sk-from-env"
    assert config.keys[0].name.startswith("key-") and len(config.keys[0].name) == 12
    with pytest.raises(ConfigError, match="TEAM_KEY is not set"):
        parse_config(text, "g.toml", env={k: v for k, v in os.environ.items()
                                          if k != "TEAM_KEY"})


def test_backend_alone_is_served_as_before_routing(scripted_model_fn: object) -> None:
    """``--backend`` alone: one route '*' over the backend as it is: the client's model name
    reaches it unchanged, no route headers, /health and /v1/models as before."""
    import httpx2

    from tooluse.backends.scripted import ScriptedBackend
    from tooluse.server import ServerThread, create_app

    backend = ScriptedBackend(scripted_model_fn, model="scripted-model")  # type: ignore[arg-type]
    with ServerThread(create_app(backend)) as srv:
        answer = httpx2.post(srv.url + "/v1/messages", json={
            "model": "any-name-at-all", "max_tokens": 20,
            "messages": [{"role": "user", "content": "hi"}]}, trust_env=False)
        health = httpx2.get(srv.url + "/health", trust_env=False).json()
        models = httpx2.get(srv.url + "/v1/models", trust_env=False).json()
    assert answer.status_code == 200 and answer.json()["model"] == "any-name-at-all"
    assert backend.requests[-1].model == "any-name-at-all"
    assert not any(h.startswith("x-tooluse-route") or h.startswith("x-tooluse-attempts")
                   for h in answer.headers)
    assert health == {"status": "ok", "backend": "scripted", "model": "scripted-model"}
    assert [m["id"] for m in models["data"]] == ["scripted-model"]


def test_an_async_stream_records_its_route_also_without_a_model_name() -> None:
    """The route that answered is known from a stream's first event, whatever the request's
    model (the usage row's ``route``): sync and async alike."""
    import asyncio

    from tooluse.messages import Message, Request, TextBlock
    from tooluse.server.routes import RouteTable
    from tooluse.server.routing import RouteBackend, _Asked

    config = parse_config('[[models]]\nname = "*"\nbackend = "scripted:hello"\n', "t.toml")
    table = RouteTable.build(config)
    try:
        request = Request(messages=[Message(role="user", content=[TextBlock(text="hi")])])

        async def run() -> list[object]:
            return [e async for e in RouteBackend(table.routes[0], asked).astream(request)]

        asked = _Asked(None)
        assert asyncio.run(run()) and asked.answered_by == "*"
        asked = _Asked(None)
        assert list(RouteBackend(table.routes[0], asked).stream(request))
        assert asked.answered_by == "*"
    finally:
        table.close()
