#!/usr/bin/env bash
# Leave-one-out ablation of the default model's techniques on a held-out BFCL sample
# (docs/benchmarks/bfcl.md, "Ablation on a held-out sample").
#
#   bench/bfcl_ablation.sh all no_decide no_optional     # configurations, one after the other
#   CATS="--category multiple --category parallel_multiple" bench/bfcl_ablation.sh no_score
#   python bench/bfcl_ablation_table.py bench/results/bfcl-ablation
#
# Sample: every 20th case ($EVERY) of every category in the data folder from case #5
# ($OFFSET), none of them in the tuning slice the call-or-answer rule was fitted on (every
# 40th from #0). tool_choice auto, --max-tokens 256, one thread, nice 10. Every technique is
# set explicitly, so the library's defaults do not matter. The code measured is a snapshot of
# $COMMIT (default HEAD), as in bench/bfcl_eval.sh.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
out="${OUT:-$here/results/bfcl-ablation}"
commit="$(git -C "$repo" rev-parse "${COMMIT:-HEAD}")"
snapshot="$(mktemp -d /tmp/tooluse-ablation-src.XXXXXX)"
git -C "$repo" archive "$commit" src | tar -x -C "$snapshot"
export PYTHONPATH="$snapshot/src${PYTHONPATH:+:$PYTHONPATH}"
mkdir -p "$out"
off=(-o decide=0 -o score_tools=0 -o optional_from_conversation=0 -o max_tools=0
     -o no_repeat=0 -o more_calls=0 -o copy_values=0 -o score_enums=0)
all=(-o decide=1 -o score_tools=1 -o optional_from_conversation=1 -o max_tools=5
     -o no_repeat=1 -o more_calls=1 -o copy_values=0 -o score_enums=0)
read -r -a cats <<<"${CATS:---category all}"
for config in "$@"; do
  case "$config" in
    baseline) opts=("${off[@]}") ;;
    all) opts=("${all[@]}") ;;
    no_decide) opts=("${all[@]}" -o decide=0) ;;
    no_score) opts=("${all[@]}" -o score_tools=0) ;;
    no_optional) opts=("${all[@]}" -o optional_from_conversation=0) ;;
    no_parallel) opts=("${all[@]}" -o no_repeat=0 -o more_calls=0) ;;
    no_more) opts=("${all[@]}" -o more_calls=0) ;;
    no_retrieval) opts=("${all[@]}" -o max_tools=0) ;;
    copy) opts=("${all[@]}" -o more_calls=0 -o copy_values=1 -o score_enums=1) ;;
    *) echo "unknown configuration $config" >&2; exit 2 ;;
  esac
  echo "== $config (commit $commit) $(date -u +%T)"
  nice -n 10 python -m tooluse.cli eval bfcl "${cats[@]}" --every "${EVERY:-20}" \
    --offset "${OFFSET:-5}" --tool-choice auto --max-tokens 256 -o n_threads=1 "${opts[@]}" \
    --no-progress --json "$out/abl-$config.json" | tail -n +4
done
rm -rf "$snapshot"
