"""bench/README.md gives one line to every script under bench/, and the scripts at its top
follow one naming scheme: what they measure first."""

from __future__ import annotations

import re
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench"


def _scripts() -> list[str]:
    found = [p.relative_to(BENCH).as_posix() for p in BENCH.rglob("*")
             if p.suffix in (".py", ".sh") and "results" not in p.parts
             and "__pycache__" not in p.parts]
    return sorted(found)


def test_the_readme_names_every_script() -> None:
    readme = (BENCH / "README.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`([\w/]+\.(?:py|sh))`", readme))
    missing = [s for s in _scripts() if s not in named and Path(s).name not in named]
    assert not missing, f"bench/README.md says nothing of {missing}"
    gone = [n for n in named if not any(s == n or Path(s).name == n for s in _scripts())]
    assert not gone, f"bench/README.md names scripts that are not there: {gone}"


def test_the_top_level_scripts_say_what_they_measure() -> None:
    top = [s for s in _scripts() if "/" not in s]
    assert len(top) > 30
    odd = [s for s in top if not re.match(r"(speed|bfcl|realistic)_\w+\.(py|sh)$", s)]
    assert not odd, f"not named speed_*, bfcl_* or realistic_*: {odd}"
