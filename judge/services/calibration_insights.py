"""What a team does with its calibrations next: compare equal and reliability-weighted
aggregation on a run's items (cross-validated), and plan further expert labelling."""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import anyio.to_thread

from judge.calibration import (
    DEFAULT_FOLDS,
    DEFAULT_REPEATS,
    REFIT_RESAMPLES,
    RESAMPLE_SEED,
    apply_holm,
    calibration_plan,
    compare_aggregation,
    labelled_with_consensus,
    metric_name,
    panel_engines,
)
from judge.domain.calibration_report import CalibrationReport
from judge.domain.principal import Principal
from judge.errors import CalibrationNotFound, CalibrationNotReady, ItemInvalid
from judge.persistence import jobs as repo
from judge.reliability import DEFAULT_ASSURANCE
from judge.services.access import can_read, check_readable
from judge.services.calibrations import CalibrationService, run_items


@dataclass
class CalibrationInsights:
    calibrations: CalibrationService

    async def compare_aggregation(
        self,
        who: Principal,
        run_id: str,
        *,
        folds: int = DEFAULT_FOLDS,
        repeats: int = DEFAULT_REPEATS,
        seed: int = RESAMPLE_SEED,
        resamples: int = REFIT_RESAMPLES,
    ) -> dict[str, Any]:
        """Equal vs weighted aggregation on a completed run, per dimension, cross-validated."""
        jobs = self.calibrations.jobs
        run, items = await run_items(jobs.database, run_id)
        check_readable(who, run.owner_key_id, CalibrationNotFound(run_id))
        if run.status != "completed" or not run.report_json:
            raise CalibrationNotReady(run_id, run.status)
        report = CalibrationReport.model_validate_json(run.report_json)
        judges = report.judges
        rubric = jobs.rubric(run.rubric_id, run.rubric_version)
        tolerance = jobs.scorer.policy(rubric).tolerance
        end_to_end = [it for it in items if not it.given]

        stop = threading.Event()

        def compare_all() -> dict[str, Any]:
            comparisons = {}
            for dim in rubric.dimensions:
                if metric_name(dim) is None:
                    continue
                _, labelled, gold = labelled_with_consensus(dim, end_to_end)
                if labelled:
                    comparisons[dim.id] = compare_aggregation(
                        dim,
                        labelled,
                        gold,
                        judges,
                        tolerance,
                        folds=folds,
                        repeats=repeats,
                        seed=seed,
                        resamples=resamples,
                        should_stop=stop.is_set,
                    )
            apply_holm(comparisons)  # decided across the rubric's dimensions
            dims: dict[str, Any] = {}
            for dim_id, comparison in comparisons.items():
                stored = report.dimensions.get(dim_id)
                # decided when the run was stored
                comparison.auto = stored.aggregation.auto if stored and stored.aggregation else None
                dims[dim_id] = comparison.model_dump(mode="json")
            return dims

        # cross-validated bootstraps take seconds: off the event loop (an API serves on it);
        # when the caller goes away (cancelled), the thread is told to stop at its next repeat
        try:
            dims = await anyio.to_thread.run_sync(compare_all, abandon_on_cancel=True)
        except BaseException:
            stop.set()
            raise
        return {
            "run_id": run.id,
            "rubric": {"id": run.rubric_id, "version": run.rubric_version, "hash": run.rubric_hash},
            "panel": {"name": run.panel_name, "judges": judges},
            "simulated": run.simulated,
            "n_items": run.n_items,
            "dimensions": dims,
        }

    async def _batch_pool(
        self, who: Principal, batch_id: str, rubric_id: str, panel_name: str
    ) -> list[Any]:
        jobs = self.calibrations.jobs
        async with jobs.database.session() as session:
            batch = await repo.get_batch(session, batch_id)
            if batch is None or not can_read(who, batch.owner_key_id):
                raise ItemInvalid("pool_batch", f"no batch with id {batch_id!r}")
            if batch.rubric_id != rubric_id:
                raise ItemInvalid(
                    "pool_batch", f"batch {batch_id} was scored with {batch.rubric_id!r}"
                )
            if batch.panel_name != panel_name:
                raise ItemInvalid(
                    "pool_batch", f"batch {batch_id} was scored by panel {batch.panel_name!r}"
                )
            pool = []
            async for job in repo.iter_batch_jobs(session, batch_id):
                if job.status == repo.COMPLETED and job.result_json:
                    result = json.loads(job.result_json)
                    result["item_id"] = job.item_id or f"line {job.position}"
                    pool.append(result)
        return pool

    async def plan(
        self,
        who: Principal,
        *,
        rubric_id: str,
        panel_name: str | None,
        target: float | None = None,
        dimensions: Sequence[str] = (),
        pool: Sequence[Any] | None = None,
        pool_batch: str | None = None,
        budget: int | None = None,
        seed: int = 0,
        assurance: float = DEFAULT_ASSURANCE,
    ) -> dict[str, Any]:
        """The labelling plan of a rubric and panel (see :mod:`judge.calibration._plan`)."""
        if not 0.5 <= assurance <= 0.99:
            raise ItemInvalid("assurance", f"must be between 0.5 and 0.99, got {assurance}")
        jobs = self.calibrations.jobs
        rubric = jobs.rubric(rubric_id)
        panel = jobs.panel(panel_name)
        policy = jobs.scorer.policy(rubric)
        if pool is not None and pool_batch is not None:
            raise ItemInvalid("pool_batch", "give either a pool or a pool_batch, not both")
        if pool_batch is not None:
            pool = await self._batch_pool(who, pool_batch, rubric.id, panel.name)
        if budget is not None and budget < 1:
            raise ItemInvalid("budget", "must be at least 1")
        if target is not None and not -1 <= target <= 1:
            raise ItemInvalid("target_ci_lower", "must be between -1 and 1")
        found = await jobs.scorer.calibrations.latest(
            rubric, panel, policy.min_items, owner=who.owner
        )
        engines: dict[str, Any] = {}
        for run_id in sorted({c.run_id for c in found.values()}):
            try:
                _, run_scored = await run_items(jobs.database, run_id)
            except CalibrationNotFound:  # the run is gone: its dimensions get no figure
                continue
            dims = [d for d, c in found.items() if c.run_id == run_id]
            engines |= panel_engines(rubric, run_scored, dims)

        plan = functools.partial(
            calibration_plan,
            rubric,
            panel.name,
            found,
            policy,
            target=target,
            dimensions=dimensions,
            pool=pool,
            budget=budget,
            seed=seed,
            engines=engines,
            assurance=assurance,
        )
        return await anyio.to_thread.run_sync(plan)
