"""A Responses ``custom`` tool with a Lark grammar keeps its grammar under ``x-lark`` in the
neutral schema, for text backends' grammar engine; no other API is sent that key (a vendor's
schema checker would refuse it or ignore it: the grammar is in the description)."""

from __future__ import annotations

import json

import pytest

from tooluse.codecs import get_codec
from tooluse.tools.schema import LARK_KEY, public_schema

GRAMMAR = 'start: "*** Begin Patch" /(.|\\n)+/ "*** End Patch"'
BODY = {"model": "m", "input": "patch it", "max_output_tokens": 100, "tools": [
    {"type": "custom", "name": "apply_patch", "description": "Apply a patch.",
     "format": {"type": "grammar", "syntax": "lark", "definition": GRAMMAR}}]}


def test_the_neutral_schema_keeps_the_grammar() -> None:
    neutral = get_codec("responses").decode_request(BODY)
    assert neutral.tools[0].input_schema["properties"]["input"][LARK_KEY] == GRAMMAR


@pytest.mark.parametrize("target", ["anthropic", "openai", "bedrock"])
def test_no_other_api_is_sent_the_key(target: str) -> None:
    neutral = get_codec("responses").decode_request(BODY)
    wire = get_codec(target).encode_request(neutral)  # type: ignore[arg-type]
    text = json.dumps(wire)
    assert LARK_KEY not in text
    assert "Begin Patch" in text  # the grammar still reaches the model, in the description
    assert neutral.tools[0].input_schema["properties"]["input"][LARK_KEY] == GRAMMAR  # untouched


def test_public_schema_copies_only_when_it_must() -> None:
    plain = {"type": "object", "properties": {"a": {"type": "string"}}}
    assert public_schema(plain) is plain
    nested = {"type": "object", "properties": {"a": {"anyOf": [{"type": "string",
                                                                  LARK_KEY: "start: /x/"}]}}}
    assert public_schema(nested) == {"type": "object",
                                     "properties": {"a": {"anyOf": [{"type": "string"}]}}}
    assert LARK_KEY in nested["properties"]["a"]["anyOf"][0]
