"""The local backend on the real default model (SmolLM2-135M-Instruct, CPU).

Marked slow: they load the model once per session (a fixture) and generate for real.
Every call the model makes must parse and validate against its tool's schema — the
grammar's guarantee — whatever the model chooses.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tooluse.messages import Message, Request, Response, ToolChoice, ToolSpec

pytestmark = pytest.mark.slow

WEATHER = ToolSpec(
    name="get_weather",
    description="Gets the current weather in a city. Returns the temperature and the sky. "
    "Use it whenever the user asks about the weather somewhere.",
    input_schema={
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "The city, e.g. Paris."},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"],
                     "description": "Temperature unit."},
        },
        "required": ["city"],
    },
)
TIME = ToolSpec(
    name="get_time",
    description="Gets the current local time in a city.",
    input_schema={"type": "object", "properties": {"city": {"type": "string"}},
                  "required": ["city"]},
)


@pytest.fixture(scope="session")
def local() -> Any:
    pytest.importorskip("llama_cpp")
    from tooluse.backends.local import LocalBackend
    from tooluse.errors import BackendError

    try:
        return LocalBackend(n_threads=2)
    except BackendError as exc:
        pytest.skip(str(exc))


def _ask(backend: Any, question: str, tools: list[ToolSpec], choice: ToolChoice | None = None,
         **kw: Any) -> Response:
    return backend.complete(Request(messages=[Message(role="user", content=question)],
                                    tools=tools, tool_choice=choice, max_tokens=200, **kw))


def _valid(resp: Response, tools: list[ToolSpec]) -> None:
    specs = {t.name: t for t in tools}
    for call in resp.tool_uses:
        assert call.name in specs
        jsonschema.validate(call.input, specs[call.name].input_schema)
        assert call.id.startswith("toolu_")


def test_forced_call_with_any(local: Any) -> None:
    resp = _ask(local, "What's the weather like in Paris?", [WEATHER, TIME],
                ToolChoice(type="any"))
    assert resp.stop_reason == "tool_use" and resp.tool_uses
    assert not resp.text()  # prefilled: no text before the call
    _valid(resp, [WEATHER, TIME])
    assert resp.tool_uses[0].name == "get_weather"
    assert "Paris" in resp.tool_uses[0].input["city"]


def test_named_tool(local: Any) -> None:
    resp = _ask(local, "I am flying to Tokyo tomorrow.", [WEATHER, TIME],
                ToolChoice(type="tool", name="get_time"))
    assert resp.stop_reason == "tool_use"
    assert {c.name for c in resp.tool_uses} == {"get_time"}
    _valid(resp, [WEATHER, TIME])


def test_none_gives_text_and_no_call(local: Any) -> None:
    resp = local.complete(Request(
        messages=[Message(role="user", content="What's the weather like in Paris?")],
        tools=[WEATHER], tool_choice=ToolChoice(type="none"), max_tokens=60))
    assert not resp.tool_uses and resp.text().strip()
    assert "<" not in resp.text()  # the text-only grammar: no call can even begin
    assert resp.stop_reason in ("end_turn", "max_tokens")


def test_auto_answers_with_text_or_valid_calls(local: Any) -> None:
    needs_tool = _ask(local, "What's the weather like in Paris?", [WEATHER],
                      ToolChoice(type="auto"))
    _valid(needs_tool, [WEATHER])
    assert needs_tool.content
    assert (needs_tool.stop_reason == "tool_use") == bool(needs_tool.tool_uses)
    chat = _ask(local, "Say hello to me.", [WEATHER], ToolChoice(type="auto"))
    _valid(chat, [WEATHER])
    assert chat.content and (chat.stop_reason == "tool_use") == bool(chat.tool_uses)


def test_two_parallel_calls(local: Any) -> None:
    question = "What is the weather like in Paris? And what time is it there?"
    resp = _ask(local, question, [WEATHER, TIME], ToolChoice(type="any"))
    _valid(resp, [WEATHER, TIME])
    assert [(c.name, c.input["city"]) for c in resp.tool_uses] == [
        ("get_weather", "Paris"), ("get_time", "Paris")]
    one = _ask(local, question, [WEATHER, TIME],
               ToolChoice(type="any", disable_parallel_tool_use=True))
    assert len(one.tool_uses) == 1


def test_two_step_stock_conversation_through_the_runner(local: Any) -> None:
    from tooluse.cli.demo import DEMO_PLAN, DEMO_QUESTION, DEMO_SYSTEM, demo_tools
    from tooluse.runner import Runner

    # The seed's plan names each turn's tool; the model writes the inputs (the symbol from
    # the first result) and the answer.
    runner = Runner(local, demo_tools(), system=DEMO_SYSTEM, tool_choice=DEMO_PLAN.split(","),
                    max_tokens=256, max_iterations=5)
    result = runner.run(DEMO_QUESTION)
    called = [(c.name, c.input, r.text() if r else None) for c, r in result.tool_calls]
    assert called == [("get_ticker_symbol", {"company_name": "General Motors"}, "GM"),
                      ("get_current_stock_price", {"symbol": "GM"}, "38.50")]
    assert "38.5" in result.text and result.iterations == 3


def test_prefix_cache_is_reused_across_requests(local: Any) -> None:
    first = _ask(local, "What's the weather like in Rome?", [WEATHER], ToolChoice(type="any"))
    assert first.tool_uses
    again = _ask(local, "What's the weather like in Oslo?", [WEATHER], ToolChoice(type="any"))
    assert again.tool_uses
    end = local.last_end
    # only the end differs: the city, the end of the turn and the prefill (~25 tokens)
    assert end.cached_tokens >= end.input_tokens - 40


def test_concurrent_requests_queue_on_the_model_lock(local: Any) -> None:
    results: list[Response] = []
    errors: list[BaseException] = []

    def ask(city: str) -> None:
        try:
            results.append(_ask(local, f"What's the weather like in {city}?", [WEATHER],
                                ToolChoice(type="any")))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=ask, args=(c,)) for c in ("Madrid", "Berlin")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(results) == 2
    cities = sorted(r.tool_uses[0].input["city"] for r in results)
    assert cities == ["Berlin", "Madrid"]


def test_without_grammar_and_with_llama_grammar_engine(local: Any) -> None:
    from tooluse.backends.local import LocalBackend, from_spec

    plain = from_spec("", grammar="false", n_threads="2")
    assert plain.loaded is local.loaded  # one loaded model per file and settings
    resp = _ask(plain, "What's the weather like in Paris?", [WEATHER], ToolChoice(type="any"))
    assert resp.content  # whatever it wrote is kept (calls or text)
    reference = LocalBackend(n_threads=2, grammar_engine="llama")
    resp = _ask(reference, "What's the weather like in Paris?", [WEATHER],
                ToolChoice(type="any"))
    _valid(resp, [WEATHER])
    assert resp.tool_uses and resp.tool_uses[0].input["city"].startswith("Paris")


def test_demo_command_shows_both_calls_with_inputs() -> None:
    pytest.importorskip("llama_cpp")
    env = dict(os.environ)
    src = str(Path(__file__).resolve().parents[2] / "src")
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run([sys.executable, "-m", "tooluse.cli", "demo", "--threads", "2"],
                          capture_output=True, text=True, timeout=300, env=env, check=False)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert 'call    get_ticker_symbol(company_name="General Motors")' in out
    assert 'call    get_current_stock_price(symbol="GM")' in out
    assert "get_ticker_symbol -> GM" in out and "get_current_stock_price -> 38.50" in out
    # the symbol the model passed on is the one the lookup returned, in the next turn
    assert out.index("get_ticker_symbol -> GM") < out.index(
        'call    get_current_stock_price(symbol="GM")')
    assert "Final answer:" in out and "38.5" in out.split("Final answer:")[1]
    assert " s" in out.split("[model turn 1]")[1].splitlines()[0]  # timed


def test_auto_call_threshold_decides_between_call_and_text(local: Any) -> None:
    from tooluse.backends.local import DEFAULT_AUTO_CALL_THRESHOLD, from_spec

    # The first-token threshold decides when the scored decision (``decide``) is off.
    threshold = from_spec("", n_threads="2", decide="false")
    assert threshold.text_model.call_threshold == DEFAULT_AUTO_CALL_THRESHOLD
    # A question the tool answers: the call block gets >= 1% and is started.
    resp = _ask(threshold, "What's the weather like in Paris?", [WEATHER],
                ToolChoice(type="auto"))
    assert resp.tool_uses and resp.stop_reason == "tool_use"
    _valid(resp, [WEATHER])
    # Argmax alone: this small model answers in text.
    argmax = from_spec("", n_threads="2", auto_call_threshold="none", decide="false")
    assert argmax.text_model.call_threshold is None
    plain = _ask(argmax, "What's the weather like in Paris?", [WEATHER], ToolChoice(type="auto"))
    assert not plain.tool_uses and plain.text()


def _point_tool(name: str, description: str) -> ToolSpec:
    point = {"type": "array", "items": {"type": "integer"}}
    return ToolSpec(name=name, description=description, input_schema={
        "type": "object",
        "properties": {"pointA": {**point, "description": "Coordinates for Point A."},
                       "pointB": {**point, "description": "Coordinates for Point B."},
                       "rounding": {"type": "integer", "description": "Optional: The number "
                                    "of decimals to round off the result. Default 0"}},
        "required": ["pointA", "pointB"]})


def test_token_healing_lets_the_model_close_where_a_forced_split_made_it_go_on(
        local: Any) -> None:
    """BFCL multiple_3. When the grammar forced a lone "<" after a call, the model (which
    writes "</" as one token) all but never closed: here it adds the optional parameter
    with a made-up value (on BFCL it then also called the second tool). Holding back the
    last forced token lets it write "</parameters>" itself."""
    from tooluse.backends.local import from_spec

    tools = [_point_tool("EuclideanDistance_calculate",
                         "Calculate the Euclidean distance between two points."),
             _point_tool("angleToXAxis_calculate",
                         "Calculate the angle between two points with respect to x-axis.")]
    question = "Compute the Euclidean distance between two points A(3,4) and B(1,2)."
    assert local.text_model.heal_forced
    healed = _ask(local, question, tools, ToolChoice(type="any"), temperature=0.0)
    assert [(c.name, c.input) for c in healed.tool_uses] == [
        ("EuclideanDistance_calculate", {"pointA": [3, 4], "pointB": [1, 2]})]
    split = from_spec("", n_threads="2", optional_from_conversation="false")
    split.text_model.heal_forced = False
    unhealed = _ask(split, question, tools, ToolChoice(type="any"), temperature=0.0)
    assert "rounding" in unhealed.tool_uses[0].input
