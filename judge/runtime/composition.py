"""The one composition root: every edge (``judge serve``, ``worker``, ``beat``, ``score``,
``calibrate``, ``probe``, ``canary``, ``demo``) builds its services here, so each gets the same
per-model limits, call cache, reliability settings and stored calibrations.

The bundled simulator is not started here: an edge that wants it starts it and passes its URL
in ``settings.simulator.url`` (see :mod:`judge.cli._simulator`)."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from pydantic import ValidationError

from judge.errors import ConfigError, JudgeError
from judge.llm.cache import CachingClient
from judge.llm.calls import ModelPrice, RetryPolicy
from judge.llm.client import ChatClient, ChatRequest, ChatResult
from judge.llm.limits import LimitedClient, ModelLimiter
from judge.llm.routing import RoutingClient
from judge.persistence.cache import SqlCallCache
from judge.persistence.calibrations import SqlCalibrations
from judge.persistence.database import Database, DatabaseNotMigrated, is_unavailable
from judge.persistence.keys import KeyStore
from judge.persistence.probes import SqlProbeFlags
from judge.rubrics import RubricRegistry
from judge.services.batches import BatchService
from judge.services.calibration_insights import CalibrationInsights
from judge.services.calibrations import CalibrationService
from judge.services.canaries import CanaryService
from judge.services.canary_drift import CanaryDrift
from judge.services.economy import EconomyService
from judge.services.jobs import CALIBRATION, JobService
from judge.services.probes import PROBE, ProbeService
from judge.services.runs import RunFollower
from judge.services.scores import ScoreService
from judge.services.scoring import NoProbeFlags, ProbeFlagLookup, Scorer, StaticCalibrations
from judge.services.sessions import SessionService
from judge.settings import Settings

log = logging.getLogger(__name__)


@dataclass
class ServiceRuntime:
    settings: Settings
    database: Database
    registry: RubricRegistry
    jobs: JobService
    keys: KeyStore
    limiter: ModelLimiter
    calibrations: CalibrationService
    canaries: CanaryService
    insights: CalibrationInsights
    probes: ProbeService
    batches: BatchService
    scores: ScoreService
    sessions: SessionService
    call_cache: SqlCallCache | None = None
    llm_paths: RoutingClient | None = None
    economy: EconomyService | None = None

    @staticmethod
    def is_outage(exc: BaseException) -> bool:
        """Did ``exc`` come from the database being unreachable, restarting or behind in its
        schema (answer 503 and retry), rather than from a bug or a refused value?"""
        return is_unavailable(exc)

    async def database_check(self) -> str:
        """Readiness of the database: ``ok``, ``not_migrated`` or ``unavailable`` (the error
        itself is logged)."""
        try:
            await self.database.ping()
            await self.database.check_migrated()
        except DatabaseNotMigrated as exc:
            log.warning("readiness: %s", exc.message)
            return "not_migrated"
        except Exception as exc:  # readiness reports every failure instead of raising
            log.warning("readiness: the database does not answer: %r", exc)
            return "unavailable"
        return "ok"

    async def close(self) -> None:
        if self.call_cache is not None:
            await self.call_cache.flush()
        if self.llm_paths is not None:
            await self.llm_paths.aclose()
        await self.limiter.close()
        await self.database.dispose()


def call_retry_policy(settings: Settings) -> RetryPolicy:
    """How each LLM call is retried (every client path reads it the same way)."""
    return RetryPolicy(
        max_retries=settings.llm.max_retries, backoff_base_s=settings.llm.backoff_base_s
    )


def configured_prices(settings: Settings) -> dict[str, ModelPrice]:
    """USD per million tokens for models the price map does not know (``prices:``)."""
    return {
        m: ModelPrice(
            p.input_per_mtok, p.output_per_mtok, p.cached_input_per_mtok, p.cache_write_per_mtok
        )
        for m, p in settings.prices.items()
    }


def routing_client(settings: Settings) -> RoutingClient:
    """The one client every edge uses: each request on its judge's path."""
    return RoutingClient(retry=call_retry_policy(settings), prices=configured_prices(settings))


def build_client(
    settings: Settings, database: Database, limiter: ModelLimiter, *, cache: bool
) -> tuple[ChatClient, SqlCallCache | None, RoutingClient]:
    """The client jobs call (limits, then the cache) over the paths it closes at the end."""
    paths = routing_client(settings)
    client: ChatClient = LimitedClient(paths, limiter)
    if not cache:
        return client, None, paths
    calls = SqlCallCache(database)
    return CachingClient(client, calls), calls, paths


class _NoLLMClient:
    """The client of a process that only submits and reads jobs (the API in Celery mode):
    it never calls a model, so it need not import LiteLLM (about 150 MB and seconds)."""

    async def complete(self, request: ChatRequest) -> ChatResult:
        raise JudgeError("this process does not run jobs; the Celery workers do")


#: stands in for the simulator's URL where panels are only resolved, never called
NOT_CALLED_HERE = "http://judge-workers.invalid/v1"


def check_policies(registry: RubricRegistry, scorer: Scorer) -> None:
    """Every rubric's policy with the settings' reliability defaults must still be valid (a
    configured floor above a rubric's own line is a configuration error, found at start)."""
    for rubric in registry.all():
        try:
            scorer.policy(rubric)
        except ValidationError as exc:
            raise ConfigError(
                f"reliability settings do not fit rubric {rubric.id!r}: {exc.errors()[0]['msg']}"
            ) from None


def build_runtime(
    settings: Settings,
    *,
    runs_jobs: bool = True,
    stored: bool = True,
    database: Database | None = None,
) -> ServiceRuntime:
    """Build everything; call ``close()`` when done.

    ``runs_jobs=False`` (the API in Celery mode): no LLM client, and panels are resolved but
    never called. ``stored=False`` (``judge score`` without a migrated database): scoring uses
    no call cache, no stored calibrations and no probe flags (reliability from the rubrics'
    published priors), and nothing is written. ``database``: one already built (a test's
    small pool), else one for ``settings.database_url``.
    """
    simulator_url = settings.simulator.url
    if not runs_jobs:
        simulator_url = simulator_url or NOT_CALLED_HERE
    database = database or Database(settings.database_url)
    registry = RubricRegistry.from_directory(settings.rubrics_dir)
    limiter = ModelLimiter(settings.limits, settings.redis_url)
    client: ChatClient
    call_cache: SqlCallCache | None = None
    llm_paths: RoutingClient | None = None
    if runs_jobs:
        cache = stored and settings.worker.cache_enabled
        client, call_cache, llm_paths = build_client(settings, database, limiter, cache=cache)
    else:
        client = _NoLLMClient()
    probe_flags: ProbeFlagLookup = SqlProbeFlags(database) if stored else NoProbeFlags()
    scorer = Scorer(
        registry=registry,
        client=client,
        calibrations=SqlCalibrations(database) if stored else StaticCalibrations(),
        reliability_defaults=settings.reliability.as_defaults(),
        probe_flags=probe_flags,
    )
    check_policies(registry, scorer)
    jobs = JobService(
        settings=settings,
        registry=registry,
        database=database,
        scorer=scorer,
        simulator_url=simulator_url,
    )
    calibrations = CalibrationService(jobs, drift=CanaryDrift(database))
    probes = ProbeService(jobs)
    jobs.follower = RunFollower(database, {CALIBRATION: calibrations, PROBE: probes})
    return ServiceRuntime(
        settings=settings,
        database=database,
        registry=registry,
        jobs=jobs,
        keys=KeyStore(database),
        limiter=limiter,
        call_cache=call_cache,
        llm_paths=llm_paths,
        calibrations=calibrations,
        canaries=CanaryService(calibrations),
        insights=CalibrationInsights(calibrations),
        probes=probes,
        batches=BatchService(jobs),
        scores=ScoreService(jobs),
        sessions=SessionService(jobs),
        economy=EconomyService(jobs) if runs_jobs else None,
    )
