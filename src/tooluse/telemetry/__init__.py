"""OpenTelemetry spans of tooluse's model calls, tool loop and tool calls (the ``[otel]``
extra), named and attributed by the OpenTelemetry GenAI semantic conventions.

Off unless switched on (see :mod:`._setup`: the standard ``OTEL_*`` variables, a global
provider the application set, or :func:`use_tracer_provider`); off, every function here
returns :data:`OFF` after a few look-ups and nothing from OpenTelemetry is imported. On:

- :func:`chat_span`: the gateway's span of one request, ``chat {model}``, a child of the
  caller's trace when its headers carry one (``traceparent``);
- :func:`agent_span`: the runner's ``invoke_agent`` span of one run, whose
  :meth:`~.spans.AgentSpan.chat` and :meth:`~.spans.AgentSpan.tool` give its children.

docs/opentelemetry.md says how to switch it on and what each span holds.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Self

from ..backend import Backend
from ..messages import Request, ToolResultBlock, ToolSpec, ToolUseBlock
from ..stream import StreamEvent
from ._setup import (
    SdkMissing,
    configure_from_env,
    env_requests_export,
    reset,
    tracer,
    use_tracer_provider,
)

if TYPE_CHECKING:
    from .spans import AgentSpan, ChatSpan, SpanEvent

__all__ = [
    "OFF",
    "Off",
    "SdkMissing",
    "agent_span",
    "chat_span",
    "configure_from_env",
    "env_requests_export",
    "reset",
    "tracer",
    "use_tracer_provider",
]


class Off:
    """The span when telemetry is off: it does nothing, and a stream passes through as is."""

    context: Any = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def record(self, *args: Any) -> None:
        return None

    def end(self, result: ToolResultBlock, exc: BaseException | None = None, *,
            timeout: bool = False) -> None:
        return None

    def fail(self, exc: BaseException) -> None:
        return None

    def watch(self, events: Iterator[StreamEvent]) -> Iterator[StreamEvent]:
        return events

    def awatch(self, events: AsyncIterator[StreamEvent]) -> AsyncIterator[StreamEvent]:
        return events

    def chat(self, request: Request, *, stream: bool = False) -> Off:
        return self

    def tool(self, call: ToolUseBlock, description: str = "") -> Off:
        return self


#: The one :class:`Off` span.
OFF = Off()


def chat_span(request: Request, backend: Backend, *, api: str | None = None,
              headers: Mapping[str, str] | None = None, stream: bool = False,
              response_id: str | None = None, events: Sequence[SpanEvent] = ()
              ) -> ChatSpan | Off:
    """The span of one gateway request to ``backend`` (:data:`OFF` when telemetry is off);
    ``response_id``: the id the client gets when the API makes its own (Responses);
    ``events``: a list filled while the call runs (the gateway's tries of a routed
    request), added to the span as it ends."""
    found = tracer()
    if found is None:
        return OFF
    from .spans import ChatSpan, extract_parent

    parent = extract_parent(headers) if headers is not None else None
    return ChatSpan(found, request, backend.name, request.model or backend.model, api=api,
                    stream=stream, parent=parent, response_id=response_id, events=events)


def agent_span(backend: Backend, model: str | None,
               tools: Callable[[], Sequence[ToolSpec]]) -> AgentSpan | Off:
    """The span of one run of the tool loop (:data:`OFF` when telemetry is off); ``tools``
    is called only when the tools' definitions are recorded (opted-in content)."""
    found = tracer()
    if found is None:
        return OFF
    from .spans import AgentSpan

    return AgentSpan(found, backend.name, model or backend.model, tools)
