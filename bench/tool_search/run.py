"""Tool search on the bundled model: 60 deferred tools behind tool_search_tool_bm25.

    python bench/tool_search/run.py [--backend local] [--option KEY=VALUE ...] [--fresh]
                                    [--out RUN.json]

Runs the gateway in this process on the backend (default: the bundled local model), sends
each request of catalog.REQUESTS (with ``--fresh``: catalog.FRESH_REQUESTS, ten requests
written after the last change to the search, which nothing was tuned on) to POST /v1/messages with the 60 tools of catalog.TOOLS
deferred (``defer_loading: true``) and the BM25 search tool, ``tool_choice: auto``, and
reports per request: the searches the model made (its queries and what they found), the
tool it called, whether that is the right one, and the model turns. Then the prompt the
model saw on its first turn (the search tool only) against the prompt of the same request
with all 60 tools loaded, in the backend's own tokens (exact for the local model).

Scoring: a request is right when the first client tool the answer calls is the catalog's
tool for it (its arguments are shown, not scored).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from catalog import FRESH_REQUESTS, REQUESTS, TOOLS  # noqa: E402

SEARCH = {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}


def body(question: str, deferred: bool = True) -> dict[str, Any]:
    tools = [{**t, "defer_loading": True} for t in TOOLS] if deferred else list(TOOLS)
    return {"model": "m", "max_tokens": 300, "tool_choice": {"type": "auto"},
            "tools": [SEARCH, *tools] if deferred else tools,
            "messages": [{"role": "user", "content": question}]}


def prompt_tokens(backend: Any, data: dict[str, Any]) -> int | None:
    """The tokens of the prompt the backend builds for the request's first model turn."""
    from tooluse.codecs import anthropic
    from tooluse.runner.hosted import Catalog, offered_tools

    request = anthropic.decode_request(data)
    catalog = Catalog(search=request.server_tools.search if request.server_tools else None)
    first = request.model_copy(update={"tools": offered_tools(request, catalog,
                                                              list(request.messages)),
                                       "server_tools": None})
    return backend.count_tokens(first)  # type: ignore[no-any-return]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="local")
    parser.add_argument("--option", "-o", action="append", default=[])
    parser.add_argument("--fresh", action="store_true",
                        help="the ten requests nothing was tuned on")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    requests = FRESH_REQUESTS if args.fresh else REQUESTS
    import httpx2

    from tooluse.backends.registry import load_backend
    from tooluse.cli._backend import parse_pairs
    from tooluse.server import ServerThread, create_app

    backend = load_backend(args.backend, **parse_pairs(args.option, "=", "KEY=VALUE"))
    rows = []
    with ServerThread(create_app(backend)) as srv:
        for question, expected in requests:
            started = time.perf_counter()
            response = httpx2.post(srv.url + "/v1/messages", json=body(question), timeout=600)
            data = response.json()
            content = data.get("content", [])
            searches = [(b["input"].get("query"), []) for b in content
                        if b["type"] == "server_tool_use"]
            found = [[r["tool_name"] for r in b["content"].get("tool_references", [])]
                     for b in content if b["type"] == "tool_search_tool_result"]
            calls = [b for b in content if b["type"] == "tool_use"]
            called = calls[0]["name"] if calls else None
            rows.append({"request": question, "expected": expected, "called": called,
                         "input": calls[0]["input"] if calls else None,
                         "right": called == expected,
                         "searches": [{"query": q, "found": f}
                                      for (q, _), f in zip(searches, found, strict=False)],
                         "answer": next((b["text"] for b in content if b["type"] == "text"),
                                        None),
                         "stop_reason": data.get("stop_reason"), "status": response.status_code,
                         "seconds": round(time.perf_counter() - started, 1)})
            row = rows[-1]
            print(f"{'RIGHT' if row['right'] else 'wrong'}  {question[:50]:50}  called "
                  f"{called}  searches {[(s['query'], s['found'][:3]) for s in row['searches']]}"
                  f"  {row['seconds']}s", flush=True)
    right = sum(r["right"] for r in rows)
    deferred = prompt_tokens(backend, body(REQUESTS[0][0]))
    every = prompt_tokens(backend, body(REQUESTS[0][0], deferred=False))
    print(f"\nright tool called: {right} of {len(rows)}")
    print(f"first-turn prompt: {deferred} tokens with the tools deferred, {every} with all 60 "
          "tools loaded")
    if args.out:
        Path(args.out).write_text(json.dumps({"backend": args.backend, "options": args.option,
                                              "requests": "fresh" if args.fresh else "tuned",
                                              "right": right, "of": len(rows),
                                              "prompt_tokens_deferred": deferred,
                                              "prompt_tokens_all_tools": every, "rows": rows},
                                             indent=1))
    backend.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
