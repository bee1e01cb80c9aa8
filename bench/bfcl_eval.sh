#!/usr/bin/env bash
# Measure a backend on BFCL with `tooluse eval bfcl`, with the grammar and without it.
#
#   bench/bfcl_eval.sh                 # all of the five AST categories, backend "local"
#   LIMIT=50 bench/bfcl_eval.sh        # the first 50 cases of each category
#   BACKEND=local:/path/m.gguf CATEGORIES="simple_python multiple" bench/bfcl_eval.sh
#   bench/bfcl_eval.sh summary         # markdown table of what bench/results/ holds
#
# Runs are sequential (the machine is small and shared): one log and one JSON of per-case
# results per (mode, category) under bench/results/bfcl/. A run that dies leaves its JSON
# complete up to the last saved case (the CLI saves every 10 cases).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${OUT:-$here/results/bfcl}"
backend="${BACKEND:-local}"
categories="${CATEGORIES:-simple_python multiple parallel parallel_multiple irrelevance}"
modes="${MODES:-grammar no-grammar}"
limit_args=()
[[ -n "${LIMIT:-}" ]] && limit_args=(--limit "$LIMIT")

if [[ "${1:-run}" == "summary" ]]; then
    exec python - "$out" <<'PY'
import json, sys
from pathlib import Path
rows = []
for path in sorted(Path(sys.argv[1]).glob("*.json")):
    doc = json.loads(path.read_text())
    meta = doc["meta"]
    for s in doc["summary"]:
        rows.append((s["category"], "grammar" if meta["grammar"] else "no grammar", s,
                     meta.get("commit"), meta.get("limit"), meta.get("interrupted", False)))
order = ["simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance",
         "live_simple"]
rows.sort(key=lambda r: (order.index(r[0]) if r[0] in order else 99, r[1]))
print("| category | mode | cases | accuracy | valid | median latency (s) | tokens/s | top failures | commit |")
print("|---|---|---:|---:|---:|---:|---:|---|---|")
for cat, mode, s, commit, limit, interrupted in rows:
    fails = ", ".join(f"{k} {v}" for k, v in list(s["failures"].items())[:3]) or "-"
    n = f"{s['cases']}" + (" (partial)" if interrupted else "")
    print(f"| {cat} | {mode} | {n} | {100*s['accuracy']:.1f}% | {100*s['valid_rate']:.1f}% "
          f"| {s['median_latency']:.2f} | {s['tokens_per_second']:.1f} | {fails} | {commit} |")
PY
fi

mkdir -p "$out"
echo "commit $(git -C "$here/.." describe --always --dirty --abbrev=12), $(nproc) cores, $(date -u +%FT%TZ)" \
    | tee "$out/RUN_INFO"
for mode in $modes; do
    flags=()
    [[ "$mode" == "no-grammar" ]] && flags=(--no-grammar)
    for category in $categories; do
        name="${mode}_${category}"
        echo "== $name $(date -u +%T)"
        tooluse eval bfcl --backend "$backend" --category "$category" "${limit_args[@]}" \
            "${flags[@]}" --json "$out/$name.json" >"$out/$name.txt" 2>"$out/$name.log" \
            || echo "   $name exited with $? (see $out/$name.log)"
        cat "$out/$name.txt"
    done
done
echo "== done $(date -u +%T)"
