"""Whole turns on the default model with the fast engine and with llguidance.

    python bench/speed_llguidance_turns.py [--rounds 2]

The four requests of ``tests/llama/test_llguidance.py`` (a ``pattern``, bounded integer and
``allOf`` parameter, and a plain one), ``tool_choice: any``, greedy, ``n_threads=1``, no disk
prompt cache: per engine and request the generation time (best of the rounds; the prompt's
evaluation is the same for both engines and left out), tokens written (forced / sampled)
and whether the call validates.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests" / "llama")]

from test_llguidance import CASES, WEATHER, _valid

from tooluse.backends.local import LocalBackend
from tooluse.messages import Message, Request, ToolChoice


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    cases = [*CASES, (WEATHER, "What's the weather in Paris?")]
    rows: dict[tuple[str, str], list[tuple[float, int, int, bool]]] = {}
    for _ in range(args.rounds):
        for engine in ("fast", "llguidance"):
            backend = LocalBackend(n_threads=1, grammar_engine=engine,  # type: ignore[arg-type]
                                   prompt_cache=False)
            for tool, question in cases:
                resp = backend.complete(Request(
                    messages=[Message(role="user", content=question)], tools=[tool],
                    tool_choice=ToolChoice(type="any"), max_tokens=80))
                end = backend.text_model.last_end
                assert end is not None
                rows.setdefault((engine, tool.name), []).append((
                    end.timings["generate_s"], end.output_tokens,
                    int(end.timings["forced_tokens"]), _valid(resp, tool)))
    print("| request | engine | generate s | tokens (forced + sampled) | valid |")
    print("|---|---|---:|---:|---|")
    for (engine, name), runs in sorted(rows.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        best, tokens, forced, valid = min(runs)
        print(f"| {name} | {engine} | {best:.3f} | {tokens} ({forced} + {tokens - forced}) "
              f"| {'yes' if valid else 'no'} |")
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
