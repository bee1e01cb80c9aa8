"""The environment the suite runs in is consistent and is the one the lock describes.

CI runs the suite in a new virtual environment made from ``constraints.txt`` (``.ci/run``),
so these tests show there what a new user gets: ``pip check`` is clean, and every package
``tooluse[test]`` needs is pinned by the lock at exactly the installed version (a dependency
added to ``pyproject.toml`` without refreshing the lock fails here, not on a user's machine).
"""

from __future__ import annotations

import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "constraints.txt"
# required by some dependencies (llm needs pip and setuptools) but provided by the venv itself
INSTALLER_TOOLS = ("pip", "setuptools", "wheel")


def _pins() -> dict[str, str]:
    pins: dict[str, str] = {}
    for line in LOCK.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        name, sep, version = line.partition("==")
        assert sep, f"constraints.txt: not an exact pin: {line!r}"
        pins[canonicalize_name(name)] = version.strip()
    return pins


def _needed(dist: str, extras: frozenset[str]) -> dict[str, str]:
    """Every distribution (name -> installed version) that ``dist[extras]`` needs, transitively,
    with environment markers evaluated as pip does."""
    seen: dict[str, str] = {}
    todo: list[tuple[str, frozenset[str]]] = [(dist, extras)]
    done: set[tuple[str, frozenset[str]]] = set()
    while todo:
        name, wanted = todo.pop()
        if (name, wanted) in done:
            continue
        done.add((name, wanted))
        try:
            installed = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            pytest.fail(f"{name} is needed but not installed")
        seen[canonicalize_name(name)] = installed.version
        for text in installed.requires or []:
            req = Requirement(text)
            if req.marker is not None:
                envs = [{**default_environment(), "extra": e} for e in (wanted or {""})]
                if not any(req.marker.evaluate(env) for env in envs):
                    continue
            todo.append((req.name, frozenset(req.extras)))
    return seen


def test_pip_check_is_clean() -> None:
    out = subprocess.run([sys.executable, "-m", "pip", "check"], capture_output=True, text=True,
                         timeout=120, check=False)
    assert out.returncode == 0, out.stdout + out.stderr


def test_the_lock_pins_everything_the_test_extra_installs() -> None:
    if not LOCK.exists():
        pytest.skip("no constraints.txt beside pyproject.toml (not a source checkout)")
    pins = _pins()
    needed = _needed("tooluse", frozenset({"test"}))
    needed.pop("tooluse")
    for tool in INSTALLER_TOOLS:  # the venv's own installer; pip freeze leaves them out too
        needed.pop(tool, None)
    missing = sorted(set(needed) - set(pins))
    assert not missing, f"not in constraints.txt (run: bash .ci/lock): {missing}"
    assert "tooluse" not in pins, "the lock pins dependencies, never the project itself"
    drift = {n: (v, pins[n]) for n, v in needed.items() if pins[n] != v}
    assert not drift, (
        "installed versions differ from the lock (installed, locked); install with "
        f"`pip install -e '.[test]' -c constraints.txt`, or refresh it with `bash .ci/lock`: {drift}"
    )


def _examples_imports() -> dict[str, set[str]]:
    """The modules the Python examples of README.md and docs/ import (dotted names, as
    written), with the pages that import them."""
    import re

    found: dict[str, set[str]] = {}
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        for block in re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), re.S):
            for match in re.finditer(r"^\s*(?:from|import)\s+([\w.]+)", block, re.M):
                found.setdefault(match.group(1), set()).add(page.relative_to(ROOT).as_posix())
    return found


def test_the_all_extra_installs_what_every_docs_example_imports() -> None:
    """A venv made by the README's line (``pip install -e ".[all]"``) runs every example:
    each module an example imports is the standard library's, or comes with a distribution
    ``tooluse[all]`` needs (docs/opentelemetry.md's ``opentelemetry`` through ``[otel]``)."""
    imports = _examples_imports()
    assert {"anthropic", "opentelemetry.sdk.trace"} <= set(imports)
    provided = metadata.packages_distributions()
    needed = set(_needed("tooluse", frozenset({"all"})))
    missing = {}
    for module, pages in imports.items():
        top = module.split(".")[0]
        if top in sys.stdlib_module_names or top == "tooluse":
            continue
        # the distributions holding the module itself: a namespace package's top level
        # (opentelemetry) is shared by several, only one holds opentelemetry/sdk
        where = module.replace(".", "/")
        dists = {canonicalize_name(d) for d in provided.get(top, [])
                 if any(str(f).startswith((where + "/", where + ".py"))
                        for f in metadata.distribution(d).files or [])}
        if not dists & needed:
            missing[module] = sorted(pages)
    assert not missing, f"imported by docs examples, not installed by tooluse[all]: {missing}"
