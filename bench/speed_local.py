"""Benchmark of the local backend: what the grammar costs per token, what the fast grammar
engine saves, what the KV-cache prefix reuse saves, and a quick accuracy check.

    python bench/speed_local.py --cases 20 --threads 2
    python bench/speed_local.py --cases 20 --threads 2 --json /tmp/bench_local.json

Modes, on the same BFCL ``simple_python`` questions with ``tool_choice: any``:

- ``none``: no grammar (plain greedy decoding, stop at ``</function_calls>``);
- ``llama``: llama.cpp's grammar sampler (the whole vocabulary checked at every token);
- ``fast``: tooluse's matcher (best candidates checked in order; text the grammar fixes is
  fed to the model in one batch instead of being sampled token by token).

"generation" time excludes prompt evaluation (reported separately), so the grammar's cost
is not hidden by the prompt. The accuracy column is a quick check (function name and every
parameter among BFCL's acceptable values), not the official checker (``tooluse eval bfcl``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from tooluse.backends.local import LocalBackend
from tooluse.messages import Message, Request, ToolChoice, ToolSpec
from tooluse.tools import normalize_schema


def _match(value: Any, allowed: list[Any]) -> bool:
    for a in allowed:
        if a == value and type(a) is type(value):
            return True
        if isinstance(a, str) and isinstance(value, str) and a.strip().lower() == value.strip().lower():
            return True
        if (isinstance(a, (int, float)) and isinstance(value, (int, float))
                and not isinstance(a, bool) and not isinstance(value, bool)
                and float(a) == float(value)):
            return True
        if isinstance(a, list) and isinstance(value, list) and len(a) == len(value) and all(
            _match(v, [x]) for v, x in zip(value, a)
        ):
            return True
    return False


def _correct(resp: Any, truth: dict[str, Any]) -> bool:
    if not resp.tool_uses:
        return False
    (name, params), = truth.items()
    call = resp.tool_uses[0]
    if call.name != name.replace(".", "_"):
        return False
    for key, allowed in params.items():
        if key in call.input:
            if not _match(call.input[key], allowed):
                return False
        elif "" not in allowed:
            return False
    return all(k in params for k in call.input)


def load_cases(data: Path, n: int) -> list[tuple[Request, dict[str, Any]]]:
    questions = (data / "BFCL_v4_simple_python.json").read_text().splitlines()[:n]
    answers = (data / "possible_answer_simple_python.json").read_text().splitlines()[:n]
    cases = []
    for q_line, a_line in zip(questions, answers):
        q, a = json.loads(q_line), json.loads(a_line)
        tools = [ToolSpec(name=f["name"].replace(".", "_"), description=f["description"],
                          input_schema=normalize_schema(f["parameters"])) for f in q["function"]]
        messages = [Message(role=m["role"], content=m["content"]) for m in q["question"][0]]
        request = Request(messages=messages, tools=tools, tool_choice=ToolChoice(type="any"),
                          max_tokens=192)
        cases.append((request, a["ground_truth"][0]))
    return cases


def run_mode(mode: str, cases: list[tuple[Request, dict[str, Any]]], threads: int,
             model: str | None) -> dict[str, Any]:
    if mode == "none":
        backend = LocalBackend(model, grammar=False, n_threads=threads)
    else:
        backend = LocalBackend(model, grammar=True, grammar_engine=mode, n_threads=threads)
    rows = []
    for request, truth in cases:
        started = time.perf_counter()
        resp = backend.complete(request)
        wall = time.perf_counter() - started
        end = backend.last_end
        assert end is not None
        rows.append({
            "wall_s": wall,
            "prompt_s": end.timings.get("prompt_s", 0.0),
            "generate_s": end.timings.get("generate_s", 0.0),
            "output_tokens": end.output_tokens,
            "forced_tokens": int(end.timings.get("forced_tokens", 0)),
            "calls": len(resp.tool_uses),
            "correct": _correct(resp, truth),
        })
    gen_s = sum(r["generate_s"] for r in rows)
    tokens = sum(r["output_tokens"] for r in rows)
    return {
        "mode": mode,
        "cases": len(rows),
        "correct": sum(r["correct"] for r in rows),
        "with_call": sum(1 for r in rows if r["calls"]),
        "output_tokens": tokens,
        "forced_tokens": sum(r["forced_tokens"] for r in rows),
        "generate_s": gen_s,
        "prompt_s": sum(r["prompt_s"] for r in rows),
        "ms_per_token": 1000 * gen_s / max(tokens, 1),
        "tokens_per_s": tokens / gen_s if gen_s else 0.0,
        "median_request_s": statistics.median(r["wall_s"] for r in rows),
        "rows": rows,
    }


def prefix_cache(threads: int, model: str | None, repeats: int) -> dict[str, Any]:
    """The demo conversation's second turn, with the KV cache as left by the first turn
    versus a cold cache: prompt evaluation time and tokens reused."""
    from tooluse.cli.demo import DEMO_QUESTION, DEMO_SYSTEM, demo_tools
    from tooluse.runner import Runner

    backend = LocalBackend(model, n_threads=threads)
    tools = demo_tools()
    result = Runner(backend, tools, system=DEMO_SYSTEM, tool_choice="any",
                    max_tokens=256).run(DEMO_QUESTION)
    # tool_choice any: one generation per request (under auto the backend may generate a
    # second time, warm by construction, which would hide the cold case).
    second_turn = Request(system=DEMO_SYSTEM, messages=result.messages[:3],
                          tools=[t.spec for t in tools], tool_choice=ToolChoice(type="any"),
                          max_tokens=64)
    first_turn = Request(system=DEMO_SYSTEM, messages=result.messages[:1],
                         tools=[t.spec for t in tools], tool_choice=ToolChoice(type="any"),
                         max_tokens=256)
    warm, cold = [], []
    for _ in range(repeats):
        backend.complete(first_turn)  # the cache now holds turn 1, as in a tool loop
        backend.complete(second_turn)
        end = backend.last_end
        assert end is not None
        warm.append((end.timings["prompt_s"], end.cached_tokens, end.input_tokens))
        backend.loaded.llm.reset()  # cold: nothing reusable
        backend.complete(second_turn)
        end = backend.last_end
        assert end is not None
        cold.append((end.timings["prompt_s"], end.cached_tokens, end.input_tokens))
    return {
        "prompt_tokens": warm[0][2],
        "reused_tokens": warm[0][1],
        "warm_prompt_s": statistics.median(w[0] for w in warm),
        "cold_prompt_s": statistics.median(c[0] for c in cold),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=20)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--model", default=None, help="GGUF path (default: SmolLM2-135M)")
    parser.add_argument("--modes", default="none,llama,fast")
    parser.add_argument("--data", type=Path,
                        default=Path(os.environ.get("TOOLUSE_SHARED_DIR", ROOT.parent / "shared"))
                        / "bench" / "bfcl")
    parser.add_argument("--cache-repeats", type=int, default=3)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)

    cases = load_cases(args.data, args.cases)
    report: dict[str, Any] = {
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}",
        "threads": args.threads,
        "modes": [],
    }
    print(f"# local backend benchmark ({len(cases)} BFCL simple_python cases, "
          f"{args.threads} threads; load average at start {os.getloadavg()[0]:.1f})\n")
    print("| mode | correct | with a call | output tokens | of which forced | generation s "
          "| ms/token | tokens/s | median request s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for mode in [m for m in args.modes.split(",") if m]:
        r = run_mode(mode, cases, args.threads, args.model)
        report["modes"].append(r)
        print(f"| {mode} | {r['correct']}/{r['cases']} | {r['with_call']} | {r['output_tokens']} "
              f"| {r['forced_tokens']} | {r['generate_s']:.2f} | {r['ms_per_token']:.1f} "
              f"| {r['tokens_per_s']:.1f} | {r['median_request_s']:.2f} |", flush=True)
    if args.cache_repeats:
        c = prefix_cache(args.threads, args.model, args.cache_repeats)
        report["prefix_cache"] = c
        print(f"\nprefix cache (demo turn 2, {c['prompt_tokens']} prompt tokens, "
              f"{c['reused_tokens']} reused): prompt evaluation {c['warm_prompt_s']:.3f} s warm "
              f"vs {c['cold_prompt_s']:.3f} s cold")
    print(f"\nload average at end {os.getloadavg()[0]:.1f}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
