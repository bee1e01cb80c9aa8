"""The harness and `tooluse eval bfcl` without a model: scripted backends, hand-made data."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tooluse.backends.registry import _registered, register_backend
from tooluse.backends.scripted import ScriptedBackend
from tooluse.cli import main
from tooluse.errors import BackendError
from tooluse.eval import (
    BfclCase,
    BfclDataError,
    default_data_dir,
    load_category,
    run_case,
    run_cases,
    summarize,
)
from tooluse.eval import bfcl as bfcl_module
from tooluse.messages import Request, Response, TextBlock, ToolUseBlock, Usage

FACTORIAL = {
    "name": "math.factorial",
    "description": "Calculate the factorial of a given number.",
    "parameters": {
        "type": "dict",
        "properties": {"number": {"type": "integer"}},
        "required": ["number"],
    },
}
WEATHER = {
    "name": "weather.get",
    "description": "Current weather in a city.",
    "parameters": {
        "type": "dict",
        "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"]}},
        "required": ["city"],
    },
}


def case(category: str = "simple_python", truth: Any = "default", **extra: Any) -> BfclCase:
    if truth == "default":
        truth = [{"math.factorial": {"number": [5]}}]
    return BfclCase(
        id=f"{category}_0",
        category=category,
        messages=extra.pop("messages", [{"role": "user", "content": "What is 5 factorial?"}]),
        functions=extra.pop("functions", [FACTORIAL]),
        ground_truth=truth,
    )


def answer(*calls: tuple[str, dict[str, Any]], text: str = "", tokens: int = 12) -> Any:
    """A script that answers with ``calls``, translating original names to the wire names
    the request carried (so the test also proves the names were mapped)."""

    def script(request: Request) -> Response:
        wire = {spec.description: spec.name for spec in request.tools}
        by_original = {
            FACTORIAL["name"]: wire.get(FACTORIAL["description"]),
            WEATHER["name"]: wire.get(WEATHER["description"]),
        }
        content: list[Any] = [TextBlock(text=text)] if text else []
        for i, (name, args) in enumerate(calls):
            content.append(
                ToolUseBlock(id=f"toolu_{i}", name=by_original.get(name) or name, input=args)
            )
        return Response(
            content=content,
            stop_reason="tool_use" if calls else "end_turn",
            usage=Usage(input_tokens=40, output_tokens=tokens),
        )

    return ScriptedBackend(script)


def test_request_is_neutral_with_mapped_names_auto_choice_and_temperature_zero() -> None:
    backend = answer(("math.factorial", {"number": 5}))
    system_case = case(
        messages=[{"role": "system", "content": "Be terse."}, {"role": "user", "content": "5!?"}]
    )
    run_case(backend, system_case, max_tokens=300)
    (request,) = backend.requests
    assert [t.name for t in request.tools] != ["math.factorial"]
    assert all(ch.isalnum() or ch in "_-" for ch in request.tools[0].name)
    assert request.tools[0].input_schema["type"] == "object"  # BFCL "dict" normalised
    assert request.tool_choice is not None and request.tool_choice.type == "auto"
    assert request.temperature == 0 and request.max_tokens == 300
    assert request.system_text() == "Be terse."
    assert [(m.role, m.text()) for m in request.messages] == [("user", "5!?")]


def test_correct_call_with_dotted_name_mapped_back_passes() -> None:
    result = run_case(answer(("math.factorial", {"number": 5})), case())
    assert result.passed and result.valid
    assert result.got == [{"math.factorial": {"number": 5}}]
    assert (result.calls_valid, result.calls_total) == (1, 1)
    assert result.output_tokens == 12 and result.latency > 0


def test_wrong_value_fails_but_is_valid() -> None:
    result = run_case(answer(("math.factorial", {"number": 6})), case())
    assert not result.passed and result.valid and result.kind == "wrong_value"


def test_call_that_breaks_the_schema_is_invalid() -> None:
    result = run_case(answer(("math.factorial", {"number": "five"})), case())
    assert not result.passed and not result.valid
    assert result.calls_valid == 0 and "number" in result.invalid[0]


def test_unknown_tool_is_invalid_and_wrong_function() -> None:
    result = run_case(answer(("math.gamma", {"number": 5})), case())
    assert result.kind == "wrong_function" and not result.valid
    assert "no such tool" in result.invalid[0]


def test_text_answer_when_a_call_was_expected() -> None:
    result = run_case(answer(text="It is 120."), case())
    assert (result.passed, result.valid, result.kind) == (False, False, "no_call")
    assert result.text == "It is 120."


def test_irrelevance_with_and_without_a_call() -> None:
    irrelevant = case("irrelevance", truth=None)
    assert run_case(answer(text="No tool fits."), irrelevant).passed
    result = run_case(answer(("math.factorial", {"number": 1})), irrelevant)
    assert result.kind == "called_irrelevant" and result.valid


def test_parallel_in_any_order_through_the_backend() -> None:
    parallel = case(
        "parallel",
        truth=[
            {"weather.get": {"city": ["Paris"], "unit": ["c", ""]}},
            {"weather.get": {"city": ["Rome"], "unit": ["c", ""]}},
        ],
        functions=[WEATHER],
    )
    backend = answer(
        ("weather.get", {"city": "rome"}), ("weather.get", {"city": "Paris", "unit": "c"})
    )
    assert run_case(backend, parallel).passed


def test_backend_error_is_a_failed_case_not_a_crash() -> None:
    backend = ScriptedBackend([BackendError("model melted", kind="api")])
    result = run_case(backend, case())
    assert result.kind == "backend_error" and "model melted" in result.reason
    assert not result.passed and not result.valid


def test_summary_rates_latency_speed_and_failure_tally() -> None:
    backend = ScriptedBackend(
        [
            Response(
                content=[ToolUseBlock(id="t1", name="math_factorial", input={"number": 5})],
                usage=Usage(output_tokens=10),
            ),
            Response(content=[TextBlock(text="no")], usage=Usage(output_tokens=4)),
            Response(
                content=[ToolUseBlock(id="t2", name="math_factorial", input={"number": 7})],
                usage=Usage(output_tokens=10),
            ),
        ]
    )
    seen: list[str] = []
    results = run_cases(backend, [case(), case(), case()], on_result=lambda r: seen.append(r.id))
    assert len(seen) == 3
    summary = summarize("simple_python", results)
    assert (summary.cases, summary.passed) == (3, 1)
    assert summary.accuracy == pytest.approx(1 / 3)
    assert summary.valid_rate == pytest.approx(2 / 3)
    assert summary.output_tokens == 24
    assert summary.tokens_per_second == pytest.approx(24 / sum(r.latency for r in results))
    assert summary.failures == {"no_call": 1, "wrong_value": 1}
    assert summary.median_latency == sorted(r.latency for r in results)[1]


# -- data files and the command ----------------------------------------------------------------


def write_category(
    folder: Path, category: str, rows: list[dict[str, Any]], answers: list[dict[str, Any]] | None
) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"BFCL_v4_{category}.json").write_text(
        "".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8"
    )
    if answers is not None:
        (folder / f"possible_answer_{category}.json").write_text(
            "".join(json.dumps(a) + "\n" for a in answers), encoding="utf-8"
        )


@pytest.fixture()
def data_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "data" / "shared" / "bench" / "bfcl"
    questions = [
        {
            "id": f"simple_python_{n}",
            "question": [[{"role": "user", "content": f"{n}!"}]],
            "function": [FACTORIAL],
        }
        for n in range(3)
    ]
    truths = [
        {"id": f"simple_python_{n}", "ground_truth": [{"math.factorial": {"number": [n]}}]}
        for n in range(3)
    ]
    write_category(folder, "simple_python", questions, truths)
    # "multiple" must not pick up parallel_multiple's file
    write_category(
        folder,
        "parallel_multiple",
        [
            {
                "id": "parallel_multiple_0",
                "question": [[{"role": "user", "content": "x"}]],
                "function": [FACTORIAL],
            }
        ],
        [],
    )
    write_category(
        folder,
        "irrelevance",
        [
            {
                "id": "irrelevance_0",
                "question": [[{"role": "user", "content": "Hi"}]],
                "function": [WEATHER],
            }
        ],
        None,
    )
    return folder


def test_load_category_reads_turns_and_answers(data_dir: Path) -> None:
    cases = load_category(data_dir, "simple_python", limit=2)
    assert [c.id for c in cases] == ["simple_python_0", "simple_python_1"]
    assert cases[1].messages == [{"role": "user", "content": "1!"}]
    assert cases[1].ground_truth == [{"math.factorial": {"number": [1]}}]
    assert load_category(data_dir, "irrelevance")[0].ground_truth is None
    with pytest.raises(BfclDataError, match="BFCL_v<N>_multiple"):
        load_category(data_dir, "multiple")


def test_malformed_data_names_file_and_line(data_dir: Path) -> None:
    path = data_dir / "BFCL_v4_simple_python.json"
    path.write_text(path.read_text() + "{not json\n")
    with pytest.raises(BfclDataError, match=r"BFCL_v4_simple_python.json:4: not JSON"):
        load_category(data_dir, "simple_python")
    answers = data_dir / "possible_answer_simple_python.json"
    answers.write_text(answers.read_text() + '{"id": "x", "ground_truth": {}}\n')
    with pytest.raises(BfclDataError, match=r"possible_answer_simple_python.json:4: "
                                            "'ground_truth' must be a list"):
        load_category(data_dir, "simple_python")


def test_default_data_dir_env_then_clear_error(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLUSE_SHARED_DIR", str(tmp_path / "data" / "shared"))
    assert default_data_dir() == data_dir
    monkeypatch.setenv("TOOLUSE_SHARED_DIR", str(data_dir))  # the folder itself works too
    assert default_data_dir() == data_dir
    empty = tmp_path / "elsewhere" / "repo"
    empty.mkdir(parents=True)
    monkeypatch.setenv("TOOLUSE_SHARED_DIR", str(tmp_path / "nothing"))
    monkeypatch.setattr(bfcl_module, "_repo_root", lambda: empty)
    monkeypatch.chdir(empty)
    with pytest.raises(BfclDataError, match="TOOLUSE_SHARED_DIR") as info:
        default_data_dir()
    assert str(tmp_path / "nothing") in str(info.value)


class _GroundTruthBackend(ScriptedBackend):
    """Answers each simple case with the right factorial call; records its options."""

    def __init__(self, **options: Any) -> None:
        self.options = options

        def script(request: Request) -> Response:
            wire = request.tools[0].name
            question = request.messages[-1].text()
            if not question.endswith("!"):  # the irrelevance case: call anyway (wrongly)
                return Response(content=[ToolUseBlock(id="t", name=wire, input={"city": "x"})])
            n = int(question.rstrip("!"))
            value = n if n != 2 else 99  # one wrong answer out of three
            return Response(
                content=[ToolUseBlock(id="t", name=wire, input={"number": value})],
                usage=Usage(output_tokens=5),
            )

        super().__init__(script)


@pytest.fixture()
def evaltest_backend() -> Any:
    made: list[_GroundTruthBackend] = []

    def factory(rest: str, **options: Any) -> _GroundTruthBackend:
        made.append(_GroundTruthBackend(**options))
        return made[-1]

    register_backend("evaltest", factory)
    yield made
    _registered.pop("evaltest", None)


def test_cli_prints_table_and_writes_json(
    data_dir: Path,
    tmp_path: Path,
    evaltest_backend: list[Any],
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "results" / "run.json"
    code = main(
        [
            "eval",
            "bfcl",
            "--data-dir",
            str(data_dir),
            "--category",
            "simple_python",
            "--category",
            "irrelevance",
            "--backend",
            "evaltest",
            "--json",
            str(out),
            "--no-progress",
        ]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "simple_python" in printed and "66.7%" in printed and "wrong_value 1" in printed
    assert evaltest_backend[0].options == {}
    document = json.loads(out.read_text())
    assert document["meta"]["grammar"] is True and document["meta"]["backend"] == "evaltest"
    cases = {c["id"]: c for c in document["cases"]}
    assert set(cases) == {"simple_python_0", "simple_python_1", "simple_python_2", "irrelevance_0"}
    wrong = cases["simple_python_2"]
    assert wrong["passed"] is False and wrong["got"] == [{"math.factorial": {"number": 99}}]
    assert wrong["expected"] == [{"math.factorial": {"number": [2]}}]
    assert "99" in wrong["reason"] and wrong["latency"] >= 0
    assert cases["irrelevance_0"]["kind"] == "called_irrelevant"
    assert [s["category"] for s in document["summary"]] == ["simple_python", "irrelevance"]


def test_cli_no_grammar_reaches_the_backend(
    data_dir: Path, evaltest_backend: list[Any], capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        main(
            [
                "eval",
                "bfcl",
                "--data-dir",
                str(data_dir),
                "--limit",
                "1",
                "--no-grammar",
                "--backend",
                "evaltest",
                "--option",
                "n_threads=1",
                "-o",
                "style = json",
                "--no-progress",
            ]
        )
        == 0
    )
    assert evaltest_backend[0].options == {"grammar": False, "n_threads": "1",
                                           "style": "json"}
    assert "no grammar" in capsys.readouterr().out


def test_cli_errors_are_clear(data_dir: Path) -> None:
    with pytest.raises(SystemExit, match="unknown category bogus"):
        main(["eval", "bfcl", "--data-dir", str(data_dir), "--category", "bogus"])
    with pytest.raises(SystemExit, match="does not take these options"):
        main(
            [
                "eval",
                "bfcl",
                "--data-dir",
                str(data_dir),
                "--backend",
                "scripted",
                "--no-grammar",
                "--no-progress",
            ]
        )
    with pytest.raises(SystemExit, match="--option must be KEY=VALUE, not 'threads'"):
        main(["eval", "bfcl", "--data-dir", str(data_dir), "--option", "threads"])
    with pytest.raises(SystemExit, match="unknown backend 'nosuch'"):
        main(["eval", "bfcl", "--data-dir", str(data_dir), "--backend", "nosuch"])
    with pytest.raises(SystemExit, match="does not exist"):
        main(["eval", "bfcl", "--data-dir", str(data_dir / "missing")])


def test_tool_choice_any_reaches_the_request() -> None:
    backend = answer(("math.factorial", {"number": 5}))
    run_case(backend, case(), tool_choice="any")
    (request,) = backend.requests
    assert request.tool_choice is not None and request.tool_choice.type == "any"


def test_cli_tool_choice_any_is_recorded(
    data_dir: Path, tmp_path: Path, evaltest_backend: list[Any]
) -> None:
    out = tmp_path / "any.json"
    assert (
        main(
            [
                "eval",
                "bfcl",
                "--data-dir",
                str(data_dir),
                "--limit",
                "1",
                "--tool-choice",
                "any",
                "--backend",
                "evaltest",
                "--no-progress",
                "--json",
                str(out),
            ]
        )
        == 0
    )
    assert json.loads(out.read_text())["meta"]["tool_choice"] == "any"


def test_backend_timings_give_decode_speed() -> None:
    class Timed(ScriptedBackend):
        def complete(self, request: Request) -> Response:
            response = super().complete(request)
            self.last_end = type("End", (), {"timings": {"prompt_s": 1.0, "generate_s": 0.5}})()
            return response

    backend = Timed([Response(content=[TextBlock(text="x")], usage=Usage(output_tokens=10))])
    result = run_case(backend, case())
    assert result.timings == {"prompt_s": 1.0, "generate_s": 0.5}
    assert summarize("simple_python", [result]).decode_tokens_per_second == pytest.approx(20.0)
    assert (
        summarize("simple_python", [run_case(answer(text="y"), case())]).decode_tokens_per_second
        is None
    )


def test_json_results_are_ordinary_files(tmp_path: Path) -> None:
    from tooluse.eval import write_json

    path = tmp_path / "r.json"
    old = os.umask(0o022)
    try:
        write_json(path, {"a": 1}, [], [])
    finally:
        os.umask(old)
    assert path.stat().st_mode & 0o777 == 0o644
    assert json.loads(path.read_text()) == {"meta": {"a": 1}, "summary": [], "cases": []}


def test_cli_all_runs_every_category_in_the_folder_with_rules_from_the_data(
    data_dir: Path, tmp_path: Path, evaltest_backend: list[Any],
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Categories outside the six of the notes: a live one with answers holding two calls
    # (graded in any order, whatever the name says), one without answers (no call is
    # right) and a relevance one (any call is right). parallel_multiple's data has no
    # answer for its case: 'all' skips it with a note instead of stopping.
    row = {"question": [[{"role": "user", "content": "3!"}]], "function": [FACTORIAL]}
    write_category(data_dir, "live_multiple", [{"id": "live_multiple_0", **row}],
                   [{"id": "live_multiple_0", "ground_truth": [
                       {"math.factorial": {"number": [3]}}]}])
    write_category(data_dir, "live_twice", [{"id": "live_twice_0", **row}],
                   [{"id": "live_twice_0", "ground_truth": [
                       {"math.factorial": {"number": [4]}}, {"math.factorial": {"number": [3]}}]}])
    write_category(data_dir, "live_irrelevance", [{"id": "live_irrelevance_0", **row}], None)
    write_category(data_dir, "live_relevance", [{"id": "live_relevance_0", **row}], None)
    out = tmp_path / "all.json"
    code = main(["eval", "bfcl", "--data-dir", str(data_dir), "--category", "all",
                 "--backend", "evaltest", "--json", str(out), "--no-progress"])
    assert code == 0
    captured = capsys.readouterr()
    assert "skipping parallel_multiple" in captured.err
    document = json.loads(out.read_text())
    assert document["meta"]["rules"] == {
        "irrelevance": "no_call", "live_irrelevance": "no_call", "live_multiple": "calls",
        "live_relevance": "some_call", "live_twice": "calls", "simple_python": "calls"}
    cases = {c["id"]: c for c in document["cases"]}
    assert cases["live_multiple_0"]["passed"] is True
    # one call made, two expected
    assert cases["live_twice_0"]["kind"] == "wrong_count"
    assert cases["live_irrelevance_0"]["kind"] == "called_irrelevant"
    assert cases["live_relevance_0"]["passed"] is True
    assert {s["category"] for s in document["summary"]} == set(document["meta"]["rules"])


def test_some_call_rule_and_parallel_answers_outside_parallel_categories() -> None:
    from tooluse.eval import check_calls

    two = [{"math.factorial": {"number": [4]}}, {"math.factorial": {"number": [3]}}]
    calls = [("math.factorial", {"number": 3}), ("math.factorial", {"number": 4})]
    assert check_calls("live_multiple", [FACTORIAL], calls, two).passed
    assert check_calls("live_relevance", [FACTORIAL], calls[:1], None, rule="some_call").passed
    assert check_calls("live_relevance", [FACTORIAL], [], None, rule="some_call").kind == "no_call"


def test_cli_jobs_give_the_results_of_one_process_in_the_same_order(
    data_dir: Path, tmp_path: Path
) -> None:
    # Real worker processes (spawned): the backend must come from an entry point, so the
    # scripted one, answering every case with the same call (right for some cases only).
    spec = 'scripted:call:math_factorial {"number": 5}'
    runs = {}
    for jobs in (1, 3):
        out = tmp_path / f"jobs{jobs}.json"
        code = main(["eval", "bfcl", "--data-dir", str(data_dir), "--category", "all",
                     "--backend", spec, "--jobs", str(jobs), "--json", str(out),
                     "--no-progress"])
        assert code == 0
        runs[jobs] = json.loads(out.read_text())
    assert runs[3]["meta"]["jobs"] == 3

    def strip(doc: dict[str, Any]) -> list[dict[str, Any]]:
        return [{k: v for k, v in c.items() if k != "latency"} for c in doc["cases"]]

    assert len(runs[1]["cases"]) > 3 and strip(runs[3]) == strip(runs[1])
    assert {c["passed"] for c in runs[1]["cases"]} == {True, False}
    assert [s["accuracy"] for s in runs[3]["summary"]] == [
        s["accuracy"] for s in runs[1]["summary"]]


def test_cli_jobs_errors_are_one_line(data_dir: Path) -> None:
    with pytest.raises(SystemExit, match="--jobs must be at least 1"):
        main(["eval", "bfcl", "--data-dir", str(data_dir), "--jobs", "0"])
    with pytest.raises(SystemExit, match="cannot load backend 'nosuch'"):
        main(["eval", "bfcl", "--data-dir", str(data_dir), "--backend", "nosuch",
              "--jobs", "2", "--no-progress"])


def test_each_calls_origin_is_recorded_per_case() -> None:
    """A backend that edited one call and added another: the case says so, call by call,
    and the category counts them."""
    from tooluse.messages import CallOrigin, ValueChange

    edited = CallOrigin(source="edited", changes=[
        ValueChange(parameter="number", before=50, after=5, rule="restate")])
    added = CallOrigin(source="added", rule="fan_out")

    def script(request: Request) -> Response:
        wire = request.tools[0].name
        return Response(content=[
            ToolUseBlock(id="a", name=wire, input={"number": 5}, origin=edited),
            ToolUseBlock(id="b", name=wire, input={"number": 6}, origin=added),
            ToolUseBlock(id="c", name=wire, input={"number": 7}),
        ])

    result = run_case(ScriptedBackend(script), case())
    assert [o["source"] for o in result.origins] == ["edited", "added", "model"]
    assert result.origins[0]["changes"] == [{"parameter": "number", "kind": "changed",
                                             "before": 50, "after": 5, "rule": "restate"}]
    assert result.origins[1]["rule"] == "fan_out"
    assert result.to_dict()["origins"] == result.origins
    summary = summarize("simple_python", [result])
    assert (summary.calls_edited, summary.calls_added) == (1, 1)


def test_cli_preset_reaches_the_backend_and_json_has_origins(
    data_dir: Path, tmp_path: Path, evaltest_backend: list[Any],
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "run.json"
    code = main(["eval", "bfcl", "--data-dir", str(data_dir), "--limit", "1",
                 "--backend", "evaltest", "--preset", "en-bfcl", "--json", str(out),
                 "--no-progress"])
    assert code == 0
    assert evaltest_backend[0].options == {"preset": "en-bfcl"}
    document = json.loads(out.read_text())
    assert document["meta"]["options"] == {"preset": "en-bfcl"}
    (case,) = document["cases"]
    assert case["origins"] == [{"source": "model", "rule": None, "changes": [],
                                "steered_by": []}]
    capsys.readouterr()


def test_cli_preset_and_a_different_option_disagree(data_dir: Path) -> None:
    with pytest.raises(SystemExit, match="disagree"):
        main(["eval", "bfcl", "--data-dir", str(data_dir), "--backend", "evaltest",
              "--preset", "en-bfcl", "-o", "preset=other", "--no-progress"])
