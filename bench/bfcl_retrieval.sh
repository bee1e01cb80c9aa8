#!/usr/bin/env bash
# Tool retrieval (`max_tools`, BM25 over the tools with bm25s) where BFCL offers many tools:
# the held-out cases with six tools or more, every tool in the prompt against the five
# likeliest (the legacy format advises 3-5). BENCHMARKS.md §1a, docs/benchmarks/bfcl.md.
#
#   python bench/bfcl_heldout.py /tmp/bfcl-heldout --min-tools 6
#   HELDOUT=/tmp/bfcl-heldout OUT=/work/runs/retrieval bench/bfcl_retrieval.sh [MAX_TOOLS...]
#   OUT=/work/runs/retrieval/max_tools5 bench/bfcl_eval.sh summary
#
# Categories: live_multiple_tools6 (156 cases, 6 to 37 tools; every $EVERY-th, default
# 2nd), live_irrelevance_tools6 (72; a call there is wrong) and live_parallel_multiple_tools6
# (4), tool_choice auto, the grammar on, --max-tokens 256, the default model's other
# defaults. MAX_TOOLS: the values to compare (default "0 5"; 0 = every tool in the prompt,
# the default). The code measured is a snapshot of $COMMIT (default HEAD), as in
# bench/bfcl_eval.sh.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${OUT:-$here/results/bfcl-retrieval}"
heldout="${HELDOUT:-/tmp/bfcl-heldout}"
[[ -f "$heldout/BFCL_v4_live_multiple_tools6.json" ]] || {
    echo "no many-tool cases in $heldout: python bench/bfcl_heldout.py $heldout --min-tools 6" >&2
    exit 2
}
values=("$@")
[[ ${#values[@]} -gt 0 ]] || values=(0 5)
for n in "${values[@]}"; do
    OUT="$out/max_tools$n" DATA_DIR="$heldout" OPTIONS="preset=en-bfcl max_tools=$n" EVERY="${EVERY:-2}" \
        MODES=grammar TOOL_CHOICE=auto MAX_TOKENS=256 JOBS="${JOBS:-2}" \
        CATEGORIES="live_multiple_tools6 live_irrelevance_tools6 live_parallel_multiple_tools6" \
        "$here/bfcl_eval.sh"
done
