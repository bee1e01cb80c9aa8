#!/usr/bin/env bash
# Measure a backend on BFCL with `tooluse eval bfcl`, with the grammar and without it.
#
#   bench/bfcl_eval.sh                    # five AST categories, backend "local", all cases
#   LIMIT=30 bench/bfcl_eval.sh           # the first 30 cases of each category
#   EVERY=10 [OFFSET=0] bench/bfcl_eval.sh   # every 10th case of each category
#   TOOL_CHOICE=auto bench/bfcl_eval.sh   # let the model decide in every category
#   BACKEND=local:/path/m.gguf CATEGORIES="simple_python multiple" bench/bfcl_eval.sh
#   OPTIONS="n_threads=1" MODES=no-grammar bench/bfcl_eval.sh   # backend options (KEY=VALUE ...)
#   JOBS=2 bench/bfcl_eval.sh             # each category run by 2 worker processes (--jobs)
#   bench/bfcl_eval.sh summary            # markdown table of what $OUT holds
#
# tool_choice: by default the four call categories force a call (`any`: the assistant turn is
# prefilled with the opening of a call — with the grammar, decoding is then constrained;
# without it, only prefilled) and `irrelevance` uses `auto` (forcing a call there would fail
# by construction). TOOL_CHOICE=auto|any overrides it for every category.
#
# The code measured is a snapshot of the commit ($COMMIT, default HEAD) extracted with
# `git archive` to a temporary folder and put first on PYTHONPATH, so edits made in the
# checkout while a long run goes on do not change what is measured.
#
# Runs are sequential (the machine is small and shared): one log and one JSON of per-case
# results per run under $OUT (default bench/results/bfcl). A run that dies leaves its JSON
# complete up to the last saved case (the CLI saves every 10 cases).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
out="${OUT:-$here/results/bfcl}"
backend="${BACKEND:-local}"
categories="${CATEGORIES:-simple_python multiple parallel parallel_multiple irrelevance}"
modes="${MODES:-grammar no-grammar}"
data_dir="${DATA_DIR:-$(cd "$repo/.." && pwd)/shared/bench/bfcl}"
max_tokens="${MAX_TOKENS:-256}"
option_args=()
for o in ${OPTIONS:-}; do option_args+=(--option "$o"); done
limit_args=()
[[ -n "${LIMIT:-}" ]] && limit_args=(--limit "$LIMIT")
[[ -n "${EVERY:-}" ]] && limit_args+=(--every "$EVERY" --offset "${OFFSET:-0}")
jobs_args=(--jobs "${JOBS:-1}")

if [[ "${1:-run}" == "summary" ]]; then
    exec python - "$out" <<'PY'
import json, sys
from pathlib import Path
rows = []
for path in sorted(Path(sys.argv[1]).glob("*.json")):
    doc = json.loads(path.read_text())
    meta = doc["meta"]
    for s in doc["summary"]:
        rows.append((s["category"], "grammar" if meta["grammar"] else "prefill only",
                     meta.get("tool_choice", "auto"), s, meta.get("limit"),
                     meta.get("interrupted", False), path.name))
order = ["simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance",
         "live_simple"]
rows.sort(key=lambda r: (order.index(r[0]) if r[0] in order else 99, r[2], r[1]))
print("| category | tool_choice | decoding | cases | accuracy | valid | median latency (s) "
      "| tokens/s end to end | tokens/s generation | failures (kind: cases) |")
print("|---|---|---|---:|---:|---:|---:|---:|---:|---|")
for cat, mode, choice, s, limit, interrupted, name in rows:
    dec = "-" if s.get("decode_tokens_per_second") is None else f"{s['decode_tokens_per_second']:.1f}"
    fails = ", ".join(f"{k}: {v}" for k, v in list(s["failures"].items())[:4]) or "-"
    print(f"| {cat} | {choice} | {mode} | {s['cases']} | {100*s['accuracy']:.1f}% "
          f"| {100*s['valid_rate']:.1f}% | {s['median_latency']:.2f} "
          f"| {s['tokens_per_second']:.1f} | {dec} | {fails} |")
PY
fi

commit="$(git -C "$repo" rev-parse "${COMMIT:-HEAD}")"
snapshot="$(mktemp -d /tmp/tooluse-bfcl-src.XXXXXX)"
git -C "$repo" archive "$commit" src | tar -x -C "$snapshot"
export PYTHONPATH="$snapshot/src${PYTHONPATH:+:$PYTHONPATH}"

mkdir -p "$out"
{
    echo "commit $commit (snapshot $snapshot), backend $backend ${OPTIONS:-}, max_tokens $max_tokens"
    echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, $(uname -m), no GPU"
    echo "started $(date -u +%FT%TZ), jobs ${JOBS:-1}, load average $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee -a "$out/RUN_INFO"
started=$(date +%s)
for mode in $modes; do
    flags=()
    [[ "$mode" == "no-grammar" ]] && flags=(--no-grammar)
    for category in $categories; do
        choice="${TOOL_CHOICE:-}"
        if [[ -z "$choice" ]]; then
            if [[ "$category" == "irrelevance" ]]; then choice=auto; else choice=any; fi
        fi
        name="${mode}_${choice}_${category}"
        echo "== $name $(date -u +%T)" | tee -a "$out/RUN_INFO"
        python -m tooluse.cli eval bfcl --backend "$backend" --data-dir "$data_dir" \
            --category "$category" --tool-choice "$choice" --max-tokens "$max_tokens" \
            "${limit_args[@]}" "${option_args[@]}" "${jobs_args[@]}" "${flags[@]}" \
            --json "$out/$name.json" \
            >"$out/$name.txt" 2>"$out/$name.log" \
            || echo "   $name exited with $? (see $out/$name.log)" | tee -a "$out/RUN_INFO"
        cat "$out/$name.txt"
    done
done
echo "== done $(date -u +%T): $(( $(date +%s) - started )) s wall, load average $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/RUN_INFO"
rm -rf "$snapshot"
