"""Item-level guarantees through the services (issue 27), on SQLite and PostgreSQL with the
simulator's real HTTP server as the judges: a calibration run on labelled items stores the
conformal and selective thresholds; items scored afterwards carry their interval and whether
they are guaranteed, and the batch's escalations list exactly the items a person must see,
with their conversation. Labels: the ``accurate`` persona's own ratings stand in for the
experts (the panel's ``noisy`` and ``lenient`` judges depart from them)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from judge.domain.principal import OPERATOR
from judge.domain.result import ScoreResult
from judge.domain.wire import wire_json
from judge.errors import BatchNotFound
from judge.persistence import jobs as repo
from judge.persistence.database import Database
from judge.runtime.composition import ServiceRuntime, build_runtime
from judge.settings import load_settings
from judge.simulator import SimulatorProcess
from tests.fixtures.sample_texts import dyad_item as item

pytestmark = [
    pytest.mark.integration,
    pytest.mark.timeout(300),
    # the persistence layer runs in this process (see test_calibrations_rescue.py)
    pytest.mark.filterwarnings("ignore:Items? .* `ReadOnly` qualifier:UserWarning"),
]

DIMS = ("emotional_reactions", "interpretations", "explorations")
GUARANTEE = {"agreement": 0.8, "confidence": 0.9, "agree_within": 0, "level": 0.9}
N_CALIBRATION = 40
ACCURATE = "openai/accurate"


async def _runtime(database_url: str, simulator_url: str) -> ServiceRuntime:
    settings = load_settings(
        database_url=database_url,
        simulator={"url": simulator_url},
        # an evidence gate these 40 simulated items can pass (the gate still applies)
        reliability={"min_items": 20, "floor": 0.0, "line": 0.2, "guarantee": GUARANTEE},
    )
    database = Database(settings.database_url)
    try:
        await database.upgrade()
    finally:
        await database.dispose()
    return build_runtime(settings)


async def _batch(runtime: ServiceRuntime, items: list[dict[str, Any]]) -> tuple[str, list[Any]]:
    batch, job_ids = await runtime.jobs.submit_batch(
        rubric_id="epitome", panel_name=None, lines=list(enumerate(items, start=1))
    )
    await runtime.jobs.run_all(job_ids, concurrency=16)
    results = []
    async with runtime.database.session() as session:
        async for job in repo.iter_batch_jobs(session, batch.id):
            assert job.status == repo.COMPLETED, job.error
            results.append(ScoreResult.model_validate_json(job.result_json or "{}"))
    return batch.id, results


def _accurate(result: ScoreResult, dim: str) -> Any:
    (rating,) = [j.rating for j in result.dimensions[dim].judges if j.model == ACCURATE]
    return rating


async def _scenario(runtime: ServiceRuntime) -> None:
    items = [item(n) for n in range(N_CALIBRATION)]
    # before any calibration: nothing is guaranteed, every item escalated
    batch_id, before = await _batch(runtime, items)
    for result in before:
        assert result.escalate == "human"
        for dim in DIMS:
            g = result.dimensions[dim].guarantee
            assert g is not None
            assert (g.guaranteed, g.reason, g.status) == (False, "not_calibrated", "not_calibrated")
            assert result.dimensions[dim].interval is None
    listed = await runtime.batches.escalations(OPERATOR, batch_id, 7)  # several pages
    assert (listed.completed, listed.escalated) == (N_CALIBRATION, N_CALIBRATION)

    labelled = [
        {"id": it["id"], "item": it, "labels": {"expert": {d: _accurate(r, d) for d in DIMS}}}
        for it, r in zip(items, before, strict=True)
    ]
    run, job_ids = await runtime.calibrations.submit(
        rubric_id="epitome", panel_name=None, items=labelled
    )
    await runtime.jobs.run_all(job_ids, concurrency=16)
    report = wire_json(await runtime.calibrations.view(OPERATOR, run.id))["report"]
    for dim in DIMS:
        stored = report["dimensions"][dim]["guarantee"]
        assert stored["policy"] == GUARANTEE
        assert stored["n"] == N_CALIBRATION
        assert stored["conformal"]["status"] == "ok"
        # rank ceil(41 * 0.9) = 37 of 40; in-sample coverage at least that share
        assert stored["conformal"]["rank"] == 37
        assert stored["conformal"]["coverage"] >= 37 / 40
        assert stored["selective"]["curve"]
        assert report["dimensions"][dim]["flag_inputs"]["guarantee"] == stored

    fresh = [item(n) for n in range(N_CALIBRATION, N_CALIBRATION + 10)]
    batch_id, after = await _batch(runtime, items[:10] + fresh)
    guaranteed = 0
    for result in after:
        for dim in DIMS:
            part = result.dimensions[dim]
            assert part.interval is not None
            assert part.interval.calibration_id == run.id
            assert part.interval.level == 0.9
            assert part.interval.simulated
            assert part.interval.low is not None
            assert part.interval.high is not None
            how = part.aggregation
            # the interval is around the panel's equal aggregate (what calibration measures)
            equal = how.equal_score if how is not None and how.method == "weighted" else part.score
            assert part.interval.low <= equal <= part.interval.high
            g = part.guarantee
            assert g is not None
            assert g.calibration_id == run.id
            assert g.guaranteed == (g.reason is None)
            if g.guaranteed:
                guaranteed += 1
                assert g.confidence is not None
                assert g.threshold is not None
                assert g.confidence >= g.threshold
        expected = any(
            not d.guarantee.guaranteed for d in result.dimensions.values() if d.guarantee
        )
        assert (result.escalate == "human") == expected
    assert guaranteed > 0
    listed = await runtime.batches.escalations(OPERATOR, batch_id, 4)
    escalated = [r.id for r in after if r.escalate]  # a stored result's id is its job's
    assert escalated
    assert [e.job_id for e in listed.items] == escalated
    assert listed.completed == len(after)
    submitted = {it["id"]: it for it in items[:10] + fresh}
    reasons: set[str | None] = set()
    for entry in listed.items:
        assert entry.id is not None
        assert entry.item["response"] == submitted[entry.id]["response"]
        assert entry.dimensions
        reasons |= {why.reason for why in entry.dimensions.values()}
    # exact agreement on simulated judges: some dimensions have no threshold that passes
    assert "no_guarantee_available" in reasons
    assert reasons <= {"no_guarantee_available", "below_confidence_threshold"}
    json.dumps(listed.model_dump(mode="json"))  # serialisable as the API returns it
    # an unknown batch is the 404 problem (BatchNotFound), never a 500
    with pytest.raises(BatchNotFound) as missing:
        await runtime.batches.escalations(OPERATOR, "0" * 32, 4)
    assert missing.value.resource_id == "0" * 32


def test_calibrate_then_score_gives_intervals_guarantees_and_escalations(
    database_url: str, service_simulator: SimulatorProcess, clean_env: None
) -> None:
    async def run() -> None:
        runtime = await _runtime(database_url, service_simulator.base_url)
        try:
            await _scenario(runtime)
        finally:
            await runtime.close()

    asyncio.run(run())
