"""Thinking on the local backend, on the bundled model: its tokenizer under
llguidance for the think section's grammar, the bundled model unchanged when it is not a
thinking model, and the same model given a Qwen3-style chat template (a thinking model by
its template) writing a bounded think section before its call. No reasoning GGUF is needed
or fetched."""

from __future__ import annotations

from typing import Any

import pytest

from tooluse.messages import Message, Reasoning, Request, ThinkingBlock, ToolChoice, ToolSpec
from tooluse.grammar.tool_calls import tool_call_grammar
from tooluse.prompting.thinking import thinking_grammar
from tooluse.stream import BlockStart, BlockStop, ThinkingDelta, accumulate

pytestmark = pytest.mark.slow

WEATHER = ToolSpec(
    name="get_weather", description="Gets the current weather in a city.",
    input_schema={"type": "object", "properties": {"city": {"type": "string"}},
                  "required": ["city"]})
CALL = ("<function_calls>\n<invoke>\n<tool_name>get_weather</tool_name>\n<parameters>\n"
        "<city>Paris</city>\n</parameters>\n</invoke>\n</function_calls>")
#: Qwen3's template in small: ChatML (SmolLM2's own tokens), and an empty think section in
#: the generation prompt when the turn is not to think.
QWEN3_LIKE = (
    "{% for message in messages %}{{ '<|im_start|>' + message.role + '\\n' + message.content"
    " + '<|im_end|>\\n' }}{% endfor %}{% if add_generation_prompt %}"
    "{{ '<|im_start|>assistant\\n' }}{% if enable_thinking is defined and enable_thinking is"
    " false %}{{ '<think>\\n\\n</think>\\n\\n' }}{% endif %}{% endif %}")


def _backend(**options: Any) -> Any:
    pytest.importorskip("llama_cpp")
    from tooluse.backends.local import LocalBackend
    from tooluse.errors import BackendError

    try:
        return LocalBackend(n_threads=1, prompt_cache=False, **options)
    except BackendError as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def bundled() -> Any:
    return _backend()


@pytest.fixture(scope="module")
def thinker() -> Any:
    return _backend(chat_template=QWEN3_LIKE)


def _ask(**update: Any) -> Request:
    return Request(**{"messages": [Message(role="user", content="What's the weather in Paris?")],
                      "tools": [WEATHER], "max_tokens": 120, **update})


def test_llguidance_holds_the_think_section_to_its_bound(bundled: Any) -> None:
    """The grammar with a think section, compiled by llguidance on the bundled model's
    tokenizer: a bounded section then the call is accepted, a longer one, one holding
    ``</``, and a call without the section are not."""
    llguidance = pytest.importorskip("llguidance")
    from tooluse.llama import llguidance as engine_llg

    grammar = thinking_grammar(tool_call_grammar([WEATHER], ToolChoice(type="auto")), 40)
    tokenizer = engine_llg.tokenizer(bundled.text_model.loaded)

    def accepts(text: str) -> bool:
        matcher = llguidance.LLMatcher(tokenizer, grammar.llguidance, log_level=0)
        assert not matcher.is_error(), matcher.get_error()
        tokens = bundled.text_model.tokenize(text)
        return matcher.try_consume_tokens(tokens) == len(tokens) and matcher.is_accepting()

    assert accepts(f"<think>\nParis, so x<3; call it.\n</think>\n\n{CALL}")
    assert accepts(f"<think>\n{'a' * 40}</think>\n\n{CALL}")
    assert accepts("<think>\nshort</think>\n\nIt is sunny.")
    assert not accepts(f"<think>\n{'a' * 41}</think>\n\n{CALL}")
    assert not accepts(f"<think>\nsee </b> here</think>\n\n{CALL}")
    assert not accepts(CALL)


def test_the_bundled_model_is_no_thinking_model_and_unchanged(bundled: Any) -> None:
    """SmolLM2's template says nothing of ``<think>``: asking for reasoning changes neither
    its prompt, nor its grammar, nor its answer."""
    assert bundled.think_tags is False and bundled.text_model.think_tags is False
    plain, asked = _ask(), _ask(reasoning=Reasoning(budget_tokens=64))
    assert bundled._prompt(asked) == bundled._prompt(plain)
    messages, prefill, _, _ = bundled._prompt(plain)
    rendered = bundled.text_model.render(messages, prefill)
    assert "<think>" not in rendered
    assert rendered == str(bundled.text_model._formatter(messages=messages).prompt) + prefill
    first, second = bundled.complete(plain), bundled.complete(asked)
    def shown(blocks: list[Any]) -> list[dict[str, Any]]:
        return [b.model_dump(exclude={"id"}) for b in blocks]

    assert shown(first.content) == shown(second.content) and not second.thinking
    assert first.tool_uses and first.tool_uses[0].input == {"city": "Paris"}


def test_a_thinking_template_gets_a_bounded_think_section_then_the_call(thinker: Any) -> None:
    assert thinker.think_tags is True
    # Greedy, the 135M model closes the section at once (an empty section: no block);
    # sampled (seeded, so the same each run) it writes up to the bound, 8 tokens = 32 units.
    events = list(thinker.stream(_ask(reasoning=Reasoning(budget_tokens=8), temperature=0.8,
                                      tool_choice=ToolChoice(type="any"))))
    starts = [e for e in events if isinstance(e, BlockStart)]
    assert isinstance(starts[0].block, ThinkingBlock) and starts[0].index == 0
    closed = next(i for i, e in enumerate(events) if isinstance(e, BlockStop))
    assert any(isinstance(e, ThinkingDelta) for e in events[:closed])
    assert not any(isinstance(e, ThinkingDelta) for e in events[closed:])
    response = accumulate(iter(events))
    assert [b.type for b in response.content] == ["thinking", "tool_use"]
    thought = response.thinking[0]
    assert isinstance(thought, ThinkingBlock) and 0 < len(thought.text) <= 2 * 32
    assert "<think>" not in thought.text and "</think>" not in thought.text
    assert response.tool_uses[0].name == "get_weather"
    # Not asked to think: the template closes the section empty, the grammar allows none.
    quiet = thinker.complete(_ask(tool_choice=ToolChoice(type="any")))
    assert not quiet.thinking and quiet.tool_uses
    messages, prefill, _, _ = thinker._prompt(_ask())
    assert thinker.text_model.render(messages, prefill, False).endswith(
        "<|im_start|>assistant\n<think>\n\n</think>\n\n")
    assert thinker.text_model.render(messages, prefill, True).endswith(
        "<|im_start|>assistant\n")
