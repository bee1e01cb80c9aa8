"""The prompt cache: the tool loop's last turn reuses the KV cache, and the KV state of the
tool system prompt is saved on disk and loaded by a later process — only when the file
checks out, within a size bound."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tooluse.llama.cache import (
    DiskPromptCache,
    default_cache_dir,
    prompt_cache_from_option,
)

MODEL = "m" * 64
TOKENS = list(range(100, 400))


def _cache(tmp_path: Path, max_bytes: int = 10**6) -> DiskPromptCache:
    return DiskPromptCache(tmp_path / "kv", max_bytes)


def test_a_saved_state_comes_back_only_for_the_same_model_and_tokens(tmp_path: Path) -> None:
    cache = _cache(tmp_path)
    path = cache.write(MODEL, TOKENS, b"state" * 100)
    assert path is not None and path.is_file()
    assert cache.read(MODEL, TOKENS) == b"state" * 100
    assert cache.read("x" * 64, TOKENS) is None  # another model file
    assert cache.read(MODEL, TOKENS[:-1]) is None  # another prefix
    assert cache.read(MODEL, TOKENS[:-1] + [7]) is None


@pytest.mark.parametrize("damage", ["flip_payload", "truncate", "garbage", "header",
                                    "foreign_model"])
def test_a_corrupt_or_foreign_file_is_ignored_and_removed(tmp_path: Path, damage: str) -> None:
    cache = _cache(tmp_path)
    path = cache.write(MODEL, TOKENS, bytes(range(256)) * 8)
    assert path is not None
    data = bytearray(path.read_bytes())
    if damage == "flip_payload":
        data[-10] ^= 0xFF
    elif damage == "truncate":
        data = data[: len(data) // 2]
    elif damage == "garbage":
        data = bytearray(os.urandom(len(data)))
    elif damage == "header":
        data[20:40] = b"{" * 20
    else:  # a valid file of another model, put where this one's would be
        other = cache.write("y" * 64, TOKENS, bytes(range(256)) * 8)
        assert other is not None
        data = bytearray(other.read_bytes())
    path.write_bytes(bytes(data))
    assert cache.read(MODEL, TOKENS) is None
    assert not path.exists()  # not trusted, not kept


def test_the_directory_stays_within_its_size_bound_least_recently_used_first(
        tmp_path: Path) -> None:
    cache = _cache(tmp_path, max_bytes=4500)
    paths = []
    for i in range(3):
        paths.append(cache.write(MODEL, [i] * 10, bytes(1000)))
        os.utime(paths[-1], (1000 + i, 1000 + i))  # distinct ages
    assert cache.size() <= 4500 and all(p is not None and p.exists() for p in paths)
    assert cache.read(MODEL, [0] * 10) is not None  # reading makes it recent
    cache.write(MODEL, [3] * 10, bytes(1000))
    assert cache.size() <= 4500
    assert cache.read(MODEL, [1] * 10) is None  # the least recently used went first
    assert cache.read(MODEL, [0] * 10) is not None and cache.read(MODEL, [3] * 10) is not None
    # a state larger than the whole bound is not written at all
    assert cache.write(MODEL, [9] * 10, bytes(5000)) is None and cache.size() <= 4500


def test_the_option_and_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLUSE_PROMPT_CACHE", str(tmp_path / "env"))
    monkeypatch.setenv("TOOLUSE_PROMPT_CACHE_MB", "2")
    cache = prompt_cache_from_option(True)
    assert cache is not None and cache.directory == tmp_path / "env"
    assert cache.max_bytes == 2 * 1024 * 1024
    assert prompt_cache_from_option(False) is None
    assert prompt_cache_from_option("off") is None
    there = prompt_cache_from_option(str(tmp_path / "there"), 1000)
    assert there is not None and there.directory == tmp_path / "there" and there.max_bytes == 1000
    monkeypatch.setenv("TOOLUSE_PROMPT_CACHE", "off")
    assert prompt_cache_from_option(True) is None
    monkeypatch.delenv("TOOLUSE_PROMPT_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "tooluse" / "prompt-cache"


def test_an_unwritable_directory_is_no_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    cache = DiskPromptCache(blocker / "kv", 10**6)
    assert cache.write(MODEL, TOKENS, b"x") is None
    assert cache.read(MODEL, TOKENS) is None


# -- on the real model ---------------------------------------------------------------------------
_TURNS = r"""
import json, sys
from tooluse.backends.local import LocalBackend
from tooluse.cli.demo import DEMO_PLAN, DEMO_QUESTION, DEMO_SYSTEM, demo_tools
from tooluse.runner import MessageEvent, Runner
backend = LocalBackend(n_threads=2, prompt_cache=sys.argv[1],
                       prompt_cache_mb=float(sys.argv[2]))
runner = Runner(backend, demo_tools(), system=DEMO_SYSTEM, tool_choice=DEMO_PLAN.split(","),
                max_tokens=64)
turns = []
for event in runner.stream(DEMO_QUESTION):
    if isinstance(event, MessageEvent):
        end = backend.last_end
        turns.append({"input": end.input_tokens, "cached": end.cached_tokens,
                      "disk": end.timings["disk_cache_tokens"],
                      "content": [{k: v for k, v in block.items() if k != "id"}
                                  for block in event.response.model_dump()["content"]]})
print(json.dumps(turns))
"""


def _demo_turns(cache_dir: Path, mb: float = 512) -> list[dict[str, Any]]:
    pytest.importorskip("llama_cpp")
    env = dict(os.environ)
    src = str(Path(__file__).resolve().parents[2] / "src")
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run([sys.executable, "-c", _TURNS, str(cache_dir), str(mb)],
                          capture_output=True, text=True, timeout=600, env=env, check=False)
    if proc.returncode != 0 and "not installed" in proc.stderr:
        pytest.skip(proc.stderr.strip().splitlines()[-1])
    assert proc.returncode == 0, proc.stderr
    turns: list[dict[str, Any]] = json.loads(proc.stdout.strip().splitlines()[-1])
    return turns


@pytest.mark.slow
def test_the_demo_reuses_its_prefix_and_a_second_process_loads_it_from_disk(
        tmp_path: Path) -> None:
    cache_dir = tmp_path / "kv"
    cold = _demo_turns(cache_dir)
    assert len(cold) == 3
    # Turn 3 (tool_choice none) keeps the tool descriptions (the default): its prompt begins with all of
    # turn 2's prompt, and the KV cache holds it.
    assert cold[2]["cached"] >= cold[1]["input"] - 5 and cold[2]["cached"] > 0
    assert cold[1]["cached"] >= cold[0]["input"] - 5
    assert cold[0]["disk"] == 0 and cold[0]["cached"] == 0  # nothing on disk yet
    files = list(cache_dir.glob("*.kv"))
    assert len(files) == 1
    warm = _demo_turns(cache_dir)
    # The second process loads the tool system prompt's KV state instead of evaluating it,
    # and the answers are the same.
    assert warm[0]["disk"] > 0 and warm[0]["cached"] == warm[0]["disk"]
    assert warm[0]["disk"] >= 0.8 * warm[0]["input"]
    assert [t["content"] for t in warm] == [t["content"] for t in cold]

    # A corrupt file is ignored (and replaced by a good one): the turn is evaluated in full.
    data = bytearray(files[0].read_bytes())
    data[len(data) // 2] ^= 0xFF
    files[0].write_bytes(bytes(data))
    again = _demo_turns(cache_dir)
    assert again[0]["disk"] == 0 and again[0]["cached"] == 0
    assert [t["content"] for t in again] == [t["content"] for t in cold]
    assert _demo_turns(cache_dir)[0]["disk"] > 0  # rewritten, valid again


@pytest.mark.slow
def test_the_model_respects_the_size_bound(tmp_path: Path) -> None:
    cache_dir = tmp_path / "kv"
    turns = _demo_turns(cache_dir, mb=1)  # one state of the demo's prefix is ~10 MB
    assert turns[0]["disk"] == 0
    assert sum(p.stat().st_size for p in cache_dir.glob("*")) <= 1024 * 1024 if \
        cache_dir.exists() else True


@pytest.mark.slow
def test_token_pieces_come_back_from_disk_identical_and_a_bad_copy_is_recomputed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("llama_cpp")
    from tooluse.backends.local import LocalBackend
    from tooluse.llama.cache import load_pieces

    backend = LocalBackend(n_threads=2, prompt_cache=False)
    loaded = backend.loaded
    truth = loaded.pieces()
    cache = DiskPromptCache(tmp_path / "kv")
    loaded._pieces = None
    assert load_pieces(loaded, cache) == truth  # computed, and saved
    (saved,) = cache.directory.glob("*.pieces")
    loaded._pieces = None

    def not_computed() -> list[bytes]:
        raise AssertionError("the pieces were computed again instead of read")

    with monkeypatch.context() as patch:
        patch.setattr(loaded, "pieces", not_computed)
        assert load_pieces(loaded, cache) == truth  # read back
    data = bytearray(saved.read_bytes())
    data[-3] ^= 0x01
    saved.write_bytes(bytes(data))
    loaded._pieces = None
    assert load_pieces(loaded, cache) == truth  # the damaged copy is not used
    assert loaded.pieces() == truth
