#!/usr/bin/env bash
# Fixed BFCL samples for the technique ablation (docs/benchmarks/bfcl.md, section "Samples").
#
#   bench/bfcl_samples.sh tune baseline            # tuning slice, no technique
#   bench/bfcl_samples.sh heldout all              # held-out slice, every technique
#
# Slices: every 40th case of each category found in the data folder, from case #0 (tune:
# the decision's weights are fitted and the defaults chosen here) or from case #20
# (held-out: only reported). Same cases for every configuration. One thread, nice 10: the
# machine is shared, timings are "under load".
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
slice="${1:?tune|heldout}"; config="${2:?baseline|decide|decide_score|parallel|optional|retrieval|copy|enums|all|all_copy|features}"
case "$slice" in tune) offset=0 ;; heldout) offset=20 ;; *) echo "slice: tune|heldout" >&2; exit 2 ;; esac
off=(-o decide=0 -o score_tools=0 -o optional_from_conversation=0 -o max_tools=0 -o no_repeat=0 -o more_calls=0
     -o copy_values=0 -o score_enums=0)
case "$config" in
  baseline) opts=("${off[@]}") ;;
  decide) opts=("${off[@]}" -o decide=1) ;;
  score_tools) opts=("${off[@]}" -o score_tools=1) ;;
  optional) opts=("${off[@]}" -o optional_from_conversation=1) ;;
  retrieval) opts=("${off[@]}" -o max_tools=3) ;;
  decide_score) opts=("${off[@]}" -o decide=1 -o score_tools=1) ;;
  parallel) opts=("${off[@]}" -o no_repeat=1 -o more_calls=1) ;;
  copy) opts=("${off[@]}" -o copy_values=1) ;;
  enums) opts=("${off[@]}" -o score_enums=1) ;;
  all_copy) opts=(-o decide=1 -o score_tools=1 -o optional_from_conversation=1 -o max_tools=5 -o no_repeat=1 -o more_calls=1 -o copy_values=1 -o score_enums=1) ;;
  all) opts=(-o decide=1 -o score_tools=1 -o optional_from_conversation=1 -o max_tools=5 -o no_repeat=1 -o more_calls=1 -o copy_values=0 -o score_enums=0) ;;
  features) opts=("${off[@]}" -o decide=1 -o decision=1e9,0,0,0) ;;  # always call, log scores
  *) echo "unknown config $config" >&2; exit 2 ;;
esac
out="${OUT:-$here/results/bfcl-samples}"
mkdir -p "$out"
exec nice -n 10 tooluse eval bfcl --category all --every 40 --offset "$offset" \
    --tool-choice "${TOOL_CHOICE:-auto}" --max-tokens 256 -o n_threads=1 "${opts[@]}" \
    --no-progress --json "$out/$slice-$config.json"
