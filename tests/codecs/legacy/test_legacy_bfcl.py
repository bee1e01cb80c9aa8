"""Real-world tool schemas: every BFCL ground-truth call survives the legacy format.

For each question of five BFCL categories, the first acceptable value of every parameter
makes a call; the call is rendered as ``<function_calls>``, parsed back with the (normalised)
BFCL schemas, and must come back identical, types included. Ground truths that break their own
schema (BFCL has a few: ``True`` for a string, ``None`` for a number without a null default)
cannot be told apart from text in any text format: jsonschema (not a list) identifies them,
failures are excused only for them, and the test checks that they stay a small minority.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tooluse.codecs.legacy import parse_completion, render_function_calls
from tooluse.messages import ToolSpec, ToolUseBlock

tools_module = pytest.importorskip("tooluse.tools")

CATEGORIES = ["simple_python", "multiple", "parallel", "parallel_multiple", "live_simple"]


def _default_null_allows_null(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema as the parser reads it: a property whose ``default`` is null accepts null
    (BFCL's live functions are Python functions with ``x: str = None``)."""
    properties = {}
    for key, prop in (schema.get("properties") or {}).items():
        if isinstance(prop, dict) and "default" in prop and prop["default"] is None:
            prop = {"anyOf": [prop, {"type": "null"}]}
        properties[key] = prop
    return {**schema, "properties": properties}


def _choose(options: list[Any]) -> Any:
    """The first acceptable value; BFCL writes an object's acceptable values per key, as
    nested option lists, so objects are chosen key by key."""
    value = next(v for v in options if v != "")
    if isinstance(value, dict):
        return {k: _choose(v) for k, v in value.items()
                if isinstance(v, list) and any(x != "" for x in v)}
    return value


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


@pytest.mark.parametrize("category", CATEGORIES)
def test_ground_truth_calls_round_trip(bfcl_dir: Path, category: str) -> None:
    questions_file = bfcl_dir / f"BFCL_v4_{category}.json"
    answers_file = bfcl_dir / f"possible_answer_{category}.json"
    if not questions_file.exists() or not answers_file.exists():
        pytest.skip(f"BFCL {category} not present")
    questions = {q["id"]: q for q in _lines(questions_file)}
    round_tripped = 0
    failures: list[str] = []
    excused: list[str] = []
    for answer in _lines(answers_file):
        functions = questions[answer["id"]]["function"]
        schemas = {f["name"]: tools_module.normalize_schema(f["parameters"]) for f in functions}
        tools = [ToolSpec(name=name, input_schema=schema) for name, schema in schemas.items()]
        calls = []
        for truth in answer["ground_truth"]:
            ((name, params),) = truth.items()
            arguments = {
                key: _choose(values) for key, values in params.items()
                if any(v != "" for v in values)
            }
            calls.append(ToolUseBlock(id="x", name=name, input=arguments))
        parsed = parse_completion(render_function_calls(calls, close=False), tools)
        got = [(c.name, c.input) for c in parsed.tool_uses]
        want = [(c.name, c.input) for c in calls]
        if not parsed.problems and json.dumps(got, sort_keys=True) == json.dumps(want, sort_keys=True):
            round_tripped += 1
            continue
        valid = all(
            c.name in schemas
            and jsonschema.Draft202012Validator(
                _default_null_allows_null(schemas[c.name])
            ).is_valid(c.input)
            for c in calls
        )
        report = f"{answer['id']}: {[p.message for p in parsed.problems]} {got}"
        (failures if valid else excused).append(report)
    # Every call that fits its schema comes back exactly.
    assert failures == []
    # Those that do not fit (BFCL data quirks) are few.
    assert len(excused) <= 0.02 * (round_tripped + len(excused)), excused
