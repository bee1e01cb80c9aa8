#!/usr/bin/env bash
# Today's newest release of every client the tests use, against the gateway.
#
#   bash bench/clients/latest.sh            # a new virtual environment, then the tests
#   bash bench/clients/latest.sh --reuse    # the same, into the active virtual environment
#
# Installs into a temporary place (a new venv and npm prefix under mktemp, removed at the
# end) the project with its [test] extra and no lock, so pip takes the newest release
# pyproject.toml allows of each client (anthropic, openai, openai-agents, boto3/botocore,
# mcp), and the newest Claude Code and Codex CLI from npm. Prints what moved against the lock
# (constraints.txt) and the Codex pin, runs the client tests (pytest -m client: the SDKs,
# boto3, openai-agents, Claude Code, Codex; each fails on a 4xx the policy does not explain)
# and the conformance tests (tests/conformance: the answers against the vendors' schemas),
# then prints the request fields any client sent that no row of docs/server.md's policy
# tables names (bench/clients/surface_report.py). Exits with the tests' status.
#
# Needs the registries (PyPI, npm) and node/npm for the two CLIs (their tests skip without).
set -uo pipefail
cd "$(dirname "$0")/../.."
repo="$(pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

quiet() {  # a command without pip's notes on the machine's extra indexes
    "$@" 2>&1 | grep -v '^WARNING: Location' ; return "${PIPESTATUS[0]}"
}

if [ "${1:-}" != "--reuse" ]; then
    python3 -m venv "$work/venv"
    # shellcheck disable=SC1091
    . "$work/venv/bin/activate"
    echo "== installing .[test] without the lock into $work/venv"
    quiet pip install -q -e ".[test]" || exit 1
fi
clients=(anthropic openai openai-agents boto3 botocore mcp)
quiet pip install -q --upgrade "${clients[@]}" || exit 1

echo "== clients: the lock (constraints.txt) -> today's newest, installed here"
for name in "${clients[@]}"; do
    locked="$(grep -i "^${name}==" constraints.txt | cut -d= -f3)"
    now="$(python -c "import importlib.metadata as m; print(m.version('$name'))")"
    mark=""; [ "$locked" != "$now" ] && mark="   <- moved"
    printf '  %-15s %-12s -> %s%s\n' "$name" "${locked:-?}" "$now" "$mark"
done
codex_pin="$(sed -n 's/^CODEX_VERSION = os.environ.get("TOOLUSE_CODEX_VERSION", "\(.*\)")$/\1/p' \
    tests/server/test_server_codex_slow.py)"
if command -v npm >/dev/null; then
    for pkg in @anthropic-ai/claude-code @openai/codex; do
        newest="$(npm view "$pkg" version 2>/dev/null || echo '?')"
        pinned="newest"; [ "$pkg" = "@openai/codex" ] && pinned="$codex_pin"
        mark=""; [ "$pinned" != "newest" ] && [ "$pinned" != "$newest" ] && mark="   <- moved"
        printf '  %-27s %-12s -> %s%s\n' "$pkg" "$pinned" "$newest" "$mark"
    done
else
    echo "  (no npm: Claude Code and Codex CLI are not tried)"
fi

echo "== the client and conformance tests against them"
export TOOLUSE_CLAUDE_CODE_VERSION=latest TOOLUSE_CODEX_VERSION=latest
export TOOLUSE_NPM_CACHE="$work/npm" TOOLUSE_SURFACE_LOG="$work/surface.jsonl"
: > "$TOOLUSE_SURFACE_LOG"
python -m pytest -q -p no:cacheprovider -m client tests/server -o addopts="" -rfs
status=$?
python -m pytest -q -p no:cacheprovider tests/conformance -o addopts="" -rfs \
    | grep -E '^(conformance:|[0-9]+ (passed|failed)|FAILED|SKIPPED)'
[ "${PIPESTATUS[0]}" -ne 0 ] && status=1

echo "== request fields the clients sent, against docs/server.md's policy tables"
python bench/clients/surface_report.py "$TOOLUSE_SURFACE_LOG" "$repo/docs/server.md"
exit "$status"
