"""Tokens the local model evaluates per request, by cause, before and after a change.

    python bench/speed_tokens.py                     # main against this tree, one run
    python bench/speed_tokens.py --before main --threads 2 --json /tmp/tokens.json
    python bench/speed_tokens.py --before ''         # this tree only

Each side runs in its own process (``--before REF``: that git ref's ``src/``, extracted to
a temporary folder; after: this tree's ``src/``), with the default model and options
(SmolLM2-135M, its defaults: value copying, enum scoring, the call decision), no disk
prompt cache, on one fixed set of requests in one order (the KV cache carries the shared
prefix from one request to the next, as in a server): one tool under ``tool_choice: any``;
``auto`` with a fitting tool and without one; parallel calls; enum, boolean, integer and
number values (the slots value copying and enum scoring work on); a few BFCL
``simple_python`` questions when the data is there.

Every ``llama_decode`` a request makes goes through llama-cpp-python's ``Llama.eval``
(under the sequence's ``eval``) or the sequence's ``score``; the benchmark wraps both and
names the cause from the callers:

- ``prompt``: the prompt from where it differs from the KV cache;
- ``forced``: text the grammar fixes (and values chosen whole), fed to the model;
- ``generated``: tokens the model chose, fed back;
- ``lookahead``: the model's own free value, written ahead at a value start and dropped;
- ``scoring``: value options (spans, enum members) and whole continuations scored;
- ``re-eval``: one-token re-evaluations for fresh logits (after scoring, after a rollback);
- ``llguidance``: tokens fed by the llguidance engine (schemas only it enforces).

(The split between ``forced`` and ``generated`` follows the decoder's forced-token counter
and may move a token between the two when they are evaluated together; their sum is exact.)

It prints, per cause, the tokens and decode calls per request as p50 / p90 / max, before
and after, and whether every answer is byte-identical (the proof no behaviour changed).
Token counts do not depend on the machine; the wall times it prints do (a busy machine's).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

CAUSES = ("prompt", "forced", "generated", "lookahead", "scoring", "re-eval", "llguidance",
          "other")

_WEATHER = {
    "name": "get_weather",
    "description": "Get the current weather in a city.",
    "input_schema": {"type": "object", "properties": {
        "city": {"type": "string", "description": "The city name, e.g. Paris"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
        "required": ["city"]},
}
_FLIGHT = {
    "name": "book_flight",
    "description": "Book a flight between two cities.",
    "input_schema": {"type": "object", "properties": {
        "origin": {"type": "string", "description": "Departure city"},
        "destination": {"type": "string", "description": "Arrival city"},
        "seat_class": {"type": "string", "enum": ["economy", "business", "first"]},
        "passengers": {"type": "integer", "description": "Number of passengers"}},
        "required": ["origin", "destination", "seat_class", "passengers"]},
}
_AREA = {
    "name": "triangle_area",
    "description": "The area of a triangle from its base and height.",
    "input_schema": {"type": "object", "properties": {
        "base": {"type": "number"}, "height": {"type": "number"}},
        "required": ["base", "height"]},
}
_ALARM = {
    "name": "set_alarm",
    "description": "Set an alarm clock.",
    "input_schema": {"type": "object", "properties": {
        "time": {"type": "string", "description": "Time of day, HH:MM"},
        "repeat_daily": {"type": "boolean"}},
        "required": ["time", "repeat_daily"]},
}
_STOCK = {
    "name": "stock_history",
    "description": "Closing prices of a stock over the last days.",
    "input_schema": {"type": "object", "properties": {
        "symbol": {"type": "string", "description": "Ticker symbol"},
        "days": {"type": "integer"}},
        "required": ["symbol", "days"]},
}

#: (name, tools, tool_choice, question)
REQUESTS: list[tuple[str, list[dict[str, Any]], str, str]] = [
    ("any-one-tool", [_WEATHER], "any", "What's the weather in Paris, in celsius?"),
    ("any-enum-int", [_FLIGHT], "any",
     "Book 2 business class seats from Boston to Denver."),
    ("any-number", [_AREA], "any", "What is the area of a triangle with base 10 and height 5.5?"),
    ("any-boolean", [_ALARM], "any", "Wake me up at 06:30 every day."),
    ("any-integer", [_STOCK], "any", "Show me the closing prices of AAPL for the last 30 days."),
    ("auto-fitting", [_WEATHER, _STOCK], "auto", "How warm is it in Tokyo right now?"),
    ("auto-no-fit", [_WEATHER, _STOCK], "auto", "Write a two-line poem about the sea."),
    ("auto-no-fit-2", [_FLIGHT], "auto", "What is the capital of Italy?"),
    ("parallel", [_WEATHER], "any", "What is the weather in Berlin and in Madrid?"),
    ("parallel-mixed", [_WEATHER, _STOCK], "any",
     "Weather in London, and TSLA's closing prices for 5 days."),
    ("any-many-tools", [_WEATHER, _FLIGHT, _AREA, _ALARM, _STOCK], "any",
     "Book a first class flight from Rome to Oslo for 1 passenger."),
    ("auto-enum", [_FLIGHT, _WEATHER], "auto",
     "I need an economy ticket from Chicago to Miami for 3 people."),
]


# -- the child: one side, counting ---------------------------------------------------------
def _cause(frame: Any, method: str) -> tuple[str, Any]:
    """The cause of a decode from its callers' function names (and the decoder, if any)."""
    names = []
    f = frame
    while f is not None and len(names) < 10:
        names.append((f.f_code.co_name, f))
        f = f.f_back
    for name, f in names:
        if name == "eval_prompt":
            return "prompt", None
        if name in ("score_tokens", "score_continuations", "_score_options", "score_options"):
            return "scoring", None
        if name == "_free_value":
            return "lookahead", None
        if name in ("_decide", "_best_alternative", "_resume", "_restore"):
            return "re-eval", None
        if name in ("run", "_flush") and type(f.f_locals.get("self")).__name__ == "TurnDecoder":
            return "decoder", f.f_locals["self"]
        if name == "generate" and "llguidance" in f.f_code.co_filename:
            return "llguidance", None
    return ("scoring" if method == "score" else "other"), None


def _child(src: str, threads: int, out: Path, bfcl: int, data: Path) -> None:
    sys.path.insert(0, src)
    import tooluse

    assert str(Path(tooluse.__file__).resolve()).startswith(str(Path(src).resolve())), \
        tooluse.__file__
    from tooluse.backends.local import LocalBackend
    from tooluse.llama.seq import SoloSeq
    from tooluse.messages import Message, Request, ToolChoice, ToolSpec
    from tooluse.tools import normalize_schema

    counts: dict[str, list[int]] = {}  # cause -> [tokens, calls]
    forced_seen: dict[int, int] = {}

    def add(cause: str, tokens: int) -> None:
        c = counts.setdefault(cause, [0, 0])
        c[0] += tokens
        c[1] += 1

    def split_decoder(decoder: Any, tokens: int) -> None:
        # Forced tokens since the decoder's last feed; the rest were chosen by the model.
        forced = decoder.forced_tokens - forced_seen.get(id(decoder), 0)
        forced_seen[id(decoder)] = decoder.forced_tokens
        forced = max(0, min(forced, tokens))
        if forced:
            counts.setdefault("forced", [0, 0])[0] += forced
        if tokens - forced:
            counts.setdefault("generated", [0, 0])[0] += tokens - forced
        key = "forced" if forced else "generated"
        counts.setdefault(key, [0, 0])[1] += 1

    import llama_cpp

    # Counted where tokens reach llama.cpp (``Llama.eval``, under the sequence's ``eval``,
    # which may keep tokens its KV cache holds already), named by the callers above.
    original_eval, original_score = llama_cpp.Llama.eval, SoloSeq.score

    def eval_(self: Any, tokens: Any) -> None:
        tokens = list(tokens)
        if tokens:
            cause, decoder = _cause(sys._getframe(2), "eval")
            if decoder is not None:
                split_decoder(decoder, len(tokens))
            else:
                add(cause, len(tokens))
        original_eval(self, tokens)

    def score(self: Any, n_past: int, ids: Any) -> Any:
        ids = list(ids)
        cause, _ = _cause(sys._getframe(1), "score")
        add(cause, len(ids))
        return original_score(self, n_past, ids)

    llama_cpp.Llama.eval = eval_
    SoloSeq.score = score  # type: ignore[method-assign]
    if hasattr(SoloSeq, "score_many"):
        original_many = SoloSeq.score_many

        def score_many(self: Any, n_past: int, options: Any) -> Any:
            options = [list(o) for o in options]
            add("scoring", sum(len(o) for o in options))
            return original_many(self, n_past, options)

        SoloSeq.score_many = score_many  # type: ignore[attr-defined]

    requests = []
    for name, tools, choice, question in REQUESTS:
        specs = [ToolSpec(name=t["name"], description=t["description"],
                          input_schema=normalize_schema(t["input_schema"])) for t in tools]
        requests.append((name, Request(messages=[Message(role="user", content=question)],
                                       tools=specs, tool_choice=ToolChoice(type=choice),
                                       max_tokens=192)))
    questions = data / "BFCL_v4_simple_python.json"
    if bfcl and questions.is_file():
        for line in questions.read_text().splitlines()[:bfcl]:
            q = json.loads(line)
            specs = [ToolSpec(name=f["name"].replace(".", "_"), description=f["description"],
                              input_schema=normalize_schema(f["parameters"]))
                     for f in q["function"]]
            messages = [Message(role=m["role"], content=m["content"]) for m in q["question"][0]]
            requests.append((f"bfcl-{q['id']}", Request(
                messages=messages, tools=specs, tool_choice=ToolChoice(type="any"),
                max_tokens=192)))

    backend = LocalBackend(n_threads=threads, prompt_cache=False)
    rows = []
    for name, request in requests:
        counts.clear()
        started = time.perf_counter()
        response = backend.complete(request)
        wall = time.perf_counter() - started
        data = response.model_dump(mode="json", exclude={"id", "usage"})
        for block in data.get("content", []):
            block.pop("id", None)  # random tool-use ids
        answer = json.dumps(data, sort_keys=True)
        rows.append({"name": name, "wall_s": wall, "answer": answer,
                     "tokens": {k: v[0] for k, v in counts.items()},
                     "calls": {k: v[1] for k, v in counts.items()}})
    out.write_text(json.dumps(rows))


# -- the parent: both sides, one table -------------------------------------------------------
def _extract(ref: str, folder: Path) -> Path:
    """``ref``'s ``src/`` extracted into ``folder``."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "src"], check=True,
                             capture_output=True).stdout
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "archive.tar"
    path.write_bytes(archive)
    with tarfile.open(path) as tar:
        tar.extractall(folder, filter="data")
    return folder / "src"


def _side(src: Path, args: argparse.Namespace, folder: Path, label: str) -> list[dict[str, Any]]:
    out = folder / f"{label}.json"
    command = [sys.executable, __file__, "--child", str(src), "--out", str(out),
               "--threads", str(args.threads), "--bfcl", str(args.bfcl),
               "--data", str(args.data)]
    subprocess.run(command, check=True, cwd=folder)
    rows: list[dict[str, Any]] = json.loads(out.read_text())
    return rows


def _dist(values: list[int]) -> str:
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]
    return f"{statistics.median(ordered):g} / {p90} / {ordered[-1]}"


def _table(sides: dict[str, list[dict[str, Any]]], what: str) -> None:
    print(f"\n{what} per request, p50 / p90 / max:\n")
    labels = list(sides)
    print("| cause | " + " | ".join(labels) + " |")
    print("|---|" + "---|" * len(labels))
    for cause in (*CAUSES, "total"):
        cells = []
        for label in labels:
            rows = sides[label]
            values = [sum(r[what].values()) if cause == "total" else r[what].get(cause, 0)
                      for r in rows]
            cells.append(_dist(values))
        if cause != "total" and all(c == "0 / 0 / 0" for c in cells):
            continue
        print(f"| {cause} | " + " | ".join(cells) + " |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", default="main",
                        help="git ref compared with this tree ('' for this tree only)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--bfcl", type=int, default=8,
                        help="BFCL simple_python questions added to the set")
    parser.add_argument("--data", type=Path,
                        default=Path(os.environ.get("TOOLUSE_SHARED_DIR", ROOT.parent / "shared"))
                        / "bench" / "bfcl")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        _child(args.child, args.threads, args.out, args.bfcl, args.data)
        return 0

    sides: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        if args.before:
            before = _extract(args.before, folder / "before")
            sides[f"before ({args.before})"] = _side(before, args, folder, "before")
        sides["after (this tree)"] = _side(ROOT / "src", args, folder, "after")
    first = next(iter(sides.values()))
    print(f"# tokens evaluated per request ({len(first)} requests, {args.threads} threads, "
          f"load average {os.getloadavg()[0]:.1f})")
    _table(sides, "tokens")
    _table(sides, "calls")
    print("\nwall s per request, p50 / max (a busy machine's numbers): " + "; ".join(
        f"{label} {statistics.median(r['wall_s'] for r in rows):.3f} / "
        f"{max(r['wall_s'] for r in rows):.3f}" for label, rows in sides.items()))
    identical = True
    if len(sides) == 2:
        a, b = sides.values()
        for x, y in zip(a, b, strict=True):
            if x["answer"] != y["answer"]:
                identical = False
                print(f"DIFFERENT answer on {x['name']}:\n  before {x['answer']}\n"
                      f"  after  {y['answer']}")
        print("answers byte-identical: " + ("yes" if identical else "NO"))
    if args.json:
        args.json.write_text(json.dumps(sides, indent=2))
    return 0 if identical else 1


if __name__ == "__main__":
    raise SystemExit(main())
