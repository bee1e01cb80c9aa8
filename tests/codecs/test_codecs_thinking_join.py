"""Thinking text is joined one way wherever a format has one text for it: a block's
:attr:`ThinkingBlock.joined_text` (text, then each summary part, a blank line between, empty
pieces left out), and the same text, piece by piece, from a stream's
:class:`~tooluse.stream.ThinkingJoiner`: the Messages and Chat stream encoders, the
Messages answer, Chat ``reasoning_content``, the legacy ``<thinking>`` section, a span's
reasoning part and a text model's prompt all show it."""

from __future__ import annotations

import json

import pytest

from tooluse.codecs import anthropic, openai
from tooluse.codecs.anthropic.thinking import answer_text
from tooluse.codecs.legacy.thinking import render_thinking
from tooluse.messages import Message, Reasoning, Request, Response, TextBlock, ThinkingBlock
from tooluse.prompting.text_prompt import build_text_prompt
from tooluse.stream import BlockStart, BlockStop, ThinkingDelta, ThinkingJoiner, events_from_response
from tooluse.telemetry.genai import _part

BLOCKS = [
    ThinkingBlock(text="Let me think.\nTwo lines."),
    ThinkingBlock(text="", summary=["First part.", "Second part."]),
    ThinkingBlock(text="The text.", summary=["A summary."]),
    ThinkingBlock(text="The text.", summary=["", "After an empty part."]),
    ThinkingBlock(text="", summary=["", ""]),
]
JOINED = [
    "Let me think.\nTwo lines.",
    "First part.\n\nSecond part.",
    "The text.\n\nA summary.",
    "The text.\n\nAfter an empty part.",
    "",
]


@pytest.mark.parametrize(("block", "joined"), list(zip(BLOCKS, JOINED, strict=True)))
def test_a_block_has_one_joined_text(block: ThinkingBlock, joined: str) -> None:
    assert block.joined_text == joined
    assert answer_text(block) == ThinkingBlock.join([block]) == joined
    assert _part(block) == {"type": "reasoning", "content": joined}
    section = render_thinking(block)
    assert (section.startswith("<thinking>") and joined in section) if joined else not section


def test_a_turn_s_blocks_join_into_one_text() -> None:
    """Several blocks (a turn's) as one text: each block's joined text, a blank line
    between, a block with no text left out (Chat ``reasoning_content``, a text model's
    prompt)."""
    content = [TextBlock(text="not thinking"), *BLOCKS]
    assert ThinkingBlock.join(content) == "\n\n".join(j for j in JOINED if j)
    assert ThinkingBlock.join([TextBlock(text="x")]) == ""


def _response(*blocks: ThinkingBlock) -> Response:
    return Response(id="msg_1", model="m", stop_reason="end_turn",
                    content=[*blocks, TextBlock(text="Answer.")])


@pytest.mark.parametrize("chunk_size", [0, 1, 3])
@pytest.mark.parametrize("block", BLOCKS)
def test_the_messages_stream_shows_the_joined_text(block: ThinkingBlock, chunk_size: int) -> None:
    events = list(anthropic.encode_events(events_from_response(_response(block),
                                                               chunk_size=chunk_size)))
    shown = "".join(e["delta"]["thinking"] for e in events
                    if e["type"] == "content_block_delta" and e["delta"]["type"] == "thinking_delta")
    assert shown == block.joined_text
    assert anthropic.encode_response(_response(block))["content"][0]["thinking"] == shown


@pytest.mark.parametrize("block", BLOCKS)
def test_a_block_that_starts_with_content_goes_on_from_it(block: ThinkingBlock) -> None:
    """Its content in the start, then more of its last piece and a new summary part."""
    last = len(block.summary) - 1 if block.summary else None
    events = [BlockStart(index=0, block=block),
              ThinkingDelta(index=0, text=" more", summary=last),
              ThinkingDelta(index=0, text="Next part.", summary=len(block.summary)),
              BlockStop(index=0)]
    whole = ThinkingBlock(text=block.text + (" more" if last is None else ""),
                          summary=[*block.summary[:-1], *(
                              [block.summary[-1] + " more"] if block.summary else []),
                              "Next part."])
    encoded = list(anthropic.encode_events(events))
    shown = "".join(e["delta"]["thinking"] for e in encoded if e["type"] == "content_block_delta")
    assert shown == whole.joined_text


@pytest.mark.parametrize("chunk_size", [0, 2])
def test_chat_reasoning_content_joins_every_block_of_the_turn(chunk_size: int) -> None:
    response = _response(*BLOCKS)
    expected = ThinkingBlock.SEPARATOR.join(b.joined_text for b in BLOCKS if b.joined_text)
    chunks = list(openai.encode_events(events_from_response(response, chunk_size=chunk_size)))
    streamed = "".join(c["choices"][0]["delta"].get("reasoning_content", "")
                       for c in chunks if c["choices"])
    assert streamed == expected
    whole = openai.encode_response(response)["choices"][0]["message"]["reasoning_content"]
    assert whole == expected


def test_the_joiner_adds_the_separator_only_between_pieces_with_text() -> None:
    joiner = ThinkingJoiner()
    shown = [joiner.add(None, "a"), joiner.add(None, "b"), joiner.add(0, ""), joiner.add(1, ""),
             joiner.add(1, "c"), joiner.add(2, "d")]
    assert shown == ["a", "b", "", "", "\n\nc", "\n\nd"]
    assert ThinkingJoiner().add(0, "first") == "first"  # nothing came before it


def test_a_text_models_prompt_carries_the_joined_thinking_of_its_turns() -> None:
    request = Request(model="m", max_tokens=50, reasoning=Reasoning(effort="low"), messages=[
        Message(role="user", content="Hi"),
        Message(role="assistant", content=[BLOCKS[2], BLOCKS[1], TextBlock(text="Hello.")]),
        Message(role="user", content="Again"),
    ])
    messages, *_ = build_text_prompt(request, thinking_model=True)
    assistant = next(m["content"] for m in messages if m["role"] == "assistant")
    assert "The text.\n\nA summary.\n\nFirst part.\n\nSecond part." in assistant
    assert json.dumps(assistant).count("<think>") == 1
