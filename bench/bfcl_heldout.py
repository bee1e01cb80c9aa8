"""Lay out BFCL's other single-turn categories as a held-out data folder for ``tooluse eval bfcl``.

    python bench/bfcl_heldout.py OUT_DIR [--wheel PATH] [--version 2026.3.23] [--min-tools N]

The en-bfcl preset's techniques were read off and tuned on the six categories in
``../shared/bench/bfcl/`` (``simple_python``, ``multiple``, ``parallel``,
``parallel_multiple``, ``irrelevance``, ``live_simple``). BFCL's own release, the
``bfcl-eval`` package on PyPI, holds the same six files (byte for byte, in 2026.3.23) and
the single-turn categories none of that tuning has seen: ``live_multiple``,
``live_parallel``, ``live_parallel_multiple``, ``live_irrelevance`` and
``live_relevance``. This script takes them from the package's wheel — downloaded with
``pip download --no-deps`` unless ``--wheel`` names one — and writes them to ``OUT_DIR`` in
the layout of ``../shared/bench/bfcl`` (``BFCL_v4_<name>.json`` beside
``possible_answer_<name>.json``); ``--min-tools N`` also writes, for each, the cases that
offer N tools or more as ``<name>_toolsN`` (where tool retrieval acts). Nothing is kept in
the project: the folder is an input of ``tooluse eval bfcl --data-dir OUT_DIR``, made when
measuring.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

HELD_OUT = (
    "live_multiple",
    "live_parallel",
    "live_parallel_multiple",
    "live_irrelevance",
    "live_relevance",
)
VERSION = "2026.3.23"


def download(version: str, into: Path) -> Path:
    """The ``bfcl-eval`` wheel of ``version``, from the package index pip is set up with."""
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "-q",
            "-d",
            str(into),
            f"bfcl-eval=={version}",
        ],
        check=True,
    )
    wheels = sorted(into.glob("bfcl_eval-*.whl"))
    if not wheels:
        raise SystemExit(f"pip download left no bfcl_eval wheel in {into}")
    return wheels[0]


def extract(wheel: Path, out: Path) -> list[str]:
    """Write the held-out categories of ``wheel`` to ``out``; return the files written."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        wanted: dict[str, str] = {}
        for category in HELD_OUT:
            wanted[f"bfcl_eval/data/BFCL_v4_{category}.json"] = f"BFCL_v4_{category}.json"
            answer = f"bfcl_eval/data/possible_answer/BFCL_v4_{category}.json"
            if answer in names:  # none for irrelevance and relevance: graded without one
                wanted[answer] = f"possible_answer_{category}.json"
        missing = [name for name in wanted if name not in names]
        if missing:
            raise SystemExit(f"{wheel.name} lacks {', '.join(missing)}")
        for name, target in wanted.items():
            (out / target).write_bytes(archive.read(name))
            written.append(target)
    return written


def many_tools(out: Path, category: str, least: int) -> str | None:
    """Write the cases of ``category`` in ``out`` that offer at least ``least`` tools as the
    category ``<category>_tools<least>`` (with their possible answers, if it has them);
    return its name, or None when no case offers that many."""
    name = f"{category}_tools{least}"
    questions = (out / f"BFCL_v4_{category}.json").read_text().splitlines()
    kept = {}  # id -> line, each line read once
    for line in questions:
        item = json.loads(line)
        if len(item["function"]) >= least:
            kept[item["id"]] = line
    if not kept:
        return None
    (out / f"BFCL_v4_{name}.json").write_text("\n".join(kept.values()) + "\n")
    answers = out / f"possible_answer_{category}.json"
    if answers.is_file():
        lines = answers.read_text().splitlines()
        picked = [line for line in lines if json.loads(line)["id"] in kept]
        (out / f"possible_answer_{name}.json").write_text("\n".join(picked) + "\n")
    return name


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--wheel", type=Path, help="a bfcl_eval wheel already downloaded")
    parser.add_argument("--version", default=VERSION)
    parser.add_argument(
        "--min-tools",
        type=int,
        metavar="N",
        help="also write <category>_toolsN: the cases offering N tools or more (retrieval)",
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        wheel = args.wheel or download(args.version, Path(tmp))
        written = extract(wheel, args.out_dir)
    if args.min_tools:
        for category in HELD_OUT:
            name = many_tools(args.out_dir, category, args.min_tools)
            if name:
                written.append(f"BFCL_v4_{name}.json")
    print(f"{args.out_dir}: {', '.join(written)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
