"""Calibration runs: score expert-labelled items with a panel, measure agreement, store it.

A run is a batch of kind ``calibration`` plus the experts' labels. When its last item is
done the process that finished it computes and stores the report (the job service tells its
follower, :class:`~judge.services.runs.RunFollower`, which calls
:meth:`CalibrationService.finalize_batch`); a periodic sweep stores the reports such a process
did not live to store. From then on reliability flags for that rubric version and panel
composition use it. Reading a run never computes its report: until it is stored the run shows
as ``finalizing``.

Two processes may compute the report at the same moment; only the first update stores it (the
status guard in :func:`judge.persistence.runs.complete`). Its gauges
(each rater's kappa, a canary run's drift) are read from the stored runs at scrape time by
:mod:`judge.runtime.run_gauges`, in every process that serves ``/metrics``.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import anyio.to_thread
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from judge import metrics
from judge.calibration import (
    Disagreement,
    ScoredItem,
    add_guarantees,
    calibration_report,
    call_cost,
    copied_expert_column,
    intra_judge_stability,
    largest_disagreements,
)
from judge.domain.calibration_report import PanelRef
from judge.domain.content import content_key
from judge.domain.item import SUPPORTER_ROLES, StoredId, parse_item
from judge.domain.principal import Principal
from judge.domain.rubric import Rubric, check_label
from judge.domain.text_safety import json_problem, text_problem
from judge.domain.wire import CalibrationView
from judge.errors import CalibrationNotFound, CalibrationTooLarge, ItemInvalid
from judge.persistence import jobs as repo
from judge.persistence import runs
from judge.persistence.calibrations import evidence_json, set_shared, visibility
from judge.persistence.database import Database
from judge.persistence.tables import Batch, CalibrationRun, ScoreJob
from judge.services.access import can_read
from judge.services.canary_drift import CanaryDrift
from judge.services.jobs import CALIBRATION, DB_REFUSED, JobService, new_id
from judge.services.runs import BatchRuns, run_fields
from judge.services.submission import Intake

SHARING = {True: "shared", False: "withdrawn"}
log = logging.getLogger(__name__)


class LabelledItem(BaseModel):
    """An item with one or more experts' labels per dimension."""

    model_config = ConfigDict(extra="forbid")

    id: StoredId | None = None
    item: dict[str, Any]
    labels: dict[str, dict[str, Any]] = Field(min_length=1, description="expert -> dim -> value")


def normalise_labels(
    rubric: Rubric, labels: dict[str, dict[str, Any]], prefix: str, participants: tuple[str, ...]
) -> dict[str, dict[str, Any]]:
    """Map aliases to dimension ids and check every label against the dimension's scale."""
    names = rubric.dimension_names()
    out: dict[str, dict[str, Any]] = {}
    for expert, ratings in labels.items():
        problem = text_problem(expert, controls=True) or (
            "is longer than 100 characters" if len(expert) > 100 else None
        )
        if problem:
            raise ItemInvalid(f"{prefix}.labels", f"an expert name {problem}")
        found = json_problem(ratings, max_depth=4)
        if found:
            where = f".{found[0]}" if found[0] and found[0][0] != "[" else found[0]
            raise ItemInvalid(f"{prefix}.labels.{expert}{where}", found[1])
        if not isinstance(ratings, dict):
            raise ItemInvalid(f"{prefix}.labels.{expert}", "must map dimension ids to labels")
        clean: dict[str, Any] = {}
        for key, value in ratings.items():
            field = f"{prefix}.labels.{expert}.{key}"
            if key not in names:
                raise ItemInvalid(field, f"{key!r} is not a dimension of rubric {rubric.id!r}")
            if value is None:
                continue
            dim = rubric.dimension(names[key])
            value, error = check_label(dim, value, participants)
            if error:
                raise ItemInvalid(field, f"label {error}")
            clean[dim.id] = value
        out[expert] = clean
    return out


def refuse_copied_experts(rubric: Rubric, labels: Sequence[dict[str, dict[str, Any]]]) -> None:
    """ItemInvalid naming the copy when one expert's column repeats another's on enough items
    (:mod:`judge.calibration._copied_experts`): one annotator is not two experts."""
    copied = copied_expert_column(rubric, labels)
    if copied is not None:
        raise ItemInvalid(
            f"items[{copied.first}].labels.{copied.copy}.{copied.dimension}",
            f"expert {copied.copy!r} repeats expert {copied.original!r} on "
            f"{copied.dimension} ({copied.reason}): one annotator under two names is one "
            "expert; remove the copy or give the second annotator's own labels",
        )


@dataclass
class CalibrationService(BatchRuns[CalibrationView]):
    table: ClassVar[type[CalibrationRun]] = CalibrationRun
    not_found: ClassVar[type[CalibrationNotFound]] = CalibrationNotFound
    jobs: JobService
    #: adds the drift from the baseline to a canary run's report before it is stored
    drift: CanaryDrift

    async def submit(
        self,
        *,
        rubric_id: str,
        panel_name: str | None,
        items: Sequence[Any],
        label: str | None = None,
        use_cache: bool = True,
        canary_id: str | None = None,
        owner: str | None = None,
    ) -> tuple[CalibrationRun, list[str]]:
        """Validate every item and label (any problem rejects the run), then persist it."""
        rubric = self.jobs.rubric(rubric_id)
        panel = self.jobs.panel(panel_name)
        if not items:
            raise ItemInvalid("items", "a calibration needs at least one labelled item")
        cap = self.jobs.settings.api
        if len(items) > cap.max_calibration_items:
            raise CalibrationTooLarge(cap.max_calibration_items, len(items))
        experts: set[str] = set()
        labelled: list[tuple[LabelledItem, dict[str, dict[str, Any]]]] = []
        ids: dict[str, int] = {}
        for n, raw in enumerate(items):
            prefix = f"items[{n}]"
            try:
                entry = LabelledItem.model_validate(raw)
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(str(p) for p in first["loc"])
                raise ItemInvalid(f"{prefix}.{where}" if where else prefix, first["msg"]) from None
            if entry.id is not None and ids.setdefault(entry.id, n) != n:
                raise ItemInvalid(
                    f"{prefix}.id", f"duplicate of items[{ids[entry.id]}].id: ids must be unique"
                )
            item = self.jobs.validate(entry.item, rubric, f"{prefix}.item")
            experts.update(entry.labels)
            if len(experts) > cap.max_experts:
                raise ItemInvalid(
                    f"{prefix}.labels", f"a calibration has at most {cap.max_experts} experts"
                )
            participants = tuple(p.id for p in item.clients)
            labelled.append((entry, normalise_labels(rubric, entry.labels, prefix, participants)))
        refuse_copied_experts(rubric, [labels for _, labels in labelled])
        batch = Batch(
            id=new_id(),
            rubric_id=rubric.id,
            rubric_version=rubric.version,
            rubric_hash=rubric.content_hash,
            panel_name=panel.name,
            kind=CALIBRATION,
            total=len(labelled),
            owner_key_id=owner,
        )
        run = CalibrationRun(
            id=new_id(),
            rubric_id=rubric.id,
            rubric_version=rubric.version,
            rubric_hash=rubric.content_hash,
            panel_name=panel.name,
            panel_signature=panel.signature(),
            status="running",
            label=label,
            batch_id=batch.id,
            canary_id=canary_id,
            owner_key_id=owner,
            n_items=len(labelled),
            simulated=panel.includes_simulator,
            labels_json=json.dumps([labels for _, labels in labelled], ensure_ascii=False),
        )
        jobs = [
            ScoreJob(
                id=new_id(),
                batch_id=batch.id,
                position=n + 1,
                item_id=entry.id,
                rubric_id=rubric.id,
                rubric_version=rubric.version,
                rubric_hash=rubric.content_hash,
                panel_name=panel.name,
                panel_signature=panel.signature(),
                item_json=json.dumps(entry.item, ensure_ascii=False),
                use_cache=use_cache,
                owner_key_id=owner,
            )
            for n, (entry, _) in enumerate(labelled)
        ]

        def all_or_nothing(refused: dict[int, str]) -> None:
            first = min(refused)
            raise ItemInvalid(f"items[{first}]", DB_REFUSED.format(refused[first]))

        await repo.insert_skipping_refused(
            self.jobs.database, [batch, run], jobs, before_commit=all_or_nothing
        )
        metrics.job_submitted(rubric.id, len(jobs))  # as they count when they finish
        return run, [j.id for j in jobs]

    async def start(
        self,
        who: Principal,
        intake: Intake,
        *,
        rubric_id: str,
        panel_name: str | None,
        items: Sequence[Any],
        label: str | None = None,
        wait: float | None = None,
    ) -> CalibrationView:
        """Start a run for ``who`` (see :meth:`BatchRuns.started`)."""
        submit = functools.partial(
            self.submit, rubric_id=rubric_id, panel_name=panel_name, items=items, label=label
        )
        return await self.started(who, intake, submit, items=len(items), wait=wait)

    async def finalize(self, run_id: str) -> bool:
        """Compute and store the report when every item is done and none is stored yet;
        True when this call stored it."""
        finished = await runs.finished_unreported(self.jobs.database, CalibrationRun, run_id)
        if finished is None:
            return False
        run = finished.run
        rubric = self.jobs.rubric(run.rubric_id, run.rubric_version)
        panel = self.jobs.panel(run.panel_name)
        judges = [t.model for t in panel.judges]
        items = scored_items(run, finished.jobs)
        # the replies decide, not the panel's names: a judge reaching the simulator through
        # its api_base is simulated too (judge.domain.provenance)
        simulated = run.simulated or replies_simulated(finished.jobs)
        # bootstrap CIs take seconds on large runs: off the event loop (an API serves on it)
        policy = self.jobs.scorer.policy(rubric)
        build = functools.partial(
            calibration_report, rubric, items, judges, run.id, policy=policy, simulated=simulated
        )
        if self.jobs.settings.calibration_resamples is not None:  # else the report's own
            build = functools.partial(build, resamples=self.jobs.settings.calibration_resamples)
        report = await anyio.to_thread.run_sync(build)
        report = add_guarantees(
            report,
            rubric,
            items,
            judges,
            panel.policy(policy).guarantee,
            panel.cascade,
            panel.quorum or policy.quorum,
        )
        report.panel = PanelRef(name=run.panel_name, judges=judges)
        report.stability = intra_judge_stability(rubric, items)
        report.cost = call_cost(panel, items)
        report.label = run.label
        report.failed_items = finished.failed
        report = await self.drift.added(run, report)
        stored = await runs.complete(
            self.jobs.database,
            CalibrationRun,
            run.id,
            report.model_dump(mode="json"),
            dimensions_json=evidence_json(report.flag_inputs()),
            simulated=simulated,
        )
        # stored here or by another process: either way stop serving flags from before it
        self.jobs.scorer.calibrations.forget()
        return stored

    async def repeat(
        self, run_id: str, *, canary_id: str | None, label: str | None
    ) -> tuple[CalibrationRun, list[str]]:
        """A new run on the items and labels of ``run_id``, bypassing the LLM call cache."""
        run, jobs = await _with_jobs(self.jobs.database, run_id)
        labels: list[dict[str, Any]] = json.loads(run.labels_json)
        items = [
            {"id": job.item_id, "item": json.loads(job.item_json), "labels": labels[n]}
            for n, job in enumerate(jobs)
        ]
        return await self.submit(
            rubric_id=run.rubric_id,
            panel_name=run.panel_name,
            items=items,
            label=label,
            use_cache=False,
            canary_id=canary_id,
            owner=run.owner_key_id,
        )

    async def check_readable(self, who: Principal, run_id: str) -> None:
        """``CalibrationNotFound`` unless the run exists and ``who`` owns it, is an admin, or
        an admin shared the run (a shared run decides every key's flags: all may read it)."""
        exists, owner, shared = await visibility(self.jobs.database, run_id)
        if not exists or not (shared or can_read(who, owner)):
            raise CalibrationNotFound(run_id)

    async def disagreements(
        self, who: Principal, run_id: str, limit: int = 20
    ) -> list[ItemDisagreement]:
        """The run's items where the panel and the experts disagree most."""
        await self.check_readable(who, run_id)
        run, jobs = await _with_jobs(self.jobs.database, run_id)
        found = largest_disagreements(scored_items(run, jobs), limit)
        return [ItemDisagreement(jobs[d.index].id, jobs[d.index].item_id, d) for d in found]

    async def share(self, who: Principal, run_id: str, *, shared: bool) -> CalibrationView:
        """Publish the run so that it applies to every key's flags (``shared``), or withdraw
        it: an admin's decision, recorded with the admin's key and the time. Anyone else is
        told there is no such run."""
        if not who.admin or not await set_shared(
            self.jobs.database, run_id, shared=shared, by=who.key_id
        ):
            raise CalibrationNotFound(run_id)
        log.info("calibration %s %s by key %s", run_id, SHARING[shared], who.key_id)
        self.jobs.scorer.calibrations.forget()
        return await self.view(who, run_id)

    async def view(self, who: Principal, run_id: str) -> CalibrationView:
        """The run as stored, if ``who`` may read it (a read: it never computes the report)."""
        await self.check_readable(who, run_id)
        run = await runs.get_run(self.jobs.database, CalibrationRun, run_id)
        if run is None:
            raise CalibrationNotFound(run_id)
        return await self.shown(who, run)

    async def shown(self, who: Principal, run: CalibrationRun) -> CalibrationView:
        """The view of a run ``who`` may read."""
        shown = await run_fields(self.jobs.database, run)
        shown |= {
            "label": run.label,
            "report_url": f"/v1/calibrations/{run.id}/report",
            "owned": run.owner_key_id == who.key_id,
            "shared": run.shared,
            "canary_id": run.canary_id,
        }
        return CalibrationView.model_validate(shown)


@dataclass(frozen=True)
class ItemDisagreement:
    """A disagreement with the job (item page) and the item's id."""

    job_id: str
    item_id: str | None
    found: Disagreement


async def run_items(database: Database, run_id: str) -> tuple[CalibrationRun, list[ScoredItem]]:
    """A stored run and its items: the experts' labels with what each judge said."""
    run, jobs = await _with_jobs(database, run_id)
    return run, scored_items(run, jobs)


async def _with_jobs(database: Database, run_id: str) -> tuple[CalibrationRun, list[ScoreJob]]:
    try:
        return await runs.with_jobs(database, CalibrationRun, run_id)
    except LookupError:
        raise CalibrationNotFound(run_id) from None


def replies_simulated(jobs: Sequence[ScoreJob]) -> bool:
    """Whether any judge's reply in these jobs came from the LLM simulator."""
    for job in jobs:
        if job.status == repo.COMPLETED and job.result_json:
            result = json.loads(job.result_json)
            if result.get("simulated") or any(
                member.get("simulated") for member in result.get("panel") or []
            ):
                return True
    return False


def scored_items(run: CalibrationRun, jobs: Sequence[ScoreJob]) -> list[ScoredItem]:
    labels: list[dict[str, dict[str, Any]]] = json.loads(run.labels_json)
    return [_scored(job, labels[(job.position or 1) - 1]) for job in jobs]


def _scored(job: ScoreJob, labels: dict[str, dict[str, Any]]) -> ScoredItem:
    judges: dict[str, dict[str, Any]] = {}
    samples: dict[str, dict[str, list[Any]]] = {}
    aggregate: dict[str, Any] = {}
    llm_calls = 0
    item = json.loads(job.item_json)
    participants = tuple(
        p["id"] for p in item.get("participants") or [] if not _supporter(p.get("role"))
    )
    if job.status == repo.COMPLETED and job.result_json:
        result = json.loads(job.result_json)
        llm_calls = int((result.get("usage") or {}).get("llm_calls") or 0)
        for dim_id, dim in result["dimensions"].items():
            # the run measures the panel's equal aggregate, whatever aggregation scored it:
            # weights fit on these very items would otherwise be judged on them
            how = dim.get("aggregation") or {}
            aggregate[dim_id] = (
                how["equal_score"] if how.get("method") == "weighted" else dim.get("score")
            )
            for judge in dim["judges"]:
                if judge["status"] == "ok":
                    judges.setdefault(judge["model"], {})[dim_id] = judge["rating"]
                    if judge.get("samples"):
                        values = judge["samples"]["values"]
                        samples.setdefault(judge["model"], {})[dim_id] = values
    return ScoredItem(
        content=_content(item),
        labels=labels,
        judges=judges,
        aggregate=aggregate,
        group=item.get("group"),
        participants=participants,
        given=item.get("given") or {},
        judge_samples=samples,
        llm_calls=llm_calls,
        position=_position(item.get("metadata")),
    )


def _position(metadata: object) -> tuple[int, int] | None:
    """A session checkpoint's (row, rows) from its metadata (RESCUE-BENCH items have both)."""
    if not isinstance(metadata, dict):
        return None
    row, rows = metadata.get("row_index"), metadata.get("rows")
    if isinstance(row, int) and isinstance(rows, int) and 1 <= row <= rows:
        return row, rows
    return None


def _content(raw: Any) -> str | None:
    """The stored item's content key (None for an item that no longer parses)."""
    try:
        return content_key(parse_item(raw))
    except ItemInvalid:
        return None


def _supporter(role: object) -> bool:
    return isinstance(role, str) and role.lower() in SUPPORTER_ROLES
