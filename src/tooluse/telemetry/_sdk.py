"""A global tracer provider built from the standard ``OTEL_*`` variables (imports the SDK).

Only what the OpenTelemetry specification's environment configuration names, and read by
the SDK itself wherever it can be:

- ``OTEL_TRACES_EXPORTER``: a comma-separated list of exporters (default ``otlp``; ``none``
  for none), each found under the SDK's ``opentelemetry_traces_exporter`` entry points
  (``console``; ``otlp`` is ``otlp_proto_http`` unless ``OTEL_EXPORTER_OTLP_TRACES_PROTOCOL``
  or ``OTEL_EXPORTER_OTLP_PROTOCOL`` says ``grpc``, which needs
  ``opentelemetry-exporter-otlp-proto-grpc``);
- the OTLP exporter reads ``OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT``, ``_HEADERS``,
  ``_TIMEOUT``, ``_COMPRESSION`` and the certificate variables itself;
- the resource reads ``OTEL_SERVICE_NAME`` and ``OTEL_RESOURCE_ATTRIBUTES`` (``service.name``
  is ``tooluse`` when neither names one), the provider ``OTEL_TRACES_SAMPLER[_ARG]``, the
  batch processor ``OTEL_BSP_*``.

A provider already set (by the application or ``opentelemetry-instrument``) is left alone.
The SDK flushes the batch processor when the process exits.
"""

from __future__ import annotations

import os
from importlib.metadata import entry_points

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter

__all__ = ["configure", "exporter_names"]

_PROTOCOLS = {"http/protobuf": "otlp_proto_http", "grpc": "otlp_proto_grpc"}


def exporter_names() -> list[str]:
    """The entry-point names of the exporters ``OTEL_TRACES_EXPORTER`` asks for."""
    raw = os.environ.get("OTEL_TRACES_EXPORTER", "").strip() or "otlp"
    names = []
    for name in (n.strip() for n in raw.split(",")):
        if not name or name == "none":
            continue
        if name == "otlp":
            protocol = (os.environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
                        or os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL")
                        or "http/protobuf").strip()
            if protocol not in _PROTOCOLS:
                raise ValueError(f"OTEL_EXPORTER_OTLP_PROTOCOL={protocol!r} is not one of "
                                 f"{', '.join(sorted(_PROTOCOLS))}")
            name = _PROTOCOLS[protocol]
        names.append(name)
    return names


def _exporter(name: str) -> SpanExporter:
    found = entry_points(group="opentelemetry_traces_exporter", name=name)
    if not found:
        raise ValueError(f"OTEL_TRACES_EXPORTER names {name!r}, which no installed package "
                         "provides (installed: " + ", ".join(sorted(
                             e.name for e in entry_points(group="opentelemetry_traces_exporter")))
                         + ")")
    cls = next(iter(found)).load()
    exporter: SpanExporter = cls()
    return exporter


def _resource() -> Resource:
    named = os.environ.get("OTEL_SERVICE_NAME") or "service.name=" in os.environ.get(
        "OTEL_RESOURCE_ATTRIBUTES", "")
    return Resource.create({} if named else {"service.name": "tooluse"})


def configure() -> None:
    """Set the global tracer provider from the environment, unless one is set already."""
    if not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        return
    exporters = [_exporter(name) for name in exporter_names()]
    provider = TracerProvider(resource=_resource())
    for exporter in exporters:
        provider.add_span_processor(BatchSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
