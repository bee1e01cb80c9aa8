"""``tooluse logs``: the traces ``tooluse serve --trace`` and ``Runner(trace=...)`` keep, and
the usage of a config's API keys.

``tooluse logs`` lists the newest (``-n``), ``-q TEXT`` only those holding a text,
``tooluse logs ID`` shows one (an id prefix is enough): the request, for each model call the
tries of a routed request, the prompt, the raw output with the call blocks marked, the
calls with their origin and validation, and the response; ``--json`` prints the stored JSON
instead; ``--serve`` serves the trace page over the same database. ``tooluse logs --usage``
prints the usage per key, model and route (``--usage-store``: the config's
``usage_store``, when it is not the default file).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

__all__ = ["register"]


def register(sub: Any) -> None:
    p = sub.add_parser(
        "logs",
        help="list and show the traces of tooluse serve --trace and Runner(trace=...)",
        description="List the newest traces, or show one: what the model saw and wrote "
        "(prompt, raw output, calls with origin and validation, response).",
    )
    p.add_argument("id", nargs="?", help="show this trace (an id or a unique prefix of one)")
    p.add_argument("-n", "--count", type=int, default=20, metavar="N",
                   help="how many traces to list, newest first (default 20)")
    p.add_argument("-q", "--query", metavar="TEXT",
                   help="only traces holding TEXT (in the prompt, the output, the bodies)")
    p.add_argument("--json", action="store_true", help="print JSON (the stored form)")
    p.add_argument("--db", metavar="PATH", default=None,
                   help="the trace database (default: $TOOLUSE_TRACE_DB or "
                   "~/.cache/tooluse/traces.db, where tooluse serve --trace keeps them)")
    p.add_argument("--serve", action="store_true",
                   help="serve the trace page over the database at http://HOST:PORT/trace")
    p.add_argument("--host", default="127.0.0.1", help="with --serve (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8081, help="with --serve (default 8081)")
    p.add_argument("--usage", action="store_true",
                   help="print the usage of a config's API keys per key, model and route "
                   "(requests, failed, tokens in and out, cache reads and writes)")
    p.add_argument("--usage-store", metavar="PATH|URL", default=None,
                   help="with --usage: the config's usage_store (default: "
                   "~/.cache/tooluse/usage.sqlite3)")
    p.set_defaults(func=_run)


def _usage(args: argparse.Namespace) -> int:
    """``tooluse logs --usage``."""
    from pathlib import Path

    from ..server.stores import open_usage_store
    from ..server.stores.usage import default_usage_path

    where = args.usage_store or str(default_usage_path())
    if "://" not in where and not Path(where).exists():
        print(f"tooluse logs: no usage at {where} (tooluse serve --config with [[keys]] "
              "keeps it)", file=sys.stderr)
        return 1
    try:
        store = open_usage_store(where)
    except OSError as exc:
        print(f"tooluse logs: {exc}", file=sys.stderr)
        return 1
    try:
        rows = store.totals()
    finally:
        store.close()
    if args.json:
        print(json.dumps(rows, indent=2))
    elif not rows:
        print("no usage yet")
    else:
        print(usage_table(rows))
    return 0


def usage_table(rows: list[dict[str, Any]]) -> str:
    """The usage rows as a table, one line per key, model and route."""
    head = ("KEY", "MODEL", "ROUTE", "REQUESTS", "FAILED", "TOKENS IN", "OUT", "CACHE READ",
            "CACHE WRITE", "LAST")
    numbers = ("requests", "failed", "input_tokens", "output_tokens", "cache_read_tokens",
               "cache_write_tokens")
    table = [head]
    for row in rows:
        table.append((row["key"], row["model"] or "-", row["route"],
                      *(str(row[n]) for n in numbers), _when(row["last_at"])))
    widths = [max(len(r[i]) for r in table) for i in range(len(head))]
    return "\n".join("  ".join(c.rjust(w) if 3 <= i <= 8 else c.ljust(w)
                               for i, (c, w) in enumerate(zip(r, widths, strict=True))).rstrip()
                     for r in table)


def _run(args: argparse.Namespace) -> int:
    from pathlib import Path

    if args.usage:
        return _usage(args)

    from ..trace.store import TraceStore, default_path

    path = Path(args.db) if args.db else default_path()
    if not path.exists():
        print(f"tooluse logs: no traces at {path} (tooluse serve --trace, or "
              "Runner(trace=...), keeps them)", file=sys.stderr)
        return 1
    if args.count < 1:
        print(f"-n must be at least 1, not {args.count}", file=sys.stderr)
        return 2
    try:
        store = TraceStore(path)
    except ValueError as exc:
        print(f"tooluse logs: {exc}", file=sys.stderr)
        return 1
    try:
        if args.serve:
            return _serve(store, args.host, args.port)
        if args.id:
            trace = store.get(args.id)
            if trace is None:
                print(f"tooluse logs: no trace {args.id!r} (or the prefix names several)",
                      file=sys.stderr)
                return 1
            print(json.dumps(trace, indent=2, ensure_ascii=False) if args.json
                  else show(trace))
            return 0
        items = store.list(args.count, search=args.query)
        if args.json:
            print(json.dumps(items, indent=2, ensure_ascii=False))
        elif not items:
            print("no traces" + (f" holding {args.query!r}" if args.query else ""))
        else:
            print(listing(items))
        return 0
    finally:
        store.close()


def _serve(store: Any, host: str, port: int) -> int:
    try:
        import uvicorn
        from starlette.applications import Starlette

        from ..server.trace_page import trace_routes
    except ImportError as exc:  # pragma: no cover - depends on the installed extras
        print(f"tooluse logs --serve needs the 'server' extra: pip install 'tooluse[server]' "
              f"({exc})", file=sys.stderr)
        return 2
    app = Starlette(routes=trace_routes(store))
    print(f"trace page on http://{host}:{port}/trace ({store.path})", file=sys.stderr,
          flush=True)
    uvicorn.run(app, host=host, port=port, log_level="warning")
    return 0


def _when(seconds: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(seconds))


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f} ms"


def listing(items: list[dict[str, Any]]) -> str:
    """The summaries as a table, newest first."""
    rows = [("ID", "TIME", "API", "MODEL", "TOOLS", "CALLS", "STATUS", "LATENCY")]
    for item in items:
        status = item["status"] + (f" {item['http_status']}" if item["http_status"] else "")
        tools = ", ".join(item["tools"])
        rows.append((item["id"], _when(item["time"]), item["api"], item["model"] or "-",
                     tools if len(tools) <= 40 else tools[:37] + "...", str(item["calls"]),
                     status, _ms(item["latency_ms"])))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
                     for row in rows)


def _indent(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line for line in text.splitlines()) or prefix


def _marked(turn: dict[str, Any]) -> str:
    """The raw output with each call block between ``⟦call ID:`` and ``⟧`` and each prefill
    between ``«`` and ``»``."""
    raw: str = turn["raw"]
    inserts: list[tuple[int, int, str]] = []
    for start, end in turn["prefill_spans"]:
        inserts += [(start, 1, "«"), (end, 0, "»")]
    for span in turn["spans"]:
        name = span["call"] or "no call"
        inserts += [(span["start"], 2, f"⟦{name}: "), (span["end"], -1, "⟧")]
    out, last = [], 0
    for at, _, mark in sorted(inserts, key=lambda item: (item[0], item[1])):
        at = min(at, len(raw))
        out += [raw[last:at], mark]
        last = at
    out.append(raw[last:])
    return "".join(out)


def show(trace: dict[str, Any]) -> str:
    """One trace, for a terminal."""
    summary = trace["summary"]
    lines = [f"trace {trace['id']}  {_when(trace['time'])}  {trace['api']}  "
             f"{summary['model'] or '-'}  {summary['status']}"
             + (f" {trace['status']}" if trace["status"] else "")
             + f"  {_ms(trace['duration_ms'])}  "
             f"{summary['input_tokens']} tokens in, {summary['output_tokens']} out"]
    if trace["phases"]:
        lines.append("phases: " + ", ".join(f"{k} {v:.1f} ms" for k, v in trace["phases"].items()))
    if trace["request"]["path"]:
        lines.append(f"request: {trace['request']['method']} {trace['request']['path']}")
    if trace["error"]:
        lines.append(f"error: {trace['error']}")
    for number, turn in enumerate(trace["turns"], 1):
        lines.append(f"\n== model call {number} ({_ms(turn['duration_ms'])}) ==")
        for attempt in turn.get("attempts") or []:
            why = f": {attempt['error']}: {attempt.get('message', '')}" if "error" in attempt \
                else (f": {attempt['message']}" if attempt.get("message") else "")
            lines.append(f"-- attempt {attempt['target']}: {attempt['outcome']} "
                         f"({attempt['ms']:.1f} ms){why}")
        if turn["prompt"] is not None:
            lines.append("-- prompt --")
            for message in turn["prompt"]:
                lines += [f"  [{message['role']}]", _indent(message["content"])]
        if turn["raw"] is not None:
            lines += ["-- raw output (⟦call blocks⟧, «prefill») --", _indent(_marked(turn))]
            for p in turn["passes"]:
                counts = p["counts"]
                lines.append(
                    f"  {p['purpose']}: ended by {p['reason']}"
                    + (f" ({p['stop_sequence']!r})" if p["stop_sequence"] else "")
                    + f", {p['input_tokens']} tokens in ({p['cached_tokens']} cached), "
                    f"{p['output_tokens']} out"
                    + (f", {counts['forced_tokens']:g} forced" if "forced_tokens" in counts
                       else ""))
        lines.append("-- calls --" if turn["calls"] else "-- no calls --")
        for call in turn["calls"]:
            check = "valid" if call["valid"] else "INVALID: " + "; ".join(call["problems"])
            lines.append(f"  {call['id']} {call['name']} "
                         f"{json.dumps(call['input'], ensure_ascii=False)}")
            lines.append(f"    {call['origin_text']} · {check}")
        if turn["error"]:
            lines.append(f"-- error --\n  {turn['error']}")
        if turn["response"] is not None:
            response = turn["response"]
            texts = [b["text"] for b in response.get("content", []) if b.get("type") == "text"]
            lines.append(f"-- response: stop_reason {response.get('stop_reason')} --")
            if texts:
                lines.append(_indent("".join(texts)))
    return "\n".join(lines)
