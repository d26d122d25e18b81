"""Bias probes of a panel on a rubric (issue 15): verbosity, order, self-preference.

A probe run is a batch of kind ``probe`` whose jobs are the items' variants (the item as is,
padded with filler, or with its participants reordered). Scoring runs through the ordinary job
path (in process or on Celery workers); when the last job is done the report is computed and
stored once, as for calibrations: by the process that finished it, or else by the periodic
sweep (reading a probe never computes it; until it is stored the probe shows
``finalizing``). A verbosity probe's ``length_sensitive`` dimensions become a caution reason on
that panel's scores of that rubric until a later verbosity probe of the same panel clears them.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from judge import metrics
from judge.calibration import (
    Variant,
    order_report,
    self_preference_report,
    verbosity_report,
)
from judge.domain.principal import Principal
from judge.domain.probe_variants import as_raw, filler, padded, participant_orders
from judge.domain.providers import model_family
from judge.domain.wire import ProbeView
from judge.errors import ItemInvalid, ProbeNotFound
from judge.persistence import jobs as repo
from judge.persistence import runs
from judge.persistence.tables import Batch, ProbeRun, ScoreJob
from judge.services.jobs import DB_REFUSED, JobService, new_id
from judge.services.runs import BatchRuns, run_fields
from judge.services.submission import Intake

PROBE = "probe"
ProbeKind = Literal["verbosity", "order", "self-preference"]
KINDS: tuple[str, ...] = ("verbosity", "order", "self-preference")
DEFAULT_FILLER_WORDS = 60
DEFAULT_TOLERANCE = 0.25  # scale levels of mean shift (binary: share of items)
DEFAULT_PERMUTATIONS = 2


@dataclass(frozen=True)
class ProbeOptions:
    filler_words: int = DEFAULT_FILLER_WORDS
    tolerance: float = DEFAULT_TOLERANCE
    permutations: int = DEFAULT_PERMUTATIONS


@dataclass
class ProbeService(BatchRuns[ProbeView]):
    table: ClassVar[type[ProbeRun]] = ProbeRun
    not_found: ClassVar[type[ProbeNotFound]] = ProbeNotFound
    jobs: JobService

    async def submit(
        self,
        *,
        rubric_id: str,
        panel_name: str | None,
        kind: str,
        items: Sequence[Any],
        options: ProbeOptions | None = None,
        owner: str | None = None,
    ) -> tuple[ProbeRun, list[str]]:
        """Validate every item (any problem rejects the run), build the variants, persist."""
        from judge.services.scoring import validate_for_rubric

        options = options or ProbeOptions()
        if kind not in KINDS:
            raise ItemInvalid("kind", f"must be one of {', '.join(KINDS)}")
        rubric = self.jobs.rubric(rubric_id)
        panel = self.jobs.panel(panel_name)
        if not items:
            raise ItemInvalid("items", "a probe needs at least one item")
        if kind == "order" and rubric.unit != "conversation":
            raise ItemInvalid(
                "kind", f"an order probe needs a multi-party rubric; {rubric.id!r} is dyadic"
            )
        variants: list[tuple[int, str, dict[str, Any]]] = []
        text = filler(options.filler_words)
        for n, raw in enumerate(items):
            item = validate_for_rubric(raw, rubric, field_prefix=f"items[{n}]")
            if kind == "self-preference" and not isinstance(
                item.metadata.get("generator_model"), str
            ):
                raise ItemInvalid(
                    f"items[{n}].metadata.generator_model",
                    "a self-preference probe needs the model that generated each reply",
                )
            variants.append((n, "original", as_raw(item)))
            if kind == "verbosity":
                variants.append((n, "padded", padded(item, rubric.unit, text)))
            elif kind == "order":
                orders = participant_orders(item, options.permutations)
                if not orders:
                    raise ItemInvalid(
                        f"items[{n}].participants", "needs two or more non-therapist members"
                    )
                variants += [(n, f"order-{i + 1}", v) for i, v in enumerate(orders)]
        batch = Batch(
            id=new_id(),
            rubric_id=rubric.id,
            rubric_version=rubric.version,
            rubric_hash=rubric.content_hash,
            panel_name=panel.name,
            kind=PROBE,
            total=len(variants),
            owner_key_id=owner,
        )
        run = ProbeRun(
            id=new_id(),
            kind=kind,
            rubric_id=rubric.id,
            rubric_version=rubric.version,
            rubric_hash=rubric.content_hash,
            panel_name=panel.name,
            panel_signature=panel.signature(),
            batch_id=batch.id,
            owner_key_id=owner,
            n_items=len(items),
            simulated=panel.includes_simulator,
            options_json=json.dumps(options.__dict__),
            variants_json=json.dumps([[n, name] for n, name, _ in variants]),
        )
        jobs = [
            ScoreJob(
                id=new_id(),
                batch_id=batch.id,
                position=i + 1,
                item_id=raw.get("id"),
                rubric_id=rubric.id,
                rubric_version=rubric.version,
                rubric_hash=rubric.content_hash,
                panel_name=panel.name,
                panel_signature=panel.signature(),
                item_json=json.dumps(raw, ensure_ascii=False),
                owner_key_id=owner,
            )
            for i, (_, _, raw) in enumerate(variants)
        ]

        def all_or_nothing(refused: dict[int, str]) -> None:
            first = min(refused)
            raise ItemInvalid(f"items[{variants[first][0]}]", DB_REFUSED.format(refused[first]))

        await repo.insert_skipping_refused(
            self.jobs.database, [batch, run], jobs, before_commit=all_or_nothing
        )
        metrics.job_submitted(rubric.id, len(jobs))
        return run, [j.id for j in jobs]

    async def start(
        self,
        who: Principal,
        intake: Intake,
        *,
        rubric_id: str,
        panel_name: str | None,
        kind: str,
        items: Sequence[Any],
        options: ProbeOptions | None = None,
        wait: float | None = None,
    ) -> ProbeView:
        """Start a probe for ``who`` (see :meth:`BatchRuns.started`)."""
        submit = functools.partial(
            self.submit,
            rubric_id=rubric_id,
            panel_name=panel_name,
            kind=kind,
            items=items,
            options=options,
        )
        return await self.started(who, intake, submit, items=len(items), wait=wait)

    async def finalize(self, run_id: str) -> bool:
        """Compute and store the report when every variant is done and none is stored yet;
        True when this call stored it."""
        finished = await runs.finished_unreported(self.jobs.database, ProbeRun, run_id)
        if finished is None:
            return False
        report, flags = self.report(finished.run, finished.jobs, finished.failed)
        stored = await runs.complete(
            self.jobs.database, ProbeRun, run_id, report, flags_json=json.dumps(flags)
        )
        self.jobs.scorer.probe_flags.forget()
        return stored

    def report(
        self, run: ProbeRun, jobs: Sequence[ScoreJob], failed: int
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        rubric = self.jobs.rubric(run.rubric_id, run.rubric_version)
        panel = self.jobs.panel(run.panel_name)
        judges = [t.model for t in panel.judges]
        options = ProbeOptions(**json.loads(run.options_json))
        names: list[list[Any]] = json.loads(run.variants_json)
        variants = []
        calls = 0
        for job in jobs:
            n, name = names[(job.position or 1) - 1]
            result = (
                json.loads(job.result_json)
                if job.status == repo.COMPLETED and job.result_json
                else None
            )
            if result is not None:
                calls += int((result.get("usage") or {}).get("llm_calls") or 0)
            item = json.loads(job.item_json)
            variants.append(Variant(int(n), str(name), result, item.get("metadata") or {}))
        flags: dict[str, Any] = {}
        report: dict[str, Any] = {
            "kind": run.kind,
            "rubric": {"id": run.rubric_id, "version": run.rubric_version, "hash": run.rubric_hash},
            "panel": {"name": run.panel_name, "judges": judges},
            "simulated": run.simulated,
            "n_items": run.n_items,
            "variants": len(variants),
            "failed_variants": failed,
            "options": options.__dict__,
            "cost": {
                "calls_per_variant": panel.calls_per_item(),
                "calls_per_item": panel.calls_per_item() * len(variants) // max(1, run.n_items),
                "measured_calls_per_item": round(calls / max(1, run.n_items), 3),
            },
        }
        if run.kind == "verbosity":
            dims, sensitive = verbosity_report(rubric, variants, judges, options.tolerance)
            report |= {"dimensions": dims, "length_sensitive": sensitive}
            flags["length_sensitive"] = sensitive
        elif run.kind == "order":
            report["dimensions"] = order_report(rubric, variants, judges)
        else:
            families = {t.model: t.family or model_family(t.model) for t in panel.judges}
            report["self_preference"] = self_preference_report(rubric, variants, judges, families)
            report["mode"] = panel.self_preference
        return report, flags

    async def view(self, who: Principal, run_id: str) -> ProbeView:
        """The probe as stored, if ``who`` may read it (a read: it never computes the report)."""
        await self.check_readable(who, run_id)
        run = await runs.get_run(self.jobs.database, ProbeRun, run_id)
        if run is None:
            raise ProbeNotFound(run_id)
        return await self.shown(who, run)

    async def shown(self, who: Principal, run: ProbeRun) -> ProbeView:
        """The view of a probe ``who`` may read."""
        shown = await run_fields(self.jobs.database, run)
        return ProbeView.model_validate(shown | {"kind": run.kind})
