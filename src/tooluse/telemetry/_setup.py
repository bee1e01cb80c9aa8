"""Whether tooluse makes OpenTelemetry spans, and with which tracer: the on/off switch.

tooluse makes spans in three cases, and in no other:

- :func:`use_tracer_provider` gave it a provider (tests; an application that keeps its
  tracing off the global provider);
- the application, or ``opentelemetry-instrument``, set a global SDK tracer provider;
- the standard environment asks for export (``OTEL_TRACES_EXPORTER`` other than ``none``,
  ``OTEL_EXPORTER_OTLP_ENDPOINT`` or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``) and
  ``opentelemetry-sdk`` is installed: the first span (or ``tooluse serve`` at startup, through
  :func:`configure_from_env`) sets a global provider built from those variables
  (:mod:`._sdk`).

``OTEL_SDK_DISABLED=true`` turns all of it off. When off, :func:`tracer` costs a few
attribute and dict look-ups and imports nothing: ``opentelemetry.trace`` is only looked at
when something else has already imported it (its own import takes tens of milliseconds).
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from typing import TYPE_CHECKING, Any

from ..errors import ToolUseError

if TYPE_CHECKING:
    from opentelemetry.trace import Tracer, TracerProvider

__all__ = [
    "SdkMissing",
    "configure_from_env",
    "env_requests_export",
    "reset",
    "tracer",
    "use_tracer_provider",
]

log = logging.getLogger("tooluse.telemetry")

#: The instrumentation scope of every span tooluse makes.
SCOPE = "tooluse"

_TRUE = ("true", "1", "yes", "on")


class SdkMissing(ToolUseError, ValueError):
    """The ``OTEL_*`` variables ask for traces, but OpenTelemetry's SDK is not installed."""


class _State:
    def __init__(self) -> None:
        self.tracer: Tracer | None = None
        self.explicit = False
        self.env_done = False
        self.lock = threading.Lock()


_state = _State()


def env_requests_export(environ: Any = None) -> bool:
    """Whether the standard ``OTEL_*`` variables ask for spans to be exported."""
    env = os.environ if environ is None else environ
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() in _TRUE:
        return False
    exporters = env.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    if exporters:
        return exporters != "none"
    return bool(env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or
                env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))


def configure_from_env() -> bool:
    """Set the global tracer provider from the ``OTEL_*`` variables when they ask for export
    and no provider is set yet. True when tooluse's spans are now exported somewhere.

    Raises :class:`ValueError` with a one-line reason when the variables ask for export but
    cannot be followed: :class:`SdkMissing` when ``opentelemetry-sdk`` is not installed
    (``tooluse serve`` says so and serves without spans: variables set for other programs
    must not stop it), another for a configuration the SDK cannot follow (an unknown
    exporter or protocol: ``tooluse serve`` stops there). A library user's first span only
    logs the reason once and goes on without spans.
    """
    with _state.lock:
        _state.env_done = True
        if not env_requests_export():
            return _global_tracer() is not None
        try:
            from ._sdk import configure
        except ImportError as exc:
            raise SdkMissing(
                "OTEL_* variables ask for traces but OpenTelemetry's SDK is not installed "
                f"({exc.name or exc}): pip install 'tooluse[otel]'") from None
        configure()
    return _global_tracer() is not None


def tracer() -> Tracer | None:
    """The tracer for tooluse's spans, or None when telemetry is off (the usual case)."""
    found = _state.tracer
    if found is not None:
        return found
    if not _state.env_done:
        try:
            configure_from_env()
        except ValueError as exc:
            log.warning("OpenTelemetry stays off: %s", exc)
    return _global_tracer()


def _global_tracer() -> Tracer | None:
    trace = sys.modules.get("opentelemetry.trace")
    if trace is None:  # nobody imported the API: no provider can have been set
        return None
    provider = trace.get_tracer_provider()
    if isinstance(provider, (trace.ProxyTracerProvider, trace.NoOpTracerProvider)):
        return None
    found: Tracer = provider.get_tracer(SCOPE, _version())
    _state.tracer = found
    return found


def use_tracer_provider(provider: TracerProvider | None) -> None:
    """Make tooluse's spans with ``provider`` instead of the global one (None: back to the
    global provider and the environment)."""
    if provider is None:
        reset()
        return
    _state.tracer = provider.get_tracer(SCOPE, _version())
    _state.explicit = True


def reset() -> None:
    """Forget the tracer and the environment's answer (tests change both)."""
    _state.tracer = None
    _state.explicit = False
    _state.env_done = False


def _version() -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("tooluse")
    except PackageNotFoundError:
        return None
