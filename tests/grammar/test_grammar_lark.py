"""Which schemas our grammar cannot enforce, and their llguidance (Lark) rendering."""

from __future__ import annotations

import random
from typing import Any

import pytest

from tooluse.messages import ToolChoice, ToolSpec
from tooluse.grammar.tool_calls import tool_call_grammar
from tooluse.grammar.ir import Native, sample
from tooluse.grammar.lark import local_unenforced, native_lark, unenforced


@pytest.mark.parametrize(("schema", "expected"), [
    ({"type": "string"}, set()),
    ({"type": "string", "enum": ["a", "b"], "minLength": 1, "maxLength": 3}, set()),
    ({"type": "string", "pattern": "^a+$"}, {"pattern"}),
    ({"type": "string", "format": "date-time"}, {"format"}),
    ({"type": "string", "format": "my-own-format"}, set()),  # nobody enforces it
    ({"type": "integer", "minimum": 0}, set()),  # ours: no minus sign
    ({"type": "integer", "minimum": 1, "maximum": 9}, {"minimum", "maximum"}),
    ({"type": "number", "exclusiveMaximum": 1.5, "multipleOf": 0.5},
     {"exclusiveMaximum", "multipleOf"}),
    ({"allOf": [{"type": "object"}, {"required": ["a"]}]}, {"allOf"}),
    ({"type": "array", "uniqueItems": True}, {"uniqueItems"}),
    ({"type": "object", "minProperties": 1}, {"minProperties"}),
    ({"enum": [{"pattern": "x"}]}, set()),  # a value, not a schema
    (True, set()),
])
def test_local_unenforced(schema: Any, expected: set[str]) -> None:
    assert local_unenforced(schema) == expected
    assert unenforced(schema) == expected


def test_unenforced_finds_nested_keywords_and_defs() -> None:
    schema = {"type": "object", "properties": {
        "tags": {"type": "array", "items": {"type": "string", "pattern": "^#"}},
        "at": {"$ref": "#/$defs/when"}},
        "$defs": {"when": {"type": "string", "format": "date"}}}
    assert unenforced(schema) == {"pattern", "format"}
    assert local_unenforced(schema) == set()


@pytest.mark.parametrize("schema", [
    # parameters named like keywords are names, not keywords
    {"type": "object", "properties": {"format": {"type": "string"},
                                      "pattern": {"type": "string"},
                                      "minimum": {"type": "integer"}}},
    # malformed keyword values: ignored, as by the rest of the grammar
    {"type": "string", "format": {"x": 1}, "pattern": 3},
    {"type": "integer", "minimum": "one", "maximum": True, "allOf": []},
    {"enum": [{"format": "date", "pattern": "x"}]},
])
def test_names_and_malformed_values_are_no_constraints(schema: Any) -> None:
    assert unenforced(schema) == set()
    spec = ToolSpec(name="f", description="", input_schema={
        "type": "object", "properties": {"x": schema}, "required": ["x"]})
    grammar = tool_call_grammar([spec], ToolChoice(type="any"))
    assert not grammar.native


def test_malformed_values_inside_a_native_value_do_not_reach_llguidance() -> None:
    lark = native_lark({"type": "object", "minProperties": 1, "properties": {
        "format": {"type": "string", "format": "no-such"}, "d": {"format": {"x": 1}}}},
        None, xml=False)
    assert lark == ('%json {"type": "object", "minProperties": 1, "properties": '
                    '{"format": {"type": "string"}, "d": {}}}')


def _spec(props: dict[str, Any]) -> ToolSpec:
    return ToolSpec(name="f", description="", input_schema={
        "type": "object", "properties": props, "required": sorted(props)})


def test_grammar_marks_native_values_only_where_needed() -> None:
    plain = tool_call_grammar([_spec({"city": {"type": "string"}, "n": {"type": "integer"}})],
                              ToolChoice(type="any"))
    assert not plain.native
    assert "%json" not in plain.lark and "&" not in plain.lark
    bounded = tool_call_grammar([_spec({"n": {"type": "integer", "minimum": 1}})],
                                ToolChoice(type="auto"))
    assert bounded.native
    assert '%json {"minimum": 1, "type": "integer"}' in bounded.lark
    assert "native" in bounded.gbnf  # the same grammar for GBNF and our matcher


def test_structured_output_schema_is_native_too() -> None:
    grammar = tool_call_grammar([], ToolChoice(type="auto"), response_schema={
        "type": "object", "properties": {"email": {"type": "string", "format": "email"}},
        "required": ["email"]})
    assert grammar.native and '"format": "email"' in grammar.lark


def test_bare_xml_strings_get_a_regex_terminal() -> None:
    lark = native_lark({"type": "string", "pattern": "^[A-Z]{2}/\\d$"}, None, xml=True)
    assert lark is not None and lark.startswith("/(?:[A-Z]{2}\\/\\d)/ & /")
    assert native_lark({"type": "string", "pattern": "ab"}, None, xml=True).startswith(  # type: ignore[union-attr]
        "/.*(?:ab).*/")
    # a string mixed with other types in bare XML: nothing better than ours
    assert native_lark({"type": ["string", "null"], "pattern": "^a$"}, None, xml=True) is None
    # inside JSON: the subschema, with the root's $defs and without unknown formats
    lark = native_lark({"type": "string", "pattern": "^a$", "format": "mine"},
                       {"$defs": {"x": {"type": "integer"}}}, xml=False)
    assert lark == '%json {"type": "string", "pattern": "^a$", "$defs": {"x": {"type": "integer"}}}'


def test_native_rules_keep_our_own_matching() -> None:
    """A Native rule is a Rule to GBNF, the matcher and sampling: the fast engine's
    behaviour on these schemas is unchanged (bounds still left to validation)."""
    grammar = tool_call_grammar([_spec({"n": {"type": "integer", "minimum": 1,
                                              "maximum": 3}})], ToolChoice(type="any"))
    natives = [n for n in _walk(grammar.root) if isinstance(n, Native)]
    assert len(natives) == 1
    assert grammar.matcher.matches(b"f</tool_name>\n<parameters>\n<n>50</n>\n</parameters>\n"
                                   b"</invoke>\n</function_calls>")
    rng = random.Random(0)
    for _ in range(20):
        assert grammar.matcher.matches(sample(grammar.root, rng).encode())


def test_lark_compiles_in_llguidance() -> None:
    llguidance = pytest.importorskip("llguidance")
    spec = _spec({"code": {"type": "string", "pattern": r"^[A-Z]{2}-\d{4}$"},
                  "when": {"type": "string", "format": "date-time"},
                  "n": {"type": "integer", "minimum": 1, "maximum": 10},
                  "o": {"allOf": [{"type": "object"}, {"required": ["a"]}]},
                  "city": {"type": "string", "maxLength": 20},
                  "tags": {"type": "array", "items": {"type": "string"}}})
    for choice in ("auto", "any", "tool", "none"):
        grammar = tool_call_grammar([spec], ToolChoice(type=choice, name="f")
                                    if choice == "tool" else ToolChoice(type=choice))
        error = llguidance.LLMatcher.validate_grammar(
            llguidance.grammar_from("lark", grammar.lark))
        assert error == "", (choice, error)


def _walk(node: Any) -> list[Any]:
    seen: list[Any] = []
    todo = [node]
    while todo:
        n = todo.pop()
        if any(n is s for s in seen):
            continue
        seen.append(n)
        for attr in ("items", "options"):
            todo.extend(getattr(n, attr, ()))
        for attr in ("item", "body"):
            if hasattr(n, attr):
                todo.append(getattr(n, attr))
    return seen


def test_a_repetition_bounded_at_zero_renders_as_nothing() -> None:
    """A bound of one leaves the rest of a value, or further calls, at most zero times;
    llguidance refuses a range ending at 0 ("End number in range cannot be 0"), which sent
    such requests to the fast engine, its pattern and numeric bounds then unenforced."""
    from tooluse.grammar.ir import Lit, Rep, Seq
    from tooluse.grammar.lark import to_lark

    assert to_lark(Seq((Lit("a"), Rep(Lit("b"), 0, 0)))) == 'start: ("a" "")\n'
    llguidance = pytest.importorskip("llguidance")
    spec = ToolSpec(name="f", description="", input_schema={
        "type": "object", "required": ["code", "tags", "fee"], "properties": {
            "code": {"type": "string", "maxLength": 1},
            "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 1},
            "fee": {"type": "integer", "maximum": 400}}})
    for choice in ("any", "auto"):
        grammar = tool_call_grammar([spec], ToolChoice(type=choice))  # type: ignore[arg-type]
        assert "{0,0}" not in grammar.lark
        assert llguidance.LLMatcher.validate_grammar(
            llguidance.grammar_from("lark", grammar.lark)) == ""
