"""One retry policy for a job whose run raised (a bug, a lost database; never an
abstention, which is a result): the embedded runner applies it itself, and the Celery task
hands the same numbers to Celery's own ``autoretry_for``/``retry_backoff``."""

from __future__ import annotations

from dataclasses import dataclass

from judge.settings import Settings


@dataclass(frozen=True)
class JobRetryPolicy:
    """How a job whose run raised is retried, and when it is given up."""

    #: claims of one job (runs that reached it) before it is marked failed for good
    #: (``worker.max_attempts``): the cap on a poison job, enforced by the claim itself
    max_attempts: int
    #: re-runs of a run that raised for any reason, the database being down included (no
    #: claim is counted then): 1+2+4+...+60+60 s spans an outage of about three minutes
    #: before the job is given up
    max_retries: int = 8
    #: the first retry waits this long; each next one twice as long, up to ``max_delay_s``
    base_s: int = 1
    max_delay_s: int = 60

    @classmethod
    def from_settings(cls, settings: Settings) -> JobRetryPolicy:
        return cls(max_attempts=settings.worker.max_attempts)

    def delay_s(self, retries: int) -> float:
        """Seconds before retry number ``retries + 1`` (Celery's exponential backoff without
        jitter: ``min(max_delay_s, base_s * 2**retries)``)."""
        return float(min(self.max_delay_s, self.base_s * 2 ** min(retries, 30)))

    def exhausted(self, attempts: int) -> bool:
        return attempts >= self.max_attempts
