"""Every BFCL function becomes a valid tool, and every BFCL ground-truth call validates.

Reads ``../shared/bench/bfcl`` in place (``bfcl_dir`` fixture; skipped when absent).
Where BFCL's data cannot be read literally, :func:`tooluse.eval.ground_truth_input` applies
a documented rule and reports it; the rules' uses are pinned below so that a change in the
reading (or a normalisation bug hidden by a rule) shows up as a failing test.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from tooluse.eval import ground_truth_input
from tooluse.tools import (
    Tool,
    ToolSet,
    bfcl_toolset,
    compile_validator,
    input_problems,
)

RULE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")

# Each use of a reading rule in the BFCL v4 data, by (question id, parameter path).
# See docs/tools.md ("Reading BFCL ground truth") for why each rule is right.
EXPECTED_RULES = {
    "empty-choices-array": {
        ("live_simple_106-63-0", "auto_loan_payment_start"),
        ("live_simple_106-63-0", "bank_hours_start"),
        ("live_simple_112-68-0", "acc_routing_start"),
        ("live_simple_112-68-0", "atm_finder_start"),
        ("live_simple_112-68-0", "faq_link_accounts_start"),
        ("live_simple_112-68-0", "get_balance_start"),
        ("live_simple_112-68-0", "get_transactions_start"),
    },
    "variable": {
        ("parallel_multiple_21", "x"),  # x=data['sales']
        ("parallel_multiple_21", "y"),  # y=data['future_sales']
        ("parallel_multiple_94", "elements[0]"),  # fruit names for an integer list
    },
    "required-not-omittable": {("simple_python_200", "fuel_efficiency")},
}


def read_lines(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def question_files(bfcl_dir: Path) -> list[Path]:
    files = sorted(bfcl_dir.glob("BFCL_v4_*.json"))
    assert files, f"no BFCL_v4_*.json in {bfcl_dir}"
    return files


@pytest.fixture(scope="module")
def bfcl_tools(bfcl_dir: Path) -> tuple[dict[str, ToolSet], list[str]]:
    """Every BFCL question's tool set, made once for this module, and what failed."""
    sets: dict[str, ToolSet] = {}
    failures: list[str] = []
    for path in question_files(bfcl_dir):
        for question in read_lines(path):
            try:
                sets[question["id"]] = bfcl_toolset(question["function"])
            except Exception as exc:  # collect all, report all  # noqa: BLE001
                failures.append(f"{question['id']}: {exc}")
    return sets, failures


def test_every_bfcl_function_becomes_a_valid_tool(
    bfcl_dir: Path, bfcl_tools: tuple[dict[str, ToolSet], list[str]]
) -> None:
    sets, failures = bfcl_tools
    functions = 0
    renamed = 0
    for path in question_files(bfcl_dir):
        for question in read_lines(path):
            tools = sets.get(question["id"])
            if tools is None:
                continue  # reported in failures
            names = [f["name"] for f in question["function"]]
            assert len(tools) == len(names)
            for tool, original in zip(tools, names):
                functions += 1
                renamed += tool.renamed
                assert RULE.match(tool.name), tool.name
                assert tools.original_name(tool.name) == original
                assert tools.get(tool.name) is tool
                Draft202012Validator.check_schema(tool.input_schema)
                assert tool.input_schema["type"] == "object"
                assert not {"oneOf", "anyOf", "allOf"} & set(tool.input_schema)
                spec = tool.spec
                assert spec.name == tool.name and spec.input_schema == tool.input_schema
                required = tool.input_schema.get("required", [])
                if required:  # validation is not vacuous: an empty call is refused
                    problems = input_problems(compile_validator(tool.input_schema), {})
                    assert f"missing required parameter '{required[0]}'" in problems
    assert failures == []
    assert functions > 2000 and renamed > 500  # the data has both kinds; nothing was skipped


def test_every_bfcl_ground_truth_call_validates(
    bfcl_dir: Path, bfcl_tools: tuple[dict[str, ToolSet], list[str]]
) -> None:
    sets, failures = bfcl_tools
    failures = list(failures)
    rules: dict[str, set[tuple[str, str]]] = {}
    calls = 0
    categories = 0
    for path in question_files(bfcl_dir):
        category = path.name[len("BFCL_v4_") : -len(".json")]
        answers_path = bfcl_dir / f"possible_answer_{category}.json"
        if not answers_path.exists():
            assert category == "irrelevance", f"missing answers for {category}"
            continue  # irrelevance: the right answer is to call no function
        categories += 1
        for answer in read_lines(answers_path):
            tools = sets[answer["id"]]
            for call in answer["ground_truth"]:
                for name, params in call.items():
                    calls += 1
                    tool: Tool = tools[tools.wire_name(name)]
                    truth = ground_truth_input(params, tool.input_schema)
                    for rule, paths in truth.rules.items():
                        rules.setdefault(rule, set()).update((answer["id"], p) for p in paths)
                    if truth.schema == tool.input_schema:
                        problems = _problems(tool, truth.input)
                    else:  # the "variable" rule relaxed one place of the schema
                        problems = input_problems(compile_validator(truth.schema), truth.input)
                    if problems:
                        failures.append(f"{answer['id']} {name}: {problems}")
    assert failures == []
    assert categories == 5 and calls > 1500
    assert rules == EXPECTED_RULES


def _problems(tool: Tool, value: dict[str, Any]) -> list[str]:
    try:
        tool.validate(value)
    except Exception as exc:  # noqa: BLE001
        return list(getattr(exc, "problems", [str(exc)]))
    return []


def test_ground_truth_reading_rules_on_hand_made_cases() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "integer"},
            "b": {"type": "string"},
            "c": {"type": "number"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "xs": {"type": "array", "items": {"type": "number"}},
            "pop": {"type": "object", "properties": {"adults": {"type": "integer"}, "kids": {"type": "integer"}}},
        },
        "required": ["a", "c", "tags"],
    }
    truth = ground_truth_input(
        {
            "a": [1, 2],
            "b": ["", "x"],
            "c": ["", 2.5],
            "tags": [],
            "xs": ["data['x']"],
            "pop": [{"adults": [2], "kids": ["", 0]}],
        },
        schema,
    )
    assert truth.input == {"a": 1, "c": 2.5, "tags": [], "xs": "data['x']", "pop": {"adults": 2}}
    assert truth.rules == {
        "required-not-omittable": ["c"],
        "empty-choices-array": ["tags"],
        "variable": ["xs"],
    }
    assert truth.schema["properties"]["xs"] == {"type": "string"}
    assert schema["properties"]["xs"]["type"] == "array"  # the tool's schema is not touched
