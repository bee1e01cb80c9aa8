"""Each family's own format through PromptToolsBackend, over a scripted text model: what the
model writes under ``auto`` (no model's choice involved), a well-formed call streamed as
the XML path streams one (its ``input_json`` deltas join to its input, through the gateway
too), and bad model output (a cut call, invalid JSON, an unknown tool, text after the call,
arguments of the wrong type) with the XML path's guarantees: the text kept as text, never a
crash, never a cut call passed as complete."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from tooluse.messages import Message, Request, TextBlock, ToolChoice, ToolSpec
from tooluse.prompting import PromptToolsBackend, TextEnd, ToolGrammar
from tooluse.prompting.formats import (
    HarmonyFormat,
    HermesFormat,
    Llama3Format,
    MistralFormat,
    NativeFormat,
)
from tooluse.stream import (
    BlockStart,
    BlockStop,
    MessageDelta,
    StreamEvent,
    TextDelta,
    ToolInputDelta,
    accumulate,
)

WEATHER = ToolSpec(
    name="get_weather", description="Gets the current weather in a city.",
    input_schema={"type": "object", "properties": {
        "city": {"type": "string"}, "days": {"type": "integer"}},
        "required": ["city"]})

FORMATS: dict[str, NativeFormat] = {
    "hermes": HermesFormat(), "llama3": Llama3Format(), "mistral": MistralFormat(),
    "harmony": HarmonyFormat()}
#: The families whose answer goes on after a call (harmony's turn ends at its ``<|call|>``).
GOES_ON = sorted(f for f, fmt in FORMATS.items() if fmt.style.parallel)


def _calls(family: str, *objects: str) -> str:
    """The answer a model of ``family`` writes for these call objects (harmony: these call
    messages, after the prompt's ``<|start|>assistant``)."""
    if family == "harmony":
        return "<|start|>assistant".join(objects)
    if family == "hermes":
        return "\n".join(f"<tool_call>\n{o}\n</tool_call>" for o in objects)
    if family == "llama3":
        return "; ".join(objects)
    return "[TOOL_CALLS] [" + ", ".join(objects) + "]"


def _object(name: str = "get_weather", args: str = '{"city": "Paris"}',
            family: str = "hermes") -> str:
    if family == "harmony":
        return (f"<|channel|>commentary to=functions.{name} <|constrain|>json<|message|>"
                f"{args}<|call|>")
    key = "parameters" if family == "llama3" else "arguments"
    return f'{{"name": "{name}", "{key}": {args}}}'


class ScriptedText:
    """Replays scripted completions in small chunks, as a model writes them; takes the
    chat template's options (``tools``, ``specials``) as a local text backend does."""

    model = "scripted"

    def __init__(self, *completions: str | tuple[str, TextEnd]) -> None:
        self.completions = list(completions)
        self.asked: list[dict[str, Any]] = []

    def generate_text(self, messages: Sequence[dict[str, Any]], *, prefill: str = "",
                      stop: Sequence[str] = (), max_tokens: int = 1024,
                      grammar: ToolGrammar | None = None,
                      **options: Any) -> Iterator[str | TextEnd]:
        self.asked.append(dict(prefill=prefill, stop=list(stop), grammar=grammar, **options))
        item = self.completions.pop(0)
        text, end = item if isinstance(item, tuple) else (item, TextEnd(reason="end"))
        for stop_string in stop:
            if stop_string in text:
                text = text[: text.index(stop_string)]
                end = TextEnd(reason="stop", stop_sequence=stop_string)
        for i in range(0, len(text), 3):
            yield text[i: i + 3]
        end.input_tokens, end.output_tokens = 50, len(text) // 4
        yield end


def _backend(family: str, *answers: str | tuple[str, TextEnd],
             grammar: bool = False) -> tuple[PromptToolsBackend, ScriptedText]:
    text = ScriptedText(*answers)
    return PromptToolsBackend(text, grammar=grammar, tool_format=FORMATS[family]), text


def _ask(choice: str = "auto") -> Request:
    return Request(messages=[Message(role="user", content=[TextBlock(
        text="What is the weather in Paris?")])], tools=[WEATHER],
        tool_choice=ToolChoice(type=choice), max_tokens=64)  # type: ignore[arg-type]


def _well_formed(events: list[StreamEvent]) -> dict[int, str]:
    """Blocks open, get their deltas, close; returns each call block's joined input JSON."""
    open_blocks: set[int] = set()
    joined: dict[int, str] = {}
    for event in events:
        if isinstance(event, BlockStart):
            assert event.index not in open_blocks
            open_blocks.add(event.index)
            if event.block.type == "tool_use":
                joined[event.index] = ""
        elif isinstance(event, ToolInputDelta):
            assert event.index in open_blocks
            joined[event.index] += event.partial_json
        elif isinstance(event, TextDelta):
            assert event.index in open_blocks
        elif isinstance(event, BlockStop):
            open_blocks.remove(event.index)
    assert not open_blocks
    return joined


def _stop_reason(events: list[StreamEvent]) -> str | None:
    return next(e.stop_reason for e in events if isinstance(e, MessageDelta))


@pytest.mark.parametrize("family", sorted(FORMATS))
@pytest.mark.parametrize("grammar", [True, False], ids=["grammar", "free"])
def test_a_call_under_auto_streams_input_json_that_joins_to_its_input(
        family: str, grammar: bool) -> None:
    """Whatever the model's choice, when what it writes under ``auto`` is a call in its
    family's format, the call comes back parsed, streamed as the XML path streams one."""
    answer = _calls(family, _object(family=family), _object(
        args='{"city": "Lyon", "days": 2}', family=family))
    backend, text = _backend(family, answer, grammar=grammar)
    events = list(backend.stream(_ask()))
    joined = _well_formed(events)
    message = accumulate(events)
    expected = [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Lyon", "days": 2})]
    if family not in GOES_ON:
        # The model's turn ends at its first call (a stop string, as gpt-oss stops there).
        expected = expected[:1]
        assert "<|call|>" in text.asked[0]["stop"]
    assert [(c.name, c.input) for c in message.tool_uses] == expected
    assert [json.loads(j) for j in joined.values()] == [c.input for c in message.tool_uses]
    assert _stop_reason(events) == "tool_use"
    assert not message.text().strip()
    # The template got the tools; under auto nothing is prefilled.
    assert text.asked[0]["tools"][0]["function"]["name"] == "get_weather"
    assert text.asked[0]["prefill"] == ""


@pytest.mark.parametrize("family", sorted(FORMATS))
def test_text_under_auto_is_text(family: str) -> None:
    backend, _ = _backend(family, "It is sunny in Paris {today}.", grammar=True)
    events = list(backend.stream(_ask()))
    _well_formed(events)
    message = accumulate(events)
    assert not message.tool_uses and message.text() == "It is sunny in Paris {today}."
    assert _stop_reason(events) == "end_turn"


def _bad(family: str, kind: str) -> tuple[str | tuple[str, TextEnd], str]:
    """A bad answer of ``kind`` and a part of it that must come back as text."""
    if kind == "cut":
        answer = _calls(family, _object(family=family))
        cut = answer[:answer.index("Paris") + 3]
        return (cut, TextEnd(reason="length")), '"Par'
    if kind == "invalid_json":
        return _calls(family, _object(args="{city: Paris}", family=family)), "{city: Paris}"
    if kind == "unknown_tool":
        return _calls(family, _object(name="get_wether", family=family)), "get_wether"
    if kind == "wrong_type":
        return _calls(family, _object(args='{"city": ["Paris"], "days": "two"}',
                                      family=family)), '"two"'
    if kind == "not_an_object":
        return _calls(family, _object(args='"Paris"', family=family)), '"Paris"'
    raise AssertionError(kind)


@pytest.mark.parametrize("family", sorted(FORMATS))
@pytest.mark.parametrize("kind", ["cut", "invalid_json", "unknown_tool", "wrong_type",
                                  "not_an_object"])
def test_bad_output_is_kept_as_text_and_never_a_call(family: str, kind: str) -> None:
    """Without a grammar (a text backend that cannot constrain) the model may write
    anything: what is not a whole, valid call is the model's text, kept."""
    answer, kept = _bad(family, kind)
    backend, _ = _backend(family, answer)
    events = list(backend.stream(_ask()))
    _well_formed(events)
    message = accumulate(events)
    assert not message.tool_uses
    assert kept in message.text()
    assert _stop_reason(events) == ("max_tokens" if kind == "cut" else "end_turn")


@pytest.mark.parametrize("family", GOES_ON)
def test_a_second_call_cut_by_the_limit_is_not_passed_as_complete(family: str) -> None:
    whole = _calls(family, _object(family=family), _object(
        args='{"city": "Lyon"}', family=family))
    cut = whole[:whole.rindex("Lyon")]
    backend, _ = _backend(family, (cut, TextEnd(reason="length")))
    events = list(backend.stream(_ask()))
    _well_formed(events)
    message = accumulate(events)
    assert [c.input for c in message.tool_uses] == [{"city": "Paris"}]
    assert _stop_reason(events) == "max_tokens"  # the turn was cut inside a call
    assert message.text().rstrip().endswith('"')


@pytest.mark.parametrize("family", GOES_ON)
def test_text_after_the_call_is_kept_after_it(family: str) -> None:
    answer = _calls(family, _object(family=family)) + "\nI asked for the weather."
    backend, _ = _backend(family, answer)
    events = list(backend.stream(_ask()))
    _well_formed(events)
    message = accumulate(events)
    assert [c.input for c in message.tool_uses] == [{"city": "Paris"}]
    assert message.text().strip().endswith("I asked for the weather.")
    kinds = [b.type for b in message.content]
    assert kinds.index("tool_use") < len(kinds) - 1 and kinds[-1] == "text"
    assert _stop_reason(events) == "tool_use"


def test_a_bad_call_among_good_ones_is_text_between_them() -> None:
    answer = _calls("hermes", _object(), _object(name="nope"), _object(
        args='{"city": "Lyon"}'))
    backend, _ = _backend("hermes", answer)
    backend.stop_on_malformed_call = False
    message = accumulate(backend.stream(_ask()))
    assert [c.input for c in message.tool_uses] == [{"city": "Paris"}, {"city": "Lyon"}]
    assert [b.type for b in message.content] == ["tool_use", "text", "tool_use"]
    assert '"nope"' in message.text()
    # By default the turn ends where a call can no longer parse (as in the XML format):
    # the calls before it stand, what was written of it is text.
    backend, _ = _backend("hermes", answer)
    events = list(backend.stream(_ask()))
    message = accumulate(events)
    assert [c.input for c in message.tool_uses] == [{"city": "Paris"}]
    assert '"nope"' in message.text() and "Lyon" not in message.text()
    assert backend.last_end is not None
    assert backend.last_end.timings.get("stopped_at_malformed_call") == 1.0


@pytest.mark.parametrize("family", sorted(FORMATS))
def test_absurd_nesting_is_text_not_a_crash(family: str) -> None:
    deep = "[" * 5000 + "]" * 5000
    answer = _calls(family, _object(args=f'{{"city": {deep}}}', family=family))
    backend, _ = _backend(family, answer)
    message = accumulate(backend.stream(_ask()))
    assert not message.tool_uses and "[[[" in message.text()


def _through_the_gateway(backend: PromptToolsBackend) -> tuple[list[Any], Any]:
    """The Anthropic SDK's stream events and final message for the weather question under
    ``auto``, through the gateway on ``backend``."""
    anthropic = pytest.importorskip("anthropic")
    from tooluse.server import ServerThread, create_app

    tools = [{"name": WEATHER.name, "description": WEATHER.description,
              "input_schema": WEATHER.input_schema}]
    with ServerThread(create_app(backend)) as server:
        client = anthropic.Anthropic(base_url=server.url, api_key="k", max_retries=0)
        with client.messages.stream(
                model="local", max_tokens=64, tools=tools, tool_choice={"type": "auto"},
                messages=[{"role": "user", "content": "What is the weather in Paris?"}]) as s:
            events = list(s)
            final = s.get_final_message()
    return events, final


def test_through_the_gateway_a_native_call_streams_input_json_deltas() -> None:
    """The Anthropic SDK reads a native-format call's stream as it reads the XML path's:
    ``input_json`` events whose partial JSON joins to the call's input."""
    backend, _ = _backend("hermes", "Let me look.\n" + _calls("hermes", _object()),
                          grammar=True)
    events, final = _through_the_gateway(backend)
    partial = "".join(e.partial_json for e in events if e.type == "input_json")
    assert json.loads(partial) == {"city": "Paris"}
    assert final.stop_reason == "tool_use"
    assert [(b.type, getattr(b, "input", None)) for b in final.content] == [
        ("text", None), ("tool_use", {"city": "Paris"})]


class ScoringText(ScriptedText):
    """A scripted model that also scores continuations (every one alike)."""

    def __init__(self, *completions: str | tuple[str, TextEnd]) -> None:
        super().__init__(*completions)
        self.scored: list[Sequence[str]] = []

    def score_continuations(self, messages: Sequence[dict[str, Any]],
                            continuations: Sequence[str], **options: Any) -> list[float]:
        self.scored.append(list(continuations))
        return [0.0 for _ in continuations]


@pytest.mark.parametrize("native", [False, True], ids=["xml", "hermes"])
def test_the_call_decision_calibrated_on_the_xml_opener_is_off_in_a_native_format(
        native: bool) -> None:
    """A decision whose threshold every score reaches forces a call in the XML format; in
    a native one it does not run (its threshold means nothing for another opener), and the
    model's text stays text."""
    from tooluse.prompting.decide import CALL_OPENER, Decision

    text = ScoringText("It is sunny.")
    backend = PromptToolsBackend(text, tool_format=HermesFormat() if native else None,
                                 decision=Decision("opener", -1.0))
    message = accumulate(backend.stream(_ask()))
    decided = [CALL_OPENER] in text.scored
    assert decided is not native
    if native:
        assert text.asked[0]["prefill"] == "" and message.text() == "It is sunny."
    else:
        assert text.asked[0]["prefill"].startswith("<function_calls>")


# -- harmony (gpt-oss): channels and reasoning -----------------------------------------------

def test_harmony_reasoning_is_thinking_and_the_final_channel_is_the_answer() -> None:
    """gpt-oss writes its reasoning on the ``analysis`` channel, then its answer on
    ``final``: the first is a thinking block, streamed first, the second the text; the
    ``<|return|>`` that ends the turn is the format's stop, not the user's."""
    answer = ("<|channel|>analysis<|message|>The user wants the weather; no need to call."
              "<|end|><|start|>assistant<|channel|>final<|message|>It is sunny in Paris."
              "<|return|>")
    backend, text = _backend("harmony", answer, grammar=True)
    events = list(backend.stream(_ask()))
    _well_formed(events)
    message = accumulate(events)
    assert [b.type for b in message.content] == ["thinking", "text"]
    assert message.content[0].joined_text == \
        "The user wants the weather; no need to call."  # type: ignore[union-attr]
    assert message.text() == "It is sunny in Paris."
    assert _stop_reason(events) == "end_turn"
    assert "<|return|>" in text.asked[0]["stop"]
    # The model's special tokens are named for the text backend.
    assert "<|channel|>" in text.asked[0]["specials"]


def test_harmony_reasoning_then_a_call() -> None:
    answer = ("<|channel|>analysis<|message|>Need the weather tool.<|end|><|start|>assistant"
              "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"
              '{"city": "Paris"}<|call|>')
    backend, _ = _backend("harmony", answer)
    events = list(backend.stream(_ask()))
    _well_formed(events)
    message = accumulate(events)
    assert [b.type for b in message.content] == ["thinking", "tool_use"]
    assert [(c.name, c.input) for c in message.tool_uses] == [("get_weather", {"city": "Paris"})]
    assert _stop_reason(events) == "tool_use"


def test_harmony_reasoning_asked_for_opens_a_bounded_analysis_message() -> None:
    """A request asking for reasoning gets gpt-oss's analysis message in the grammar (the
    backend need not know ``<think>`` tags): the call comes after it, and every answer the
    grammar allows is thinking then a valid call."""
    from tooluse.grammar.ir import sample
    from tooluse.messages import Reasoning
    from tooluse.prompting.thinking import ThinkSplitter

    fmt = FORMATS["harmony"]
    request = _ask("any").model_copy(update={"reasoning": Reasoning(budget_tokens=8)})
    _, prefill, stops, grammar = fmt.build_thinking(request)
    assert grammar is not None and prefill == "" and "<|return|>" in stops
    rng = random.Random(7)
    for _ in range(20):
        answer = sample(grammar.root, rng, max_repeat=3)
        assert answer.startswith("<|channel|>analysis<|message|>")
        splitter = fmt.splitter()
        assert isinstance(splitter, ThinkSplitter)
        thought, rest = splitter.push(answer)
        parser = fmt.parser([WEATHER])
        items = parser.feed(rest) + parser.close()
        assert items and all(type(i).__name__ == "CallItem" for i in items), (answer, items)
        assert "<|" not in thought
    # Without a grammar (under auto) the turn is prefilled with the analysis message's
    # opening.
    auto = request.model_copy(update={"tool_choice": ToolChoice(type="auto")})
    assert fmt.build_thinking(auto, grammar=False)[1] == "<|channel|>analysis<|message|>"


@pytest.mark.parametrize("answer,kept,why", [
    # A call to a built-in tool of gpt-oss, not offered here.
    ('<|channel|>commentary to=browser.search <|constrain|>json<|message|>{"query": "x"}'
     + "<|call|>", "browser.search", "unknown tool 'browser.search'"),
    # A header that names no channel.
    ("<|channel|><|message|>hello<|end|>", "hello", "malformed message header"),
    # The header cut by the token limit.
    ("<|channel|>commentary to=functions.get_wea", "get_wea", "cut at end of input"),
    # Arguments that are no object, then the call's end.
    ("<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>Paris"
     + "<|call|>", "Paris", "not a JSON object"),
])
def test_harmony_malformed_messages_are_text_with_a_clear_problem(
        answer: str, kept: str, why: str) -> None:
    parser = FORMATS["harmony"].parser([WEATHER])
    items = [i for n in range(0, len(answer), 4) for i in parser.feed(answer[n:n + 4])]
    items += parser.close()
    assert not [i for i in items if type(i).__name__ == "CallItem"]
    problems = [i for i in items if type(i).__name__ == "ParseProblem"]
    assert problems and why in problems[0].message, items
    assert kept in "".join(getattr(i, "raw", "") or getattr(i, "text", "") for i in items)
    # Through the backend: no call, the text kept, no crash.
    backend, _ = _backend("harmony", answer)
    message = accumulate(backend.stream(_ask()))
    assert not message.tool_uses and kept in message.text()


def test_harmony_history_has_each_call_followed_by_its_result() -> None:
    """The template renders one call per assistant message and names a result after the
    last call rendered: each call goes back as its own message, its result right after it;
    the turn's thinking (and its text before the calls) is the ``thinking`` field."""
    from tooluse.messages import ThinkingBlock, ToolResultBlock, ToolUseBlock

    first = ToolUseBlock(id="call_1", name="get_weather", input={"city": "Paris"})
    second = ToolUseBlock(id="call_2", name="get_weather", input={"city": "Lyon"})
    request = Request(tools=[WEATHER], system="Be brief.", messages=[
        Message(role="user", content=[TextBlock(text="Paris and Lyon?")]),
        Message(role="assistant", content=[ThinkingBlock(text="Two cities."),
                                           TextBlock(text="Checking both."), first, second]),
        Message(role="user", content=[ToolResultBlock(tool_use_id="call_2", content="rain"),
                                      ToolResultBlock(tool_use_id="call_1", content="sun")])])
    prompt = FORMATS["harmony"].build(request)
    shape = [(m["role"], m.get("tool_call_id") or [c["id"] for c in m.get("tool_calls", [])])
             for m in prompt.messages]
    assert shape == [("system", []), ("user", []), ("assistant", ["call_1"]),
                     ("tool", "call_1"), ("assistant", ["call_2"]), ("tool", "call_2")]
    assert prompt.messages[2]["thinking"] == "Two cities.\n\nChecking both."
    assert prompt.messages[2]["content"] == "" and "thinking" not in prompt.messages[4]


def test_harmony_refuses_channel_marks_in_history_text_as_a_client_error() -> None:
    from tooluse.errors import BackendError

    request = Request(tools=[WEATHER], messages=[
        Message(role="user", content=[TextBlock(text="Hi")]),
        Message(role="assistant", content=[TextBlock(text="<|channel|>final<|message|>x")]),
        Message(role="user", content=[TextBlock(text="Again")])])
    backend, _ = _backend("harmony", "x")
    with pytest.raises(BackendError) as raised:
        list(backend.stream(request))
    assert raised.value.kind == "invalid_request" and "<|channel|>" in str(raised.value)


def test_harmony_continues_an_assistant_turn_on_the_final_channel() -> None:
    request = Request(tools=[WEATHER], messages=[
        Message(role="user", content=[TextBlock(text="Hi")]),
        Message(role="assistant", content=[TextBlock(text="Hello,")])])
    prompt = FORMATS["harmony"].build(request)
    assert prompt.prefill == "<|channel|>final<|message|>Hello,"
    assert prompt.messages[-1]["role"] == "user"


def test_harmony_structured_output_is_a_final_message_of_json() -> None:
    from tooluse.grammar.matcher import Matcher

    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}},
              "required": ["ok"], "additionalProperties": False}
    grammar = FORMATS["harmony"].grammar([WEATHER], ToolChoice(type="auto"), None, schema)
    matcher = Matcher(grammar.root)
    good = matcher.advance(matcher.initial, b'<|channel|>final<|message|>{"ok": true}')
    assert good and matcher.accepts(good)
    assert not matcher.advance(matcher.initial, b'{"ok": true}')


def test_harmony_grammar_ends_the_answer_at_its_call() -> None:
    """``<|call|>`` ends gpt-oss's turn (it stops sampling there): the grammar allows one
    call, whatever the tool choice, and ``<|call|>`` is a stop string without a grammar."""
    from tooluse.grammar.matcher import Matcher

    fmt = FORMATS["harmony"]
    whole = _object(family="harmony")
    for choice in (ToolChoice(type="any"), ToolChoice(type="auto")):
        grammar = fmt.grammar([WEATHER], choice, None)
        assert whole.startswith(grammar.prefill)
        matcher = Matcher(grammar.root)
        state = matcher.advance(matcher.initial, whole[len(grammar.prefill):].encode())
        assert state and matcher.accepts(state)
        assert not matcher.advance(state, b"<|start|>assistant")


def test_through_the_gateway_harmony_reasoning_and_call_reach_the_anthropic_sdk() -> None:
    """gpt-oss's analysis message and its call, through the gateway: the Anthropic SDK gets
    a thinking block, then the call's ``input_json`` deltas joining to its input."""
    answer = ("<|channel|>analysis<|message|>A weather question.<|end|><|start|>assistant"
              + _object(family="harmony"))
    backend, _ = _backend("harmony", answer, grammar=True)
    events, final = _through_the_gateway(backend)
    partial = "".join(e.partial_json for e in events if e.type == "input_json")
    assert json.loads(partial) == {"city": "Paris"}
    assert final.stop_reason == "tool_use"
    assert [b.type for b in final.content] == ["thinking", "tool_use"]
    assert final.content[0].thinking == "A weather question."  # type: ignore[union-attr]


def test_harmony_parser_never_crashes_on_fragments_and_keeps_the_words() -> None:
    """Random answers made of harmony's marks, headers, JSON pieces and words, fed in
    random chunks: the parser never raises, and every word written comes back (as text, a
    problem's text or a call's input), whatever the chunking."""
    from tooluse.codecs.legacy import CallItem, ParseProblem, TextItem

    pieces = ["<|start|>", "assistant", "<|channel|>", "final", "commentary", "analysis",
              " to=functions.get_weather", " to=browser.open", " <|constrain|>json",
              "<|message|>", "<|end|>", "<|call|>", "<|return|>", '{"city": ', '"Paris"',
              "}", "{", "[", " ", "\n", "to=", "<|", "|>", "<"]
    rng = random.Random(11)
    for n in range(400):
        parts = [rng.choice(pieces) for _ in range(rng.randint(1, 14))]
        words = [f"w{n}x{i}" for i in range(rng.randint(0, 3))]
        for word in words:
            parts.insert(rng.randint(0, len(parts)), f" {word} ")
        answer = "".join(parts)
        parser = FORMATS["harmony"].parser([WEATHER])
        items = []
        at = 0
        while at < len(answer):
            step = rng.randint(1, 7)
            items += parser.feed(answer[at:at + step])
            at += step
        items += parser.close()
        kept = "".join(i.text if isinstance(i, TextItem) else i.raw
                       if isinstance(i, ParseProblem) else json.dumps(i.block.input)
                       for i in items if isinstance(i, (TextItem, ParseProblem, CallItem)))
        for word in words:
            assert word in kept, (answer, items)


def test_harmony_turn_ends_at_the_call_and_several_call_messages_parse() -> None:
    """What a model writes after ``<|call|>`` is not its turn (the stop string cuts it: a
    tool call, not the user's stop sequence); the parser itself reads several call
    messages one after another, as a model writing them unconstrained would."""
    second = _object(args='{"city": "Lyon"}', family="harmony")
    answer = _calls("harmony", _object(family="harmony"), second) + "Done."
    backend, _ = _backend("harmony", answer)
    events = list(backend.stream(_ask()))
    message = accumulate(events)
    assert [c.input for c in message.tool_uses] == [{"city": "Paris"}]
    assert not message.text() and _stop_reason(events) == "tool_use"
    assert next(e for e in events if isinstance(e, MessageDelta)).stop_sequence is None
    parser = FORMATS["harmony"].parser([WEATHER])
    items = [i for n in range(0, len(answer), 5) for i in parser.feed(answer[n:n + 5])]
    items += parser.close()
    calls = [i.block.input for i in items if hasattr(i, "block")]
    assert calls == [{"city": "Paris"}, {"city": "Lyon"}]
    assert "".join(getattr(i, "text", "") for i in items) == "Done."
    assert not [i for i in items if hasattr(i, "message")]  # no problem


def test_harmony_reasoning_effort_goes_to_the_template_and_specials_always() -> None:
    """The request's reasoning effort is gpt-oss's template's ``reasoning_effort`` (its
    three levels); the specials go to the text backend even without tools, since the text
    answer itself is framed in them."""
    from tooluse.messages import Reasoning

    fmt = FORMATS["harmony"]
    asked = {effort: fmt.template_options(_ask().model_copy(update={
        "reasoning": Reasoning(effort=effort)})).get("template_kwargs")
        for effort in ("minimal", "low", "medium", "high", "xhigh", "none", "odd")}
    assert asked == {"minimal": {"reasoning_effort": "low"},
                     "low": {"reasoning_effort": "low"},
                     "medium": {"reasoning_effort": "medium"},
                     "high": {"reasoning_effort": "high"},
                     "xhigh": {"reasoning_effort": "high"},
                     "none": {"reasoning_effort": "low"}, "odd": None}
    assert "template_kwargs" not in fmt.template_options(_ask())
    bare = Request(messages=_ask().messages)
    assert fmt.template_options(bare) == {"specials": list(fmt.specials)}
    assert FORMATS["hermes"].template_options(bare) == {}


def test_harmony_without_tools_reads_the_final_message_as_text() -> None:
    backend, text = _backend("harmony", "<|channel|>final<|message|>Hello there.<|return|>")
    message = accumulate(backend.stream(Request(messages=_ask().messages, max_tokens=32)))
    assert message.text() == "Hello there." and not message.tool_uses
    assert "tools" not in text.asked[0] and "<|channel|>" in text.asked[0]["specials"]
