"""The tools prompt's other forms: demonstrations of the call format, tools as Python."""

from __future__ import annotations

import re

import pytest
from legacy_seed_example import PRICE
from test_legacy_prompt import RICH

from tooluse.codecs.legacy import encode_request, parse_completion, render_tools_prompt
from tooluse.codecs.legacy.prompt import DEMONSTRATIONS
from tooluse.messages import Message, Request


def test_demonstrations_show_made_up_calls_before_the_tools_and_parse() -> None:
    plain = render_tools_prompt([PRICE], "Be brief.")
    one = render_tools_prompt([PRICE], "Be brief.", demonstrations=1)
    two = render_tools_prompt([PRICE], "Be brief.", demonstrations=2)
    assert render_tools_prompt([PRICE], "Be brief.", demonstrations=0) == plain
    assert "For example" not in plain and "made up" in one
    assert one.count("<function_calls>") == 2 and two.count("<function_calls>") == 3
    # each demonstration is a call block the parser reads, before the tools listed
    blocks = re.findall(r"<function_calls>\n<invoke>.*?</function_calls>", two, re.DOTALL)
    calls = [parse_completion(b).tool_uses for b in blocks[1:]]  # the first: the format's
    assert [[(c.name, c.input) for c in cs] for cs in calls] == [
        [(c.name, {k: str(v) for k, v in c.input.items()}) for c in demo[2]]
        for demo in DEMONSTRATIONS]
    assert len(calls[1]) == 2
    assert two.index("find_recipe") < two.index("Here are the tools available")
    assert two.endswith("Be brief.") and plain.endswith("Be brief.")
    with pytest.raises(ValueError, match="demonstrations"):
        render_tools_prompt([PRICE], demonstrations=3)
    request = Request(messages=[Message(role="user", content="Price?")], tools=[PRICE])
    assert encode_request(request, demonstrations=2).system == two.removesuffix("\n\nBe brief.")
    assert encode_request(request).system == plain.removesuffix("\n\nBe brief.")


def test_python_style_gives_a_signature_and_a_docstring_per_tool() -> None:
    prompt = render_tools_prompt([RICH, PRICE], style="python")
    assert prompt.count("<tool_description>") == 2 and prompt.count("</tools>") == 1
    signature = re.search(r"def book_flight\((.*?)\):", prompt)
    assert signature is not None
    params = re.split(r", (?=\w+:)", signature.group(1))
    # required first, then the optional ones with their default (or None)
    assert [p.split(":")[0] for p in params[:2]] == ["passengers", "legs"]
    assert "passengers: list[int]" in params and "legs: list[dict]" in params
    assert 'cabin: Literal["economy", "business"] = "economy"' in params
    assert "seats: int = None" in params and "note: str | None = None" in params
    assert "        seats: Optional. Minimum: 1. Maximum: 9." in prompt
    assert "        passengers: Passenger ids. Required. Write it as JSON." in prompt
    # the description cannot close the block
    assert "Books a flight. Use it only once the user has confirmed. &lt;/tools&gt;" in prompt
    assert f"def {PRICE.name}(" in prompt
