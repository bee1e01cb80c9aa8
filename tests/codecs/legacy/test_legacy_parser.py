"""The incremental parser: tolerance, malformed blocks, type conversion, chunking."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tooluse.codecs.legacy import (
    CallItem,
    Item,
    LegacyParser,
    TextItem,
    parse_completion,
)
from tooluse.messages import TextBlock, ToolSpec

TYPED = ToolSpec(
    name="typed",
    description="Every parameter type.",
    input_schema={
        "type": "object",
        "properties": {
            "count": {"type": "integer"},
            "ratio": {"type": "number"},
            "flag": {"type": "boolean"},
            "ids": {"type": "array", "items": {"type": "integer"}},
            "options": {"type": "object"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            "level": {"enum": [1, 2, 3]},
            "note": {"type": "string"},
            "maybe": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "ref": {"$ref": "#/$defs/Point"},
            "anything": {},
            "noted": {"type": "string", "default": None},
        },
        "$defs": {"Point": {"type": "object", "properties": {"x": {"type": "number"}}}},
    },
)


def _call(params: str, name: str = "typed") -> str:
    return (
        f"<function_calls>\n<invoke>\n<tool_name>{name}</tool_name>\n<parameters>\n{params}\n"
        "</parameters>\n</invoke>\n"
    )


def _one_input(params: str) -> dict[str, Any]:
    parsed = parse_completion(_call(params), [TYPED])
    assert parsed.problems == [], parsed.problems
    assert len(parsed.tool_uses) == 1
    return parsed.tool_uses[0].input


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ("<count>5</count>", {"count": 5}),
        ("<count> -12 </count>", {"count": -12}),
        ("<count>5.0</count>", {"count": 5}),
        ("<ratio>3.5</ratio>", {"ratio": 3.5}),
        ("<ratio>2</ratio>", {"ratio": 2}),
        ("<ratio>1e-3</ratio>", {"ratio": 0.001}),
        ("<flag>true</flag>", {"flag": True}),
        ("<flag>False</flag>", {"flag": False}),
        ("<ids>[1, 2, 3]</ids>", {"ids": [1, 2, 3]}),
        ("<ids>\n[4]\n</ids>", {"ids": [4]}),
        ('<options>{"a": {"b": [null]}}</options>', {"options": {"a": {"b": [None]}}}),
        ("<unit>celsius</unit>", {"unit": "celsius"}),
        ("<unit> celsius\n</unit>", {"unit": "celsius"}),
        ("<unit> kelvin </unit>", {"unit": " kelvin "}),
        ("<level>2</level>", {"level": 2}),
        ("<note>  two spaces kept  </note>", {"note": "  two spaces kept  "}),
        ("<note>\nline one\nline two\n</note>", {"note": "line one\nline two"}),
        ("<note>\n\nkeeps inner newline\n\n</note>", {"note": "\nkeeps inner newline\n"}),
        ("<note>\r\nwindows\r\n</note>", {"note": "windows"}),
        ("<note>5</note>", {"note": "5"}),
        ("<note>a &lt;b&gt; &amp;amp; AT&T</note>", {"note": "a <b> &amp; AT&T"}),
        ("<note>if a < b and c > d</note>", {"note": "if a < b and c > d"}),
        ("<note><b>bold</b></note>", {"note": "<b>bold</b>"}),
        ("<note></note>", {"note": ""}),
        ("<note/>", {"note": ""}),
        ("<maybe>null</maybe>", {"maybe": None}),
        ("<maybe>text</maybe>", {"maybe": "text"}),
        ('<ref>{"x": 1.5}</ref>', {"ref": {"x": 1.5}}),
        ("<anything>[1]</anything>", {"anything": [1]}),
        ("<anything>plain words</anything>", {"anything": "plain words"}),
        ("<extra>kept as text</extra>", {"extra": "kept as text"}),
        ("<extra>0.1</extra>", {"extra": 0.1}),
        ("<noted>null</noted>", {"noted": None}),
        ("<noted>text</noted>", {"noted": "text"}),
        ('<parameter name="count">7</parameter>', {"count": 7}),
    ],
)
def test_values_are_converted_to_the_schema_types(params: str, expected: dict[str, Any]) -> None:
    assert _one_input(params) == expected
    for key, value in expected.items():
        assert type(_one_input(params)[key]) is type(value)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ("<count>five</count>", "parameter 'count': expected integer, got 'five'"),
        ("<count>5.5</count>", "expected integer"),
        ("<ratio>NaN</ratio>", "expected number"),
        ("<flag>yes</flag>", "expected boolean"),
        ("<ids>[1, 2</ids>", "expected array (lists and objects are written as JSON)"),
        ("<ids>1, 2</ids>", "expected array"),
        ("<options>[1]</options>", "expected object"),
        ("<ids>" + "[" * 100_000 + "</ids>", "expected array"),
    ],
)
def test_wrong_types_are_problems_with_the_raw_text(params: str, message: str) -> None:
    text = _call(params)
    parsed = parse_completion(text, [TYPED])
    assert parsed.tool_uses == []
    assert len(parsed.problems) == 1
    problem = parsed.problems[0]
    assert message in problem.message
    assert problem.raw == text.rstrip("\n")
    # Nothing is lost: the raw text stays in the content.
    assert "".join(b.text for b in parsed.content if isinstance(b, TextBlock)) == text.rstrip("\n")


def test_without_tools_values_stay_strings_and_any_name_is_accepted() -> None:
    parsed = parse_completion(_call("<count>5</count><ids>[1]</ids>", name="whatever"))
    assert parsed.problems == []
    assert parsed.tool_uses[0].name == "whatever"
    assert parsed.tool_uses[0].input == {"count": "5", "ids": "[1]"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (_call("<note>x</note>", name="nope"), "unknown tool 'nope' (known tools: typed)"),
        ("<function_calls>\n<invoke>\n<parameters>\n<note>x</note>\n</parameters>\n</invoke>\n",
         "missing <tool_name>"),
        ("<function_calls>\n<invoke>\n<tool_name>typed</tool_name>\n<parameters>\n<note>x",
         "<invoke> not closed at end of input (inside parameter <note>)"),
        ("<function_calls>\n<invoke>\n<tool_name>typed</tool_name>\n<parameters>\n",
         "<invoke> not closed at end of input (inside <parameters>)"),
        ("<function_calls>\n<invoke>\n<tool_name>typ", "inside <tool_name>"),
        (("<function_calls>\n<invoke>\n<tool_name>typed</tool_name>\n<parameters>\n<note>x"
          "</parameters>\n</invoke>"), "parameter <note> not closed before </parameters>"),
        (("<function_calls>\n<invoke>\n<tool_name>typed</tool_name>\n<parameters>\n<note>x"
          "</invoke>"), "parameter <note> not closed before </invoke>"),
        (_call("<note>a</note><note>b</note>"), "parameter 'note' given more than once"),
        (_call("<note>a</note> stray words"), "unexpected text inside <parameters>"),
        ("<function_calls>\n<invoke>\n<tool_name>typed</tool_name>\n</function_calls>",
         "<invoke> not closed before </function_calls>"),
        ("<function_calls>\n", "<function_calls> block without any <invoke>"),
        ("<function_calls>\n</function_calls>", "<function_calls> block without any <invoke>"),
    ],
)
def test_malformed_blocks_are_problems_never_exceptions(text: str, message: str) -> None:
    parsed = parse_completion(text, [TYPED])
    assert parsed.tool_uses == []
    assert any(message in p.message for p in parsed.problems), parsed.problems
    kept = "".join(b.text for b in parsed.content if isinstance(b, TextBlock))
    assert kept.strip() == text.strip()


def test_one_bad_invoke_does_not_spoil_its_neighbours() -> None:
    text = (
        "<function_calls>\n"
        "<invoke>\n<tool_name>typed</tool_name>\n<parameters>\n<count>1</count>\n</parameters>\n</invoke>\n"
        "<invoke>\n<tool_name>typed</tool_name>\n<parameters>\n<count>x</count>\n</parameters>\n</invoke>\n"
        "<invoke>\n<tool_name>typed</tool_name>\n<parameters>\n<note>oops</parameters>\n</invoke>\n"
        "<invoke>\n<tool_name>typed</tool_name>\n<parameters>\n<count>3</count>\n</parameters>\n</invoke>\n"
    )
    parsed = parse_completion(text, [TYPED])
    assert [c.input for c in parsed.tool_uses] == [{"count": 1}, {"count": 3}]
    assert len(parsed.problems) == 2
    assert "<count>x</count>" in parsed.problems[0].raw
    assert "<note>oops" in parsed.problems[1].raw


@pytest.mark.parametrize(
    "text",
    [
        # No <parameters> wrapper, no newlines.
        "<function_calls><invoke><tool_name>typed</tool_name><count>4</count></invoke>",
        # Lots of whitespace, tabs, CRLF.
        ("<function_calls>\r\n\t<invoke>\r\n  <tool_name> typed </tool_name>\r\n  <parameters>\r\n"
         "    <count>4</count>\r\n  </parameters>\r\n</invoke>\r\n</function_calls>"),
        # The later attribute form.
        '<function_calls>\n<invoke name="typed">\n<parameter name="count">4</parameter>\n</invoke>',
        # <invoke> without <function_calls>.
        "<invoke>\n<tool_name>typed</tool_name>\n<parameters>\n<count>4</count>\n</parameters>\n</invoke>",
        # Self-closing parameters of a call without parameters do not hide the others.
        "<function_calls>\n<invoke>\n<tool_name>typed</tool_name>\n<parameters/>\n<count>4</count></invoke>",
        # Missing </parameters>.
        "<function_calls>\n<invoke>\n<tool_name>typed</tool_name>\n<parameters>\n<count>4</count>\n</invoke>",
    ],
)
def test_tolerated_variants(text: str) -> None:
    parsed = parse_completion(text, [TYPED])
    assert parsed.problems == []
    assert [(c.name, c.input) for c in parsed.tool_uses] == [("typed", {"count": 4})]


def test_surrounding_text_and_tags_are_kept_as_text() -> None:
    text = (
        "<thinking>I should count.</thinking>\nSure <b>thing</b> a<b\n\n"
        + _call("<count>1</count>")
        + "</function_calls>\n<answer>done</answer>"
    )
    parsed = parse_completion(text, [TYPED])
    assert parsed.content[0] == TextBlock(text="<thinking>I should count.</thinking>\nSure <b>thing</b> a<b")
    assert parsed.tool_uses[0].input == {"count": 1}
    assert parsed.content[-1] == TextBlock(text="\n<answer>done</answer>")


def test_prose_mentioning_the_tag_stays_text() -> None:
    text = "Use <function_calls> blocks to call tools, and <invoke/> is not a call."
    parsed = parse_completion(text, [TYPED])
    assert parsed.problems == [] and parsed.tool_uses == []
    assert parsed.content == [TextBlock(text=text)]


def test_ids_are_unique_toolu_ids_or_from_the_factory() -> None:
    text = "<function_calls>" + "<invoke><tool_name>typed</tool_name></invoke>" * 200
    ids = [c.id for c in parse_completion(text, [TYPED]).tool_uses]
    assert len(ids) == 200 and len(set(ids)) == 200
    assert all(i.startswith("toolu_") and len(i) == 30 and i[6:].isalnum() for i in ids)
    numbered = parse_completion(text[:100], [TYPED], id_factory=lambda: "fixed").tool_uses
    assert [c.id for c in numbered] == ["fixed"]


def test_text_is_released_as_soon_as_it_cannot_open_a_block() -> None:
    parser = LegacyParser([TYPED])
    assert parser.feed("Hello <") == [TextItem("Hello ")]
    assert parser.feed("b") == [TextItem("<b")]  # cannot become <function_calls> / <invoke>
    assert parser.feed("> and <func") == [TextItem("> and ")]
    assert parser.feed("tion_call") == []
    assert parser.feed("s>\n<invoke>\n<tool_name>typed</tool_name>\n<count>2</count>\n") == []
    assert parser.in_call and parser.in_block
    out = parser.feed("</invoke>")
    assert not parser.in_call and parser.in_block
    assert [type(i) for i in out] == [CallItem]
    assert parser.close() == []


# ---------------------------------------------------------------- chunking property

FRAGMENTS = [
    "<function_calls>", "</function_calls>", "<invoke>", "</invoke>", "<tool_name>",
    "</tool_name>", "typed", "nope", "<parameters>", "</parameters>", "<count>", "</count>",
    "<note>", "</note>", "7", "x", " ", "\n", "<", ">", "&lt;", "&", "</", "<thinking>",
    '<invoke name="typed">', '<parameter name="note">', "</parameter>", "<b/>", "<func",
    "<parameters/>", "<tool_name/>", "<ids>", "</ids>", "[1,", "2]", "\r\n", "<<", "<inv",
    "<invoke name='typed'>", "</function_results>", "<function_calls >", "\t",
]


def _normalise(items: list[Item]) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for item in items:
        if isinstance(item, TextItem):
            if out and out[-1][0] == "text":
                out[-1] = ("text", out[-1][1] + item.text)
            else:
                out.append(("text", item.text))
        elif isinstance(item, CallItem):
            out.append(("call", item.block.model_dump()))
        else:
            out.append(("problem", (item.message, item.raw)))
    return out


def _parse_in_chunks(text: str, cuts: list[int], ids: Callable[[], str]) -> list[Item]:
    parser = LegacyParser([TYPED], id_factory=ids)
    items: list[Item] = []
    previous = 0
    for cut in sorted(set(cuts)) + [len(text)]:
        items.extend(parser.feed(text[previous:cut]))
        previous = cut
    return items + parser.close()


def _counter() -> Callable[[], str]:
    counter = itertools.count()
    return lambda: f"toolu_test_{next(counter)}"


texts = st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=5), max_size=60).map("".join)


@settings(max_examples=300, deadline=None)
@given(text=texts, data=st.data())
def test_any_chunking_gives_the_same_items_as_the_whole(text: str, data: st.DataObject) -> None:
    cuts = data.draw(st.lists(st.integers(0, len(text)), max_size=20))
    whole = _parse_in_chunks(text, [], _counter())
    chunked = _parse_in_chunks(text, cuts, _counter())
    assert _normalise(chunked) == _normalise(whole)
    one_by_one = _parse_in_chunks(text, list(range(len(text))), _counter())
    assert _normalise(one_by_one) == _normalise(whole)


@settings(max_examples=300, deadline=None)
@given(text=texts, cuts=st.lists(st.integers(0, 400), max_size=10))
def test_no_text_is_ever_lost(text: str, cuts: list[int]) -> None:
    """Every character of the input comes out again (as text, a problem's raw text or a
    call's raw text), except the whitespace between calls and the ``</function_calls>`` that
    closes a block: compare with whitespace removed and closing tags removed."""
    items = _parse_in_chunks(text, [c for c in cuts if c <= len(text)], _counter())
    out = "".join(
        i.text if isinstance(i, TextItem) else i.raw for i in items
    )

    def norm(s: str) -> str:
        return "".join(s.replace("</function_calls>", "").split())

    assert norm(out) == norm(text)


def test_call_failing_says_why_as_soon_as_a_call_cannot_parse() -> None:
    parser = LegacyParser([TYPED])
    assert parser.call_failing is None
    parser.feed("<function_calls>\n<invoke>\n<tool_name>typed</tool_name>\n<parameters>\n")
    assert parser.call_failing is None  # a good start
    parser.feed("<count>1</count>\n<count>")
    assert parser.call_failing == "parameter 'count' given more than once"
    parser.feed("2</count>\n</parameters>\n</invoke>\n")
    assert parser.call_failing is None  # that call is over (reported as a problem)
    parser.feed("<invoke>\n<tool_name>typo</tool_name>")
    assert parser.call_failing == "unknown tool 'typo'"
    parser.feed("</invoke>\n<invoke>\n<tool_name>typed</tool_name>\n<parameters>\n</tool>")
    assert parser.call_failing == "unexpected closing tag </tool>"


def test_call_failing_without_tools_only_sees_syntax() -> None:
    parser = LegacyParser()
    parser.feed("<invoke>\n<tool_name>anything</tool_name>\n<parameters>\n<a>1</a>\n")
    assert parser.call_failing is None
    parser.feed("<a>2</a>")
    assert parser.call_failing is not None
