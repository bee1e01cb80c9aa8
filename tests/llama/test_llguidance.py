"""The llguidance grammar engine on the real default model.

Our own engine leaves ``pattern``, numeric bounds and ``allOf`` to validation after parsing;
``grammar_engine="auto"`` hands exactly those requests to llguidance, which enforces them
while decoding. The same three requests are asked of both: with the fast engine the small
model writes calls that fail validation, with auto every call validates. Without the
``llguidance`` package, auto is the fast engine.
"""

from __future__ import annotations

import sys
from typing import Any

import jsonschema
import pytest

from tooluse.messages import Message, Request, Response, ToolChoice, ToolSpec, ToolUseBlock

pytestmark = pytest.mark.slow

PARCEL = ToolSpec(
    name="track_parcel", description="Tracks a parcel by its tracking code.",
    input_schema={"type": "object", "required": ["code"], "properties": {"code": {
        "type": "string", "pattern": r"^[A-Z]{2}-\d{4}$",
        "description": "Tracking code: two capital letters, a dash and four digits."}}})
VOLUME = ToolSpec(
    name="set_volume", description="Sets the speaker volume.",
    input_schema={"type": "object", "required": ["level"], "properties": {"level": {
        "type": "integer", "minimum": 1, "maximum": 10,
        "description": "Volume level from 1 to 10."}}})
USER = ToolSpec(
    name="create_user", description="Creates a user account.",
    input_schema={"type": "object", "required": ["user"], "properties": {"user": {"allOf": [
        {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
        {"type": "object", "properties": {"age": {"type": "integer"}}, "required": ["age"]},
    ]}}})
WEATHER = ToolSpec(
    name="get_weather", description="Gets the current weather in a city.",
    input_schema={"type": "object", "properties": {"city": {"type": "string"}},
                  "required": ["city"]})
CASES = [(PARCEL, "Where is my parcel with tracking number 12345?"),
         (VOLUME, "Turn the volume all the way up to 50."),
         (USER, "Create an account for Bob.")]
CHECKER = jsonschema.Draft202012Validator.FORMAT_CHECKER


def _backend(engine: str) -> Any:
    pytest.importorskip("llama_cpp")
    from tooluse.backends.local import LocalBackend
    from tooluse.errors import BackendError

    try:
        return LocalBackend(n_threads=1, grammar_engine=engine,  # type: ignore[arg-type]
                            prompt_cache=False)
    except BackendError as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def fast() -> Any:
    return _backend("fast")


@pytest.fixture(scope="module")
def auto() -> Any:
    pytest.importorskip("llguidance")
    return _backend("auto")


def _call(backend: Any, tool: ToolSpec, question: str) -> Response:
    resp: Response = backend.complete(Request(
        messages=[Message(role="user", content=question)], tools=[tool],
        tool_choice=ToolChoice(type="any"), max_tokens=80))
    return resp


def _valid(resp: Response, tool: ToolSpec) -> bool:
    if not resp.tool_uses:
        return False
    for call in resp.tool_uses:
        try:
            jsonschema.validate(call.input, tool.input_schema, format_checker=CHECKER)
        except jsonschema.ValidationError:
            return False
    return True


def _engine(backend: Any) -> str:
    end = backend.text_model.last_end
    return "llguidance" if end.timings.get("llguidance") else "fast"


def test_fast_engine_leaves_pattern_bounds_allof_to_validation(fast: Any) -> None:
    results = [_valid(_call(fast, tool, q), tool) for tool, q in CASES]
    assert _engine(fast) == "fast"
    # greedy decoding: the 135M model writes "${code}", 50 and {"": 1} here
    assert not all(results), "the fast engine was expected to let an invalid call through"


@pytest.mark.parametrize(("tool", "question"), CASES, ids=[t.name for t, _ in CASES])
def test_auto_enforces_with_llguidance(auto: Any, tool: ToolSpec, question: str) -> None:
    resp = _call(auto, tool, question)
    assert _engine(auto) == "llguidance"
    assert resp.stop_reason == "tool_use"
    assert _valid(resp, tool), resp.tool_uses


def test_auto_keeps_the_fast_engine_for_plain_schemas(auto: Any) -> None:
    resp = _call(auto, WEATHER, "What's the weather in Paris?")
    assert _engine(auto) == "fast"
    assert _valid(resp, WEATHER) and "Paris" in resp.tool_uses[0].input["city"]


def test_forced_llguidance_engine_on_plain_schemas_and_text() -> None:
    pytest.importorskip("llguidance")
    backend = _backend("llguidance")
    resp = _call(backend, WEATHER, "What's the weather in Paris?")
    assert _engine(backend) == "llguidance"
    assert _valid(resp, WEATHER) and "Paris" in resp.tool_uses[0].input["city"]
    # tool_choice none: free text under the grammar (no call can start)
    text = backend.complete(Request(messages=[Message(role="user", content="Say hello.")],
                                    tools=[WEATHER], tool_choice=ToolChoice(type="none"),
                                    max_tokens=20))
    assert not text.tool_uses and text.text().strip() and "<" not in text.text()


def test_without_llguidance_auto_is_the_fast_engine(monkeypatch: pytest.MonkeyPatch,
                                                    fast: Any) -> None:
    from tooluse.errors import BackendError

    monkeypatch.setitem(sys.modules, "llguidance", None)  # import llguidance: ImportError
    backend = _backend("auto")
    tool, question = CASES[0]
    resp = _call(backend, tool, question)
    assert _engine(backend) == "fast"
    same = _call(fast, tool, question)
    assert [c.input for c in resp.tool_uses] == [c.input for c in same.tool_uses]
    with pytest.raises(BackendError, match="llguidance"):
        from tooluse.backends.local import LocalBackend

        LocalBackend(n_threads=1, grammar_engine="llguidance", prompt_cache=False)


@pytest.mark.parametrize(("schema", "good", "bad"), [
    ({"type": "string", "pattern": r"^[A-Z]{2}-\d{4}$"}, "AB-1234", "ab-12"),
    ({"type": "string", "format": "date"}, "2024-05-01", "yesterday"),
    ({"type": "integer", "minimum": 1, "maximum": 10}, 5, 50),
    ({"type": "array", "items": {"type": "string", "format": "uuid"}},
     ["123e4567-e89b-12d3-a456-426614174000"], ["1234"]),
    ({"allOf": [{"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
                {"type": "object", "properties": {"b": {"type": "string"}},
                 "required": ["b"]}]}, {"a": 1, "b": "x"}, {"a": 1}),
])
def test_lark_grammar_rejects_what_ours_accepts(auto: Any, schema: dict[str, Any], good: Any,
                                                bad: Any) -> None:
    """The same call text against both renderings of one grammar: ours accepts the invalid
    value (validation catches it later), llguidance's rejects it and accepts the valid one."""
    import llguidance

    from tooluse.codecs.legacy import encode_response
    from tooluse.llama import llguidance as engine_llg
    from tooluse.grammar.tool_calls import tool_call_grammar

    spec = ToolSpec(name="f", description="", input_schema={
        "type": "object", "properties": {"x": schema}, "required": ["x"]})
    grammar = tool_call_grammar([spec], ToolChoice(type="any"))
    assert grammar.native
    loaded = auto.text_model.loaded

    def text(value: Any) -> str:
        out = encode_response(Response(content=[ToolUseBlock(id="toolu_1", name="f",
                                                             input={"x": value})],
                                       stop_reason="tool_use"))
        return out[out.index(grammar.prefill) + len(grammar.prefill):]

    def llg_accepts(value: Any) -> bool:
        m = llguidance.LLMatcher(engine_llg.tokenizer(loaded),
                                 llguidance.grammar_from("lark", grammar.lark), log_level=0)
        assert not m.is_error(), m.get_error()
        tokens = auto.text_model.tokenize(text(value))
        return m.try_consume_tokens(tokens) == len(tokens) and m.is_accepting()

    assert grammar.matcher.matches(text(good).encode())
    assert grammar.matcher.matches(text(bad).encode())  # ours: left to validation
    assert llg_accepts(good)
    assert not llg_accepts(bad)


def test_structured_output_with_a_pattern_validates(auto: Any) -> None:
    """A response schema (structured output) with ``pattern``/bounds: the JSON answer is
    decoded by llguidance and matches the schema."""
    import json

    schema = {"type": "object", "required": ["code", "count"], "properties": {
        "code": {"type": "string", "pattern": "^[A-Z]{3}$"},
        "count": {"type": "integer", "minimum": 2, "maximum": 5}}}
    resp = auto.complete(Request(
        messages=[Message(role="user", content="Give the airport code of Paris and a count.")],
        response_schema=schema, max_tokens=60))
    assert _engine(auto) == "llguidance"
    jsonschema.validate(json.loads(resp.text()), schema)


def test_a_pattern_llguidance_rejects_falls_back_to_the_fast_engine(auto: Any) -> None:
    """Look-around is not in llguidance's regex dialect: the grammar does not compile there,
    and the request is decoded by the fast engine (the value then left to validation)."""
    tool = ToolSpec(name="set_password", description="Sets a password.", input_schema={
        "type": "object", "required": ["password"], "properties": {"password": {
            "type": "string", "pattern": "^(?=.*[0-9])[a-z0-9]{8,}$"}}})
    for _ in range(2):  # the second time from the remembered failure
        resp = _call(auto, tool, "Set my password to hunter22.")
        assert _engine(auto) == "fast"
        assert resp.stop_reason == "tool_use" and resp.tool_uses


def test_tokenizer_from_pieces_matches_llguidance_bridge(auto: Any) -> None:
    """Our faster construction gives llguidance the tokens its own llama.cpp bridge does."""
    import warnings

    from llguidance.llamacpp import lltokenizer_from_vocab

    from tooluse.llama import llguidance as engine_llg

    loaded = auto.text_model.loaded
    ours = engine_llg.tokenizer(loaded)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        bridge = lltokenizer_from_vocab(loaded.llm._model.vocab)
    assert ours.vocab_size == bridge.vocab_size == loaded.llm.n_vocab()
    for token in range(ours.vocab_size):
        assert ours.decode_bytes([token]) == bridge.decode_bytes([token]), token
        assert ours.is_special_token(token) == bridge.is_special_token(token), token
    assert set(ours.eos_tokens) == set(loaded.eog_tokens())
