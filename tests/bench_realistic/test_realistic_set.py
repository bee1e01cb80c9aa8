"""The realistic tool-call set (bench/realistic): its scorer, its cases, and the runner's
plumbing through ``tooluse serve`` on the scripted backend."""

from __future__ import annotations

import copy
import importlib.util
import itertools
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import jsonschema
import pytest

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "bench"


def _load(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


rs = _load("realistic_set", BENCH / "realistic_set.py")
build = _load("realistic_build_cases", BENCH / "realistic" / "build_cases.py")
CASES: list[dict[str, Any]] = rs.load_cases()


def c(name: str, **input_: Any) -> dict[str, Any]:
    return {"name": name, "input": input_}


def e(name: str, **arguments: list[Any]) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


TIMER = e("set_timer", minutes=[10], label=[None, "tea"])
LIGHTS = e("set_lights", room=["kitchen"], power=["off"])


# --------------------------------------------------------------------------- scorer


def test_right_call() -> None:
    assert rs.score_case([c("set_timer", minutes=10)], [TIMER]) == (True, "")


def test_wrong_value() -> None:
    right, reason = rs.score_case([c("set_timer", minutes=15)], [TIMER])
    assert not right and "minutes" in reason and "15" in reason


def test_wrong_tool() -> None:
    right, reason = rs.score_case([c("set_alarm", minutes=10)], [TIMER])
    assert not right and "set_alarm" in reason


def test_missing_call() -> None:
    right, reason = rs.score_case([c("set_timer", minutes=10)], [TIMER, LIGHTS])
    assert not right and "missing call set_lights" in reason
    assert not rs.score_case([], [TIMER])[0]


def test_extra_call() -> None:
    right, reason = rs.score_case([c("set_timer", minutes=10), c("set_timer", minutes=15)],
                                  [TIMER])
    assert not right and "2 call(s), expected 1" in reason


def test_duplicate_of_a_right_call_is_wrong() -> None:
    assert not rs.score_case([c("set_timer", minutes=10)] * 2, [TIMER])[0]


def test_optional_parameter_omitted_or_given() -> None:
    assert rs.score_case([c("set_timer", minutes=10)], [TIMER])[0]
    assert rs.score_case([c("set_timer", minutes=10, label="Tea ")], [TIMER])[0]
    assert not rs.score_case([c("set_timer", minutes=10, label="coffee")], [TIMER])[0]


def test_required_parameter_omitted() -> None:
    right, reason = rs.score_case([c("set_timer", label="tea")], [TIMER])
    assert not right and "left out" in reason


def test_unlisted_parameter_is_wrong() -> None:
    right, reason = rs.score_case([c("set_timer", minutes=10, repeat=True)], [TIMER])
    assert not right and "unexpected repeat" in reason


def test_null_counts_as_omitted() -> None:
    assert rs.score_case([c("set_timer", minutes=10, label=None)], [TIMER])[0]
    assert rs.score_case([c("set_timer", minutes=10, repeat=None)], [TIMER])[0]


def test_empty_array_counts_as_omitted() -> None:
    want = [e("send_email", to=[["a@b.c"]], cc=[None])]
    assert rs.score_case([c("send_email", to=["a@b.c"], cc=[])], want)[0]
    assert rs.score_case([c("send_email", to=["a@b.c"], bcc=[])], want)[0]
    assert not rs.score_case([c("send_email", to=["a@b.c"], cc=["x@y.z"])], want)[0]
    assert not rs.score_case([c("send_email", to=[])], want)[0]


def test_strings_case_insensitive_and_trimmed() -> None:
    want = [e("get_weather", city=["New York"])]
    assert rs.score_case([c("get_weather", city="  new YORK ")], want)[0]
    assert not rs.score_case([c("get_weather", city="New York City")], want)[0]
    assert rs.values_equal("Straße", "STRASSE")  # casefold


def test_numbers_compare_numerically() -> None:
    assert rs.score_case([c("set_timer", minutes=10.0)], [TIMER])[0]
    assert rs.values_equal(0.75, 0.75) and rs.values_equal(541.3, 541.30)
    assert not rs.values_equal("10", 10)
    assert not rs.values_equal(True, 1) and not rs.values_equal(1, True)
    assert rs.values_equal(True, True) and not rs.values_equal(False, True)


def test_arrays_element_wise() -> None:
    want = [e("add_to_shopping_list", items=[["milk", "eggs"]])]
    assert rs.score_case([c("add_to_shopping_list", items=["Milk", "EGGS"])], want)[0]
    assert not rs.score_case([c("add_to_shopping_list", items=["eggs", "milk"])], want)[0]
    assert not rs.score_case([c("add_to_shopping_list", items=["milk"])], want)[0]
    assert not rs.score_case([c("add_to_shopping_list", items="milk, eggs")], want)[0]
    assert rs.values_equal([1, 2.0], [1.0, 2])


def test_objects_key_wise() -> None:
    assert rs.values_equal({"a": "X", "b": None}, {"a": "x"})
    assert not rs.values_equal({"a": "x", "b": 1}, {"a": "x"})


def test_calls_are_a_multiset() -> None:
    want = [e("get_weather", city=["Dublin"]), e("get_weather", city=["Galway"])]
    for order in itertools.permutations([c("get_weather", city="Galway"),
                                         c("get_weather", city="dublin")]):
        assert rs.score_case(list(order), want)[0]
    assert not rs.score_case([c("get_weather", city="Dublin")] * 2, want)[0]


def test_matching_backtracks() -> None:
    # The first call fits both expected calls; only one assignment matches all.
    want = [e("f", x=[1, 2]), e("f", x=[1])]
    assert rs.score_case([c("f", x=1), c("f", x=2)], want)[0]


# --------------------------------------------------------------------------- origins


def test_parse_origins() -> None:
    header = "toolu_01=model, toolu_02=edited:stated_units+named_options, toolu_03=added:fan_out"
    assert rs.parse_origins(header) == {
        "toolu_01": {"source": "model", "rules": []},
        "toolu_02": {"source": "edited", "rules": ["stated_units", "named_options"]},
        "toolu_03": {"source": "added", "rules": ["fan_out"]},
    }
    assert rs.parse_origins(None) == {} and rs.parse_origins("") == {}


def test_named_configs() -> None:
    assert rs.config_args("default") == ["--backend", "local"]
    assert rs.config_args("preset") == ["--backend", "local", "--preset", "en-bfcl"]
    assert rs.config_args("rule:fan_out") == ["--backend", "local", "-o", "fan_out=1"]
    alone = rs.config_args("model+rule:fan_out")
    assert alone[0] == "--backend" and alone[1].startswith("local:") and alone[1].endswith(".gguf")
    assert alone[2:] == ["-o", "fan_out=1"]
    assert rs.config_args("preset-without:fan_out") == [
        "--backend", "local", "--preset", "en-bfcl", "-o", "fan_out=0"]
    with pytest.raises(SystemExit):
        rs.config_args("nonsense")


def _doc(name: str, records: list[dict[str, Any]]) -> dict[str, Any]:
    by_id = {case["id"]: case for case in CASES}
    return {"meta": {"name": name, "serve_args": [], "cases_file": str(rs.DEFAULT_CASES)},
            "summary": rs.summarize(records, by_id), "cases": records}


def _rec(case_id: str, right: bool, calls: list[tuple[str, dict[str, Any], str, list[str]]]
         ) -> dict[str, Any]:
    return {"id": case_id, "category": [], "right": right, "reason": "",
            "calls": [{"id": f"t{i}", "name": n, "input": inp, "origin": o, "rules": r}
                      for i, (n, inp, o, r) in enumerate(calls)]}


def test_rescore(tmp_path: Path) -> None:
    doc = _doc("x", [_rec("en_timer_simple", False, [("set_timer", {"minutes": 12}, "model", [])]),
                     _rec("de_timer", True, [("set_timer", {"minutes": 9}, "model", [])])])
    doc = rs.rescore(doc)
    assert [r["right"] for r in doc["cases"]] == [True, False]
    assert doc["summary"]["right"] == 1 and "minutes" in doc["cases"][1]["reason"]


def test_compare_and_per_rule() -> None:
    base = _doc("model", [
        _rec("en_timer_simple", True, [("set_timer", {"minutes": 12}, "model", [])]),
        _rec("en_timer_trap_last", True, [("set_timer", {"minutes": 10}, "model", [])]),
        _rec("de_timer", False, [("set_timer", {"minutes": 9}, "model", [])]),
    ])
    other = _doc("preset", [
        _rec("en_timer_simple", True, [("set_timer", {"minutes": 12}, "model", [])]),
        _rec("en_timer_trap_last", False, [("set_timer", {"minutes": 10}, "model", []),
                                           ("set_timer", {"minutes": 15}, "added", ["fan_out"])]),
        _rec("de_timer", True, [("set_timer", {"minutes": 8}, "edited", ["numbers"])]),
    ])
    d = rs.diff(base, other)
    assert d["broken"] == ["en_timer_trap_last"] and d["fixed"] == ["de_timer"]
    assert d["added"] == ["en_timer_trap_last"] and d["beyond"] == ["en_timer_trap_last"]
    table = rs.compare(base, [other])
    assert "| preset | 2/3 | 66.7% | 1 | 1 | 1 | 1 | 1 |" in table
    assert "| right answers broken | 1 | en_timer_trap_last |" in table
    report = rs.per_rule(base, other)
    assert "| fan_out | 1 | 0 | 1 | 1 |" in report
    assert "| numbers | 1 | 1 | 0 | 0 |" in report
    assert "en_timer_simple" not in report


# --------------------------------------------------------------------------- the cases


def test_cases_file_is_up_to_date() -> None:
    assert rs.DEFAULT_CASES.read_text(encoding="utf-8") == build.render(), (
        "run python bench/realistic/build_cases.py")


def test_enough_cases_and_coverage() -> None:
    assert len(CASES) >= 60
    ids = [case["id"] for case in CASES]
    assert len(ids) == len(set(ids))
    langs = {case["lang"] for case in CASES}
    assert {"en", "de", "fr", "es"} <= langs
    tags = [t for case in CASES for t in case["category"]]
    for tag in ("multi_turn", "third_turn", "two_calls", "distractors", "side_effect", "trap",
                "auto", "dates", "units", "optional"):
        assert tag in tags, tag
    assert sum(case["tool_choice"]["type"] == "any" for case in CASES) > len(CASES) / 2


def test_trap_cases_from_the_issue() -> None:
    by_id = {case["id"]: case for case in CASES}
    timer = by_id["en_timer_trap_last"]
    assert timer["expected"] == [{"name": "set_timer",
                                  "arguments": {"minutes": [10], "label": [None]}}]
    thermostat = by_id["en_thermostat_trap_outside"]
    assert len(thermostat["expected"]) == 1
    assert thermostat["expected"][0]["arguments"]["temperature"] == [21]


@pytest.mark.parametrize("case", CASES, ids=lambda case: case["id"])
def test_case_well_formed(case: dict[str, Any]) -> None:
    assert set(case) >= {"id", "category", "tools", "messages", "tool_choice", "expected"}
    tools = {t["name"]: t for t in case["tools"]}
    assert len(tools) == len(case["tools"]) >= 1
    for tool in case["tools"]:
        schema = tool["input_schema"]
        assert schema["type"] == "object"
        jsonschema.Draft202012Validator.check_schema(schema)
    assert case["tool_choice"]["type"] in ("any", "auto", "tool")
    if case["tool_choice"]["type"] == "tool":
        assert case["tool_choice"]["name"] in tools
    _check_messages(case["messages"], tools)
    assert case["expected"], "every case expects at least one call"
    for want in case["expected"]:
        assert want["name"] in tools
        _check_expected_call(want, tools[want["name"]]["input_schema"])


def _check_messages(messages: list[dict[str, Any]], tools: dict[str, Any]) -> None:
    assert messages[0]["role"] == "user" and messages[-1]["role"] == "user"
    pending: set[str] = set()
    for i, message in enumerate(messages):
        assert message["role"] == ("user" if i % 2 == 0 else "assistant")
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for block in blocks:
            if block["type"] == "tool_use":
                assert message["role"] == "assistant" and block["name"] in tools
                jsonschema.validate(block["input"], tools[block["name"]]["input_schema"])
                pending.add(block["id"])
            elif block["type"] == "tool_result":
                assert message["role"] == "user" and block["tool_use_id"] in pending
                pending.discard(block["tool_use_id"])
            else:
                assert block["type"] == "text" and block["text"]
        if message["role"] == "user":
            assert not pending, "every tool_use is answered in the next user turn"


def _check_expected_call(want: dict[str, Any], schema: dict[str, Any]) -> None:
    arguments: dict[str, list[Any]] = want["arguments"]
    properties = schema.get("properties", {})
    assert set(arguments) <= set(properties), "expected parameters exist in the schema"
    for key in schema.get("required", []):
        assert key in arguments and None not in arguments[key], f"required {key} may be omitted"
    for key in properties:
        if key not in arguments:
            continue
        assert isinstance(arguments[key], list) and arguments[key], key
    # The first acceptable value of each parameter validates, and so does each other
    # acceptable value put in its place (None: the parameter left out).
    base = {k: v[0] for k, v in arguments.items() if v[0] is not None}
    jsonschema.validate(base, schema)
    for key, values in arguments.items():
        for value in values:
            instance = copy.deepcopy(base)
            if value is None:
                instance.pop(key, None)
            else:
                instance[key] = value
            jsonschema.validate(instance, schema)


def test_expected_calls_score_right_against_themselves() -> None:
    for case in CASES:
        calls = [{"name": w["name"],
                  "input": {k: v[0] for k, v in w["arguments"].items() if v[0] is not None}}
                 for w in case["expected"]]
        assert rs.score_case(calls, case["expected"]) == (True, ""), case["id"]


def test_cases_do_not_come_from_bfcl() -> None:
    """No question of the set appears in the BFCL data, when that data is on this machine."""
    bfcl = REPO.parent / "shared" / "bench" / "bfcl"
    if not bfcl.is_dir():
        pytest.skip("no BFCL data here")
    texts = [case["messages"][-1]["content"] for case in CASES
             if isinstance(case["messages"][-1]["content"], str)]
    # Read BFCL's files only to look for our own texts in them.
    for path in bfcl.rglob("*.json*"):
        data = path.read_text(encoding="utf-8", errors="replace")
        for text in texts:
            assert text not in data, (text, path.name)


# --------------------------------------------------------------------------- end to end


@pytest.mark.slow
def test_runner_end_to_end_on_the_scripted_backend(tmp_path: Path) -> None:
    out = tmp_path / "scripted.json"
    ids = ["en_timer_simple", "en_timer_trap_last", "de_timer"]
    proc = subprocess.run(
        [sys.executable, str(BENCH / "realistic_set.py"), "run", "--name", "scripted",
         "--out", str(out), "--quiet", "--ids", *ids,
         "--", "--backend", 'scripted:call:set_timer {"minutes": 10}'],
        capture_output=True, text=True, timeout=240, cwd=REPO, check=False)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text(encoding="utf-8"))
    verdicts = {r["id"]: r["right"] for r in doc["cases"]}
    assert verdicts == {"en_timer_simple": False, "en_timer_trap_last": True, "de_timer": False}
    first = doc["cases"][0]
    assert first["calls"][0]["name"] == "set_timer"
    assert first["calls"][0]["input"] == {"minutes": 10}
    assert first["calls"][0]["origin"] in rs.SOURCES
    assert doc["summary"]["right"] == 1 and doc["summary"]["errors"] == 0
    assert doc["summary"]["calls_beyond_expected"] == 0
    assert out.with_suffix(".log").exists()
    # compare and per-rule read what run wrote.
    table = subprocess.run(
        [sys.executable, str(BENCH / "realistic_set.py"), "compare", str(out), str(out)],
        capture_output=True, text=True, timeout=60, check=True).stdout
    assert "| scripted | 1/3 | 33.3% | 0 | 0 | 0 | 0 | 0 |" in table
    report = subprocess.run(
        [sys.executable, str(BENCH / "realistic_set.py"), "per-rule", str(out), str(out)],
        capture_output=True, text=True, timeout=60, check=True).stdout
    assert "(0)" in report
