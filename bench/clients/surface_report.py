"""Which request fields the clients sent that docs/server.md's policy tables do not name.

    python bench/clients/surface_report.py SURFACE.jsonl [docs/server.md]

SURFACE.jsonl is what the client tests log with ``TOOLUSE_SURFACE_LOG`` (tests/server/
recording.py): per request its API, client, status and field paths. A path is *named* when
its last part (``output_config`` of ``messages[].output_config``, ``web_search`` of
``tools[type=web_search]``), or the top-level object it belongs to, is written in backticks in
the first column of that API's policy table. Prints, per API, each path no row names with the clients that sent it, then the 4xx
answers the clients got. Exits 0 (a report, not a test).
"""

from __future__ import annotations

import json
import re
import sys
from collections import defaultdict
from pathlib import Path

#: Each API's policy table in docs/server.md: the line its table follows.
TABLES = {
    "messages": "**Messages (`POST /v1/messages`)**",
    "converse": "**Converse (`POST /model/{id}/converse[-stream]`)**",
    "chat": "**Chat Completions (`POST /v1/chat/completions`)**",
    "responses": "What becomes of each request field.",
}


def named(docs: str) -> dict[str, set[str]]:
    """API -> every word written in backticks in the first column of its policy table."""
    out: dict[str, set[str]] = {}
    lines = docs.splitlines()
    for api, marker in TABLES.items():
        start = next(i for i, line in enumerate(lines) if line.startswith(marker))
        rows = []
        for line in lines[start + 1:]:
            if line.startswith("|"):
                rows.append(line)
            elif rows:
                break
        words: set[str] = set()
        for row in rows:
            first = row.split(" | ")[0]
            for span in re.findall(r"`([^`]+)`", first):
                words.update(re.findall(r"[A-Za-z_][A-Za-z0-9_-]*", span))
        out[api] = words
    return out


def last_part(path: str) -> str:
    """``messages[].output_config`` -> ``output_config``; ``tools[type=x]`` -> ``x``."""
    tail = re.split(r"\.|\[\]\.", path)[-1]
    match = re.search(r"\[(?:type=)?([^\]]+)\]$", tail)
    return match.group(1) if match else tail


def is_named(path: str, words: set[str]) -> bool:
    """Its last part is named, or it is a member of a named top-level object
    (``context_management.edits``: the ``context_management`` row covers its members). A list
    item's key is not covered by the list's row (``messages[].output_config`` is not named by
    ``messages``)."""
    if last_part(path) in words:
        return True
    head, dot, _ = path.partition(".")
    return bool(dot) and "[" not in head and head in words


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print("usage: python bench/clients/surface_report.py SURFACE.jsonl [docs/server.md]",
              file=sys.stderr)
        return 2
    log = Path(argv[1])
    docs = Path(argv[2] if len(argv) > 2 else Path(__file__).parents[2] / "docs" / "server.md")
    words = named(docs.read_text(encoding="utf-8"))
    unnamed: dict[tuple[str, str], set[str]] = defaultdict(set)
    refused: dict[str, set[str]] = defaultdict(set)
    requests = 0
    for line in log.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        requests += 1
        api, client = entry["api"], entry["client"]
        for path in entry["fields"]:
            if not is_named(path, words.get(api, set())):
                unnamed[(api, path)].add(client)
        if entry.get("status") and 400 <= entry["status"] < 500:
            refused[f"{api} {entry['status']}"].add(client)
    print(f"{requests} requests logged; fields no policy table row names:")
    if not unnamed:
        print("  (none)")
    for (api, path), clients in sorted(unnamed.items()):
        print(f"  {api:9s} {path:50s} sent by {', '.join(sorted(clients))}")
    print("4xx answers (each explained by the policy or provoked by its test, or the test "
          "failed):")
    for what, clients in sorted(refused.items()):
        print(f"  {what:14s} to {', '.join(sorted(clients))}")
    if not refused:
        print("  (none)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
