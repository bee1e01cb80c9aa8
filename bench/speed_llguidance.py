"""tooluse's grammar engine against llguidance, on the default model's vocabulary.

    pip install llguidance
    python bench/speed_llguidance.py                   # everything
    python bench/speed_llguidance.py --functions 300 --cases 30 --json /tmp/llg.json

Measures, for both engines:

1. **compile time per tool set** and **coverage** on every function of the BFCL files in
   ``../shared/bench/bfcl`` (2,175): the own engine builds ``tool_call_grammar`` and its
   ``Matcher``; llguidance compiles (a) the same grammar (the own GBNF, through
   ``llguidance.grammar_from("gbnf", ...)``) and (b) the function's JSON Schema with its own JSON
   compiler (what adopting it for values would mean);
2. **schema features**: recursive ``$ref`` inside a union, ``anyOf``/``oneOf``/``allOf``,
   ``format``, ``pattern``, bounds — whether each engine builds a grammar, accepts a
   valid value and rejects an invalid one;
3. **ms per token with forced-token batching**, on valid calls of BFCL ``simple_python``
   (its ground truth, in the legacy XML format): the constraint work of one decoding pass
   (own: the forced text, then the model's top-32 candidates checked in order; llguidance:
   ``compute_ff_tokens``, then the full-vocabulary ``compute_bitmask``), without the model;
4. **lines of code** each needs.

No model evaluation happens here: the numbers are the constraint engines' own cost.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from tooluse.codecs.legacy import encode_response
from tooluse.llama.model import ModelSettings, default_model_path, load_model
from tooluse.messages import Response, ToolChoice, ToolSpec, ToolUseBlock
from tooluse.grammar.tool_calls import tool_call_grammar
from tooluse.grammar.matcher import Matcher
from tooluse.tools import bfcl_tool

ANY = ToolChoice(type="any")
PREFILL = "<function_calls>\n<invoke>\n<tool_name>"

FEATURES: dict[str, tuple[dict[str, Any], Any, Any]] = {
    # name: (parameter schema, a valid value, an invalid value)
    "recursive $ref in anyOf": (
        {"$defs": {"node": {"type": "object", "properties": {
            "value": {"type": "integer"},
            "children": {"type": "array", "items": {"anyOf": [{"$ref": "#/$defs/node"},
                                                              {"type": "null"}]}}},
            "required": ["value"], "additionalProperties": False}},
         "$ref": "#/$defs/node"},
        {"value": 1, "children": [{"value": 2, "children": [None]}]},
        {"value": 1, "children": [{"value": "two"}]}),
    "anyOf": ({"anyOf": [{"type": "integer"}, {"type": "boolean"}]}, 3, "x"),
    "oneOf": ({"oneOf": [{"type": "integer"}, {"type": "array", "items": {"type": "integer"}}]},
              [1, 2], {"a": 1}),
    "allOf": ({"allOf": [{"type": "object", "properties": {"a": {"type": "integer"}},
                          "required": ["a"]},
                         {"type": "object", "properties": {"b": {"type": "string"}},
                          "required": ["b"]}]},
              {"a": 1, "b": "x"}, {"a": 1}),
    "format: date-time": ({"type": "string", "format": "date-time"}, "2024-05-01T10:00:00Z",
                          "yesterday"),
    "format: email": ({"type": "string", "format": "email"}, "ada@example.org", "not an email"),
    "format: uuid": ({"type": "string", "format": "uuid"},
                     "123e4567-e89b-12d3-a456-426614174000", "1234"),
    "pattern": ({"type": "string", "pattern": "^[A-Z]{2,4}$"}, "GM", "general motors"),
    "minimum/maximum": ({"type": "integer", "minimum": 1, "maximum": 10}, 5, 50),
    "enum": ({"enum": ["celsius", "fahrenheit"]}, "celsius", "kelvin"),
    "additionalProperties: false": (
        {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"],
         "additionalProperties": False}, {"a": 1}, {"a": 1, "b": 2}),
}


def _for_llguidance(gbnf: str) -> str:
    """llguidance's GBNF reader rejects the escaped ``-`` that llama.cpp's accepts at the end
    of a character class (``[+\\-]``); a bare trailing ``-`` means the same to both."""
    return gbnf.replace("\\-]", "-]")


def _functions(data: Path, limit: int | None) -> list[dict[str, Any]]:
    functions = []
    for path in sorted(data.glob("BFCL_v4_*.json")):
        for line in path.read_text().splitlines():
            functions.extend(json.loads(line)["function"])
    return functions[:limit] if limit else functions


def _call_text(spec: ToolSpec, value_input: dict[str, Any]) -> str:
    text = encode_response(Response(content=[ToolUseBlock(id="toolu_1", name=spec.name,
                                                          input=value_input)],
                                    stop_reason="tool_use"))
    start = text.index(PREFILL) + len(PREFILL) if PREFILL in text else 0
    return text[start:]


def coverage(functions: list[dict[str, Any]], tokenizer: Any) -> dict[str, Any]:
    import llguidance
    from llguidance import LLMatcher

    own_ms, lark_ms, json_ms = [], [], []
    own_fail, lark_fail, json_fail = [], [], []
    for f in functions:
        spec = bfcl_tool(f).spec
        started = time.perf_counter()
        try:
            grammar = tool_call_grammar([spec], ANY)
            Matcher(grammar.root).initial  # noqa: B018 - what a first request builds
        except Exception as exc:  # noqa: BLE001 - counted, reported
            own_fail.append(f"{f['name']}: {exc}")
            continue
        own_ms.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        try:
            m = LLMatcher(tokenizer, llguidance.grammar_from("gbnf", _for_llguidance(grammar.gbnf)),
                          log_level=0)
            if m.is_error():
                lark_fail.append(f"{f['name']}: {m.get_error()[:200]}")
            else:
                lark_ms.append((time.perf_counter() - started) * 1000)
        except Exception as exc:  # noqa: BLE001
            lark_fail.append(f"{f['name']}: {exc}")
        started = time.perf_counter()
        try:
            m = LLMatcher(tokenizer, LLMatcher.grammar_from_json_schema(spec.input_schema),
                          log_level=0)
            if m.is_error():
                json_fail.append(f"{f['name']}: {m.get_error()[:200]}")
            else:
                json_ms.append((time.perf_counter() - started) * 1000)
        except Exception as exc:  # noqa: BLE001
            json_fail.append(f"{f['name']}: {exc}")

    def stats(ms: list[float]) -> dict[str, float]:
        return {"median_ms": statistics.median(ms) if ms else 0.0,
                "p95_ms": sorted(ms)[int(len(ms) * 0.95)] if ms else 0.0,
                "total_s": sum(ms) / 1000}

    return {"functions": len(functions),
            "own": {"ok": len(own_ms), "failed": own_fail[:20], **stats(own_ms)},
            "llguidance_same_grammar": {"ok": len(lark_ms), "failed": lark_fail[:20],
                                        **stats(lark_ms)},
            "llguidance_json_schema": {"ok": len(json_ms), "failed": json_fail[:20],
                                       **stats(json_ms)}}


def features(tokenizer: Any, tokenize: Any) -> dict[str, Any]:
    from llguidance import LLMatcher

    out: dict[str, Any] = {}
    for name, (schema, good, bad) in FEATURES.items():
        spec = ToolSpec(name="f", description="", input_schema={
            "type": "object", "properties": {"x": schema}, "required": ["x"],
            **({"$defs": schema["$defs"]} if "$defs" in schema else {})})
        row: dict[str, Any] = {}
        try:
            grammar = tool_call_grammar([spec], ANY)
            matcher = grammar.matcher
            row["own"] = {"builds": True,
                          "accepts_valid": matcher.matches(_call_text(spec, {"x": good}).encode()),
                          "rejects_invalid": not matcher.matches(
                              _call_text(spec, {"x": bad}).encode())}
        except Exception as exc:  # noqa: BLE001
            row["own"] = {"builds": False, "error": str(exc)[:200]}
        m = LLMatcher(tokenizer, LLMatcher.grammar_from_json_schema(spec.input_schema),
                      log_level=0)
        if m.is_error():
            row["llguidance"] = {"builds": False, "error": m.get_error()[:200]}
        else:
            def accepts(value: Any, m: Any = m) -> bool:
                probe = m.deep_copy()
                tokens = tokenize(json.dumps({"x": value}))
                return probe.try_consume_tokens(tokens) == len(tokens) and probe.is_accepting()
            row["llguidance"] = {"builds": True, "accepts_valid": accepts(good),
                                 "rejects_invalid": not accepts(bad)}
        out[name] = row
    return out


def per_token(data: Path, n_cases: int, tokenizer: Any, tokenize: Any,
              pieces: list[bytes]) -> dict[str, Any]:
    import llguidance
    from llguidance import LLMatcher

    questions = (data / "BFCL_v4_simple_python.json").read_text().splitlines()[:n_cases]
    answers = (data / "possible_answer_simple_python.json").read_text().splitlines()[:n_cases]
    rng = random.Random(0)
    vocab = len(pieces)
    own_s = llg_s = 0.0
    own_forced = llg_forced = n_tokens = used = 0
    for q_line, a_line in zip(questions, answers, strict=True):
        q, a = json.loads(q_line), json.loads(a_line)
        spec = bfcl_tool(q["function"][0]).spec
        ((_, params),) = a["ground_truth"][0].items()
        value_input = {k: v[0] for k, v in params.items() if v and v[0] != ""}
        text = _call_text(spec, value_input)
        grammar = tool_call_grammar([spec], ANY)
        matcher = Matcher(grammar.root)
        if not matcher.matches(text.encode()):
            continue  # a ground truth outside the grammar (e.g. an int for a float)
        lark = LLMatcher(tokenizer, llguidance.grammar_from("gbnf", _for_llguidance(grammar.gbnf)),
                         log_level=0)
        tokens = tokenize(text)
        if lark.is_error() or lark.validate_tokens(tokens) != len(tokens):
            continue
        used += 1
        n_tokens += len(tokens)
        # candidates the model would rank around each true token (the same for both)
        others = [[rng.randrange(vocab) for _ in range(31)] for _ in tokens]

        started = time.perf_counter()
        state = matcher.initial
        i = 0
        while i < len(tokens):
            forced, _ = matcher.forced(state)
            if forced:
                taken, got = 0, b""
                while i + taken < len(tokens) and forced.startswith(got + pieces[tokens[i + taken]]):
                    got += pieces[tokens[i + taken]]
                    taken += 1
                if taken:
                    state = matcher.advance(state, got)
                    own_forced += taken
                    i += taken
                    continue
            for candidate in others[i][:rng.randrange(0, 4)]:  # a few rejected first
                piece = pieces[candidate]
                if piece:
                    matcher.advance(state, piece)
            state = matcher.advance(state, pieces[tokens[i]])
            i += 1
        own_s += time.perf_counter() - started

        started = time.perf_counter()
        i = 0
        while i < len(tokens):
            ff = lark.compute_ff_tokens()
            if ff and tokens[i:i + len(ff)] == ff:
                lark.consume_tokens(ff)
                llg_forced += len(ff)
                i += len(ff)
                continue
            lark.compute_bitmask()
            lark.consume_token(tokens[i])
            i += 1
        llg_s += time.perf_counter() - started
    return {"cases": used, "tokens": n_tokens,
            "own": {"ms_per_token": own_s * 1000 / max(1, n_tokens), "forced": own_forced},
            "llguidance": {"ms_per_token": llg_s * 1000 / max(1, n_tokens), "forced": llg_forced}}


def lines_of_code() -> dict[str, Any]:
    own = ["grammar/tool_calls.py", "grammar/ir.py", "grammar/matcher.py"]
    counts = {p: sum(1 for line in (ROOT / "src/tooluse" / p).read_text().splitlines()
                     if line.strip() and not line.strip().startswith("#")) for p in own}
    import llguidance

    lib = Path(llguidance.__file__).parent
    size = sum(p.stat().st_size for p in lib.rglob("*") if p.is_file())
    return {"own_python_lines": counts, "own_total": sum(counts.values()),
            "llguidance_wheel_bytes": size, "llguidance_version": llguidance.__version__}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path(os.environ.get(
        "TOOLUSE_SHARED_DIR", ROOT.parent / "shared")) / "bench" / "bfcl")
    parser.add_argument("--functions", type=int, default=0, help="0: all")
    parser.add_argument("--cases", type=int, default=100, help="simple_python cases for ms/token")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    try:
        from llguidance.llamacpp import lltokenizer_from_vocab
    except ImportError:
        raise SystemExit("needs llguidance: pip install llguidance") from None

    loaded = load_model(ModelSettings(path=str(default_model_path()), n_threads=1))
    started = time.perf_counter()
    tokenizer = lltokenizer_from_vocab(loaded.llm._model.vocab)
    bridge_s = time.perf_counter() - started
    started = time.perf_counter()
    pieces = loaded.pieces()
    pieces_s = time.perf_counter() - started

    def tokenize(text: str) -> list[int]:
        return list(loaded.llm.tokenize(text.encode(), add_bos=False, special=False))

    result: dict[str, Any] = {
        "load_average": os.getloadavg(),
        "vocabulary": {"tokens": len(pieces), "llguidance_tokenizer_s": bridge_s,
                       "own_pieces_s": pieces_s},
        "lines_of_code": lines_of_code(),
    }
    print(json.dumps(result, indent=1), flush=True)
    result["features"] = features(tokenizer, tokenize)
    print(json.dumps(result["features"], indent=1), flush=True)
    result["per_token"] = per_token(args.data, args.cases, tokenizer, tokenize, pieces)
    print(json.dumps(result["per_token"], indent=1), flush=True)
    result["coverage"] = coverage(_functions(args.data, args.functions or None), tokenizer)
    print(json.dumps(result["coverage"], indent=1), flush=True)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
