"""Fixtures of the OpenTelemetry tests: an SDK tracer provider whose spans land in memory
(the SDK's InMemorySpanExporter), given to tooluse with ``use_tracer_provider``. Each test
module skips, saying so, where the ``[otel]`` extra is not installed."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from tooluse import telemetry

if TYPE_CHECKING:
    from otel_spans import Spans


@pytest.fixture()
def spans(monkeypatch: pytest.MonkeyPatch) -> Iterator[Spans]:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from otel_spans import Spans

    monkeypatch.delenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", raising=False)
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    telemetry.use_tracer_provider(provider)
    try:
        yield Spans(exporter)
    finally:
        telemetry.use_tracer_provider(None)
        provider.shutdown()
