#!/usr/bin/env bash
# Many clients on one local model (issue 42): queue (slots=1), slots and llama_cpp.server,
# 1, 2, 4 and 8 clients at once, same and mixed tool sets, in one run. Run it on a quiet
# machine; needs the [bench] extra (llama_cpp.server's dependencies, the anthropic and
# openai SDKs).
#
#   bench/speed_slots.sh                    # everything, 5 rounds per row
#   ROUNDS=3 SLOTS=4 bench/speed_slots.sh   # the slots configuration with 4 slots
#
# Writes the rows as JSON to $OUT (default: a temporary file) and prints the table.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${OUT:-$(mktemp /tmp/slots-bench.XXXXXX.json)}"
args=(--rounds "${ROUNDS:-5}" --out "$out")
if [ -n "${SLOTS:-}" ]; then
    args+=(--slots "$SLOTS")
fi
python "$here/speed_slots.py" "${args[@]}" "$@"
echo "rows in $out" >&2
