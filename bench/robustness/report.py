"""Render ``docs/benchmarks/robustness.json`` as the tables of ``robustness.md`` (between the
``<!-- results -->`` markers; the prose around them is kept)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

__all__ = ["render", "write_report"]

START, END = "<!-- results: written by bench/robustness/run.py -->", "<!-- /results -->"


def _meta(part: dict[str, Any]) -> str:
    m = part.get("meta", {})
    load = ", ".join(f"{x:.1f}" for x in m.get("load_average", []))
    src = f" (code: `src/` as of `{m['src_commit']}`)" if m.get("src_commit") else ""
    return (f"_commit `{m.get('commit')}`{src}, {m.get('date_utc')} UTC, {m.get('seconds')} s, "
            f"load average at start {load} (shared 2-core machine)_")


def _fuzz(part: dict[str, Any]) -> list[str]:
    out = ["### 1. Malformed requests", "", _meta(part), "",
           "| endpoint | requests | of which schemathesis | 5xx | non-native shape | hangs | transport errors | native 4xx | complete 200 | statuses |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for e in part["endpoints"]:
        st = sum(v for k, v in e["by_source"].items() if k.startswith("schemathesis"))
        v = e["verdicts"]
        statuses = ", ".join(f"{k}: {n}" for k, n in e["statuses"].items())
        out.append(f"| {e['endpoint']} | {e['requests']:,} | {st:,} | {e['5xx']} | {e['non_native']} | {e['hangs']} | "
                   f"{e['transport_errors']} | {v.get('native_error', 0):,} | {v.get('complete', 0) + v.get('stream_error', 0):,} | {statuses} |")
    out += ["", (f"Gateway alive after the run: {part['gateway_alive_after']}; RSS {part['rss_mib_before']} → "
                f"{part['rss_mib_after']} MiB.")]
    problems = [p for e in part["endpoints"] for p in e["problems"]]
    if problems:
        out += ["", "First problems found:", ""]
        out += [f"- {p['kind']} ({p['source']}, {p['url']}): {p['detail'][:150]} — body `{p['body'][:120]!r}`"
                for p in problems[:10]]
    return out


def _soak(part: dict[str, Any]) -> list[str]:
    return ["### 2. Concurrent streams (soak)", "", _meta(part), "",
            "| clients | seconds | streams | streams/s | errors | truncated | RSS start | RSS at 10 s | RSS at end | growth 10 s → end |",
            "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
            (f"| {part['clients']} | {part['seconds']:g} | {part['streams']:,} | {part['streams_per_second']} | "
            f"{part['errors']} | {part['truncated']} | {part['rss_mib_start']} MiB | {part['rss_mib_at_10s']} MiB | "
            f"{part['rss_mib_end']} MiB | {part['rss_growth_10s_to_end_pct']}% |"),
            "", f"Per API: {part['per_api']}; verdicts: {part['verdicts']}."
            + (f" Problems: {part['problems']}" if part["problems"] else "")]


def _faults(part: dict[str, Any]) -> list[str]:
    s = part["summary"]
    out = ["### 3. Upstream faults", "", _meta(part), "",
           (f"Bound: {s['bound_seconds']:g} s. Fault cases answered natively within it: "
           f"**{s['answered_natively_within_bound']} of {s['fault_cases']}**; streams/answers complete "
           f"although the upstream failed: **{s['complete_despite_failure']}**; healthy-upstream cases "
           f"complete: {s['ok_cases_complete']} of {s['cases'] - s['fault_cases']}; slowest answer "
           f"{s['slowest_seconds']} s. Requests the upstream received per fault: {s['upstream_requests']}."), ""]
    rows = part["rows"]
    apis = [("messages", "json"), ("messages", "stream"), ("converse", "json"), ("converse", "stream"),
            ("chat", "json"), ("chat", "stream")]
    for kind in ("anthropic", "openai"):
        out += [f"Through the `{kind}:` backend — what the client got (seconds):", "",
                "| fault | " + " | ".join(f"{a} {m}" for a, m in apis) + " |",
                "|---|" + "---|" * len(apis)]
        faults = list(dict.fromkeys(r["fault"] for r in rows))
        for fault in faults:
            cells = []
            for api, mode in apis:
                r = next(x for x in rows if x["upstream"] == kind and x["fault"] == fault and x["api"] == api and x["mode"] == mode)
                flag = "" if r["native_in_bound"] else " **✗**"
                cells.append(f"{r['got']} ({r['seconds']:.1f}){flag}")
            out.append(f"| {fault} | " + " | ".join(cells) + " |")
        out.append("")
    return out


def _disconnect(part: dict[str, Any]) -> list[str]:
    b = part["baseline"]
    out = ["### 4. Client disconnects", "", _meta(part), "",
           (f"Baseline after a warm-up: {b['threads']} threads, {b['fds']} fds in the gateway. "
           f"All back to baseline: **{part['all_back_to_baseline']}**."), "",
           "| upstream | client path | clients | left after (s) | upstream requests | requests after the clients left | upstream still open | threads when they left → after | fds when they left → after | settled in (s) |",
           "|---|---|---:|---:|---:|---:|---:|---|---|---:|"]
    for r in part["rows"]:
        out.append(f"| {r['upstream']} | `{r['path']}` | {r['clients']} | {r.get('left_after_seconds', '')} | {r['upstream_requests']} | "
                   f"{r['requests_after_clients_left']} | {r['upstream_open_after']} | {r['threads_peak']} → {r['threads_after']} | "
                   f"{r['fds_peak']} → {r['fds_after']} | {r['settled_seconds']} |")
    return out


def render(results: dict[str, Any]) -> str:
    lines: list[str] = []
    for name, fn in (("fuzz", _fuzz), ("soak", _soak), ("faults", _faults), ("disconnect", _disconnect)):
        if name in results:
            lines += fn(results[name]) + [""]
    return "\n".join(lines)


def write_report(results: dict[str, Any], path: Path) -> None:
    block = f"{START}\n\n{render(results)}\n{END}"
    text = path.read_text() if path.exists() else f"# Robustness campaign\n\n{START}\n{END}\n"
    if START not in text:
        text += f"\n{START}\n{END}\n"
    text = re.sub(re.escape(START) + ".*?" + re.escape(END), lambda _: block, text, flags=re.DOTALL)
    path.write_text(text)
