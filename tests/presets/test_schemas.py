"""The schema readers the call edits share: a malformed schema reads as declaring nothing,
never as a crash."""

from __future__ import annotations

from typing import Any

import pytest

from tooluse.presets.en_bfcl.named_options import named_options
from tooluse.presets.en_bfcl.schemas import properties, required


@pytest.mark.parametrize(("schema", "names"), [
    ({"required": ["a", "b"]}, {"a", "b"}),
    ({"required": "ab"}, set()),  # no list: not its characters
    ({"required": [{"a": 1}, "b", 3]}, {"b"}),  # only names; an object is not hashable
    ({"required": None}, set()),
    ("not a schema", set()),
])
def test_required_names_only_a_lists_strings(schema: Any, names: set[str]) -> None:
    assert required(schema) == names


def test_properties_of_a_malformed_schema_are_none() -> None:
    assert properties({"properties": ["a"]}) is None
    assert properties(None) is None


def test_an_edit_reads_a_malformed_required_list_without_crashing() -> None:
    schema = {"type": "object", "properties": {"direct_flight": {"type": "boolean"}},
              "required": [{"not": "a name"}]}
    assert named_options({}, schema, "Book a direct flight", "flight_book") == \
        {"direct_flight": True}
