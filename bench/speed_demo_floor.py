"""`tooluse demo` against the llama.cpp floor, back to back in one run on one machine.

    python bench/speed_demo_floor.py                      # 3 rounds, default threads
    python bench/speed_demo_floor.py --rounds 5 --threads 2 --json /tmp/floor.json

Each round runs, as fresh processes, one after the other:

- **floor**: a process that imports ``llama_cpp``, loads the same GGUF, evaluates a prompt
  as long as the demo's first turn and decodes 64 tokens (the issue's definition), timed
  from process start to exit, with load / prompt / decode inside;
- **demo cold**: ``python -m tooluse.cli demo`` with an empty prompt-cache directory;
- **demo warm**: the same again, the disk cache now holding the tool system prompt;
- **per-turn probe**: the demo conversation in one process, recording each model turn's
  time (prompt evaluation, generation) and tokens (prompt, reused, from disk, generated,
  forced); then, in a bare llama.cpp process, the same prompt tokens evaluated cold and the
  same number of tokens decoded one by one — llama.cpp's cost for those tokens without
  tooluse's prefix reuse and forced-token batching.

Targets: cold demo <= 1.3 x floor; warm <= 0.75 x floor.

Child processes run with Python bytecode caching allowed (a user's install has .pyc
files; a PYTHONDONTWRITEBYTECODE environment would charge compiling every module to each
start) after one untimed warm-up run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent / "peers"  # plain_llama.py: loads as tooluse does

_FLOOR = r"""
import json, sys, time
t0 = time.perf_counter()
import llama_cpp
sys.path.insert(0, sys.argv[-1]); import plain_llama; plain_llama.patch()
path, n_prompt, n_decode, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
t1 = time.perf_counter()
llm = llama_cpp.Llama(model_path=path, n_ctx=4096, n_threads=threads, n_threads_batch=threads,
                      n_batch=512, verbose=False)
t2 = time.perf_counter()
# a real prompt's tokens (text repeated to length), not a synthetic id run
text = open(sys.argv[5], encoding="utf-8").read()
tokens = llm.tokenize(text.encode(), add_bos=False, special=True)
while len(tokens) < n_prompt:
    tokens = tokens + tokens
tokens = tokens[:n_prompt]
llm.eval(tokens)
t3 = time.perf_counter()
for i in range(n_decode):
    llm.eval([tokens[i % len(tokens)]])  # one token at a time: the cost of decoding
t4 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "load_s": t2 - t1, "prompt_s": t3 - t2,
                  "decode_s": t4 - t3, "n_prompt": n_prompt, "n_decode": n_decode}))
"""

_PROBE = r"""
import json, sys, time
from tooluse.backends.local import LocalBackend
from tooluse.cli.demo import DEMO_PLAN, DEMO_QUESTION, DEMO_SYSTEM, demo_tools
from tooluse.runner import MessageEvent, Runner
threads = int(sys.argv[1]) or None
options = json.loads(sys.argv[2])
backend = LocalBackend(n_threads=threads, **options)
text = backend.text_model
prompts = []
original = text.generate_text
def generate_text(messages, **kw):
    prompts.append(text.render(messages, kw.get("prefill", "")))
    return original(messages, **kw)
text.generate_text = generate_text
runner = Runner(backend, demo_tools(), system=DEMO_SYSTEM, tool_choice=DEMO_PLAN.split(","),
                max_tokens=256, max_iterations=5)
turns = []
for event in runner.stream(DEMO_QUESTION):
    if isinstance(event, MessageEvent):
        end = backend.last_end
        turns.append({"prompt_tokens": text.tokenize(prompts[-1]), "input": end.input_tokens,
                      "cached": end.cached_tokens, "output": end.output_tokens,
                      "forced": end.timings.get("forced_tokens", 0),
                      "disk": end.timings.get("disk_cache_tokens", 0),
                      "prompt_s": end.timings["prompt_s"], "generate_s": end.timings["generate_s"],
                      "answer": event.response.text()[:80]})
print(json.dumps(turns))
"""

_BARE_TURNS = r"""
import json, sys, time
import llama_cpp
sys.path.insert(0, sys.argv[-1]); import plain_llama; plain_llama.patch()
path, threads = sys.argv[1], int(sys.argv[2])
turns = json.load(open(sys.argv[3]))
llm = llama_cpp.Llama(model_path=path, n_ctx=4096, n_threads=threads, n_threads_batch=threads,
                      n_batch=512, verbose=False)
out = []
for turn in turns:
    tokens = turn["prompt_tokens"]
    llm.reset()
    t0 = time.perf_counter()
    llm.eval(tokens)
    t1 = time.perf_counter()
    for i in range(turn["output"]):
        llm.eval([tokens[i % len(tokens)]])
    t2 = time.perf_counter()
    out.append({"prompt_s": t1 - t0, "decode_s": t2 - t1})
print(json.dumps(out))
"""


def _env(cache_dir: Path | None) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
    env["TOOLUSE_PROMPT_CACHE"] = str(cache_dir) if cache_dir is not None else "off"
    # The floor runs llama.cpp as it comes (OpenMP's default waiting, which is fastest on a
    # quiet machine: 9-10 ms/token decoding on 2 threads here, against ~30 with passive
    # waiting); tooluse's processes choose their own settings (passive waiting, decoding on
    # one thread for a small model; bench/speed_threads.py).
    env.pop("OMP_WAIT_POLICY", None)
    return env


def _run(args: list[str], env: dict[str, str]) -> tuple[float, str]:
    started = time.perf_counter()
    proc = subprocess.run(args, capture_output=True, text=True, env=env, check=False)
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"failed: {' '.join(args[:4])}...\n{proc.stderr[-2000:]}")
    return wall, proc.stdout


def _demo(threads: int, cache_dir: Path) -> dict[str, Any]:
    args = [sys.executable, "-m", "tooluse.cli", "demo"]
    if threads:
        args += ["--threads", str(threads)]
    wall, out = _run(args, _env(cache_dir))
    turns = [float(line.split(": ")[1].split(" s")[0]) for line in out.splitlines()
             if line.startswith("[model turn")]
    answer = next((line for line in out.splitlines() if line.startswith("Final answer:")), "")
    return {"wall_s": wall, "turns_s": turns, "answer": answer}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=0, help="0: the backend's default")
    parser.add_argument("--decode", type=int, default=64, help="floor: tokens decoded")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--probe-options", default="{}",
                        help='LocalBackend options of the per-turn probe, as JSON, e.g. '
                        '\'{"tools_under_none": true}\'')
    args = parser.parse_args()

    sys.path.insert(0, str(ROOT / "src"))
    from tooluse.backends.local import default_model_path

    model = str(default_model_path())
    threads = args.threads or max(1, min(os.cpu_count() or 1, 8))
    work = Path(tempfile.mkdtemp(prefix="tooluse-floor-"))
    text_file = work / "prompt.txt"
    from tooluse.cli.demo import DEMO_SYSTEM, demo_tools
    from tooluse.codecs.legacy import render_tools_prompt

    text_file.write_text(render_tools_prompt([t.spec for t in demo_tools()], DEMO_SYSTEM))

    # untimed warm-up: page cache, .pyc files
    _demo(args.threads, work / "warmup")
    probe_cache = work / "probe-cache"
    _, out = _run([sys.executable, "-c", _PROBE, str(args.threads), args.probe_options],
                  _env(probe_cache))
    probe = json.loads(out.strip().splitlines()[-1])
    n_prompt = probe[0]["input"]

    rounds: list[dict[str, Any]] = []
    for r in range(args.rounds):
        fwall, fout = _run([sys.executable, "-c", _FLOOR, model, str(n_prompt), str(args.decode),
                            str(threads), str(text_file), str(HERE)], _env(None))
        floor = json.loads(fout.strip().splitlines()[-1]) | {"wall_s": fwall}
        cache_dir = work / f"cache-{r}"
        cold = _demo(args.threads, cache_dir)
        warm = _demo(args.threads, cache_dir)
        rounds.append({"floor": floor, "cold": cold, "warm": warm})
        print(f"round {r + 1}: floor {fwall:.2f} s, demo cold {cold['wall_s']:.2f} s "
              f"(turns {cold['turns_s']}), warm {warm['wall_s']:.2f} s (turns {warm['turns_s']})",
              flush=True)

    # per turn: the probe (cold process, empty disk cache) and a warm one, then bare llama.cpp
    _, out = _run([sys.executable, "-c", _PROBE, str(args.threads), args.probe_options],
                  _env(probe_cache))
    probe_warm = json.loads(out.strip().splitlines()[-1])
    turns_file = work / "turns.json"
    turns_file.write_text(json.dumps(probe))
    _, out = _run([sys.executable, "-c", _BARE_TURNS, model, str(threads), str(turns_file),
                   str(HERE)], _env(None))
    bare = json.loads(out.strip().splitlines()[-1])

    def med(values: list[float]) -> float:
        return statistics.median(values)

    floor_wall = med([r["floor"]["wall_s"] for r in rounds])
    cold_wall = med([r["cold"]["wall_s"] for r in rounds])
    warm_wall = med([r["warm"]["wall_s"] for r in rounds])
    load = os.getloadavg()
    print()
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; threads {threads}; "
          f"{args.rounds} rounds, medians")
    parts = {k: med([r["floor"][k] for r in rounds]) for k in
             ("import_s", "load_s", "prompt_s", "decode_s")}
    print(f"floor ({n_prompt} prompt tokens + {args.decode} decoded): {floor_wall:.2f} s wall "
          f"(import {parts['import_s']:.2f}, load {parts['load_s']:.2f}, prompt "
          f"{parts['prompt_s']:.2f}, decode {parts['decode_s']:.2f} = "
          f"{parts['decode_s'] / args.decode * 1000:.1f} ms/token)")
    print(f"demo cold: {cold_wall:.2f} s wall = {cold_wall / floor_wall:.2f} x floor "
          f"(target <= 1.3)")
    print(f"demo warm: {warm_wall:.2f} s wall = {warm_wall / floor_wall:.2f} x floor "
          f"(target <= 0.75)")
    print()
    print("| turn | prompt tokens | reused (from disk) | generated (forced) | tooluse cold "
          "process: prompt + generate s | warm process | bare llama.cpp: prompt eval + decode s |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for i, (t, w, b) in enumerate(zip(probe, probe_warm, bare), 1):
        print(f"| {i} | {t['input']} | {t['cached']} ({int(t['disk'])}) / warm {w['cached']} "
              f"({int(w['disk'])}) | {t['output']} ({int(t['forced'])}) | "
              f"{t['prompt_s']:.3f} + {t['generate_s']:.3f} | {w['prompt_s']:.3f} + "
              f"{w['generate_s']:.3f} | {b['prompt_s']:.3f} + {b['decode_s']:.3f} |")
    if args.json:
        for turn in probe:
            turn.pop("prompt_tokens", None)
        args.json.write_text(json.dumps({
            "load_average": load, "threads": threads, "rounds": rounds, "probe": probe,
            "probe_warm": [{k: v for k, v in t.items() if k != "prompt_tokens"}
                           for t in probe_warm],
            "bare": bare, "medians": {"floor_s": floor_wall, "cold_s": cold_wall,
                                      "warm_s": warm_wall}}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
