"""The grammar's guarantee on generated schemas: for random tool schemas (nested arrays and
objects, enums, bounds, optional and required parameters, odd parameter names), every
sentence the grammar allows is accepted by the matcher, parses with the legacy parser and
validates against the schema."""

from __future__ import annotations

import random
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tooluse.codecs.legacy import parse_completion
from tooluse.messages import ToolChoice, ToolSpec
from tooluse.prompting import Matcher, sample_grammar, tool_call_grammar
from tooluse.grammar.tool_calls import GrammarLimits

NAMES = st.one_of(
    st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True),
    st.sampled_from(["with space", "2nd", "a<b", "x.y", "ünï"]),
)
SCALARS = st.one_of(
    st.just({"type": "string"}),
    st.builds(lambda lo, hi: {"type": "string", "minLength": lo, "maxLength": lo + hi},
              st.integers(0, 3), st.integers(0, 5)),
    st.just({"type": "integer"}),
    st.just({"type": "integer", "minimum": 0}),
    st.just({"type": "number"}),
    st.just({"type": "boolean"}),
    st.just({"type": ["string", "null"]}),
    st.just({}),
    st.lists(st.one_of(st.text(min_size=1, max_size=6), st.integers(-5, 5), st.booleans()),
             min_size=1, max_size=4, unique=True).map(lambda v: {"enum": v}),
)


def _schemas() -> st.SearchStrategy[dict[str, Any]]:
    def extend(children: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
        array = st.builds(lambda item, n: {"type": "array", "items": item, "maxItems": n},
                          children, st.integers(0, 4))
        obj = st.dictionaries(NAMES, children, max_size=3).flatmap(
            lambda props: st.builds(
                lambda req: {"type": "object", "properties": props, "required": req},
                st.lists(st.sampled_from(sorted(props)) if props else st.nothing(),
                         unique=True, max_size=len(props)),
            )
        )
        any_of = st.lists(children, min_size=2, max_size=3).map(lambda b: {"anyOf": b})
        return st.one_of(array, obj, any_of)

    return st.recursive(SCALARS, extend, max_leaves=6)


TOOL_SCHEMAS = st.dictionaries(NAMES, _schemas(), max_size=4).flatmap(
    lambda props: st.builds(
        lambda req: {"type": "object", "properties": props, "required": req},
        st.lists(st.sampled_from(sorted(props)) if props else st.nothing(), unique=True,
                 max_size=len(props)),
    )
)


@settings(max_examples=120, deadline=None)
@given(schema=TOOL_SCHEMAS, choice=st.sampled_from(["auto", "any"]), seed=st.integers(0, 9999))
def test_generated_schemas_every_sentence_parses_and_validates(schema: dict[str, Any],
                                                               choice: str, seed: int) -> None:
    tools = [ToolSpec(name="tool_a", input_schema=schema),
             ToolSpec(name="tool_b", input_schema={"type": "object", "properties": {}})]
    grammar = tool_call_grammar(tools, ToolChoice(type=choice), GrammarLimits(max_string=12,
                                                                              max_items=4))
    matcher = Matcher(grammar.root)
    rng = random.Random(seed)
    for _ in range(5):
        sentence = sample_grammar(grammar.root, rng, max_repeat=3)
        assert matcher.matches(sentence.encode())
        body = (grammar.prefill + sentence).removesuffix("</function_calls>")
        parsed = parse_completion(body, tools)
        assert not parsed.problems, (parsed.problems, body)
        for call in parsed.tool_uses:
            spec = next(t for t in tools if t.name == call.name)
            jsonschema.validate(call.input, spec.input_schema)


def _check_every_sentence(schema: dict[str, Any], choice: str, seed: int,
                          tries: int = 5) -> None:
    tools = [ToolSpec(name="tool_a", input_schema=schema)]
    grammar = tool_call_grammar(tools, ToolChoice(type=choice), GrammarLimits(max_string=12,
                                                                              max_items=4))
    matcher = Matcher(grammar.root)
    rng = random.Random(seed)
    for _ in range(tries):
        sentence = sample_grammar(grammar.root, rng, max_repeat=3)
        assert matcher.matches(sentence.encode())
        body = (grammar.prefill + sentence).removesuffix("</function_calls>")
        parsed = parse_completion(body, tools)
        assert not parsed.problems, (parsed.problems, body)
        for call in parsed.tool_uses:
            jsonschema.validate(call.input, schema)


def test_a_text_with_two_readings_is_read_as_the_one_the_schema_accepts() -> None:
    # Found by the test above: "0" is allowed as the enum's string "0", and was read back as
    # the integer 0 (integer is tried before string), which the schema refuses.
    union = {"anyOf": [{"type": "string"}, {"enum": [1, "0"]}]}
    schema = {"type": "object", "properties": {"v": union}, "required": ["v"]}
    tools = [ToolSpec(name="tool_a", input_schema=schema)]
    for text, value in (("0", "0"), ("1", 1), ("x", "x")):
        body = ("<function_calls>\n<invoke>\n<tool_name>tool_a</tool_name>\n<parameters>\n"
                f"<v>{text}</v>\n</parameters>\n</invoke>\n")
        parsed = parse_completion(body, tools)
        assert not parsed.problems
        assert parsed.tool_uses[0].input == {"v": value}
    for seed in range(40):
        _check_every_sentence(schema, "auto", seed)


@pytest.mark.parametrize("key", ["anyOf", "oneOf"])
def test_self_referencing_unions_give_a_finite_grammar(key: str) -> None:
    # Once, the builder recursed into union branches before its depth check.
    schema = {"type": "object", "properties": {
        "a": {key: [{"type": "string"}, {"$ref": "#/properties/a"}]},
        "b": {key: [{"type": "integer"}, {"type": "array", "items": {"$ref": "#/properties/b"}}]},
    }, "required": ["a", "b"]}
    tools = [ToolSpec(name="tool_a", input_schema=schema)]
    assert "root ::=" in tool_call_grammar(tools, ToolChoice(type="any")).gbnf
    if key == "anyOf":  # oneOf over overlapping branches is unsatisfiable by design
        for seed in range(20):
            _check_every_sentence(schema, "any", seed)
    # A cycle through two definitions: c -> d -> c. (jsonschema itself recurses forever
    # validating this, so the values are checked by hand.)
    cyclic = {"type": "object", "properties": {"c": {"$ref": "#/$defs/c"}},
              "$defs": {"c": {key: [{"$ref": "#/$defs/d"}, {"type": "boolean"}]},
                        "d": {key: [{"$ref": "#/$defs/c"}, {"type": "null"}]}},
              "required": ["c"]}
    tools = [ToolSpec(name="tool_a", input_schema=cyclic)]
    grammar = tool_call_grammar(tools, ToolChoice(type="any"))
    rng = random.Random(0)
    seen = set()
    for _ in range(30):
        sentence = sample_grammar(grammar.root, rng, max_repeat=3)
        parsed = parse_completion((grammar.prefill + sentence).removesuffix(
            "</function_calls>"), tools)
        assert not parsed.problems
        seen.add(parsed.tool_uses[0].input["c"])
    assert seen == {None, True, False}


@pytest.mark.parametrize("enum", [["\n"], ["\n\n"], ["a\nb", "\r\n"], [""], ["", "x"]])
def test_enum_members_with_newlines_or_empty_are_written_so_they_read_back(
        enum: list[str]) -> None:
    # Found by the test above: {"enum": ["\n"]} had no member the grammar could write, so it
    # fell back to any text ("Y"), which the schema refuses. The parser trims one newline at
    # each end of a value: a member with newlines is written with one more at each end.
    schema = {"type": "object", "properties": {"a": {"enum": enum}}, "required": ["a"]}
    written = set()
    for seed in range(20):
        _check_every_sentence(schema, "any", seed)
        grammar = tool_call_grammar([ToolSpec(name="tool_a", input_schema=schema)],
                                    ToolChoice(type="any"))
        sentence = sample_grammar(grammar.root, random.Random(seed), max_repeat=3)
        parsed = parse_completion(grammar.prefill + sentence, [ToolSpec(name="tool_a",
                                                                        input_schema=schema)])
        written.update(call.input["a"] for call in parsed.tool_uses)
    assert written == set(enum)
