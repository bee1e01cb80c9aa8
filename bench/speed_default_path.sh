#!/usr/bin/env bash
# Speed of the default local path before and after the question-reading rules became the
# opt-in en-bfcl preset: `tooluse demo` and a BFCL simple_python run, each commit
# from a `git archive` snapshot, interleaved in one run on one machine.
#
#   bench/speed_default_path.sh                      # OLD=4cf200c (the rules on by default), NEW=HEAD
#   OLD=<rev> NEW=<rev> ROUNDS=5 LIMIT=100 bench/speed_default_path.sh
#
# Per commit: the demo's wall time, median of ROUNDS fresh processes after one untimed
# warm-up (the disk prompt cache filled, as a user's second run); then one
# `tooluse eval bfcl --category simple_python --tool-choice auto --limit LIMIT` per commit,
# its wall time and median latency per case. Run it on a quiet machine.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
old="${OLD:-4cf200c}"
new="${NEW:-HEAD}"
rounds="${ROUNDS:-5}"
limit="${LIMIT:-100}"
data_dir="${DATA_DIR:-$(cd "$repo/.." && pwd)/shared/bench/bfcl}"
out="${OUT:-$(mktemp -d /tmp/faithful-speed.XXXXXX)}"
mkdir -p "$out"

snapshot() {  # a commit's src/ in a fresh folder
    local dir
    dir="$(mktemp -d /tmp/faithful-src.XXXXXX)"
    git -C "$repo" archive "$1" src | tar -x -C "$dir"
    echo "$dir/src"
}
declare -A src=([old]="$(snapshot "$old")" [new]="$(snapshot "$new")")
echo "old $(git -C "$repo" rev-parse --short "$old"), new $(git -C "$repo" rev-parse --short "$new");" \
     "$(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); results in $out"

demo() {  # $1: old|new -> seconds
    local start end
    start=$(date +%s.%N)
    PYTHONPATH="${src[$1]}" python -m tooluse.cli demo >"$out/demo_$1.txt" 2>&1
    end=$(date +%s.%N)
    python -c "print(f'{$end - $start:.3f}')"
}
for which in old new; do demo "$which" >/dev/null; done  # warm-up: the prompt caches
declare -A times=([old]="" [new]="")
for ((r = 1; r <= rounds; r++)); do
    for which in old new; do times[$which]+="$(demo "$which") "; done
done
for which in old new; do
    echo "demo $which: $(python -c "import statistics,sys; v=[float(x) for x in sys.argv[1:]]; print(f'median {statistics.median(v):.2f} s of {len(v)} ({min(v):.2f}-{max(v):.2f})')" ${times[$which]})"
    grep -E "^\s*(call|  edited|  ADDED)|Final answer" "$out/demo_$which.txt" | head -6 | sed 's/^/    /'
done
for which in old new; do
    start=$(date +%s)
    PYTHONPATH="${src[$which]}" python -m tooluse.cli eval bfcl --data-dir "$data_dir" \
        --category simple_python --tool-choice auto --max-tokens 256 --limit "$limit" \
        --no-progress --json "$out/simple_python_$which.json" >"$out/simple_python_$which.txt" 2>&1
    wall=$(( $(date +%s) - start ))
    python - "$out/simple_python_$which.json" "$which" "$wall" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
s = doc["summary"][0]
print(f"simple_python {sys.argv[2]} (first {s['cases']}): wall {sys.argv[3]} s, median latency "
      f"{s['median_latency']:.2f} s, accuracy {100 * s['accuracy']:.1f}%")
PY
done
