"""Every Prometheus metric of the service, declared once, and the multiprocess setup.

All names start with ``judge_``. Labels are bounded: ``rubric``, ``dimension``, ``model``
(configured ids), and closed vocabularies (``status``, ``reason``, ``level``, ``outcome``,
``method``, ``route``, ``kind``); never item ids, job ids or free text. Values outside a
closed vocabulary are recorded as ``other``. Every histogram has explicit buckets.

**The import rule.** ``prometheus_client`` decides once, when it is first imported, whether
values live in process memory or in per-process files under ``PROMETHEUS_MULTIPROC_DIR``
(needed when Celery prefork children or several web workers must be summed). So:

1. Each process entry point (``judge serve``, ``judge worker``, ``judge beat``) calls
   :func:`configure_metrics` with ``settings.metrics_dir`` *before anything imports
   ``prometheus_client``* (Litestar's Prometheus plugin included). This module never imports
   it at import time: metrics are declared on first use, after configuration.
2. The process that starts a deployment unit (the uvicorn or Celery parent, before it forks)
   calls :func:`clean_multiproc_dir` once; never while other processes of that unit write.
   The directory is per container or pod (tmpfs / emptyDir), never shared between
   containers: PIDs from different PID namespaces would collide in its file names.
3. Celery's ``worker_process_shutdown`` signal calls :func:`mark_process_dead` with the
   child's pid, so ``livesum`` gauges (running jobs) forget dead children.

:func:`configure_metrics` raises ``RuntimeError`` when ``prometheus_client`` was already
imported in the other mode, or when metrics were declared under another directory, rather
than silently dropping the children's samples.

Gauge aggregation across processes: running jobs ``livesum``; queue depth ``mostrecent``
(the last writer wins, whichever process it was). Calibration, reliability and drift gauges
are not kept in memory: :mod:`judge.runtime.run_gauges` reads them from the database at
scrape time, through a collector each serving process adds with :func:`add_collector`.
"""

from __future__ import annotations

import os
import re
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from judge.domain.result import ABSTENTION_REASONS, CALL_FAILURES

if TYPE_CHECKING:
    from wsgiref.simple_server import WSGIServer

    from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

    from judge.domain.result import CallRecord, DimensionResult, ScoreResult

_ENV = "PROMETHEUS_MULTIPROC_DIR"

HTTP_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)
LLM_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0, 120.0)
JOB_BUCKETS = (0.1, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0)
UNIT_BUCKETS = tuple(round(i / 10, 1) for i in range(11))  # 0, 0.1, ..., 1

METHODS = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"})
JOB_STATUSES = frozenset({"completed", "failed", "cancelled"})
LLM_OUTCOMES = CALL_FAILURES | {"ok"}
LEVELS = frozenset({"trusted", "caution", "untrusted"})
OTHER = "other"

_GaugeMode = Literal["livesum", "mostrecent"]
_IDENT = re.compile(r"^[a-z][a-z0-9_]{0,47}$")


@dataclass(frozen=True)
class _Metrics:
    http_requests: Counter
    http_duration: Histogram
    jobs_submitted: Counter
    jobs_finished: Counter
    jobs_running: Gauge
    job_duration: Histogram
    queue_depth: Gauge
    llm_calls: Counter
    llm_duration: Histogram
    llm_tokens: Counter
    llm_cost: Counter
    llm_cache_hits: Counter
    judgments: Counter
    abstentions: Counter
    ratings: Histogram
    agreement: Histogram
    results: Counter
    reliability_reasons: Counter


_lock = threading.Lock()
_metrics: _Metrics | None = None
#: collectors of values read at scrape time (:func:`add_collector`)
_collectors: list[Any] = []
_registered: list[Any] = []  # those of them on the default registry (single-process mode)
_configured = False
_configured_dir: Path | None = None


def _declare() -> _Metrics:
    from prometheus_client import Counter, Gauge, Histogram, disable_created_metrics

    disable_created_metrics()  # type: ignore[no-untyped-call]  # multiprocess mode has none

    def gauge(name: str, doc: str, labels: tuple[str, ...], mode: _GaugeMode) -> Gauge:
        return Gauge(name, doc, labels, multiprocess_mode=mode)

    dim = ("rubric", "dimension", "model")
    return _Metrics(
        http_requests=Counter(
            "judge_http_requests_total",
            "HTTP requests by method, route template and status code",
            ("method", "route", "status"),
        ),
        http_duration=Histogram(
            "judge_http_request_duration_seconds",
            "HTTP request duration",
            ("method", "route", "status"),
            buckets=HTTP_BUCKETS,
        ),
        jobs_submitted=Counter("judge_jobs_submitted_total", "Scoring jobs submitted", ("rubric",)),
        jobs_finished=Counter(
            "judge_jobs_finished_total", "Scoring jobs finished", ("rubric", "status")
        ),
        jobs_running=gauge(
            "judge_jobs_running", "Scoring jobs running now", ("rubric",), "livesum"
        ),
        job_duration=Histogram(
            "judge_job_duration_seconds",
            "Scoring job duration, start to finish",
            ("rubric", "status"),
            buckets=JOB_BUCKETS,
        ),
        queue_depth=gauge(
            "judge_queue_depth", "Jobs queued, from a database count", (), "mostrecent"
        ),
        llm_calls=Counter(
            "judge_llm_calls_total", "LLM calls (after retries) by outcome", ("model", "outcome")
        ),
        llm_duration=Histogram(
            "judge_llm_call_duration_seconds",
            "LLM call duration including retries",
            ("model",),
            buckets=LLM_BUCKETS,
        ),
        llm_tokens=Counter("judge_llm_tokens_total", "LLM tokens", ("model", "kind")),
        llm_cost=Counter("judge_llm_cost_usd_total", "LLM cost in US dollars", ("model",)),
        llm_cache_hits=Counter(
            "judge_llm_cache_hits_total", "LLM calls served from the cache", ("model",)
        ),
        judgments=Counter(
            "judge_judgments_total",
            "Per-dimension judgments by status (ok or abstained)",
            ("rubric", "model", "status"),
        ),
        abstentions=Counter(
            "judge_abstentions_total",
            "Per-dimension abstentions by reason",
            ("rubric", "model", "reason"),
        ),
        ratings=Histogram(
            "judge_rating_normalised",
            "Judge ratings rescaled to 0..1 (ordinal: (r-min)/(max-min); binary: 0/1)",
            dim,
            buckets=UNIT_BUCKETS,
        ),
        agreement=Histogram(
            "judge_panel_agreement",
            "Panel agreement per item, 0..1 (ordinal: 1-spread/range; nominal: modal share; "
            "ranked: top-1 agreement)",
            ("rubric", "dimension"),
            buckets=UNIT_BUCKETS,
        ),
        results=Counter(
            "judge_dimension_results_total",
            "Per-dimension results by reliability level",
            ("rubric", "dimension", "level"),
        ),
        reliability_reasons=Counter(
            "judge_reliability_reasons_total",
            "Reasons attached to reliability flags",
            ("rubric", "dimension", "reason"),
        ),
    )


def _m() -> _Metrics:
    global _metrics
    if _metrics is None:
        with _lock:
            if _metrics is None:
                _metrics = _declare()
    return _metrics


# --- configuration -------------------------------------------------------------------------


def configure_metrics(multiproc_dir: Path | None) -> None:
    """Choose multiprocess (a directory) or single-process mode (``None``) for this process.

    Call before ``prometheus_client`` is imported anywhere in the process. Creates the
    directory and exports ``PROMETHEUS_MULTIPROC_DIR`` (inherited by forked and spawned
    children); with ``None`` the variable is removed. Idempotent for the same argument.

    Raises:
        RuntimeError: ``prometheus_client`` is already loaded in the other mode, or the
            metrics were already declared under a different configuration.
    """
    global _configured, _configured_dir
    wanted = Path(multiproc_dir).resolve() if multiproc_dir is not None else None
    with _lock:
        if _configured and _configured_dir == wanted:
            return
        if _metrics is not None and _multiproc_dir() != wanted:
            raise RuntimeError("judge.metrics: metrics already declared; configure them first")
        values = sys.modules.get("prometheus_client.values")
        if values is not None:
            loaded_multi = bool(getattr(values.ValueClass, "_multiprocess", False))
            if loaded_multi != (wanted is not None):
                raise RuntimeError(
                    "judge.metrics: prometheus_client was imported before configure_metrics(); "
                    "call configure_metrics() first in every process entry point"
                )
        if wanted is None:
            os.environ.pop(_ENV, None)
            os.environ.pop(_ENV.lower(), None)
        else:
            wanted.mkdir(parents=True, exist_ok=True)
            os.environ[_ENV] = str(wanted)
        _configured, _configured_dir = True, wanted


def clean_multiproc_dir(directory: Path) -> None:
    """Create ``directory`` and delete the metric files left by an earlier run.

    Call once when a deployment unit starts, before its processes write metrics: the API's
    parent before uvicorn workers start, the Celery parent before it forks.
    """
    directory.mkdir(parents=True, exist_ok=True)
    for stale in directory.glob("*.db"):
        stale.unlink(missing_ok=True)


def _multiproc_dir() -> Path | None:
    if _configured:
        return _configured_dir
    # Not configured explicitly: prometheus_client follows the environment, and so do we.
    raw = os.environ.get(_ENV) or os.environ.get(_ENV.lower())
    return Path(raw).resolve() if raw else None


def mark_process_dead(pid: int) -> None:
    """Forget a dead process's live gauges (Celery ``worker_process_shutdown``)."""
    directory = _multiproc_dir()
    if directory is None:
        return
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(pid, str(directory))  # type: ignore[no-untyped-call]


def add_collector(collector: Any) -> None:
    """Export ``collector`` (an object with ``collect()`` and ``describe()``, e.g.
    :class:`judge.runtime.run_gauges.RunGaugeCollector`) from this process's ``/metrics``.

    Does not import ``prometheus_client``. Call before :func:`serve_metrics`; a second call
    replaces the first collector."""
    with _lock:
        _collectors[:] = [collector]


def _single_process_registry() -> CollectorRegistry:
    """The default registry, holding exactly the collectors of :func:`add_collector`."""
    from prometheus_client import REGISTRY

    with _lock:
        for old in [c for c in _registered if c not in _collectors]:
            REGISTRY.unregister(old)
            _registered.remove(old)
        for new in [c for c in _collectors if c not in _registered]:
            REGISTRY.register(new)
            _registered.append(new)
    return REGISTRY


def _registry() -> CollectorRegistry:
    from prometheus_client import CollectorRegistry
    from prometheus_client.multiprocess import MultiProcessCollector

    _m()
    directory = _multiproc_dir()
    if directory is None:
        return _single_process_registry()
    registry = CollectorRegistry()
    MultiProcessCollector(registry, path=str(directory))  # type: ignore[no-untyped-call]
    for collector in _collectors:
        registry.register(collector)
    return registry


def render_latest() -> tuple[bytes, str]:
    """The text exposition of every metric (summed over processes in multiprocess mode).

    Returns:
        The body and its content type, for a ``GET /metrics`` handler.
    """
    from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

    return generate_latest(_registry()), CONTENT_TYPE_LATEST


def serve_metrics(port: int, addr: str = "0.0.0.0") -> tuple[WSGIServer, threading.Thread]:
    """Serve ``/metrics`` from a daemon thread (the Celery worker's parent, port 9808).

    Start it after the pool has forked (e.g. on ``worker_ready``) so children do not inherit
    the listening socket. Returns the server (``shutdown()`` stops it) and its thread.
    """
    from prometheus_client import start_http_server

    return start_http_server(port, addr, registry=_registry())


# --- helpers the service calls -------------------------------------------------------------


def _one_of(value: object, allowed: frozenset[str]) -> str:
    text = str(value) if value is not None else ""
    return text if text in allowed else OTHER


def _ident(value: object) -> str:
    text = str(value) if value is not None else ""
    return text if _IDENT.match(text) else OTHER


def observe_http(method: str, route: str, status: int, seconds: float) -> None:
    """One HTTP request. ``route`` is the route template (``/v1/scores/{id}``), never the path."""
    labels = (
        _one_of(method.upper(), METHODS),
        route,
        str(status) if 100 <= status < 600 else OTHER,
    )
    m = _m()
    m.http_requests.labels(*labels).inc()
    m.http_duration.labels(*labels).observe(max(seconds, 0.0))


def job_submitted(rubric: str, n: int = 1) -> None:
    """``n`` scoring jobs were queued for ``rubric``."""
    if n > 0:
        _m().jobs_submitted.labels(rubric).inc(n)


@contextmanager
def job_running(rubric: str) -> Iterator[None]:
    """Counts the job in ``judge_jobs_running`` for the duration of the block."""
    gauge = _m().jobs_running.labels(rubric)
    gauge.inc()
    try:
        yield
    finally:
        gauge.dec()


def job_finished(rubric: str, status: str, seconds: float | None = None) -> None:
    """A job reached a final ``status`` (completed, failed, cancelled), after ``seconds``."""
    label = _one_of(status, JOB_STATUSES)
    m = _m()
    m.jobs_finished.labels(rubric, label).inc()
    if seconds is not None:
        m.job_duration.labels(rubric, label).observe(max(seconds, 0.0))


def set_queue_depth(n: int) -> None:
    """Jobs waiting to run, from a database count."""
    _m().queue_depth.set(max(n, 0))


def observe_llm_call(
    model: str,
    outcome: str,
    seconds: float,
    prompt_tokens: int,
    completion_tokens: int,
    cost_usd: float,
    cached: bool,
    cached_prompt_tokens: int = 0,
) -> None:
    """One logical LLM call (retries included). A cached reply counts only as a cache hit.
    Prompt tokens the provider read from its prompt cache are also counted apart (kind
    ``cached_prompt``, a part of ``prompt``)."""
    m = _m()
    if cached:
        m.llm_cache_hits.labels(model).inc()
        return
    m.llm_calls.labels(model, _one_of(outcome, LLM_OUTCOMES)).inc()
    m.llm_duration.labels(model).observe(max(seconds, 0.0))
    if prompt_tokens > 0:
        m.llm_tokens.labels(model, "prompt").inc(prompt_tokens)
    if cached_prompt_tokens > 0:
        m.llm_tokens.labels(model, "cached_prompt").inc(cached_prompt_tokens)
    if completion_tokens > 0:
        m.llm_tokens.labels(model, "completion").inc(completion_tokens)
    if cost_usd > 0:
        m.llm_cost.labels(model).inc(cost_usd)


def observe_call_record(record: CallRecord) -> None:
    """:func:`observe_llm_call` for a :class:`~judge.domain.result.CallRecord`."""
    observe_llm_call(
        record.requested_model,
        record.outcome,
        record.latency_ms / 1000,
        record.prompt_tokens,
        record.completion_tokens,
        record.cost_usd,
        record.cached,
        record.cached_prompt_tokens,
    )


def normalise_rating(scale: dict[str, Any], rating: Any) -> float | None:
    """A rating on 0..1: ordinal ``(r-min)/(max-min)``, binary 0/1, other scales ``None``."""
    kind = scale.get("type")
    if kind == "binary":
        return float(rating) if isinstance(rating, bool) else None
    if kind != "ordinal" or isinstance(rating, bool) or not isinstance(rating, int | float):
        return None
    low, high = scale.get("min"), scale.get("max")
    if not isinstance(low, int | float) or not isinstance(high, int | float) or high <= low:
        return None
    return min(max((float(rating) - low) / (high - low), 0.0), 1.0)


def _agreement(dim: DimensionResult) -> float | None:
    agreement, kind = dim.agreement, dim.scale.get("type")
    if agreement.valid < 2:
        return None
    if kind == "ordinal" and agreement.spread is not None:
        span = float(dim.scale.get("max", 0)) - float(dim.scale.get("min", 0))
        return max(0.0, 1.0 - agreement.spread / span) if span > 0 else None
    if kind in ("binary", "nominal"):
        return agreement.modal_share
    if kind == "ranked":
        return agreement.top1_agreement
    return None


def observe_result(rubric: str, result: ScoreResult) -> None:
    """Walk a scored item: judgments and abstentions by reason, normalised ratings per judge
    model (ordinal and binary scales only), panel agreement and reliability levels."""
    m = _m()
    for dim_id, dim in result.dimensions.items():
        for judged in dim.judges:
            if judged.status == "abstained":
                reason = _one_of(judged.reason, ABSTENTION_REASONS)
                m.judgments.labels(rubric, judged.model, "abstained").inc()
                m.abstentions.labels(rubric, judged.model, reason).inc()
                continue
            m.judgments.labels(rubric, judged.model, "ok").inc()
            value = normalise_rating(dim.scale, judged.rating)
            if value is not None:
                m.ratings.labels(rubric, dim_id, judged.model).observe(value)
        agreement = _agreement(dim)
        if agreement is not None:
            m.agreement.labels(rubric, dim_id).observe(agreement)
        level = _one_of(dim.reliability.level, LEVELS)
        m.results.labels(rubric, dim_id, level).inc()
        for reason in dim.reliability.reasons:
            m.reliability_reasons.labels(rubric, dim_id, _ident(reason)).inc()
