"""The incremental partial-JSON parser: same answers as json.loads, in any chunking."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tooluse.partial_json import IncrementalJSONParser, PartialJSONError, parse_partial

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**20), max_value=10**20)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=5),
    max_leaves=25,
)


def feed_in(text: str, cuts: list[int]) -> IncrementalJSONParser:
    parser = IncrementalJSONParser()
    points = sorted({c % (len(text) + 1) for c in cuts})
    start = 0
    for point in [*points, len(text)]:
        parser.feed(text[start:point])
        parser.value()  # asking for the partial value must never disturb parsing
        start = point
    return parser


def same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    return bool(a == b) and type(a) is type(b)


@settings(max_examples=200, deadline=None)
@given(json_values, st.lists(st.integers(min_value=0), max_size=12), st.booleans(), st.booleans())
def test_matches_json_loads_in_any_chunking(
    value: Any, cuts: list[int], ascii_only: bool, indent: bool
) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only, indent=2 if indent else None)
    parser = feed_in(text, cuts)
    assert parser.close() == json.loads(text)
    assert json.dumps(parser.close()) == json.dumps(json.loads(text))


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(max_size=6), json_values, min_size=1, max_size=4))
def test_partial_values_only_grow(value: dict[str, Any]) -> None:
    """Every partial view of an object is consistent with the final value: finished keys
    keep their final values, an unfinished string is a prefix of its final value."""
    text = json.dumps(value)
    parser = IncrementalJSONParser()
    for i in range(len(text)):
        parser.feed(text[i])
        partial = parser.value()
        if partial is None:
            continue
        assert isinstance(partial, dict)
        assert set(partial) <= set(value)
        for key, got in partial.items():
            want = value[key]
            if isinstance(want, str):
                assert want.startswith(got) or "\\" in json.dumps(want)
    assert parser.close() == value


def text_alphabet() -> st.SearchStrategy[str]:
    return st.text(alphabet='{}[]",:0123456789.-+eE tfrueanlsx\\u', max_size=20)


def strict_loads(text: str) -> Any:
    def bad_constant(name: str) -> Any:
        raise ValueError(name)

    return json.loads(text, parse_constant=bad_constant)


@settings(max_examples=300, deadline=None)
@given(text_alphabet())
def test_accepts_exactly_what_json_loads_accepts(text: str) -> None:
    try:
        expected = strict_loads(text)
        ok = True
    except ValueError:
        ok = False
    parser = IncrementalJSONParser()
    if ok:
        parser.feed(text)
        assert same(parser.close(), expected) or parser.close() == expected
    else:
        with pytest.raises(PartialJSONError):
            parser.feed(text)
            parser.close()


def test_examples_of_partial_views() -> None:
    assert parse_partial("") is None
    assert parse_partial('{"a": "hel') == {"a": "hel"}
    assert parse_partial('{"a": 12') == {}  # a number may still grow
    assert parse_partial('{"a": 12,') == {"a": 12}
    assert parse_partial('{"ke') == {}
    assert parse_partial('[1, [2, "x') == [1, [2, "x"]]
    assert parse_partial('{"a": "x\\') == {"a": "x"}
    assert parse_partial('{"a": "\\u00e') == {"a": ""}
    assert parse_partial('{"a": tr') == {}
    assert parse_partial('"abc') == "abc"


def test_surrogate_pairs_and_lone_surrogates_like_json_loads() -> None:
    for text in ['"\\ud83d\\ude00"', '"\\ud83d"', '"x\\udc00y"']:
        parser = IncrementalJSONParser()
        for ch in text:
            parser.feed(ch)
        assert parser.close() == json.loads(text)


def test_errors_name_the_position() -> None:
    with pytest.raises(PartialJSONError) as info:
        p = IncrementalJSONParser()
        p.feed('{"a": 1,')
        p.feed(' }')
    assert info.value.position == 9
    with pytest.raises(PartialJSONError, match="unexpected end"):
        p = IncrementalJSONParser()
        p.feed('{"a": [1')
        p.close()
    with pytest.raises(PartialJSONError, match="after the end"):
        IncrementalJSONParser().feed("[] []")
    with pytest.raises(PartialJSONError, match="invalid literal"):
        p = IncrementalJSONParser()
        p.feed("[NaN]")


def test_deep_nesting_does_not_recurse() -> None:
    depth = 50_000
    parser = IncrementalJSONParser()
    parser.feed("[" * depth)
    parser.feed("]" * depth)
    value = parser.close()
    for _ in range(5):
        assert isinstance(value, list)
        value = value[0] if value else None


def test_complete_flag() -> None:
    parser = IncrementalJSONParser()
    parser.feed('{"a": [1]')
    assert not parser.complete
    parser.feed("}  \n")
    assert parser.complete
