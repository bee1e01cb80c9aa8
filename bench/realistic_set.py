"""The realistic tool-call set (issue 39): run it through ``tooluse serve``, score, compare.

    python bench/realistic_set.py run --config default --out /work/runs/realistic/default.json
    python bench/realistic_set.py run --config model   --out /work/runs/realistic/model.json
    python bench/realistic_set.py run --config preset  --out /work/runs/realistic/preset.json
    python bench/realistic_set.py run --config rule:NAME --out /work/runs/realistic/NAME.json
    python bench/realistic_set.py run --name mine --out X.json -- --backend local -o KEY=VALUE
    python bench/realistic_set.py compare BASELINE.json OTHER.json [OTHER.json ...]
    python bench/realistic_set.py per-rule BASELINE.json PRESET.json
    python bench/realistic_set.py rescore RUN.json [...]   # verdicts again, after a scorer fix

``run`` starts ``python -m tooluse.cli serve --port PORT SERVE_ARGS...`` as a subprocess (in
its own session, stopped by its process-group id), waits for ``GET /health``, sends each case
of ``bench/realistic/cases.jsonl`` to ``POST /v1/messages`` with the official ``anthropic``
SDK (temperature 0), collects the ``tool_use`` blocks and the ``x-tooluse-call-origins``
header, scores each case, and writes one JSON document. Named configs:

* ``model``    — ``--backend local:<the bundled model's path>``: every tuned default off;
* ``default``  — ``--backend local``;
* ``preset``   — ``--backend local --preset en-bfcl``;
* ``rule:NAME``— ``--backend local -o NAME=1`` (``rule:NAME=VALUE``: ``-o NAME=VALUE``);
* ``model+rule:NAME`` — ``--backend local:<path> -o NAME=1``: that rule alone on the model;
* ``preset-without:NAME`` — ``--backend local --preset en-bfcl -o NAME=0``: leave one out.

Scoring (``score_case``): a case is right when its calls, as a multiset (order-free), match
the expected calls one to one: same tool name; every expected parameter has one of its
acceptable values (``null`` in the list: it may be left out); no parameter that is not
listed. Strings compare case-insensitively after trimming, numbers numerically (``10 ==
10.0``; a boolean is not a number), arrays element by element, objects key by key. A
parameter given as JSON ``null`` or as an empty array (``"cc": []``) counts as left out.

Origins: the header holds ``ID=SOURCE[:RULE+RULE...]`` items joined by ``", "``, SOURCE one of
``model`` / ``edited`` / ``added`` (e.g. ``toolu_01=model, toolu_02=edited:stated_units+
named_options, toolu_03=added:fan_out``). Without the header every call counts as ``model``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Self

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DEFAULT_CASES = HERE / "realistic" / "cases.jsonl"
ORIGINS_HEADER = "x-tooluse-call-origins"
SOURCES = ("model", "edited", "added")

__all__ = [
    "compare",
    "config_args",
    "load_cases",
    "parse_origins",
    "per_rule",
    "run_set",
    "score_case",
    "values_equal",
]


# --------------------------------------------------------------------------- scoring


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def values_equal(actual: Any, wanted: Any) -> bool:
    """One given value against one acceptable value (see the module's scoring rules)."""
    if wanted is None or actual is None:
        return wanted is None and actual is None
    if isinstance(wanted, bool) or isinstance(actual, bool):
        return isinstance(wanted, bool) and isinstance(actual, bool) and wanted == actual
    if _is_number(wanted) or _is_number(actual):
        return _is_number(wanted) and _is_number(actual) and float(actual) == float(wanted)
    if isinstance(wanted, str) or isinstance(actual, str):
        return (isinstance(wanted, str) and isinstance(actual, str)
                and actual.strip().casefold() == wanted.strip().casefold())
    if isinstance(wanted, list) or isinstance(actual, list):
        return (isinstance(wanted, list) and isinstance(actual, list)
                and len(actual) == len(wanted)
                and all(values_equal(a, w) for a, w in zip(actual, wanted, strict=True)))
    if isinstance(wanted, dict) and isinstance(actual, dict):
        keys = {k for k, v in actual.items() if v is not None} | {
            k for k, v in wanted.items() if v is not None}
        return all(values_equal(actual.get(k), wanted.get(k)) for k in keys)
    return bool(actual == wanted)


def call_mismatch(name: str, arguments: dict[str, Any], expected: dict[str, Any]) -> str | None:
    """Why a call does not match one expected call, or ``None`` when it does."""
    if name != expected["name"]:
        return f"tool {name} instead of {expected['name']}"
    given = {k: v for k, v in (arguments or {}).items() if v is not None and v != []}
    wanted: dict[str, list[Any]] = expected["arguments"]
    extra = sorted(set(given) - set(wanted))
    if extra:
        return f"{name}: unexpected {', '.join(extra)}"
    for key, acceptable in wanted.items():
        value = given.get(key)
        if not any(values_equal(value, a) for a in acceptable):
            shown = "left out" if key not in given else json.dumps(value, ensure_ascii=False)
            return f"{name}.{key}: {shown}, expected one of " + json.dumps(
                acceptable, ensure_ascii=False)
    return None


def _assign(calls: list[dict[str, Any]], expected: list[dict[str, Any]], used: list[bool],
            i: int) -> bool:
    if i == len(calls):
        return True
    for j, want in enumerate(expected):
        if not used[j] and call_mismatch(calls[i]["name"], calls[i]["input"], want) is None:
            used[j] = True
            if _assign(calls, expected, used, i + 1):
                return True
            used[j] = False
    return False


def score_case(calls: Sequence[dict[str, Any]],
               expected: Sequence[dict[str, Any]]) -> tuple[bool, str]:
    """``(right, reason)`` for the calls made (``{"name", "input"}``) against the expected."""
    calls, expected = list(calls), list(expected)
    if len(calls) == len(expected) and _assign(calls, expected, [False] * len(expected), 0):
        return True, ""
    reasons: list[str] = []
    if len(calls) != len(expected):
        reasons.append(f"{len(calls)} call(s), expected {len(expected)}")
    # A readable reason: each call against the closest expected call (same name first).
    unmatched = list(expected)
    for c in calls:
        exact = next((e for e in unmatched
                      if call_mismatch(c["name"], c["input"], e) is None), None)
        if exact is not None:
            unmatched.remove(exact)
            continue
        same = next((e for e in unmatched if e["name"] == c["name"]), None)
        if same is not None:
            unmatched.remove(same)
            reasons.append(call_mismatch(c["name"], c["input"], same) or "")
        else:
            reasons.append(f"extra call {c['name']}")
    reasons += [f"missing call {e['name']}" for e in unmatched]
    return False, "; ".join(r for r in reasons if r)


# --------------------------------------------------------------------------- origins


def parse_origins(header: str | None) -> dict[str, dict[str, Any]]:
    """``{call id: {"source": ..., "rules": [...]}}`` from the origins header (may be absent)."""
    out: dict[str, dict[str, Any]] = {}
    for item in (header or "").split(","):
        item = item.strip()
        if not item or "=" not in item:
            continue
        call_id, _, rest = item.partition("=")
        source, _, rules = rest.strip().partition(":")
        out[call_id.strip()] = {"source": source.strip(),
                                "rules": [r.strip() for r in rules.split("+") if r.strip()]}
    return out


# --------------------------------------------------------------------------- running


def load_cases(path: Path = DEFAULT_CASES) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def _switch(rule: str) -> str:
    """``NAME`` as ``NAME=1``; ``NAME=VALUE`` (an option with a value) as it is."""
    return rule if "=" in rule else f"{rule}=1"


def config_args(config: str) -> list[str]:
    """The ``tooluse serve`` arguments of a named config."""
    if config == "model":
        from tooluse.backends.local import default_model_path
        return ["--backend", f"local:{default_model_path()}"]
    if config == "default":
        return ["--backend", "local"]
    if config == "preset":
        return ["--backend", "local", "--preset", "en-bfcl"]
    if config.startswith("preset:"):
        return ["--backend", "local", "--preset", config.split(":", 1)[1]]
    if config.startswith("rule:"):
        return ["--backend", "local", "-o", _switch(config.split(":", 1)[1])]
    if config.startswith("preset-without:"):
        return [*config_args("preset"), "-o", f"{config.split(':', 1)[1]}=0"]
    if config.startswith("model+rule:"):
        return [*config_args("model"), "-o", _switch(config.split(":", 1)[1])]
    raise SystemExit(f"unknown config {config!r}: model, default, preset[:NAME], rule:NAME, "
                     "model+rule:NAME, preset-without:NAME")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Gateway:
    """``tooluse serve`` in its own session; stopped by its process-group id, never by name."""

    def __init__(self, serve_args: Sequence[str], *, port: int | None = None,
                 log_path: Path | None = None, startup_timeout: float = 180.0) -> None:
        self.port = port or _free_port()
        self.argv = [sys.executable, "-m", "tooluse.cli", "serve", "--port", str(self.port),
                     *serve_args]
        self.log_path = log_path or Path(tempfile.mkstemp(prefix="realistic-", suffix=".log")[1])
        self.startup_timeout = startup_timeout
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log_tail(self, n: int = 30) -> str:
        try:
            lines = self.log_path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return ""
        return "\n".join(lines[-n:])

    def __enter__(self) -> Self:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("wb") as log:
            self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + self.startup_timeout
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"tooluse serve exited ({self.proc.returncode}):\n"
                                   + self.log_tail())
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=2) as r:
                    if r.status == 200:
                        return self
            except (urllib.error.URLError, OSError):
                pass
            if time.monotonic() > deadline:
                self.__exit__(None, None, None)
                raise RuntimeError("tooluse serve did not answer /health in "
                                   f"{self.startup_timeout:.0f} s:\n" + self.log_tail())
            time.sleep(0.25)

    def __exit__(self, *exc: object) -> None:
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        for sig, wait in ((signal.SIGTERM, 15.0), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                return
            try:
                proc.wait(timeout=wait)
                return
            except subprocess.TimeoutExpired:
                continue


def _git(*args: str) -> str:
    try:
        return subprocess.run(["git", *args], check=False, cwd=REPO, capture_output=True, text=True,
                              timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def run_case(client: Any, case: dict[str, Any], *, model: str,
             max_tokens: int) -> dict[str, Any]:
    """Send one case; its calls (with origins), verdict and timing."""
    import anthropic

    record: dict[str, Any] = {"id": case["id"], "category": case["category"]}
    kwargs: dict[str, Any] = {
        "model": model, "max_tokens": max_tokens,
        "tools": case["tools"], "messages": case["messages"],
        "tool_choice": case.get("tool_choice", {"type": "any"}),
        # The current SDK's create() has no temperature parameter; the API field still exists.
        "extra_body": {"temperature": 0},
    }
    if case.get("system"):
        kwargs["system"] = case["system"]
    start = time.perf_counter()
    try:
        raw = client.messages.with_raw_response.create(**kwargs)
        message = raw.parse()
        header = raw.headers.get(ORIGINS_HEADER)
    except anthropic.APIError as e:
        record.update(right=False, reason=f"error: {e}", error=str(e), calls=[],
                      seconds=round(time.perf_counter() - start, 3))
        return record
    origins = parse_origins(header)
    calls = []
    for block in message.content:
        if block.type != "tool_use":
            continue
        origin = origins.get(block.id, {"source": "model", "rules": []})
        calls.append({"id": block.id, "name": block.name, "input": block.input,
                      "origin": origin["source"], "rules": origin["rules"]})
    right, reason = score_case(calls, case["expected"])
    record.update(
        right=right, reason=reason, calls=calls,
        text="".join(b.text for b in message.content if b.type == "text"),
        stop_reason=message.stop_reason, origins_header=header,
        seconds=round(time.perf_counter() - start, 3),
    )
    return record


def summarize(records: Sequence[dict[str, Any]],
              cases: dict[str, dict[str, Any]]) -> dict[str, Any]:
    sources = Counter(c["origin"] for r in records for c in r["calls"])
    beyond = sum(max(0, len(r["calls"]) - len(cases[r["id"]]["expected"])) for r in records
                 if r["id"] in cases)
    right = sum(r["right"] for r in records)
    return {
        "cases": len(records), "right": right,
        "accuracy": round(right / len(records), 4) if records else 0.0,
        "calls": sum(len(r["calls"]) for r in records),
        "calls_model": sources.get("model", 0), "calls_edited": sources.get("edited", 0),
        "calls_added": sources.get("added", 0), "calls_beyond_expected": beyond,
        "errors": sum(1 for r in records if r.get("error")),
        "header_seen": sum(1 for r in records if r.get("origins_header") is not None),
    }


def run_set(serve_args: Sequence[str], *, name: str, cases_path: Path = DEFAULT_CASES,
            ids: Sequence[str] | None = None, port: int | None = None,
            model: str = "tooluse-local", max_tokens: int = 256,
            log_path: Path | None = None, startup_timeout: float = 180.0,
            request_timeout: float = 300.0, quiet: bool = False) -> dict[str, Any]:
    """Start the gateway, run the cases, stop it; the result document."""
    import anthropic

    cases_sha256 = hashlib.sha256(cases_path.read_bytes()).hexdigest()
    cases = load_cases(cases_path)
    if ids:
        missing = set(ids) - {c["id"] for c in cases}
        if missing:
            raise SystemExit(f"no such case: {', '.join(sorted(missing))}")
        cases = [c for c in cases if c["id"] in set(ids)]
    started = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    t0 = time.perf_counter()
    records: list[dict[str, Any]] = []
    gateway = Gateway(serve_args, port=port, log_path=log_path, startup_timeout=startup_timeout)
    with gateway:
        ready = time.perf_counter() - t0
        client = anthropic.Anthropic(base_url=gateway.url, api_key="x", max_retries=0,
                                     timeout=request_timeout)
        for case in cases:
            record = run_case(client, case, model=model, max_tokens=max_tokens)
            records.append(record)
            if not quiet:
                shown = " ".join(
                    f"{c['name']}{json.dumps(c['input'], ensure_ascii=False)}"
                    + ("" if c["origin"] == "model" else f"[{c['origin']}:{'+'.join(c['rules'])}]")
                    for c in record["calls"])
                mark = "ok " if record["right"] else "BAD"
                print(f"{mark} {case['id']:<34} {shown}"
                      + ("" if record["right"] else f"   <- {record['reason']}"),
                      file=sys.stderr, flush=True)
    by_id = {c["id"]: c for c in cases}
    return {
        "meta": {
            "name": name, "serve_args": list(serve_args), "argv": gateway.argv,
            "cases_file": str(cases_path),
            "cases_sha256": cases_sha256,
            "git_commit": _git("rev-parse", "HEAD"),
            "src_dirty": bool(_git("status", "--porcelain", "--", "src")),
            # Set when the server ran another tree's code (e.g. a `git archive` of a commit).
            "pythonpath": os.environ.get("PYTHONPATH"),
            "started": started, "startup_seconds": round(ready, 2),
            "seconds": round(time.perf_counter() - t0, 2),
            "max_tokens": max_tokens, "model": model, "log": str(gateway.log_path),
        },
        "summary": summarize(records, by_id),
        "cases": records,
    }


# --------------------------------------------------------------------------- compare


def _load(path: str | Path) -> dict[str, Any]:
    return dict(json.loads(Path(path).read_text(encoding="utf-8")))


def _expected_counts(doc: dict[str, Any]) -> dict[str, int]:
    path = Path(doc["meta"].get("cases_file", DEFAULT_CASES))
    if not path.exists():
        path = DEFAULT_CASES
    return {c["id"]: len(c["expected"]) for c in load_cases(path)}


def diff(base: dict[str, Any], other: dict[str, Any]) -> dict[str, list[str]]:
    """Case ids per effect of ``other`` against ``base`` (the cases both ran)."""
    before = {r["id"]: r for r in base["cases"]}
    counts = _expected_counts(other)
    out: dict[str, list[str]] = {"broken": [], "fixed": [], "added": [], "beyond": [],
                                 "changed": [], "edited": []}
    for r in other["cases"]:
        b = before.get(r["id"])
        if b is not None:
            if b["right"] and not r["right"]:
                out["broken"].append(r["id"])
            elif r["right"] and not b["right"]:
                out["fixed"].append(r["id"])
            if _call_key(b) != _call_key(r):
                out["changed"].append(r["id"])
        n_added = sum(1 for c in r["calls"] if c.get("origin") == "added")
        out["added"] += [r["id"]] * n_added
        n_beyond = max(0, len(r["calls"]) - counts.get(r["id"], len(r["calls"])))
        out["beyond"] += [r["id"]] * n_beyond
        if any(c.get("origin") == "edited" for c in r["calls"]):
            out["edited"].append(r["id"])
    return out


def _call_key(record: dict[str, Any]) -> list[str]:
    return sorted(json.dumps([c["name"], c["input"]], sort_keys=True) for c in record["calls"])


def _ids(ids: Sequence[str]) -> str:
    counted = Counter(ids)
    return ", ".join(f"{i}×{n}" if n > 1 else i for i, n in counted.items()) or "-"


def compare(base: dict[str, Any], others: Sequence[dict[str, Any]]) -> str:
    """Markdown: a summary table of every config, then one table per config with case ids."""
    def name(doc: dict[str, Any]) -> str:
        return str(doc["meta"].get("name", "?"))

    lines = [f"Baseline: **{name(base)}** (`{' '.join(base['meta'].get('serve_args', []))}`)",
             "", ("| config | right | accuracy | broken | fixed | calls added (origin) "
                  "| calls beyond expected | cases with an edited call |"),
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    s = base["summary"]
    own = diff(base, base)
    lines.append(f"| {name(base)} (baseline) | {s['right']}/{s['cases']} | "
                 f"{100 * s['accuracy']:.1f}% | - | - | {len(own['added'])} | "
                 f"{len(own['beyond'])} | {len(own['edited'])} |")
    diffs = [diff(base, o) for o in others]
    for o, d in zip(others, diffs, strict=True):
        s = o["summary"]
        lines.append(f"| {name(o)} | {s['right']}/{s['cases']} | {100 * s['accuracy']:.1f}% | "
                     f"{len(d['broken'])} | {len(d['fixed'])} | {len(d['added'])} | "
                     f"{len(d['beyond'])} | {len(d['edited'])} |")
    for o, d in zip(others, diffs, strict=True):
        lines += ["", f"### {name(o)} against {name(base)}",
                  f"`{' '.join(o['meta'].get('serve_args', []))}`", "",
                  "| effect | count | cases |", "| --- | ---: | --- |"]
        for key, label in (("broken", "right answers broken"), ("fixed", "wrong ones fixed"),
                           ("added", "calls added (origin `added`)"),
                           ("beyond", "calls beyond the expected count"),
                           ("edited", "cases with an edited call"),
                           ("changed", "cases whose calls differ")):
            lines.append(f"| {label} | {len(d[key])} | {_ids(d[key])} |")
        missing = {r["id"] for r in base["cases"]} ^ {r["id"] for r in o["cases"]}
        if missing:
            lines.append(f"\nNot in both runs: {', '.join(sorted(missing))}")
    return "\n".join(lines) + "\n"


def per_rule(base: dict[str, Any], preset: dict[str, Any]) -> str:
    """Markdown: for each case whose calls differ from the baseline, the rules its calls name;
    then per rule the cases it touched, fixed, broke, and the calls it added."""
    before = {r["id"]: r for r in base["cases"]}
    rows: list[str] = []
    per: dict[str, dict[str, list[str]]] = {}
    for r in preset["cases"]:
        b = before.get(r["id"])
        if b is None or _call_key(b) == _call_key(r):
            continue
        verdict = ("fixed" if r["right"] and not b["right"] else
                   "broken" if b["right"] and not r["right"] else
                   "still right" if r["right"] else "still wrong")
        rules = sorted({rule for c in r["calls"] for rule in c.get("rules", [])}) or [
            "(none named)"]
        added = [rule for c in r["calls"] if c.get("origin") == "added"
                 for rule in (c.get("rules") or ["(none named)"])]
        rows.append(f"| {r['id']} | {verdict} | {', '.join(rules)} | "
                    f"{_short_calls(b)} | {_short_calls(r)} |")
        for rule in rules:
            entry = per.setdefault(rule, {"touched": [], "fixed": [], "broken": [],
                                          "added": []})
            entry["touched"].append(r["id"])
            if verdict in ("fixed", "broken"):
                entry[verdict].append(r["id"])
        for rule in added:
            per.setdefault(rule, {"touched": [], "fixed": [], "broken": [], "added": []})[
                "added"].append(r["id"])
    title = (f"Cases whose calls differ: **{preset['meta'].get('name', '?')}** against "
             f"**{base['meta'].get('name', '?')}** ({len(rows)})")
    lines = [title, "",
             "| case | verdict | rules named | baseline calls | calls |",
             "| --- | --- | --- | --- | --- |", *rows, "",
             ("A case whose calls name several rules counts for each of them (rules that steer "
              "decoding are named on most calls): for one rule's own effect, run "
              "`rule:NAME` or `preset-without:NAME` and `compare`."), "",
             "| rule | cases touched | fixed | broken | calls added | cases |",
             "| --- | ---: | ---: | ---: | ---: | --- |"]
    for rule, e in sorted(per.items(), key=lambda kv: (-len(kv[1]["touched"]), kv[0])):
        detail = "; ".join(f"{k}: {_ids(v)}" for k, v in e.items()
                           if k != "touched" and v)
        lines.append(f"| {rule} | {len(e['touched'])} | {len(e['fixed'])} | "
                     f"{len(e['broken'])} | {len(e['added'])} | {detail or '-'} |")
    return "\n".join(lines) + "\n"


def rescore(doc: dict[str, Any], cases_path: Path = DEFAULT_CASES) -> dict[str, Any]:
    """``doc`` with every verdict and the summary recomputed from the recorded calls against
    ``cases_path`` (after the scorer or an expected value changed; nothing is re-run)."""
    cases = {c["id"]: c for c in load_cases(cases_path)}
    for record in doc["cases"]:
        if record["id"] in cases and not record.get("error"):
            record["right"], record["reason"] = score_case(record["calls"],
                                                           cases[record["id"]]["expected"])
    doc["summary"] = summarize(doc["cases"], cases)
    doc["meta"]["rescored"] = {"cases_file": str(cases_path), "cases_sha256": hashlib.sha256(
        cases_path.read_bytes()).hexdigest()}
    return doc


def _short_calls(record: dict[str, Any]) -> str:
    parts = []
    for c in record["calls"]:
        text = f"{c['name']}{json.dumps(c['input'], ensure_ascii=False, sort_keys=True)}"
        if c.get("origin", "model") != "model":
            text += f" [{c['origin']}]"
        parts.append(text.replace("|", "\\|"))
    return "<br>".join(parts) or "(no call)"


# --------------------------------------------------------------------------- CLI


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    serve_args: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, serve_args = argv[:cut], argv[cut + 1:]
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("run", help="run the set through tooluse serve (serve args after --)")
    p.add_argument("--config",
                   help="model, default, preset[:NAME], rule:NAME, model+rule:NAME, "
                        "preset-without:NAME")
    p.add_argument("--name", help="name of this config in reports (default: --config)")
    p.add_argument("--out", required=True, help="where to write the JSON result")
    p.add_argument("--cases", type=Path, default=DEFAULT_CASES)
    p.add_argument("--ids", nargs="+", help="only these case ids")
    p.add_argument("--port", type=int, help="default: a free port")
    p.add_argument("--model", default="tooluse-local", help="model name sent in requests")
    p.add_argument("--max-tokens", type=int, default=256)
    p.add_argument("--startup-timeout", type=float, default=180.0)
    p.add_argument("--quiet", action="store_true")
    c = sub.add_parser("compare", help="markdown tables: others against a baseline")
    c.add_argument("baseline")
    c.add_argument("others", nargs="+")
    r = sub.add_parser("per-rule", help="rules named in the cases a preset run changed")
    r.add_argument("baseline")
    r.add_argument("preset")
    s = sub.add_parser("rescore", help="recompute verdicts of run JSONs in place (no re-run)")
    s.add_argument("runs", nargs="+")
    s.add_argument("--cases", type=Path, default=DEFAULT_CASES)
    args = parser.parse_args(argv)

    if args.command == "compare":
        print(compare(_load(args.baseline), [_load(o) for o in args.others]), end="")
        return 0
    if args.command == "rescore":
        for path in args.runs:
            doc = rescore(_load(path), args.cases)
            Path(path).write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n",
                                  encoding="utf-8")
            print(f"{path}: {doc['summary']['right']}/{doc['summary']['cases']} right")
        return 0
    if args.command == "per-rule":
        print(per_rule(_load(args.baseline), _load(args.preset)), end="")
        return 0
    if args.config and serve_args:
        parser.error("give --config or serve arguments after --, not both")
    if not args.config and not serve_args:
        parser.error("give --config NAME or serve arguments after --")
    serve = config_args(args.config) if args.config else serve_args
    name = args.name or args.config or " ".join(serve)
    out = Path(args.out)
    doc = run_set(serve, name=name, cases_path=args.cases, ids=args.ids, port=args.port,
                  model=args.model, max_tokens=args.max_tokens,
                  log_path=out.with_suffix(".log"), startup_timeout=args.startup_timeout,
                  quiet=args.quiet)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    s = doc["summary"]
    print(f"{name}: {s['right']}/{s['cases']} right ({100 * s['accuracy']:.1f}%), "
          f"{s['calls']} calls ({s['calls_edited']} edited, {s['calls_added']} added, "
          f"{s['calls_beyond_expected']} beyond expected), {s['errors']} errors, "
          f"{doc['meta']['seconds']:.0f} s -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
