"""Replay the deterministic call edits on recorded BFCL answers, without the model.

    python bench/bfcl_replay_edits.py RUN_DIR [--edit EDIT] [--choice auto|any] [-v]

``RUN_DIR`` holds ``tooluse eval bfcl`` JSONs (``grammar_auto_<category>.json``, e.g. from
``bench/bfcl_eval.sh``). The edits that act after the model wrote its calls — ``restate``
(further calls from the question's lists and clauses, :mod:`tooluse.presets.en_bfcl.fan_out` and
:mod:`tooluse.presets.en_bfcl.restate`, then :mod:`tooluse.presets.en_bfcl.each_option`, replayed on the
model's own calls: the recorded ones without the last ``timings.fanned_out`` the run added),
``each_option`` (:mod:`tooluse.presets.en_bfcl.each_option` alone, on all the recorded calls, as
it acts after ``restate``), ``pair_in_order`` (:mod:`tooluse.presets.en_bfcl.pairing`, on all
the recorded calls), ``share_optionals`` (:mod:`tooluse.presets.en_bfcl.shared`, on all the
recorded calls),
``calls_as_planned`` (the model's own calls cut to the planned ones where two to five
tools are offered, ``timings.planned_calls``, then ``fan_out`` and ``restate`` again),
``date_formats`` (:mod:`tooluse.presets.en_bfcl.dates`), ``city_state``
(:mod:`tooluse.presets.en_bfcl.regions`), ``asked_flags`` (:mod:`tooluse.presets.en_bfcl.flags`),
``whole_phrases`` and ``after_names`` (:mod:`tooluse.presets.en_bfcl.phrases`), ``scaled_numbers``
(:func:`tooluse.presets.en_bfcl.spoken.scaled`), ``described_codes``
(:mod:`tooluse.presets.en_bfcl.codes`), ``enum_values`` (:mod:`tooluse.presets.en_bfcl.enum_values`),
``from_to`` (:mod:`tooluse.presets.en_bfcl.directions`), ``named_options``
(:mod:`tooluse.presets.en_bfcl.named_options`), ``named_numbers``
(:mod:`tooluse.presets.en_bfcl.named_numbers`), ``compounding``
(:func:`tooluse.presets.en_bfcl.spoken.compounding`), ``implied_numbers``
(:func:`tooluse.presets.en_bfcl.spoken.implied`), ``stray_numbers``
(:mod:`tooluse.presets.en_bfcl.stray_numbers`), ``literal_lists``
(:mod:`tooluse.presets.en_bfcl.literal_lists`), ``written_names``
(:mod:`tooluse.presets.en_bfcl.written_names`), ``currency_codes``
(:mod:`tooluse.presets.en_bfcl.currencies`), ``inside_others``
(:func:`tooluse.presets.en_bfcl.choices.without_inside_others`, the pipeline's second look at
optional strings once the edits have written values whole) and ``optional`` (the optional
parameters left out, then the edits after it in the pipeline's order) — are pure functions of the calls, the question and
the tools, so applying one to a run made without it gives exactly what the run would have
answered with it (given the same calls from the model). For each category: the answers
the edit changes, and how many of them turn from failed to passed (+) and back (−),
graded by the project's checker. ``-v`` prints each changed answer.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tooluse.eval.bfcl import build_request, build_toolset, load_category
from tooluse.eval.checker import check_calls
from tooluse.messages import Request, ToolUseBlock
from tooluse.presets.en_bfcl.call_edits import _valid, fanned_out
from tooluse.presets.en_bfcl.choices import (
    PLAN_MAX_TOOLS,
    conversation_text,
    keep_given_optionals,
    question_text,
    without_inside_others,
)
from tooluse.presets.en_bfcl.codes import described_codes
from tooluse.presets.en_bfcl.currencies import currency_codes
from tooluse.presets.en_bfcl.dates import dated
from tooluse.presets.en_bfcl.directions import from_to
from tooluse.presets.en_bfcl.each_option import option_calls
from tooluse.presets.en_bfcl.enum_values import enum_values
from tooluse.presets.en_bfcl.flags import asked_flags
from tooluse.presets.en_bfcl.literal_lists import literal_lists
from tooluse.presets.en_bfcl.named_numbers import named_numbers
from tooluse.presets.en_bfcl.named_options import named_options
from tooluse.presets.en_bfcl.pairing import in_order
from tooluse.presets.en_bfcl.phrases import values_after_names, whole_phrases
from tooluse.presets.en_bfcl.regions import with_region
from tooluse.presets.en_bfcl.shared import shared_optionals
from tooluse.presets.en_bfcl.spoken import compounding, implied, scaled
from tooluse.presets.en_bfcl.stray_numbers import stray_numbers
from tooluse.presets.en_bfcl.written_names import written_names

Call = tuple[str, dict[str, Any]]


def fanned(request: Request, names: Sequence[str], calls: Sequence[Call], *,
           clauses: bool = True, options: bool = True) -> list[Call]:
    """The calls :func:`tooluse.presets.en_bfcl.call_edits.fanned_out` adds after ``calls``, as
    the backend does after the model's: ``fan_out``, then ``restate`` with ``clauses``,
    then ``each_option`` with ``options``.
    ``names`` are the BFCL functions' names in the order of ``request.tools``, whose names
    are the wire's ("spotify.play" is "spotify_play"); calls go in and come out under
    them."""
    wire = {name: tool.name for name, tool in zip(names, request.tools, strict=True)}
    back = {tool: name for name, tool in wire.items()}
    blocks = [ToolUseBlock(id=f"toolu_{i}", name=wire.get(name, name), input=arguments)
              for i, (name, arguments) in enumerate(calls)]
    return [(back.get(b.name, b.name), dict(b.input))
            for b in fanned_out(request, blocks, 8, lists=True, clauses=clauses,
                                options=options)]


#: The edits of one call (its arguments, its schema, the question's text), by name.
_EDITS: dict[str, Callable[[dict[str, Any], Any, str], dict[str, Any]]] = {
    "whole_phrases": whole_phrases, "after_names": values_after_names, "scaled_numbers": scaled,
    "described_codes": described_codes, "enum_values": enum_values,
    "asked_flags": asked_flags, "date_formats": dated, "from_to": from_to,
    "city_state": with_region, "named_numbers": named_numbers,
    "compounding": compounding, "implied_numbers": implied, "stray_numbers": stray_numbers,
    "literal_lists": literal_lists, "written_names": written_names,
    "currency_codes": currency_codes, "inside_others": without_inside_others,
}
#: Those that read the whole conversation, not the question alone.
_ON_CONVERSATION = frozenset({"scaled_numbers", "inside_others"})


def _edited(edit: str, calls: list[Call], request: Request, schemas: dict[str, Any]) -> list[Call]:
    question, conversation = question_text(request), conversation_text(request)
    if edit == "restate":  # fan_out then restate, as the backend does after the model's calls
        return calls + fanned(request, list(schemas), calls)
    if edit == "pair_in_order":  # on all the calls, the model's and those added
        return in_order(calls, question)
    if edit == "share_optionals":  # after pair_in_order, on all the calls
        shared = shared_optionals(calls, question)
        return shared if all(_valid(schemas[name], args) for name, args in shared) else calls
    if edit == "each_option":  # on all the calls, as the backend does after restate's
        return calls + option_calls(calls, question, schemas, limit=8,
                                    valid=lambda name, args: _valid(schemas[name], args))
    new: list[Call] = []
    for name, arguments in calls:
        schema = schemas.get(name)
        if edit == "optional":  # then the edits the pipeline makes after it
            kept = keep_given_optionals(arguments, schema, conversation, name)[0]
            changed = with_region(dated(kept, schema, question), schema, question)
        elif edit == "named_options":  # reads the tool's name as well
            changed = named_options(arguments, schema, question, name)
        else:
            changed = _EDITS[edit](arguments, schema,
                                   conversation if edit in _ON_CONVERSATION else question)
        new.append((name, changed if schema is not None and _valid(schema, changed)
                    else arguments))
    return new


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("run_dir")
    parser.add_argument("--edit", choices=("restate", "calls_as_planned", "optional", "each_option",
                                           "pair_in_order", "share_optionals",
                                           "named_options", *_EDITS),
                        action="append")
    parser.add_argument("--choice", default="auto",
                        help="the runs' tool_choice, in their file names (default auto)")
    parser.add_argument("-v", dest="verbose", action="store_true")
    args = parser.parse_args()
    print("| edit | category | answers changed | + | − |")
    print("|---|---|---:|---:|---:|")
    for edit in args.edit or ["restate", "date_formats", "city_state"]:
        for path in sorted(Path(args.run_dir).glob(f"grammar_{args.choice}_*.json")):
            document = json.loads(path.read_text(encoding="utf-8"))
            category = document["summary"][0]["category"]
            if category == "irrelevance":
                continue
            recorded = {c["id"]: c for c in document["cases"]}
            changed = gained = lost = 0
            for case in load_category(document["meta"]["data_dir"], category):
                row = recorded.get(case.id)
                if row is None or not row["got"]:
                    continue
                request = build_request(case, build_toolset(case.functions))
                schemas = {f["name"]: t.input_schema
                           for f, t in zip(case.functions, request.tools, strict=True)}
                calls = [next(iter(c.items())) for c in row["got"]]
                if edit in ("restate", "calls_as_planned"):
                    # The model's own calls: the run's fan_out and restate added the last ones.
                    timings = row.get("timings", {})
                    own = calls[:len(calls) - int(timings.get("fanned_out", 0))]
                    if edit == "calls_as_planned":
                        if not 1 < len(case.functions) <= PLAN_MAX_TOOLS \
                                or "planned_calls" not in timings:
                            continue
                        own = own[:int(timings["planned_calls"])]
                    new = _edited("restate", own, request, schemas)
                else:
                    new = _edited(edit, calls, request, schemas)
                if new == calls:
                    continue
                changed += 1
                passed = check_calls(category, case.functions, new, case.ground_truth,
                                     rule=case.rule).passed
                gained += passed and not row["passed"]
                lost += row["passed"] and not passed
                if args.verbose:
                    print(f"  {case.id}: {calls} -> {new}", file=sys.stderr)
            print(f"| {edit} | {category} | {changed} | {gained} | {lost} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
