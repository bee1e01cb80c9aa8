#!/usr/bin/env bash
# Do issue 12's techniques carry over to BFCL categories they were never tuned on?
# (BENCHMARKS.md §1, "held out"; docs/benchmarks/bfcl.md.)
#
#   python bench/bfcl_heldout.py /tmp/bfcl-heldout             # the held-out categories
#   HELDOUT=/tmp/bfcl-heldout OUT=/work/runs/transfer bench/bfcl_transfer.sh [CONFIG...]
#   bench/bfcl_transfer.sh summary                             # the table of $OUT
#
# Three configurations of the default local model, tool_choice auto, the grammar on,
# --max-tokens 256 (as the full runs), each on two samples:
#
#   defaults    every technique on by default;
#   no_edits    the same without the 24 edits made to calls once written (percent_fractions,
#               restate, date_formats, ... share_optionals, asked_more), each read off the
#               failures of the six tuned categories; generation-side techniques stay on
#               (decide, copy_values, rank_tools, plan_tools, fan_out, no_repeat, ...);
#   none        every technique off: the model and the grammar, the call block opened
#               by the first-token threshold.
#
# Samples: "tuned", every 10th case (from #0) of the six categories in ../shared/bench/bfcl
# that the techniques were read off; "heldout", BFCL's other single-turn categories from
# the same release (bench/bfcl_heldout.py): every 10th case of live_multiple and
# live_irrelevance, all of live_parallel, live_parallel_multiple and live_relevance.
# Each run goes through bench/bfcl_eval.sh (a snapshot of $COMMIT, default HEAD).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${OUT:-$here/results/bfcl-transfer}"
heldout="${HELDOUT:-/tmp/bfcl-heldout}"
tuned="${TUNED:-$(cd "$here/../.." && pwd)/shared/bench/bfcl}"

edits="percent_fractions restate date_formats city_state asked_flags whole_phrases
scaled_numbers described_codes enum_values stated_units from_to named_options after_names
named_numbers compounding implied_numbers stray_numbers literal_lists written_names
currency_codes asked_more each_option pair_in_order share_optionals"
generation="decide optional_from_conversation no_repeat copy_values fan_out rank_tools
plan_tools calls_as_planned prerequisite_tools focus_values names_not_values distinct_values"

if [[ "${1:-}" == "summary" ]]; then
    exec python - "$out" <<'PY'
import json, sys
from pathlib import Path
root = Path(sys.argv[1])
rows = {}
for path in sorted(root.glob("*/*/grammar_auto_*.json")):
    config, sample = path.parts[-3], path.parts[-2]
    for s in json.loads(path.read_text())["summary"]:
        rows.setdefault((sample, s["category"]), {})[config] = s
configs = ["none", "no_edits", "defaults"]
print("| sample | category | cases | " + " | ".join(configs) + " | valid (defaults) |")
print("|---|---|---:|" + "---:|" * len(configs) + "---:|")
for (sample, category), by in sorted(rows.items()):
    cases = next(iter(by.values()))["cases"]
    cells = [f"{100 * by[c]['accuracy']:.1f}% ({round(by[c]['accuracy'] * by[c]['cases'])})"
             if c in by else "-" for c in configs]
    d = by.get("defaults")
    valid = f"{d['calls_valid']} of {d['calls_total']}" if d else "-"
    print(f"| {sample} | {category} | {cases} | " + " | ".join(cells) + f" | {valid} |")
PY
fi

[[ -d "$heldout" ]] || { echo "no held-out data at $heldout: python bench/bfcl_heldout.py $heldout" >&2; exit 2; }
configs=("$@")
[[ ${#configs[@]} -gt 0 ]] || configs=(defaults no_edits none)
for config in "${configs[@]}"; do
    case "$config" in
        defaults) options="" ;;
        no_edits) options="$(for o in $edits; do printf '%s=0 ' "$o"; done)" ;;
        none) options="$(for o in $edits $generation; do printf '%s=0 ' "$o"; done)" ;;
        *) echo "unknown configuration $config (defaults, no_edits, none)" >&2; exit 2 ;;
    esac
    export MODES=grammar TOOL_CHOICE=auto MAX_TOKENS=256 JOBS="${JOBS:-2}" OPTIONS="$options"
    OUT="$out/$config/tuned" DATA_DIR="$tuned" EVERY=10 \
        CATEGORIES="parallel parallel_multiple multiple simple_python live_simple irrelevance" \
        "$here/bfcl_eval.sh"
    OUT="$out/$config/heldout" DATA_DIR="$heldout" EVERY=10 \
        CATEGORIES="live_multiple live_irrelevance" "$here/bfcl_eval.sh"
    OUT="$out/$config/heldout" DATA_DIR="$heldout" \
        CATEGORIES="live_parallel live_parallel_multiple live_relevance" "$here/bfcl_eval.sh"
done
