"""The emitter's held calls (``hold``, used by ``pair_in_order``): streamed together once
released, edited as a whole, and never reordered against the text around them."""

from __future__ import annotations

import json

import pytest

from tooluse.codecs.legacy import LegacyParser
from tooluse.messages import ToolUseBlock
from tooluse.prompting.emitter import Emitter
from tooluse.stream import BlockStart, StreamEvent, TextDelta, ToolInputDelta


def _call(city: str) -> str:
    return (f"<invoke>\n<tool_name>weather</tool_name>\n<parameters>\n<city>{city}</city>\n"
            "</parameters>\n</invoke>\n")


def _shown(events: list[StreamEvent]) -> list[str]:
    """Each block's start, as ``index:what``: a text's first delta, a call's input."""
    out: list[str] = []
    for event in events:
        if isinstance(event, ToolInputDelta):
            out.append(f"{event.index}:{json.loads(event.partial_json)['city']}")
        elif isinstance(event, TextDelta):
            out.append(f"{event.index}:{event.text.strip()}")
    return out


def test_held_calls_come_out_only_when_released_and_as_edited() -> None:
    emitter = Emitter(LegacyParser())
    emitter.hold = True
    during = list(emitter.feed("<function_calls>\n" + _call("Paris") + _call("Rome")))
    during += list(emitter.feed("</function_calls>"))
    during += list(emitter.close())
    assert not any(isinstance(e, (BlockStart, ToolInputDelta)) for e in during)
    assert [b.input["city"] for b in emitter.pending] == ["Paris", "Rome"]

    def swapped(blocks: list[ToolUseBlock]) -> list[ToolUseBlock]:
        return list(reversed(blocks))

    released = list(emitter.release(swapped))
    assert _shown(released) == ["0:Rome", "1:Paris"]
    assert [b.input["city"] for b in emitter.blocks] == ["Rome", "Paris"]
    assert emitter.pending == [] and emitter.calls == 2


def test_text_after_held_calls_releases_them_first() -> None:
    emitter = Emitter(LegacyParser())
    emitter.hold = True
    events = list(emitter.feed("Sure.\n<function_calls>\n" + _call("Paris") +
                               "</function_calls>\nDone."))
    events += list(emitter.close())
    assert _shown(events) == ["0:Sure.", "1:Paris", "2:Done."]
    assert emitter.pending == []


def test_an_edit_must_keep_the_number_of_calls() -> None:
    emitter = Emitter(LegacyParser())
    emitter.hold = True
    list(emitter.feed("<function_calls>\n" + _call("Paris") + _call("Rome")))
    with pytest.raises(ValueError, match="as many calls"):
        list(emitter.release(lambda blocks: blocks[:1]))


def test_an_edit_that_would_repeat_a_call_is_not_made() -> None:
    emitter = Emitter(LegacyParser(), history={json.dumps(["weather", {"city": "Oslo"}])})
    emitter.hold = True
    list(emitter.feed("<function_calls>\n" + _call("Paris") + _call("Rome")))

    def to_oslo(blocks: list[ToolUseBlock]) -> list[ToolUseBlock]:
        return [blocks[0].model_copy(update={"input": {"city": "Oslo"}}), blocks[1]]

    assert _shown(list(emitter.release(to_oslo))) == ["0:Paris", "1:Rome"]
