"""One retry policy for a job whose run raised (a bug, a lost database; never an
abstention, which is a result): the embedded runner applies it itself, and the Celery task
hands the same numbers to Celery's own ``autoretry_for``/``retry_backoff``."""

from __future__ import annotations

from dataclasses import dataclass

from judge.settings import Settings


@dataclass(frozen=True)
class RetryPolicy:
    #: runs of one job before it is marked failed for good (``worker.max_attempts``)
    max_attempts: int
    #: the first retry waits this long; each next one twice as long, up to ``max_delay_s``
    base_s: int = 1
    max_delay_s: int = 60

    @classmethod
    def from_settings(cls, settings: Settings) -> RetryPolicy:
        return cls(max_attempts=settings.worker.max_attempts)

    @property
    def max_retries(self) -> int:
        return self.max_attempts - 1

    def delay_s(self, retries: int) -> float:
        """Seconds before retry number ``retries + 1`` (Celery's exponential backoff without
        jitter: ``min(max_delay_s, base_s * 2**retries)``)."""
        return float(min(self.max_delay_s, self.base_s * 2 ** min(retries, 30)))

    def exhausted(self, attempts: int) -> bool:
        return attempts >= self.max_attempts
