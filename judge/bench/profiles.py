"""Benchmark profiles: how many items, what simulator latency, how many single-item samples."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

#: The judges of the simulated panel (``judge.settings.simulated_panel``), as LiteLLM models.
PANEL_MODELS = ("openai/accurate", "openai/noisy", "openai/lenient")
MODES = ("embedded", "celery")


@dataclass(frozen=True)
class Profile:
    name: str
    items: int
    latency_ms: float
    single_samples: int
    #: items in flight per process: the service's ``worker.concurrency`` and the baseline's
    #: semaphore (each item in flight makes one call per judge, concurrently)
    concurrency: int = 64
    #: Celery worker processes in celery mode (``concurrency`` is split between them)
    workers: int = 1
    warmup: int = 3
    rubric: str = "epitome"
    #: seconds between batch progress polls
    poll_s: float = 0.1
    #: items scored twice for the cost per item with and without prompt caching (at most
    #: ``items``)
    cost_items: int = 200

    def with_overrides(self, **changes: Any) -> Profile:
        return replace(self, **{k: v for k, v in changes.items() if v is not None})

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


PROFILES: dict[str, Profile] = {
    "quick": Profile("quick", items=200, latency_ms=200, single_samples=30),
    "full": Profile("full", items=2000, latency_ms=200, single_samples=100),
}
