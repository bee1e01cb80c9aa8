"""The per-request trace (tooluse.trace.record) and its stored form (serialize): what the
prompt-based backend writes into the current turn, redaction, and the calls' origin,
validation and span in the raw text."""

from __future__ import annotations

import threading

from trace_fakes import WEATHER, city_backend

from tooluse.messages import CallOrigin, Message, Request, Response, ToolUseBlock
from tooluse.trace import REDACTED, Trace, current_trace, current_turn, redact_headers, tracing
from tooluse.trace.serialize import cut, trace_dict


def _request(question: str, choice: str = "any") -> Request:
    return Request(messages=[Message(role="user", content=question)], tools=[WEATHER],
                   tool_choice={"type": choice}, max_tokens=200)


def _traced(backend: object, request: Request) -> Trace:
    trace = Trace(source="runner", api="test")
    with tracing(trace):
        turn = trace.begin_turn(request)
        turn.finish(backend.complete(request))  # type: ignore[attr-defined]
    return trace


def test_secret_headers_are_redacted_and_the_rest_kept() -> None:
    headers = redact_headers([("Authorization", "Bearer sk-1"), ("X-Api-Key", "sk-2"),
                              ("Cookie", "a=b"), ("User-Agent", "curl/8"), ("x-amz-security-token", "t"),
                              ("Accept", "a"), ("accept", "b")])
    assert headers == {"authorization": REDACTED, "x-api-key": REDACTED, "cookie": REDACTED,
                       "user-agent": "curl/8", "x-amz-security-token": REDACTED,
                       "accept": "a, b"}


def test_tracing_sets_the_current_trace_only_inside_and_per_thread_context() -> None:
    assert current_trace() is None and current_turn() is None
    trace = Trace(source="runner", api="test")
    seen: list[object] = []
    with tracing(trace):
        assert current_trace() is trace
        assert current_turn() is None
        turn = trace.begin_turn(_request("Paris?"))
        assert current_turn() is turn
        # A plain new thread does not inherit the context: nothing leaks into other work.
        worker = threading.Thread(target=lambda: seen.append(current_trace()))
        worker.start()
        worker.join()
    assert current_trace() is None
    assert seen == [None]


def test_prompt_backend_writes_prompt_prefill_raw_text_and_counts_into_the_turn() -> None:
    trace = _traced(city_backend(), _request("What is the weather in Lyon?"))
    turn = trace.turns[0]
    assert turn.prompt is not None
    assert turn.prompt[-1] == {"role": "user", "content": "What is the weather in Lyon?"}
    assert "<tool_name>get_weather</tool_name>" in turn.prompt[0]["content"]
    [text_pass] = turn.passes
    # Under tool_choice any the assistant turn is prefilled with the opening of a call.
    assert text_pass.prefill.startswith("<function_calls>\n<invoke>")
    assert "<city>Lyon</city>" in text_pass.text
    assert (text_pass.input_tokens, text_pass.cached_tokens) == (40, 12)
    assert text_pass.counts["forced_tokens"] == 3.0
    assert text_pass.reason == "stop" and text_pass.stop_sequence == "</function_calls>"
    assert turn.diagnostics["forced_tokens"] == 3.0


def test_stored_form_marks_each_call_span_in_the_raw_text_and_the_prefill() -> None:
    data = trace_dict(_traced(city_backend(), _request("Weather in Oslo")))
    turn = data["turns"][0]
    [call] = turn["calls"]
    assert call["input"] == {"city": "Oslo"} and call["valid"] and call["source"] == "model"
    start, end = call["span"]
    assert turn["raw"][start:end].startswith("<invoke>")
    assert turn["raw"][start:end].endswith("</invoke>")
    assert "<city>Oslo</city>" in turn["raw"][start:end]
    [[p_start, p_end]] = turn["prefill_spans"]
    assert turn["raw"][p_start:p_end] == turn["passes"][0]["prefill"]
    assert turn["spans"] == [{"start": start, "end": end, "name": "get_weather",
                              "call": call["id"]}]
    assert data["summary"] == {"model": "city-text", "tools": ["get_weather"], "calls": 1,
                               "status": "ok", "input_tokens": 40,
                               "output_tokens": turn["response"]["usage"]["output_tokens"]}


def test_calls_are_validated_against_the_request_schema_with_their_origin() -> None:
    request = _request("Weather in Rome")
    trace = Trace(source="runner", api="test")
    turn = trace.begin_turn(request)
    turn.finish(Response(content=[
        ToolUseBlock(id="a", name="get_weather", input={"city": "Rome", "days": "two"}),
        ToolUseBlock(id="b", name="get_weather", input={"city": "Rome", "days": 2},
                     origin=CallOrigin(source="added", rule="fan_out")),
        ToolUseBlock(id="c", name="get_time", input={}),
    ], stop_reason="tool_use"))
    calls = {c["id"]: c for c in trace_dict(trace)["turns"][0]["calls"]}
    assert not calls["a"]["valid"] and "days" in calls["a"]["problems"][0]
    assert calls["b"]["valid"] and calls["b"]["source"] == "added"
    assert calls["b"]["origin_text"] == "added (fan_out)" and calls["b"]["span"] is None
    assert calls["c"]["problems"] == ["the request has no tool named 'get_time'"]


def test_a_call_block_that_became_no_call_is_a_span_without_call() -> None:
    trace = Trace(source="runner", api="test")
    turn = trace.begin_turn(_request("Weather in Rome"))
    from tooluse.trace import TextPass

    turn.add_pass(TextPass(prefill="", text="<invoke>\n<tool_name>get_weather</tool_name>\n"
                           "<parameters>\n<city>Rome</city>\n</parameters>\n</invoke>\n"))
    turn.finish(Response(content=[], stop_reason="end_turn"))
    data = trace_dict(trace)["turns"][0]
    assert [s["call"] for s in data["spans"]] == [None]
    assert data["calls"] == []


def test_long_texts_are_cut_visibly_never_silently() -> None:
    assert cut("abc", 5) == "abc"
    assert cut("x" * 12, 5) == "xxxxx...[cut: 7 more characters]"
    trace = Trace(source="gateway", api="messages")
    trace.received("POST", "/v1/messages", [], b'{"a": "' + b"y" * 50 + b'"}')
    trace.sent(200, b"z" * 40)
    data = trace_dict(trace, max_text=20)
    assert data["request"]["body"].endswith("...[cut: 39 more characters]")
    assert data["response"] == "z" * 20 + "...[cut: 20 more characters]"
