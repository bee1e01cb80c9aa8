"""server.policy.limit_stream_calls on a stream with thinking between the calls: the calls
past the limit go, and every other block's events (thinking and signature deltas included)
follow their block to its new index, so the answer folds as the model wrote it, less those
calls."""

from __future__ import annotations

from tooluse.messages import Response, TextBlock, ThinkingBlock, ToolUseBlock
from tooluse.server.policy import limit_stream_calls
from tooluse.stream import accumulate, checked, events_from_response


def test_thinking_after_a_dropped_call_keeps_its_deltas() -> None:
    answer = Response(id="m", stop_reason="tool_use", content=[
        ThinkingBlock(text="first, the weather", signature="sig-1"),
        ToolUseBlock(id="a", name="weather", input={"city": "Paris"}),
        ToolUseBlock(id="b", name="weather", input={"city": "Rome"}),
        ThinkingBlock(text="then the time", signature="sig-2"),
        TextBlock(text="done"),
    ])
    out = accumulate(checked(limit_stream_calls(events_from_response(answer, chunk_size=4), 1)))
    assert out.content == [answer.content[0], answer.content[1], answer.content[3],
                           answer.content[4]]
