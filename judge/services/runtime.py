"""Assemble the long-lived parts a serving process needs (API or worker): database, rubrics,
LLM client (with cache and limits), the job service and, when a panel uses simulated judges and
no simulator URL is configured, a simulator subprocess of its own."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import ValidationError

from judge.errors import ConfigError, JudgeError
from judge.llm.cache import CachingClient
from judge.llm.client import ChatClient, ChatRequest, ChatResult
from judge.llm.limits import LimitedClient, ModelLimiter
from judge.llm.routing import RoutingClient
from judge.llm.settings_bridge import routing_client
from judge.persistence.cache import SqlCallCache
from judge.persistence.calibrations import SqlCalibrations
from judge.persistence.database import Database
from judge.persistence.keys import KeyStore
from judge.rubrics import RubricRegistry
from judge.services.calibration import CalibrationService
from judge.services.calibration_insights import CalibrationInsights
from judge.services.canary import CanaryService
from judge.services.jobs import JobService
from judge.services.panels import needs_simulator, panel_names, panel_spec
from judge.services.scoring import Scorer
from judge.settings import Settings
from judge.simulator import SimulatorOptions, SimulatorProcess


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
    simulator: SimulatorProcess | None = None
    call_cache: SqlCallCache | None = None
    llm_paths: RoutingClient | None = None

    async def close(self) -> None:
        if self.call_cache is not None:
            await self.call_cache.flush()
        if self.llm_paths is not None:
            await self.llm_paths.aclose()
        await self.limiter.close()
        await self.database.dispose()
        if self.simulator is not None:
            self.simulator.stop()


def uses_simulator(settings: Settings) -> bool:
    return any(needs_simulator(panel_spec(settings, name)[1]) for name in panel_names(settings))


def build_client(
    settings: Settings, database: Database, limiter: ModelLimiter
) -> tuple[ChatClient, SqlCallCache | None, RoutingClient]:
    """The client jobs call (limits, then the cache) over the paths it closes at the end."""
    paths = routing_client(settings)
    client: ChatClient = LimitedClient(paths, limiter)
    if not settings.worker.cache_enabled:
        return client, None, paths
    cache = SqlCallCache(database)
    return CachingClient(client, cache), cache, paths


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


def build_runtime(settings: Settings, *, runs_jobs: bool = True) -> ServiceRuntime:
    """Build everything (starting the simulator if needed); call ``close()`` when done.

    With ``runs_jobs=False`` (the API in Celery mode) no LLM client and no simulator are set up.
    """
    simulator: SimulatorProcess | None = None
    simulator_url = settings.simulator.url
    if not runs_jobs:
        simulator_url = simulator_url or NOT_CALLED_HERE
    if simulator_url is None and uses_simulator(settings):
        simulator = SimulatorProcess(
            SimulatorOptions(
                latency_ms=settings.simulator.latency_ms,
                jitter_ms=settings.simulator.jitter_ms,
                rubrics_dir=settings.rubrics_dir,
            )
        ).start()
        simulator_url = simulator.base_url
    database = Database(settings.database_url)
    registry = RubricRegistry.from_directory(settings.rubrics_dir)
    limiter = ModelLimiter.from_settings(settings)
    client: ChatClient
    call_cache: SqlCallCache | None = None
    llm_paths: RoutingClient | None = None
    if runs_jobs:
        client, call_cache, llm_paths = build_client(settings, database, limiter)
    else:
        client = _NoLLMClient()
    scorer = Scorer(
        registry=registry,
        client=client,
        calibrations=SqlCalibrations(database),
        reliability_defaults=settings.reliability.as_defaults(),
    )
    check_policies(registry, scorer)
    jobs = JobService(
        settings=settings,
        registry=registry,
        database=database,
        scorer=scorer,
        simulator_url=simulator_url,
    )
    calibrations = CalibrationService(jobs)
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
        simulator=simulator,
    )
