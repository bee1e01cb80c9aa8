"""``tooluse run --tool MODULE:FUNCTION`` imports MODULE from the current folder first, as
``uvicorn main:app`` and ``python -m`` do: the ``tooluse`` script alone puts only its own
folder on the import path, so ``w.py`` beside the user was "No module named 'w'"."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tooluse.cli.run import import_from_here

WEATHER = '''\
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"18 C in {city} (from w.py beside you)"
'''


def _tooluse() -> list[str]:
    """The ``tooluse`` console script, as a user runs it; else this interpreter in isolated
    mode, which likewise leaves the current folder off the path."""
    script = shutil.which("tooluse", path=str(Path(sys.executable).parent))
    if script is not None:
        return [script]
    return [sys.executable, "-I", "-c", "import sys; from tooluse.cli import entry; sys.exit(entry())"]


def test_a_tool_module_beside_the_user_is_found(tmp_path: Path) -> None:
    (tmp_path / "w.py").write_text(WEATHER)
    script = json.dumps([{"call": "get_weather", "input": {"city": "Paris"}}, "It is 18 C."])
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([*_tooluse(), "run", "--backend", f"scripted:{script}",
                           "--tool", "w:get_weather", "--json", "Weather in Paris?"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["answer"] == "It is 18 C."
    assert "18 C in Paris (from w.py beside you)" in done.stdout


def test_the_current_folder_comes_before_an_installed_module(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A module of the user's folder wins over one of the same name elsewhere on the path."""
    (tmp_path / "json_tools_here.py").write_text("WHERE = 'here'\n")
    other = tmp_path / "elsewhere"
    other.mkdir()
    (other / "json_tools_here.py").write_text("WHERE = 'elsewhere'\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [str(other), *sys.path])
    monkeypatch.delitem(sys.modules, "json_tools_here", raising=False)
    assert import_from_here("json_tools_here").WHERE == "here"
    assert sys.path[0] == str(tmp_path)
    sys.modules.pop("json_tools_here", None)
