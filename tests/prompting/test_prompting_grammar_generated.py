"""The grammar's guarantee on generated schemas: for random tool schemas (nested arrays and
objects, enums, bounds, optional and required parameters, odd parameter names), every
sentence the grammar allows is accepted by the matcher, parses with the legacy parser and
validates against the schema."""

from __future__ import annotations

import random
from typing import Any

import jsonschema
from hypothesis import given, settings
from hypothesis import strategies as st

from tooluse.codecs.legacy import parse_completion
from tooluse.messages import ToolChoice, ToolSpec
from tooluse.prompting import Matcher, sample_grammar, tool_call_grammar
from tooluse.prompting.grammar import GrammarLimits

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
