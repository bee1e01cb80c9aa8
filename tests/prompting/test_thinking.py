"""A text model's ``<think>`` section: read from the output into thinking blocks
streamed before the answer, a bounded think section in the grammar when a thinking model is
asked to reason, the history's thinking kept or left out by the written policy — on scripted
text models, no real model needed."""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from tooluse.messages import (
    Message,
    Reasoning,
    RedactedThinkingBlock,
    Request,
    TextBlock,
    ThinkingBlock,
    ToolChoice,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
)
from tooluse.prompting import PromptToolsBackend, TextEnd, ToolGrammar, build_text_prompt
from tooluse.grammar.tool_calls import tool_call_grammar
from tooluse.prompting.thinking import (
    DEFAULT_THINK_CHARS,
    EMPTY_THINK,
    ThinkSplitter,
    assistant_start,
    mentions_think,
    think_budget,
    thinking_grammar,
)
from tooluse.stream import (
    BlockStart,
    BlockStop,
    TextDelta,
    ThinkingDelta,
    ToolInputDelta,
    accumulate,
)

WEATHER = ToolSpec(
    name="get_weather", description="Gets the current weather in a city.",
    input_schema={"type": "object", "properties": {"city": {"type": "string"}},
                  "required": ["city"]})
QUESTION = Message(role="user", content="What's the weather in Paris?")
CALL = ("<function_calls>\n<invoke>\n<tool_name>get_weather</tool_name>\n<parameters>\n"
        "<city>Paris</city>\n</parameters>\n</invoke>\n</function_calls>")
THOUGHT = "The user asks about Paris; x < 3 holds.\nI should call get_weather."


class ScriptedText:
    """Replays scripted completions in chunks of ``size`` characters; records each call's
    keywords. ``think_tags``: it presents itself as a thinking model."""

    model = "scripted"

    def __init__(self, *completions: str | tuple[str, TextEnd], think_tags: bool = False,
                 size: int = 3) -> None:
        self.completions = list(completions)
        self.think_tags = think_tags
        self.size = size
        self.calls: list[dict[str, Any]] = []

    def generate_text(self, messages: Sequence[dict[str, str]],
                      **options: Any) -> Iterator[str | TextEnd]:
        self.calls.append({"messages": list(messages), **options})
        item = self.completions.pop(0)
        text, end = item if isinstance(item, tuple) else (item, TextEnd(reason="end"))
        for stop in options.get("stop", ()):
            if stop in text:
                text, end = text[: text.index(stop)], TextEnd(reason="stop", stop_sequence=stop)
        for i in range(0, len(text), self.size):
            yield text[i: i + self.size]
        yield end


def _request(**update: Any) -> Request:
    return Request(messages=[QUESTION], tools=[WEATHER], max_tokens=200).model_copy(
        update=update)


def test_a_thinking_model_streams_its_thinking_before_the_call() -> None:
    text = ScriptedText(f"<think>\n{THOUGHT}\n</think>\n\n{CALL}", think_tags=True)
    backend = PromptToolsBackend(text)
    events = list(backend.stream(_request(reasoning=Reasoning(budget_tokens=100))))
    body = [e for e in events if isinstance(e, (BlockStart, ThinkingDelta, TextDelta,
                                                  ToolInputDelta, BlockStop))]
    # The thinking block first (index 0), whole before the call (index 1) starts.
    assert isinstance(body[0], BlockStart) and isinstance(body[0].block, ThinkingBlock)
    stop = next(i for i, e in enumerate(body) if isinstance(e, BlockStop))
    assert all(isinstance(e, ThinkingDelta) and e.index == 0 for e in body[1:stop])
    assert len(body[1:stop]) > 1  # streamed as it came, not at the end
    assert "".join(e.text for e in body[1:stop] if isinstance(e, ThinkingDelta)) == THOUGHT
    after = body[stop + 1:]
    assert isinstance(after[0], BlockStart) and isinstance(after[0].block, ToolUseBlock)
    assert after[0].index == 1
    assert not any(isinstance(e, (TextDelta, ThinkingDelta)) for e in after)
    response = accumulate(iter(events))
    assert [b.type for b in response.content] == ["thinking", "tool_use"]
    assert response.thinking == [ThinkingBlock(text=THOUGHT)]
    assert response.tool_uses[0].input == {"city": "Paris"}
    assert response.stop_reason == "tool_use"
    # What the model was given: a grammar that starts with the think section, the turn's
    # switch for the chat template, no prefill (the grammar writes the whole turn).
    call = text.calls[0]
    assert call["think"] is True and call["prefill"] == ""
    grammar = call["grammar"]
    assert isinstance(grammar, ToolGrammar)
    assert grammar.matcher.matches(f"<think>\n{THOUGHT}\n</think>\n\n{CALL}".encode())
    assert not grammar.matcher.matches(CALL.encode())


def test_thinking_then_text_answer_and_non_streaming_agree() -> None:
    answer = f"<think>\n{THOUGHT}\n</think>\n\nIt is sunny in Paris."
    for size in (1, 2, 7, 100):
        backend = PromptToolsBackend(ScriptedText(answer, think_tags=True, size=size))
        response = backend.complete(_request(reasoning=Reasoning()))
        assert response.content == [ThinkingBlock(text=THOUGHT),
                                     TextBlock(text="It is sunny in Paris.")], size
        assert response.stop_reason == "end_turn"


def test_any_model_output_starting_with_think_is_read_as_thinking() -> None:
    """No thinking model, no reasoning asked: the grammar and options are unchanged, but an
    answer that starts with a think section still has it read as thinking; a ``<think>``
    later in the answer is text."""
    plain = _request()
    text = ScriptedText(f"\n<think>{THOUGHT}</think>\nIt is sunny.",
                        "Here <think> is text.")
    backend = PromptToolsBackend(text, grammar=False)
    response = backend.complete(plain)
    assert response.content == [ThinkingBlock(text=THOUGHT), TextBlock(text="It is sunny.")]
    assert "think" not in text.calls[0]
    later = backend.complete(plain)
    assert later.content == [TextBlock(text="Here <think> is text.")]


def test_an_unclosed_think_section_cut_at_the_limit() -> None:
    cut = (f"<think>\n{THOUGHT} and more", TextEnd(reason="length"))
    backend = PromptToolsBackend(ScriptedText(cut, think_tags=True))
    response = backend.complete(_request(reasoning=Reasoning()))
    assert response.content == [ThinkingBlock(text=f"{THOUGHT} and more")]
    assert response.stop_reason == "max_tokens"


def test_without_reasoning_a_thinking_model_gets_the_same_grammar_and_prompt() -> None:
    """A thinking model asked for no reasoning (none given, or disabled, or effort none):
    the prompt, prefill and grammar are those of any model; the turn tells the template not
    to think."""
    for request in (_request(), _request(reasoning=Reasoning(mode="disabled")),
                    _request(reasoning=Reasoning(effort="none")),
                    _request(tool_choice=ToolChoice(type="any"))):
        text = ScriptedText(CALL, think_tags=True)
        PromptToolsBackend(text).complete(request)
        plain = ScriptedText(CALL)
        PromptToolsBackend(plain).complete(request)
        assert text.calls[0].pop("think") is False
        assert text.calls[0] == plain.calls[0]
    # and a model that is no thinking model is asked nothing new, reasoning or not
    for model in (ScriptedText(CALL), ScriptedText(CALL)):
        PromptToolsBackend(model).complete(_request(reasoning=Reasoning()))
    assert build_text_prompt(_request(reasoning=Reasoning())) == build_text_prompt(_request())


def test_a_forced_choice_with_thinking_moves_the_prefill_into_the_grammar() -> None:
    request = _request(tool_choice=ToolChoice(type="any"), reasoning=Reasoning())
    _, prefill, _, grammar = build_text_prompt(request, thinking_model=True)
    plain = tool_call_grammar([WEATHER], ToolChoice(type="any"))
    assert prefill == "" and grammar is not None
    rest = CALL[len(plain.prefill):]
    assert plain.matcher.matches(rest.encode())
    assert grammar.matcher.matches(f"<think>\nok\n</think>\n\n{plain.prefill}{rest}".encode())
    assert not grammar.matcher.matches(b"<think>\nok\n</think>\n\nSunny.")
    # without a grammar the turn is prefilled with the opening tag
    _, prefill, _, none = build_text_prompt(_request(reasoning=Reasoning()), grammar=False,
                                            thinking_model=True)
    assert none is None and prefill == "<think>\n"


def test_the_think_section_is_bounded() -> None:
    assert think_budget(None) == DEFAULT_THINK_CHARS
    assert think_budget(Reasoning(budget_tokens=1024)) == 4096
    grammar = thinking_grammar(tool_call_grammar([WEATHER]), 40)

    def accepts(thought: str) -> bool:
        return grammar.matcher.matches(f"<think>\n{thought}</think>\n\n{CALL}".encode())

    assert accepts("a" * 40) and accepts("") and accepts("x<3 " * 10)
    assert not accepts("a" * 41)
    assert not accepts("a </b> c")  # "</" would close the section or open a call
    _, _, _, budgeted = build_text_prompt(_request(reasoning=Reasoning(budget_tokens=5)),
                                          thinking_model=True)
    assert budgeted is not None
    assert budgeted.matcher.matches(f"<think>\n{'a' * 20}</think>\n\n{CALL}".encode())
    assert not budgeted.matcher.matches(f"<think>\n{'a' * 21}</think>\n\n{CALL}".encode())


def test_history_thinking_is_left_out_or_given_back_never_a_crash() -> None:
    thought = ThinkingBlock(text="Paris is in France.", signature="sig-from-elsewhere")
    redacted = RedactedThinkingBlock(data="b3BhcXVl")
    history = [
        QUESTION,
        Message(role="assistant", content=[thought, redacted, TextBlock(text="Let me look."),
                                           ThinkingBlock(text=""),
                                           ToolUseBlock(id="t1", name="get_weather",
                                                        input={"city": "Paris"})]),
        Message(role="user", content=[ToolResultBlock(tool_use_id="t1", content="sunny")]),
    ]
    bare = [history[0], Message(role="assistant", content=[
        TextBlock(text="Let me look."),
        ToolUseBlock(id="t1", name="get_weather", input={"city": "Paris"})]), history[2]]
    request = Request(messages=history, tools=[WEATHER])
    messages, *rest = build_text_prompt(request)
    # any model: as if the blocks were not there (the policy: dropped)
    assert (messages, *rest) == build_text_prompt(request.model_copy(update={"messages": bare}))
    assert not any("Paris is in France" in m["content"] or "b3BhcXVl" in m["content"]
                   for m in messages)
    # a thinking model: the text goes back into its turn, for the chat template to keep
    # or drop; the redacted block and the signature never
    thinking, *_ = build_text_prompt(request, thinking_model=True)
    turn = thinking[2]
    assert turn["role"] == "assistant"
    assert turn["content"].startswith("<think>\nParis is in France.\n</think>\n\nLet me look.")
    assert "b3BhcXVl" not in turn["content"] and "sig-from-elsewhere" not in turn["content"]
    # and the backend answers over such a history
    backend = PromptToolsBackend(ScriptedText("It is sunny."))
    assert backend.complete(request).text() == "It is sunny."


@pytest.mark.parametrize("seed", range(20))
def test_the_splitter_is_chunking_proof(seed: int) -> None:
    rng = random.Random(seed)
    text = f" \n<think>\n\n{THOUGHT}\n  </think>\n\n{CALL}"
    splitter = ThinkSplitter()
    thought = rest = ""
    i = 0
    while i < len(text):
        n = rng.randint(1, 9)
        a, b = splitter.push(text[i:i + n])
        thought, rest, i = thought + a, rest + b, i + n
    a, b = splitter.flush()
    assert (thought + a, rest + b) == (THOUGHT, CALL)


def test_the_assistant_start_of_templates_that_open_thinking() -> None:
    r1 = "<｜User｜>Hi<｜Assistant｜><think>\n"
    assert assistant_start(r1, True) == "<｜User｜>Hi<｜Assistant｜>"
    assert assistant_start(r1, False) == "<｜User｜>Hi<｜Assistant｜>" + EMPTY_THINK
    assert assistant_start(r1, None) == r1
    qwen = "<|im_start|>assistant\n"
    assert assistant_start(qwen, True) == assistant_start(qwen, False) == qwen
    closed = qwen + EMPTY_THINK  # Qwen3's template with enable_thinking=False
    assert assistant_start(closed, False) == closed
    assert mentions_think("{% if '</think>' in content %}") and not mentions_think(None)
    assert not mentions_think("<|im_start|>{{ message.content }}")
