"""What the conformance tests share: the scripted model whose answers they validate, a
backend whose stream fails after it started, and the reading of a named SSE answer."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx2

from tooluse.backend import Backend
from tooluse.backends.scripted import ScriptedBackend
from tooluse.errors import BackendError, BackendErrorKind
from tooluse.messages import (
    RedactedThinkingBlock,
    Request,
    Response,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    Usage,
)
from tooluse.stream import BlockStart, MessageStart, StreamEvent, TextDelta


def model(request: Request) -> Response:
    """The scripted model, by a word of the last user text: ``parallel`` (two calls),
    ``weather`` (text and a call), ``sql`` (a custom tool's call), ``file`` (a namespace
    member's call), ``think`` (signed, summary-only and redacted thinking, then text), ``long``
    (cut at max_tokens), ``stop`` (a stop sequence), ``json``; else two text blocks. Tool
    results are answered with text. Usage holds cache reads and writes."""
    said = request.messages[-1].text()
    usage = Usage(input_tokens=12, output_tokens=5, cache_read_input_tokens=30,
                  cache_creation_input_tokens=4)
    content: list[Any]
    stop, sequence = "tool_use", None
    if request.messages[-1].tool_results:
        content, stop = [TextBlock(text="It is 18 C.")], "end_turn"
    elif "parallel" in said:
        content = [ToolUseBlock(id="call_a", name="get_weather", input={"city": "Paris"}),
                   ToolUseBlock(id="call_b", name="get_time", input={"tz": "CET"})]
    elif "weather" in said:
        content = [TextBlock(text="Looking."),
                   ToolUseBlock(id="call_w", name="get_weather", input={"city": "Paris"})]
    elif "sql" in said:
        content = [ToolUseBlock(id="call_s", name="run_sql", input={"input": "SELECT 1"})]
    elif "file" in said:
        content = [ToolUseBlock(id="call_f", name="fs__read", input={"path": "/etc/hosts"})]
    elif "think" in said:
        content = [ThinkingBlock(text="Paris is in France.", summary=["**Weather**", "Checking"],
                                 signature="EqQBCkgIARAB=="),
                   ThinkingBlock(text="", summary=["Only a summary"]),
                   RedactedThinkingBlock(data="b3BhcXVl"),
                   TextBlock(text="Mild.")]
        stop = "end_turn"
    elif "long" in said:
        content, stop = [TextBlock(text="This answer was cut")], "max_tokens"
    elif "stop" in said:
        content, stop, sequence = [TextBlock(text="One, two")], "stop_sequence", "three"
    elif "json" in said:
        content, stop = [TextBlock(text='{"city": "Paris"}')], "end_turn"
    else:
        content, stop = [TextBlock(text="Hello."), TextBlock(text="Second block.")], "end_turn"
    return Response(content=content, stop_reason=stop, stop_sequence=sequence,  # type: ignore[arg-type]
                    usage=usage)


class StructuredScript(ScriptedBackend):
    """:func:`model` on a backend that can guarantee structured output."""

    structured_output = True

    def __init__(self) -> None:
        super().__init__(model, chunk_size=4)


class DiesMidway(Backend):
    """A backend whose stream writes some text, then fails with an error of ``kind``."""

    name = "dies"

    def __init__(self, kind: BackendErrorKind = "overloaded") -> None:
        self.kind: BackendErrorKind = kind

    def stream(self, request: Request) -> Iterator[StreamEvent]:
        yield MessageStart(id="x", model="m")
        yield BlockStart(index=0, block=TextBlock(text=""))
        yield TextDelta(index=0, text="partial")
        raise BackendError("backend fell over", kind=self.kind)


def sse_events(response: httpx2.Response) -> list[dict[str, Any]]:
    """The ``data:`` payloads of a named SSE answer (Messages, Responses), each checked to
    carry its ``event:`` name as its ``type``; comments (keep-alives) are skipped."""
    assert response.status_code == 200, response.text
    out = []
    for frame in response.text.split("\n\n"):
        lines = [ln for ln in frame.splitlines() if not ln.startswith(":")]
        if not lines:
            continue
        name = next(ln[7:] for ln in lines if ln.startswith("event: "))
        data = json.loads("".join(ln[6:] for ln in lines if ln.startswith("data: ")))
        assert data["type"] == name
        out.append(data)
    return out
