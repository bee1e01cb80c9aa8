"""Fixtures of the OpenTelemetry tests: an SDK tracer provider whose spans land in memory
(the SDK's InMemorySpanExporter), given to tooluse with ``use_tracer_provider``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest.importorskip("opentelemetry.sdk", reason="the [otel] extra: pip install 'tooluse[otel]'")

from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (  # noqa: E402
    InMemorySpanExporter,
)

from otel_spans import Spans  # noqa: E402

from tooluse import telemetry  # noqa: E402


@pytest.fixture()
def spans(monkeypatch: pytest.MonkeyPatch) -> Iterator[Spans]:
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
