"""OpenTelemetry tracing: off unless the standard ``OTEL_*`` environment variables ask for it.

With ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``, or
``OTEL_TRACES_EXPORTER=otlp``) set, each process exports its spans over OTLP/HTTP; every other
``OTEL_*`` variable (service name, headers, sampler, batch delays) is read by the SDK itself.
One trace follows a job from the HTTP request (Litestar's OpenTelemetry plugin), through the
Celery message (``opentelemetry-instrumentation-celery`` carries the context in the task
headers) or the in-process queue, to the job and each judge's LLM call (spans of ours, with
the GenAI semantic-convention attributes that LLM-observability tools read). HTTP requests
made with httpx (the Python client) get spans of their own
(``opentelemetry-instrumentation-httpx``); the LLM calls go out on aiohttp (LiteLLM's
transport and the direct path), whose instrumentation is not installed: the ``chat`` span is
the call's innermost span.

The OpenTelemetry API is a no-op until :func:`configure_tracing` installs a provider, so the
spans in the code cost nothing when tracing is off.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from opentelemetry import trace

TRACER_NAME = "empathy-judge"
_ENDPOINT_VARS = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
_provider: object | None = None
#: a proxy until a provider is installed, then it delegates to the provider's tracer
_TRACER = trace.get_tracer(TRACER_NAME)


def tracer() -> trace.Tracer:
    return _TRACER


def tracing_requested(env: Mapping[str, str] | None = None) -> bool:
    """Whether the standard variables ask for trace export (the OTel SDK's own convention)."""
    env = os.environ if env is None else env
    if env.get("OTEL_SDK_DISABLED", "").lower() == "true":
        return False
    exporter = env.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    if exporter == "none":
        return False
    return exporter == "otlp" or any(env.get(var) for var in _ENDPOINT_VARS)


def configure_tracing(service_name: str, *, celery: bool = False) -> bool:
    """Install the SDK's tracer provider with an OTLP/HTTP exporter and the HTTP client (and,
    for processes that send or run Celery tasks, the Celery) instrumentation. Idempotent;
    returns whether tracing is on."""
    global _provider
    if not tracing_requested():
        return False
    if _provider is None:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.instrumentation.httpx import HTTPXClientInstrumentor
        from opentelemetry.sdk.resources import OTELResourceDetector, Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        resource = Resource.create({"service.name": service_name}).merge(
            OTELResourceDetector().detect()  # OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES win
        )
        provider = TracerProvider(resource=resource)
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        trace.set_tracer_provider(provider)
        HTTPXClientInstrumentor().instrument()
        _provider = provider
    if celery:
        from opentelemetry.instrumentation.celery import CeleryInstrumentor

        instrumentor = CeleryInstrumentor()  # type: ignore[no-untyped-call]
        if not instrumentor.is_instrumented_by_opentelemetry:
            instrumentor.instrument()
    return True


def shutdown_tracing() -> None:
    """Flush and stop the exporter (at process exit)."""
    global _provider
    if _provider is not None:
        _provider.shutdown()  # type: ignore[attr-defined]
        _provider = None
