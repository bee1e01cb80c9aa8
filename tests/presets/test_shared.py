"""share_optionals: an optional value the question gives once, before what tells a tool's
calls apart, is written into each of its calls that leaves it out; nothing else is."""

from __future__ import annotations

from typing import Any

import pytest

from tooluse.messages import Message, Request, ToolSpec, ToolUseBlock
from tooluse.presets.en_bfcl.call_edits import given_to_all
from tooluse.presets.en_bfcl.shared import shared_optionals, written_at

Calls = list[tuple[str, dict[str, Any]]]
INTERVAL = ("Can you give me 95% confidence interval for a sample mean with standard deviation "
            "of 10, sample size of 50 and sample mean of 25? And can you do the same but for a "
            "sample size of 150 instead?")
DNA = ("Can you fetch the DNA sequence of a molecule with the unique ID 'XYZ123' from the "
       "public database, then fetch the same sequence again but this time in 'genbank' format, "
       "and finally fetch the sequence once more but now with 500 base pairs upstream?")


def _interval(size: int, **more: Any) -> tuple[str, dict[str, Any]]:
    return ("ci", {"sample_std_dev": 10, "sample_size": size, "sample_mean": 25, **more})


def test_a_value_given_before_the_calls_part_goes_to_each() -> None:
    calls: Calls = [_interval(150, confidence_level=0.95), _interval(50)]
    assert shared_optionals(calls, INTERVAL) == [_interval(150, confidence_level=0.95),
                                                 _interval(50, confidence_level=0.95)]


def test_other_tools_and_single_calls_keep_their_values() -> None:
    calls: Calls = [_interval(150, confidence_level=0.95), ("news", {"topic": "x"}),
                    _interval(50)]
    assert shared_optionals(calls, INTERVAL) == [
        _interval(150, confidence_level=0.95), ("news", {"topic": "x"}),
        _interval(50, confidence_level=0.95)]


@pytest.mark.parametrize(("calls", "question"), [
    # the format is written after the ID that tells the calls apart: one call's own value
    ([("dna", {"id": "XYZ123", "format": "genbank"}), ("dna", {"id": "ABC9"})],
     DNA.replace("the same sequence", "the sequence 'ABC9'")),
    # the calls do not differ where the question writes it: nothing tells where they part
    ([("dna", {"id": "XYZ123", "format": "genbank"}), ("dna", {"id": "XYZ123", "upstream": 500})],
     DNA),
    # the calls that hold the optional value disagree on it
    ([_interval(150, confidence_level=0.95), _interval(50, confidence_level=0.99),
      _interval(70)], INTERVAL),
    # the question does not write the value
    ([_interval(150, confidence_level=0.9), _interval(50)], INTERVAL),
    # every call holds it
    ([_interval(150, confidence_level=0.95), _interval(50, confidence_level=0.95)], INTERVAL),
])
def test_nothing_changes_otherwise(calls: Calls, question: str) -> None:
    assert shared_optionals(calls, question) == calls


@pytest.mark.parametrize(("value", "expected"), [
    (0.95, INTERVAL.index("95%")), (10, INTERVAL.index("10")), (150, INTERVAL.index("150")),
    ("sample mean", INTERVAL.index("sample mean")), (0.5, None), (True, None), ([50], None),
])
def test_written_at(value: Any, expected: int | None) -> None:
    assert written_at(INTERVAL, value) == expected


def test_blocks_keep_their_ids_and_are_validated() -> None:
    properties = {"sample_std_dev": {"type": "number"}, "sample_size": {"type": "integer"},
                  "sample_mean": {"type": "number"}, "confidence_level": {"type": "number"}}
    free = ToolSpec(name="ci", input_schema={"type": "object", "properties": properties})
    # A schema the shared value breaks: no confidence level for a sample of 50.
    strict = free.model_copy(update={"input_schema": {**free.input_schema, "allOf": [{
        "if": {"properties": {"sample_size": {"const": 50}}},
        "then": {"not": {"required": ["confidence_level"]}}}]}})
    calls = [_interval(150, confidence_level=0.95), _interval(50)]
    for tool, shared in ((free, True), (strict, False)):
        request = Request(messages=[Message(role="user", content=INTERVAL)], tools=[tool])
        blocks = [ToolUseBlock(id=f"toolu_{i}", name="ci", input=args)
                  for i, (_, args) in enumerate(calls)]
        out = given_to_all(request, blocks)
        assert [b.id for b in out] == ["toolu_0", "toolu_1"]
        assert ("confidence_level" in out[1].input) is shared
        assert out[0].input == calls[0][1]
