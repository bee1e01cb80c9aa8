"""A string parameter with a Lark grammar (``x-lark``): llguidance holds the call's text to
exactly that grammar, run as a subgrammar of the tool-call grammar; the parser gives the text
back unchanged. Checked with llguidance's own matcher over a byte-level tokenizer (no model)."""

from __future__ import annotations

from typing import Any

import pytest

from tooluse.codecs.legacy import LegacyParser
from tooluse.codecs.legacy.items import CallItem
from tooluse.codecs.responses import decode_request
from tooluse.messages import ToolChoice, ToolSpec
from tooluse.grammar.tool_calls import ToolGrammar, tool_call_grammar
from tooluse.grammar.ir import LarkSub, Native
from tooluse.grammar.lark import LARK_KEY, subgrammars

llguidance = pytest.importorskip("llguidance")

CALC = 'start: op " " NUM " " NUM\nop: "add" | "mul"\nNUM: /[0-9]{1,4}/\n'
# the shape of Codex's apply_patch grammar, cut down
PATCH = r"""
start: begin_patch hunk+ end_patch
begin_patch: "*** Begin Patch" LF
end_patch: "*** End Patch" LF?
hunk: "*** Add File: " filename LF add_line+ | "*** Delete File: " filename LF
filename: /(.+)/
add_line: "+" /(.*)/ LF -> line
%import common.LF
"""


class _Bytes:
    """A tokenizer of one token per byte (and an end token), for matching text exactly."""

    def __init__(self) -> None:
        self.eos_token_id = 256
        self.bos_token_id = None
        self.tokens = [bytes([i]) for i in range(256)] + [b"<eos>"]
        self.special_token_ids = [256]

    def __call__(self, text: bytes | str) -> list[int]:
        return list(text if isinstance(text, bytes) else text.encode())


TOKENIZER = llguidance.LLTokenizer(llguidance.TokenizerWrapper(_Bytes()))


def accepts(grammar: str, text: str) -> bool:
    matcher = llguidance.LLMatcher(TOKENIZER, grammar, log_level=0)
    assert not matcher.is_error(), matcher.get_error()
    return bool(matcher.consume_tokens(list(text.encode())) and matcher.is_accepting())


def tool(lark: str, name: str = "calc") -> ToolSpec:
    return ToolSpec(name=name, description="", input_schema={
        "type": "object", "properties": {"input": {"type": "string", LARK_KEY: lark}},
        "required": ["input"], "additionalProperties": False})


def whole_call(name: str, value: str) -> str:
    """One call block, as the model's turn holds it."""
    return (f"<function_calls>\n<invoke>\n<tool_name>{name}</tool_name>\n<parameters>\n"
            f"<input>\n{value}\n</input>\n</parameters>\n</invoke>\n</function_calls>")


def call_text(grammar: ToolGrammar, name: str, value: str) -> str:
    """What the model writes after the grammar's prefill for one call."""
    whole = whole_call(name, value)
    assert whole.startswith(grammar.prefill)
    return whole[len(grammar.prefill):]


@pytest.mark.parametrize(("lark", "value", "ok"), [
    (CALC, "add 1 22", True),
    (CALC, "mul 9999 0", True),
    (CALC, "add 1 x", False),
    (CALC, "add 1 2 3", False),
    (CALC, "", False),
    (PATCH, "*** Begin Patch\n*** Add File: a.txt\n+x < y && z\n+\n*** End Patch\n", True),
    (PATCH, "*** Begin Patch\n*** Delete File: b.txt\n*** End Patch", True),
    (PATCH, "*** Begin Patch\n*** End Patch\n", False),  # hunk+
    (PATCH, "*** Begin Patch\n*** Add File: a.txt\nno plus\n*** End Patch\n", False),
])
def test_the_call_text_is_held_to_the_lark_grammar(lark: str, value: str, ok: bool) -> None:
    grammar = tool_call_grammar([tool(lark)], ToolChoice(type="any"))
    assert grammar.native  # what makes grammar_engine="auto" pick llguidance
    assert accepts(grammar.llguidance, call_text(grammar, "calc", value)) is ok
    # exactly the subgrammar's language: the same check on the Lark grammar alone
    assert accepts(llguidance.grammar_from("lark", lark), value) is ok


@pytest.mark.parametrize("value", [
    "add 1 22",
    "*** Begin Patch\n*** Add File: a.txt\n+x < y && z &amp; <b>\n*** End Patch\n",
])
def test_the_parser_gives_the_text_back_unchanged(value: str) -> None:
    # one newline after the opening tag and one before the closing tag are the grammar's
    # own; the parser trims exactly those (a trailing newline of the text itself is kept)
    spec = tool(PATCH)
    parser = LegacyParser([spec])
    items = parser.feed(whole_call("calc", value)) + parser.close()
    (call,) = [i for i in items if isinstance(i, CallItem)]
    # an entity is the one thing the XML value changes (&amp; is read as &): documented
    assert call.block.input == {"input": value.replace("&amp;", "&")}


def test_rule_names_never_clash_and_each_grammar_is_written_once() -> None:
    # the subgrammar's `start` and `op` live in a grammar of their own
    grammar = tool_call_grammar([tool(CALC, "a"), tool(CALC, "b"), tool(PATCH, "c")],
                                ToolChoice(type="auto"))
    subs = subgrammars(grammar.root)
    assert sorted(subs.values()) == sorted([CALC, PATCH])
    assert all(f"@{name}" in grammar.lark for name in subs)
    assert accepts(grammar.llguidance, call_text(grammar, "b", "mul 3 4"))
    assert not accepts(grammar.llguidance, call_text(grammar, "c", "mul 3 4"))


@pytest.mark.parametrize("schema", [
    {"type": "array", "items": {"type": "string", LARK_KEY: CALC}},  # inside JSON: not enforced
    {"type": "integer", LARK_KEY: CALC},
    {"type": "string", LARK_KEY: "  "},
])
def test_x_lark_only_on_a_bare_string_parameter(schema: dict[str, Any]) -> None:
    spec = ToolSpec(name="t", description="", input_schema={
        "type": "object", "properties": {"v": schema}, "required": ["v"]})
    grammar = tool_call_grammar([spec], ToolChoice(type="any"))
    assert not subgrammars(grammar.root)
    assert not any(isinstance(n, LarkSub) for n in _rules(grammar.root))


def _rules(node: Any, seen: set[int] | None = None) -> list[Any]:
    seen = set() if seen is None else seen
    if id(node) in seen:
        return []
    seen.add(id(node))
    out = [node] if isinstance(node, Native) else []
    for child in (getattr(node, "body", None), *getattr(node, "items", ()),
                  *getattr(node, "options", ()), getattr(node, "item", None)):
        if child is not None:
            out.extend(_rules(child, seen))
    return out


def test_a_responses_custom_tool_with_a_lark_format_carries_it_as_x_lark() -> None:
    req = decode_request({"model": "m", "input": "hi", "tools": [
        {"type": "custom", "name": "calc", "description": "Calculator.",
         "format": {"type": "grammar", "syntax": "lark", "definition": CALC}}]})
    prop = req.tools[0].input_schema["properties"]["input"]
    assert prop[LARK_KEY] == CALC
    assert CALC in req.tools[0].description  # the model still reads the language it writes
    grammar = tool_call_grammar(req.tools, ToolChoice(type="tool", name="calc"))
    assert accepts(grammar.llguidance, call_text(grammar, "calc", "add 2 2"))
