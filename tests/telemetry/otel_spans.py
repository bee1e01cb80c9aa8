"""The spans the telemetry tests caught, by name and by parent (a helper module: the
test modules import it by name, the directory being on sys.path as pytest puts it)."""

from __future__ import annotations

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


class Spans:
    """The finished spans, by name and by parent."""

    def __init__(self, exporter: InMemorySpanExporter) -> None:
        self.exporter = exporter

    def all(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def named(self, name: str) -> list[ReadableSpan]:
        return [s for s in self.all() if s.name == name]

    def one(self, name: str) -> ReadableSpan:
        found = self.named(name)
        assert len(found) == 1, f"{len(found)} spans named {name!r}: {[s.name for s in self.all()]}"
        return found[0]

    def children(self, parent: ReadableSpan) -> list[ReadableSpan]:
        assert parent.context is not None
        return [s for s in self.all()
                if s.parent is not None and s.parent.span_id == parent.context.span_id]
