"""tooluse's three kinds of span, by the OpenTelemetry GenAI semantic conventions.

- :class:`ChatSpan`, ``chat {model}``: one model call (a gateway request, or one turn of a
  run); CLIENT, or INTERNAL for a model in this process. The calls the model asks for are
  its events, ``tooluse.tool_call`` (the gateway does not run them).
- :class:`AgentSpan`, ``invoke_agent``: one run of the runner's tool loop, parent of its
  chat spans and of
- :class:`ToolSpan`, ``execute_tool {tool}``: one tool call the runner executes.

Each is made only when :func:`~tooluse.telemetry.tracer` gives a tracer; otherwise the
callers get :data:`OFF`, whose every method does nothing (``watch`` hands the stream back
untouched), so instrumented code reads the same either way and costs nothing when off.

A span is *current* (``with span:``) only in plain code — never across a generator's
``yield``, where a context token could be detached in another context; streams and the
runner's loop pass their parent explicitly (``.context``). A span ends once: the first of
``record``/``end``/``fail`` or leaving its ``with`` ends it, the rest are no-ops (a tool that
timed out is ended by the runner; its thread, finishing later, changes nothing).
"""

from __future__ import annotations

import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, Self

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from ..messages import Request, Response, ToolResultBlock, ToolSpec, ToolUseBlock, Usage
from ..stream import Accumulator, StreamEvent
from .genai import (
    IN_PROCESS,
    call_attributes,
    capture_content,
    error_type,
    finish_reason,
    provider_name,
    request_attributes,
    response_attributes,
    result_text,
    span_name,
    tool_definitions,
    usage_attributes,
)

if TYPE_CHECKING:
    from opentelemetry.context import Context
    from opentelemetry.trace import Span, Tracer

__all__ = ["AgentSpan", "ChatSpan", "SpanEvent", "ToolSpan", "extract_parent"]

#: How much of an error's message goes into a span's status description.
_DESCRIPTION_CHARS = 300


def extract_parent(headers: Mapping[str, str]) -> Context:
    """The caller's trace context from its request headers (W3C ``traceparent`` by default;
    the propagators ``OTEL_PROPAGATORS`` names)."""
    from opentelemetry import propagate

    return propagate.extract(headers)


class _Span:
    def __init__(self, span: Span, content: bool) -> None:
        self.span = span
        self.content = content
        self.context: Context = trace.set_span_in_context(span)
        self._token: object | None = None
        self._ended = False
        self._lock = threading.Lock()

    def __enter__(self) -> Self:
        self._token = otel_context.attach(self.context)
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: object) -> None:
        if self._token is not None:
            otel_context.detach(self._token)  # type: ignore[arg-type]
            self._token = None
        if exc is not None:
            self.fail(exc)
        else:
            self._end({})

    def fail(self, exc: BaseException) -> None:
        """End the span as failed with ``exc`` (``error.type`` and an ERROR status)."""
        self._end({}, error_type(exc), str(exc) or type(exc).__name__)

    def _end(self, attributes: dict[str, Any], error: str | None = None,
             description: str | None = None) -> None:
        with self._lock:
            if self._ended:
                return
            self._ended = True
        self._before_end()
        if attributes:
            self.span.set_attributes(attributes)
        if error is not None:
            self.span.set_attribute("error.type", error)
            self.span.set_status(Status(StatusCode.ERROR, (description or "")[
                :_DESCRIPTION_CHARS]))
        self.span.end()

    def _before_end(self) -> None:
        """What a kind of span adds as it ends."""


class SpanEvent(Protocol):
    """Something that happened during a span, added to it as an event when it ends (the
    gateway's tries of a routed request: :class:`tooluse.backends.failover.Attempt`)."""

    def event_name(self) -> str: ...

    def attributes(self) -> Mapping[str, Any]: ...


class ChatSpan(_Span):
    """``chat {model}``: one model call."""

    def __init__(self, tracer: Tracer, request: Request, backend_name: str,
                 model: str | None, *, api: str | None = None, stream: bool = False,
                 parent: Context | None = None, response_id: str | None = None,
                 events: Sequence[SpanEvent] = ()) -> None:
        content = capture_content()
        attributes = request_attributes(request, provider_name(backend_name), model,
                                        stream=stream, content=content)
        if api:
            attributes["tooluse.api"] = api
        kind = SpanKind.INTERNAL if backend_name in IN_PROCESS else SpanKind.CLIENT
        super().__init__(tracer.start_span(span_name("chat", model), context=parent,
                                           kind=kind, attributes=attributes), content)
        self._started = time.monotonic()
        self._acc: Accumulator | None = None
        self._response_id = response_id
        self._events = events

    def _before_end(self) -> None:
        for event in self._events:  # filled while the call ran: read as it ends
            self.span.add_event(event.event_name(), dict(event.attributes()))

    def record(self, response: Response) -> None:
        """End the span with the model's answer: usage, finish reason, ids, the calls."""
        if self._ended:
            return
        if self._response_id:
            response = response.model_copy(update={"id": self._response_id})
        for call in response.tool_uses:
            self.span.add_event("tooluse.tool_call", call_attributes(call, content=self.content))
        self._end(response_attributes(response, content=self.content))

    # -- streams: the span follows the events and ends with them ---------------------------
    def watch(self, events: Iterator[StreamEvent]) -> Iterator[StreamEvent]:
        """``events`` unchanged; the span records them and ends when they do."""
        try:
            for event in events:
                self._see(event)
                yield event
        except BaseException as exc:
            self.fail(exc)
            raise
        self._close()

    async def awatch(self, events: AsyncIterator[StreamEvent]) -> AsyncIterator[StreamEvent]:
        """:meth:`watch` for an async stream."""
        try:
            async for event in events:
                self._see(event)
                yield event
        except BaseException as exc:
            self.fail(exc)
            raise
        self._close()

    def _see(self, event: StreamEvent) -> None:
        if self._acc is None:
            self._acc = Accumulator()
            self.span.set_attribute("gen_ai.response.time_to_first_chunk",
                                    time.monotonic() - self._started)
        self._acc.add(event)

    def _close(self) -> None:
        self.record(self._acc.response if self._acc is not None else Response())


class ToolSpan(_Span):
    """``execute_tool {tool}``: one call the runner executes."""

    def __init__(self, tracer: Tracer, call: ToolUseBlock, description: str,
                 parent: Context | None) -> None:
        content = capture_content()
        attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.type": "function",
                      **call_attributes(call, content=content)}
        if description:
            attributes["gen_ai.tool.description"] = description
        super().__init__(tracer.start_span(span_name("execute_tool", call.name),
                                           context=parent, kind=SpanKind.INTERNAL,
                                           attributes=attributes), content)

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: object) -> None:
        if self._token is not None:  # leaving the block does not end it: end() does
            otel_context.detach(self._token)  # type: ignore[arg-type]
            self._token = None
        if exc is not None:
            self.fail(exc)

    def end(self, result: ToolResultBlock, exc: BaseException | None = None, *,
            timeout: bool = False) -> None:
        """End with the call's result; ``exc`` the tool raised, or ``timeout``."""
        error = ("timeout" if timeout else error_type(exc) if exc is not None
                 else "tool_error" if result.is_error else None)
        attributes: dict[str, Any] = {}
        if self.content and error is None:
            attributes["gen_ai.tool.call.result"] = result_text(result)
        self._end(attributes, error, result.text() if error is not None else None)


class AgentSpan(_Span):
    """``invoke_agent``: one run of the tool loop; its chat and tool spans are children."""

    def __init__(self, tracer: Tracer, backend_name: str, model: str | None,
                 tools: Callable[[], Sequence[ToolSpec]]) -> None:
        content = capture_content()
        provider = provider_name(backend_name)
        attributes: dict[str, Any] = {"gen_ai.operation.name": "invoke_agent",
                                      "gen_ai.provider.name": provider,
                                      "gen_ai.system": provider}
        if model:
            attributes["gen_ai.request.model"] = model
        specs = tools() if content else ()
        if specs:
            attributes["gen_ai.tool.definitions"] = tool_definitions(specs)
        super().__init__(tracer.start_span("invoke_agent", kind=SpanKind.INTERNAL,
                                           attributes=attributes), content)
        self._tracer = tracer
        self._backend = backend_name
        self._model = model

    def __enter__(self) -> Self:
        """Not made current (a runner's stream holds it across ``yield``): its children get
        it as their parent; leaving the block with an error ends it as failed."""
        return self

    def chat(self, request: Request, *, stream: bool = False) -> ChatSpan:
        """The span of one model call of this run."""
        return ChatSpan(self._tracer, request, self._backend, request.model or self._model,
                        stream=stream, parent=self.context)

    def tool(self, call: ToolUseBlock, description: str = "") -> ToolSpan:
        """The span of one tool call of this run."""
        return ToolSpan(self._tracer, call, description, self.context)

    def record(self, response: Response, usage: Usage, iterations: int) -> None:
        """End with the run's outcome: its last answer and the tokens of all its turns."""
        attributes: dict[str, Any] = {**usage_attributes(usage), "tooluse.run.iterations": iterations}
        if response.model:
            attributes["gen_ai.response.model"] = response.model
        reason = finish_reason(response.stop_reason)
        if reason is not None:
            attributes["gen_ai.response.finish_reasons"] = [reason]
        self._end(attributes)
