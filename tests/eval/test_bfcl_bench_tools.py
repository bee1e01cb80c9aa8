"""The BFCL analysis tools under bench/: the error classes a closing note quotes, and the
held-out data folder the transfer check runs on. A class given to the wrong values, or a
held-out folder laid out so that the eval grades a category by the wrong rule, would make
their figures mean something else than they say."""

from __future__ import annotations

import json
import sys
import zipfile
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

from bfcl_errors import analyse_case, written_in
from bfcl_heldout import HELD_OUT, extract

from tooluse.eval.bfcl import BfclCase, grading_rule, load_category

WEATHER = {
    "name": "get_weather",
    "description": "Weather in a city.",
    "parameters": {
        "type": "dict",
        "properties": {
            "city": {"type": "string"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            "days": {"type": "integer"},
        },
        "required": ["city"],
    },
}


def _case(question: str, truth: list[dict]) -> BfclCase:
    return BfclCase(
        id="t_0",
        category="parallel",
        messages=[{"role": "user", "content": question}],
        functions=[WEATHER],
        ground_truth=truth,
    )


def _call(**arguments: object) -> dict:
    return {"get_weather": arguments}


def test_values_taken_from_the_other_call_and_counts() -> None:
    case = _case(
        "Weather in Paris in celsius and in Rome in fahrenheit",
        [
            _call(city=["Paris"], unit=["celsius"], days=["", 1]),
            _call(city=["Rome"], unit=["fahrenheit"], days=["", 1]),
        ],
    )
    crossed = analyse_case(case, {"got": [_call(city="Paris", unit="fahrenheit"),
                                          _call(city="Rome", unit="celsius")]})
    assert crossed["case"] == {"values only": 1}
    assert crossed["values"]["another call's"] == 2
    assert [d[1] for d in crossed["details"]] == ["unit", "unit"]

    one = analyse_case(case, {"got": [_call(city="Paris", unit="celsius")]})
    assert one["case"] == {"too few calls": 1}
    assert one["values"]["missing calls"] == 1 and not one["details"]

    three = analyse_case(
        case,
        {"got": [_call(city="Paris", unit="celsius"), _call(city="Rome", unit="fahrenheit"),
                 _call(city="Rome", unit="celsius")]},
    )
    assert three["case"] == {"too many calls": 1}
    assert three["values"]["extra calls"] == 1

    assert analyse_case(case, {"got": []})["case"] == {"no call": 1}


def test_each_value_class() -> None:
    case = _case(
        "Weather in Paris for 3 days, please",
        [_call(city=["Paris"], unit=["celsius"], days=[3])],
    )

    def classes(**got: object) -> list[str]:
        return [d[4] for d in analyse_case(case, {"got": [_call(**got)]})["details"]]

    assert classes(city="Paris", days=3) == ["optional left out"]  # unit wanted
    assert classes(city="please", unit="celsius", days=3) == ["in the question"]
    assert classes(city="London", unit="celsius", days=3) == ["not in the question"]
    assert classes(city="Paris", unit="celsius", days=5) == ["not in the question"]
    # "3" stands for days: a city given it took another parameter's value
    assert classes(city="3", unit="celsius", days=3) == ["another parameter's"]
    nothing = _case("Weather in Paris", [_call(city=["Paris"], days=[""])])
    written = analyse_case(nothing, {"got": [_call(city="Paris", days=2)]})["details"]
    assert [d[4] for d in written] == ["written, none expected"]


@pytest.mark.parametrize(
    ("value", "question", "written"),
    [
        (5, "radius 5 cm", True),
        (5, "a ratio of 2.5 and 15", False),
        (5.0, "radius 5 cm", True),
        (1000, "a loan of $1,000 today", True),
        (3, "3.5 kg", False),
        (15, "for 15 years.", True),
        (0.05, "a rate of 5%", False),
        ("New York", "flights to new york", True),
        (True, "nothing said", False),
    ],
)
def test_written_in(value: object, question: str, written: bool) -> None:
    assert written_in(value, question) is written


def _wheel(path: Path, categories: tuple[str, ...]) -> Path:
    line = {
        "id": "x_0",
        "question": [[{"role": "user", "content": "hi"}]],
        "function": [WEATHER],
    }
    with zipfile.ZipFile(path, "w") as archive:
        for category in categories:
            archive.writestr(f"bfcl_eval/data/BFCL_v4_{category}.json", json.dumps(line) + "\n")
            if "relevance" not in category:
                answer = {"id": "x_0", "ground_truth": [_call(city=["Paris"])]}
                archive.writestr(
                    f"bfcl_eval/data/possible_answer/BFCL_v4_{category}.json",
                    json.dumps(answer) + "\n",
                )
    return path


def test_heldout_folder_is_graded_by_the_right_rules(tmp_path: Path) -> None:
    wheel = _wheel(tmp_path / "bfcl_eval-0-py3-none-any.whl", HELD_OUT)
    out = tmp_path / "heldout"
    written = extract(wheel, out)
    assert "possible_answer_live_multiple.json" in written
    rules = {category: grading_rule(out, category) for category in HELD_OUT}
    assert rules == {
        "live_multiple": "calls",
        "live_parallel": "calls",
        "live_parallel_multiple": "calls",
        "live_irrelevance": "no_call",
        "live_relevance": "some_call",
    }
    assert load_category(out, "live_parallel")[0].ground_truth == [_call(city=["Paris"])]


def test_heldout_refuses_a_wheel_without_a_category(tmp_path: Path) -> None:
    wheel = _wheel(tmp_path / "bfcl_eval-0-py3-none-any.whl", HELD_OUT[:2])
    with pytest.raises(SystemExit, match="live_parallel_multiple"):
        extract(wheel, tmp_path / "heldout")
