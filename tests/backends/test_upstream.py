"""The one HTTP plumbing (backends/_upstream.py) and the stream completeness check
(stream.checked), below the gateway: retries and their bounds, the cancel signal, the
timeouts' mapping, and F4/F5 on each decoded wire format including Bedrock's."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import httpx2
import pytest

from tooluse.backends._upstream import Timeouts, Upstream, UpstreamCancelled, http_options
from tooluse.backends.anthropic import AnthropicBackend
from tooluse.backends.bedrock import BedrockBackend
from tooluse.backends.openai_prompt import OpenAIChatTextBackend
from tooluse.backends.options import RetryPolicy
from tooluse.cancel import CancelSignal, cancelling
from tooluse.errors import BackendError
from tooluse.messages import Request, Response, TextBlock, ToolUseBlock
from tooluse.stream import (
    BlockStart,
    BlockStop,
    MessageDelta,
    MessageStart,
    MessageStop,
    TextDelta,
    ToolInputDelta,
    checked,
    events_from_response,
)


def _request() -> Request:
    return Request.model_validate({"model": "m", "max_tokens": 10,
                                   "messages": [{"role": "user", "content": "hi"}]})


def _tool_events(arguments: str, stop: str) -> list[Any]:
    return [MessageStart(id="m"), BlockStart(index=0, block=ToolUseBlock(id="t", name="f")),
            ToolInputDelta(index=0, partial_json=arguments), BlockStop(index=0),
            MessageDelta(stop_reason=stop), MessageStop()]  # type: ignore[arg-type]


# -- stream.checked -------------------------------------------------------------------------

def test_checked_passes_a_complete_stream_unchanged() -> None:
    response = Response(content=[TextBlock(text="hi"), ToolUseBlock(id="t", name="f", input={"a": 1})],
                        stop_reason="tool_use")
    events = list(events_from_response(response, chunk_size=3))
    assert list(checked(events)) == events


@pytest.mark.parametrize("events, why", [
    (_tool_events('{"a": "b', "tool_use"), "not valid JSON"),  # F5
    (_tool_events('[1]', "tool_use"), "not an object"),
    (_tool_events('{"a": 1}', "tool_use")[:-1], "no terminal event"),  # F4: no MessageStop
    (_tool_events('{"a": 1}', "tool_use")[:3], "no terminal event"),  # F4: cut mid-block
    ([MessageStart(), MessageDelta(), MessageStop()], "without a stop reason"),
    ([MessageStart(), BlockStart(index=0, block=TextBlock(text="")), MessageDelta(stop_reason="end_turn"),
      MessageStop()], "never closed"),
    ([MessageStart(), TextDelta(index=3, text="x")], "never started"),
    ([MessageStart(), MessageDelta(stop_reason="end_turn"), BlockStart(index=0, block=TextBlock(text="")),
      MessageStop()], "after the stop reason"),
])
def test_checked_raises_before_an_incomplete_stream_can_look_complete(events: list[Any], why: str) -> None:
    passed: list[Any] = []
    with pytest.raises(BackendError, match=why) as info:
        passed.extend(checked(events, source="up"))
    assert info.value.kind == "api" and str(info.value).startswith("up: the upstream stream is incomplete")
    # nothing that ends an answer normally got through
    assert not any(isinstance(e, (MessageDelta, MessageStop)) for e in passed)


def test_checked_lets_max_tokens_cut_a_tool_call_honestly() -> None:
    events = _tool_events('{"a": "b', "max_tokens")
    assert list(checked(events)) == events


# -- the plumbing ---------------------------------------------------------------------------

def _error(body: Any, status: int | None) -> BackendError:
    return BackendError(f"HTTP {status}: {body}", kind="unavailable" if status == 503 else "api",
                        status=status)


def test_retry_after_ms_is_honoured_and_the_deadline_stops_retries() -> None:
    calls: list[float] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        calls.append(time.monotonic())
        return httpx2.Response(503, headers={"retry-after-ms": "150"}, json={"e": 1})

    up = Upstream("t", _error, timeout=0.5, retry=RetryPolicy(max_retries=10),
                  transport=httpx2.MockTransport(handler))
    started = time.monotonic()
    with pytest.raises(BackendError, match="total timeout of 0.5s would pass") as info:
        up.send("http://up/x", b"{}", {}, stream=False)
    assert info.value.status == 503 and info.value.retry_after == pytest.approx(0.15)
    # waits of exactly retry-after-ms, until the next one would end past the deadline (three
    # fit in 0.5 s on a quiet machine; a loaded one may fit only two)
    assert up.retry_delays in ([0.15] * 3, [0.15] * 2)
    assert len(calls) == len(up.retry_delays) + 1 and time.monotonic() - started < 0.8


def test_a_set_cancel_signal_stops_retries_and_their_waits() -> None:
    signal = CancelSignal()
    calls = 0

    def handler(request: httpx2.Request) -> httpx2.Response:
        nonlocal calls
        calls += 1
        threading.Timer(0.05, signal.set).start()  # the caller leaves during the backoff
        return httpx2.Response(503, headers={"retry-after": "5"}, json={})

    up = Upstream("t", _error, retry=RetryPolicy(max_retries=5), transport=httpx2.MockTransport(handler))
    started = time.monotonic()
    with cancelling(signal), pytest.raises(UpstreamCancelled, match="caller has gone"):
        up.send("http://up/x", b"{}", {}, stream=True)
    assert calls == 1 and time.monotonic() - started < 2  # the 5 s wait was cut short


def test_timeouts_name_the_bound_that_passed() -> None:
    def handler(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectTimeout("slow", request=request)

    up = Upstream("t", _error, timeout=9, connect_timeout=0.25, max_retries=0,
                  transport=httpx2.MockTransport(handler))
    with pytest.raises(BackendError, match="no connection from http://up/x within 0.25s") as info:
        up.send("http://up/x", b"{}", {}, stream=True)
    assert info.value.kind == "timeout"


def test_attempt_timeouts_follow_the_deadline() -> None:
    t = Timeouts(total=100, connect=10, read=30)
    stream, whole = t.attempt(20, stream=True), t.attempt(20, stream=False)
    assert (stream.connect, stream.read) == (10, 20)
    assert whole.read == 20  # a non-streamed answer: silence until it is whole, bounded by the deadline
    assert t.attempt(200, stream=True).read == 30


def test_http_options_accept_command_line_strings_and_reject_nonsense() -> None:
    options: dict[str, Any] = {"timeout": "12", "read_timeout": "3", "max_retries": "4", "other": 1}
    timeouts, policy = http_options(options)
    assert (timeouts.total, timeouts.read, timeouts.connect, policy.max_retries) == (12, 3, 10, 4)
    assert options == {"other": 1}
    with pytest.raises(ValueError, match="total timeout"):
        http_options({"timeout": 0})
    with pytest.raises(ValueError):
        AnthropicBackend("m", api_key="k", read_timeout=-1)


def test_openai_prompt_uses_the_same_plumbing() -> None:
    backend = OpenAIChatTextBackend("m", base_url="http://up/v1", timeout=7, read_timeout=2, max_retries=1)
    assert isinstance(backend.upstream, Upstream)
    assert (backend.timeout, backend.upstream.timeouts.read, backend.retry.max_retries) == (7, 2, 1)


# -- Bedrock upstream streams (boto3's event dicts) -----------------------------------------

class _FakeBedrock:
    def __init__(self, events: list[dict[str, Any]]) -> None:
        self.events = events

    def converse_stream(self, **params: Any) -> dict[str, Any]:
        return {"stream": iter(self.events)}


_TOOL = [{"messageStart": {"role": "assistant"}},
         {"contentBlockStart": {"contentBlockIndex": 0, "start": {"toolUse": {"toolUseId": "t", "name": "f"}}}},
         {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"toolUse": {"input": '{"city": "Par'}}}}]


@pytest.mark.parametrize("events, why", [
    ([*_TOOL, {"contentBlockStop": {"contentBlockIndex": 0}}, {"messageStop": {"stopReason": "tool_use"}},
      {"metadata": {"usage": {}}}], "not valid JSON"),  # F5
    (_TOOL, "no terminal event"),  # F4: cut mid-block
    ([{"messageStart": {"role": "assistant"}}, {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "hi"}}},
      {"contentBlockStop": {"contentBlockIndex": 0}}, {"metadata": {"usage": {}}}], "without a stop reason"),  # no messageStop
])
def test_bedrock_streams_cut_or_broken_are_errors(events: list[dict[str, Any]], why: str) -> None:
    backend = BedrockBackend("m", client=_FakeBedrock(events))
    with pytest.raises(BackendError, match=why) as info:
        list(backend.stream(_request()))
    assert info.value.kind == "api" and "bedrock" in str(info.value)


def test_bedrock_takes_the_same_timeout_names() -> None:
    b = BedrockBackend("m", timeout=50, connect_timeout="2", read_timeout=30, max_retries="1")  # type: ignore[arg-type]
    assert (b.read_timeout, b.connect_timeout, b.max_retries) == (30, 2, 1)
    assert BedrockBackend("m", timeout=50).read_timeout == 50


def test_serve_flags_become_backend_options() -> None:
    import argparse

    from tooluse.cli.serve import _upstream_options, register

    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    args = parser.parse_args(["serve", "--backend", "openai:http://x/v1#m", "--upstream-timeout", "30",
                              "--upstream-read-timeout", "5", "--upstream-retries", "0"])
    assert _upstream_options(args) == {"timeout": 30.0, "read_timeout": 5.0, "max_retries": 0}
    bad = parser.parse_args(["serve", "--upstream-connect-timeout", "0"])
    with pytest.raises(ValueError, match="--upstream-connect-timeout must be > 0"):
        _upstream_options(bad)
    assert json.dumps(_upstream_options(parser.parse_args(["serve"]))) == "{}"


def test_the_http_backends_refuse_a_keyword_they_do_not_take() -> None:
    """The upstream options arrive as ``**options`` (backends.options.UpstreamOptions), yet a
    misspelt one is still the TypeError of an unknown keyword, not silently dropped."""
    from tooluse.backends.anthropic import AnthropicBackend
    from tooluse.backends.openai_prompt import OpenAIChatTextBackend

    with pytest.raises(TypeError, match="unexpected keyword argument 'timout'"):
        AnthropicBackend("m", api_key="k", timout=3)  # type: ignore[call-arg]
    # the text backend has no async client
    with pytest.raises(TypeError, match="'async_transport'"):
        OpenAIChatTextBackend("m", async_transport=None)  # type: ignore[call-arg]
    assert AnthropicBackend("m", api_key="k", timeout=3, max_retries=0).timeout == 3
