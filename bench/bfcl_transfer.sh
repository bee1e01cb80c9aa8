#!/usr/bin/env bash
# Do the en-bfcl preset's rules (the question-reading techniques, now opt-in) carry over to
# BFCL categories they were never tuned on?
# (BENCHMARKS.md §1, "held out"; docs/benchmarks/bfcl.md.)
#
#   python bench/bfcl_heldout.py /tmp/bfcl-heldout             # the held-out categories
#   HELDOUT=/tmp/bfcl-heldout OUT=/work/runs/transfer bench/bfcl_transfer.sh [CONFIG...]
#   bench/bfcl_transfer.sh summary                             # the table of $OUT
#
# Configurations of the default local model, tool_choice auto, the grammar on,
# --max-tokens 256 (as the full runs), each on two samples:
#
#   default          the local backend as it ships: the model, the grammar, copy_values and
#                    no_repeat, no question-reading rule;
#   preset           the opt-in en-bfcl preset: every question-reading rule on (what the
#                    default was before the preset became opt-in);
#   preset_no_edits  the preset without its 24 edits made to calls once written
#                    (percent_fractions, restate, date_formats, ... share_optionals,
#                    asked_more), each read off the failures of the six tuned categories;
#                    its planning and steering rules stay on (decide, rank_tools, plan_tools,
#                    fan_out, focus_values, ...);
#   none             the model and the grammar alone: copy_values and no_repeat off too, the
#                    call block opened by the first-token threshold.
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
configs = ["none", "default", "preset_no_edits", "preset"]
print("| sample | category | cases | " + " | ".join(configs) + " | valid (preset) |")
print("|---|---|---:|" + "---:|" * len(configs) + "---:|")
for (sample, category), by in sorted(rows.items()):
    cases = next(iter(by.values()))["cases"]
    cells = [f"{100 * by[c]['accuracy']:.1f}% ({round(by[c]['accuracy'] * by[c]['cases'])})"
             if c in by else "-" for c in configs]
    d = by.get("preset") or by.get("default")
    valid = f"{d['calls_valid']} of {d['calls_total']}" if d else "-"
    print(f"| {sample} | {category} | {cases} | " + " | ".join(cells) + f" | {valid} |")
PY
fi

[[ -d "$heldout" ]] || { echo "no held-out data at $heldout: python bench/bfcl_heldout.py $heldout" >&2; exit 2; }
configs=("$@")
[[ ${#configs[@]} -gt 0 ]] || configs=(default preset)
for config in "${configs[@]}"; do
    case "$config" in
        default) options="" ;;
        preset) options="preset=en-bfcl" ;;
        preset_no_edits) options="preset=en-bfcl $(for o in $edits; do printf '%s=0 ' "$o"; done)" ;;
        none) options="copy_values=0 no_repeat=0" ;;
        *) echo "unknown configuration $config (default, preset, preset_no_edits, none)" >&2
           exit 2 ;;
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
