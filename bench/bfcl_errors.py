"""Where the errors of a recorded BFCL run come from, value by value, without the model.

    python bench/bfcl_errors.py RUN_DIR [--data-dir ../shared/bench/bfcl] [--choice auto]
                                [-v CATEGORY ...]

``RUN_DIR`` holds ``tooluse eval bfcl`` JSONs (``grammar_<choice>_<category>.json``, e.g.
from ``bench/bfcl_eval.sh``). For every failed case of a category with a possible answer:

* **the case**: no call at all, a tool the answer does not call, or a tool called too few
  or too many times (counted per tool, so one answer can be both), else only values wrong;
* **each value**: the model's calls of a tool are matched one to one with the expected calls
  of that tool (the pairing that agrees on the most parameters), and every parameter on
  which a matched pair disagrees is put in the first class that fits:

  - ``optional left out``: the answer wants a value, the call has none;
  - ``written, none expected``: the call gives a parameter the answer leaves out;
  - ``array or object``: a list or a dict that is not an acceptable one;
  - ``another call's``: an acceptable value of the same parameter in another expected
    call of the tool (the calls took each other's instance);
  - ``another parameter's``: an acceptable value of another parameter of any expected call;
  - ``in the question``: written in the question (BFCL's string normalisation), but no
    expected call holds it there;
  - ``not in the question``: invented, converted or known (a unit, a constant, a format);

* calls of a tool beyond its expected count are counted apart (``extra calls``), and so are
  the expected calls the model's did not reach (``missing calls``).

The classes are read off the values, so a cause is a description (what the wrong value
*is*), not a diagnosis of which part of the pipeline wrote it. ``-v CATEGORY`` prints each
failed case of that category with its classified values.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tooluse.eval.bfcl import load_category
from tooluse.eval.checker import _find_function, _parameters, normalize_string, values_match

ROOT = Path(__file__).resolve().parents[1]

VALUE_CLASSES = (
    "optional left out",
    "written, none expected",
    "array or object",
    "another call's",
    "another parameter's",
    "in the question",
    "not in the question",
)
CASE_CLASSES = ("no call", "tool not asked for", "too few calls", "too many calls", "values only")


def _schema(functions: Sequence[Mapping[str, Any]], name: str, param: str) -> Any:
    props = _parameters(_find_function(functions, name)).get("properties")
    return props.get(param) if isinstance(props, Mapping) else None


def _matches(value: Any, acceptable: Sequence[Any], schema: Any) -> bool:
    return values_match(value, acceptable, schema) is None


def _loosely_equal(value: Any, other: Any) -> bool:
    """Equal by BFCL's rules, or written alike across types (``"3"`` and ``3``)."""
    return _matches(value, [other], None) or (
        normalize_string(str(value)) == normalize_string(str(other))
    )


def _disagreements(
    got: Mapping[str, Any], expected: Mapping[str, Sequence[Any]], schema_of: Any
) -> list[str]:
    """The parameters on which one call and one expected call disagree."""
    wrong = []
    for param in sorted(set(got) | set(expected)):
        acceptable = expected.get(param, [""])
        if param not in got:
            if "" not in acceptable:
                wrong.append(param)
        elif not _matches(got[param], acceptable, schema_of(param)):
            wrong.append(param)
    return wrong


def _pairing(
    calls: list[Mapping[str, Any]], expected: list[Mapping[str, Sequence[Any]]], schema_of: Any
) -> list[tuple[int, int]]:
    """(call, expected) index pairs, one to one, with the fewest disagreements."""
    cost = [[len(_disagreements(c, e, schema_of)) for e in expected] for c in calls]
    small, large = (calls, expected) if len(calls) <= len(expected) else (expected, calls)
    best: list[tuple[int, int]] = []
    best_cost = None
    if len(large) > 7:  # greedy beyond a few calls: permutations would not finish
        free = set(range(len(expected)))
        for i in range(len(calls)):
            if free:
                j = min(free, key=lambda j: cost[i][j])
                free.discard(j)
                best.append((i, j))
        return best
    for chosen in itertools.permutations(range(len(large)), len(small)):
        pairs = (
            list(enumerate(chosen)) if small is calls else [(c, e) for e, c in enumerate(chosen)]
        )
        total = sum(cost[i][j] for i, j in pairs)
        if best_cost is None or total < best_cost:
            best, best_cost = pairs, total
    return best


def _value_class(
    param: str,
    value: Any,
    mine: Mapping[str, Sequence[Any]],
    others: list[Mapping[str, Sequence[Any]]],
    every: list[Mapping[str, Sequence[Any]]],
    question: str,
    schema: Any,
) -> str:
    acceptable = mine.get(param, [""])
    if value is None:
        return "optional left out"
    if all(a == "" for a in acceptable):
        return "written, none expected"
    if isinstance(value, (list, dict)):
        return "array or object"
    if any(param in o and _matches(value, o[param], schema) for o in others):
        return "another call's"
    for call in every:
        for other, values in call.items():
            if other != param and any(
                v != "" and not isinstance(v, (list, dict)) and _loosely_equal(value, v)
                for v in values
            ):
                return "another parameter's"
    return "in the question" if written_in(value, question) else "not in the question"


def written_in(value: Any, question: str) -> bool:
    """Whether the question writes ``value``: a number as a number of its own (``5`` is not
    written by "2.5" or "15"; ``5.0`` is by "5", ``1000`` by "1,000"), a string after BFCL's
    normalisation."""
    if isinstance(value, bool):
        return str(value).lower() in question.lower()
    if isinstance(value, (int, float)):
        forms = {repr(value)}
        if float(value).is_integer():
            forms |= {str(int(value)), f"{int(value):,}"}
        return any(
            re.search(rf"(?<![\d.,]){re.escape(form)}(?![\d]|[.,]\d)", question) for form in forms
        )
    text = normalize_string(str(value))
    return bool(text) and text in normalize_string(question)


def analyse_case(case: Any, record: Mapping[str, Any]) -> dict[str, Any]:
    """The classes of one failed case: ``case`` (a :class:`BfclCase`), ``record`` its result."""
    expected: list[Mapping[str, Mapping[str, Sequence[Any]]]] = case.ground_truth
    got: list[Mapping[str, Mapping[str, Any]]] = record.get("got") or []
    question = " ".join(m["content"] for m in case.messages if m["role"] == "user")
    out: dict[str, Any] = {"case": Counter(), "values": Counter(), "details": []}
    if not got:
        out["case"]["no call"] += 1
        return out
    want = Counter(next(iter(e)) for e in expected)
    have = Counter(next(iter(g)) for g in got)
    if set(have) - set(want):
        out["case"]["tool not asked for"] += 1
    if any(have[name] < n for name, n in want.items()):
        out["case"]["too few calls"] += 1
    if any(have[name] > n for name, n in want.items() if name in have):
        out["case"]["too many calls"] += 1
    if not out["case"]:
        out["case"]["values only"] += 1
    every = [next(iter(e.values())) for e in expected]
    for name in want:
        calls = [next(iter(g.values())) for g in got if next(iter(g)) == name]
        exp = [next(iter(e.values())) for e in expected if next(iter(e)) == name]

        def schema_of(param: str, name: str = name) -> Any:
            return _schema(case.functions, name, param)

        pairs = _pairing(calls, exp, schema_of) if calls else []
        out["values"]["extra calls"] += max(0, len(calls) - len(exp))
        out["values"]["missing calls"] += max(0, len(exp) - len(calls))
        for i, j in pairs:
            others = [e for k, e in enumerate(exp) if k != j]
            for param in _disagreements(calls[i], exp[j], schema_of):
                kind = _value_class(
                    param, calls[i].get(param), exp[j], others, every, question, schema_of(param)
                )
                out["values"][kind] += 1
                out["details"].append((name, param, calls[i].get(param), exp[j].get(param), kind))
    out["values"]["extra calls"] += sum(n for t, n in have.items() if t not in want)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--data-dir", type=Path, default=ROOT.parent / "shared" / "bench" / "bfcl")
    parser.add_argument("--choice", default="auto")
    parser.add_argument("-v", dest="verbose", nargs="*", default=[], metavar="CATEGORY")
    args = parser.parse_args(argv)
    if not args.data_dir.is_dir():
        print(f"no BFCL data at {args.data_dir} (give --data-dir)", file=sys.stderr)
        return 2
    runs = sorted(args.run_dir.glob(f"grammar_{args.choice}_*.json"))
    if not runs:
        print(f"no grammar_{args.choice}_*.json in {args.run_dir}", file=sys.stderr)
        return 2
    print("| category | failed | " + " | ".join(CASE_CLASSES) + " |")
    print("|---|---:|" + "---:|" * len(CASE_CLASSES))
    value_rows = []
    for path in runs:
        doc = json.loads(path.read_text())
        category = doc["cases"][0]["category"] if doc["cases"] else path.stem
        cases = {c.id: c for c in load_category(args.data_dir, category)}
        if not cases or next(iter(cases.values())).ground_truth is None:
            continue
        case_counts: Counter[str] = Counter()
        value_counts: Counter[str] = Counter()
        failed = [r for r in doc["cases"] if not r["passed"]]
        for record in failed:
            result = analyse_case(cases[record["id"]], record)
            case_counts.update(result["case"])
            value_counts.update(result["values"])
            if category in args.verbose:
                print(f"\n{record['id']}: {dict(result['case'])} {record.get('reason', '')}")
                for name, param, value, acceptable, kind in result["details"]:
                    print(f"  {name}.{param} = {value!r}; expected {acceptable!r}: {kind}")
        print(
            f"| {category} | {len(failed)} of {len(doc['cases'])} | "
            + " | ".join(str(case_counts[k]) for k in CASE_CLASSES)
            + " |"
        )
        value_rows.append((category, value_counts))
    columns = (*VALUE_CLASSES, "extra calls", "missing calls")
    print("\n| category | " + " | ".join(columns) + " |")
    print("|---|" + "---:|" * len(columns))
    for category, counts in value_rows:
        print(f"| {category} | " + " | ".join(str(counts[k]) for k in columns) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
