"""`tooluse demo` outside its model turns: start-up and exit, with and without the early
model load (docs/local.md, "Start-up and exit").

    python bench/speed_startup.py                 # 8 interleaved rounds, ~2 minutes quiet
    python bench/speed_startup.py --rounds 15 --json /tmp/startup.json

Fresh processes, warm (the disk prompt cache filled by an untimed first run, bytecode
caching allowed as in speed_demo_floor.py), alternating in each round:

- **demo**: ``python -m tooluse.cli demo`` as it ships;
- **demo, no early load**: the same with ``start_local_load`` replaced by a no-op, so the
  model loads when the backend is built, after the imports (what the early load saves, or
  costs on a machine without an idle core);
- **--help**: ``python -m tooluse.cli demo --help`` (building the parser: what every
  command pays before it starts).

Per run: wall time, the time to the first output line, the time from the last line to the
process's exit, and "outside the turns" (wall minus the model turns the demo prints).
Medians over the rounds; the output of both demo variants must be the same.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

_NO_EARLY_LOAD = (
    "import sys, tooluse.cli.demo as d; d.start_local_load = lambda *a, **k: None; "
    "sys.argv[0] = 'tooluse'; from tooluse.cli import entry; entry()"
)
VARIANTS: dict[str, list[str]] = {
    "demo": ["-m", "tooluse.cli", "demo"],
    "demo, no early load": ["-c", _NO_EARLY_LOAD, "demo"],
    "--help": ["-m", "tooluse.cli", "demo", "--help"],
}
_TIMES = re.compile(r"\d+\.\d+ (m?s)")


def _env(cache_dir: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("OMP_WAIT_POLICY", None)
    env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
    env["TOOLUSE_PROMPT_CACHE"] = str(cache_dir)
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _run(args: list[str], env: dict[str, str]) -> dict[str, Any]:
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, *args], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=env)
    assert proc.stdout is not None
    first = last = None
    lines = []
    for line in proc.stdout:
        now = time.perf_counter() - started
        first = now if first is None else first
        last = now
        lines.append(line)
    code = proc.wait()
    wall = time.perf_counter() - started
    if code != 0:
        raise SystemExit(f"failed ({code}): {' '.join(args)}\n{''.join(lines)[-2000:]}")
    turns = sum(float(line.split(": ")[1].split(" s")[0]) for line in lines
                if line.startswith("[model turn"))
    return {"wall_s": wall, "first_line_s": first or wall, "exit_s": wall - (last or wall),
            "outside_turns_s": wall - turns, "output": _TIMES.sub(r"T \1", "".join(lines))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    env = _env(Path(tempfile.mkdtemp(prefix="tooluse-startup-")))
    for variant in VARIANTS.values():  # untimed: .pyc files, page cache, disk prompt cache
        _run(variant, env)
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in VARIANTS}
    names = list(VARIANTS)
    for r in range(args.rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            runs[name].append(_run(VARIANTS[name], env))
    outputs = {run["output"] for name in ("demo", "demo, no early load") for run in runs[name]}
    load = os.getloadavg()
    print(f"{args.rounds} rounds, medians; load average {load[0]:.2f} {load[1]:.2f} "
          f"{load[2]:.2f}, {os.cpu_count()} cores; demo outputs identical: {len(outputs) == 1}")
    print("| run | wall s | first line s | last line to exit s | outside the turns s |")
    print("|---|---:|---:|---:|---:|")
    medians: dict[str, dict[str, float]] = {}
    for name in names:
        medians[name] = {key: statistics.median(run[key] for run in runs[name])
                         for key in ("wall_s", "first_line_s", "exit_s", "outside_turns_s")}
        m = medians[name]
        outside = f"{m['outside_turns_s']:.3f}" if name != "--help" else "-"
        print(f"| {name} | {m['wall_s']:.3f} | {m['first_line_s']:.3f} | {m['exit_s']:.3f} | "
              f"{outside} |")
    if args.json:
        for name in names:
            for run in runs[name]:
                run.pop("output")
        args.json.write_text(json.dumps({"load_average": load, "medians": medians,
                                         "runs": runs}, indent=1))
    return 0 if len(outputs) == 1 else 1


if __name__ == "__main__":
    raise SystemExit(main())
