"""Cascade panels through the services (issue 27), on SQLite and PostgreSQL with the
simulator's real HTTP server as the judges (simulated judges: the numbers are the
personas', not a real model's).

The cascade (one call per dimension): ``unstable`` sampled three times (its self-consistency
is its confidence: on about half the dimensions it draws a new value on every call), then two
``noisy`` judges.
Experts: the ``accurate`` persona's ratings, read from the default simulated panel. Before a
calibration every stage runs; a calibration run scores every item with every stage and
stores the jointly chosen stage thresholds; afterwards a dimension the first stage is sure of
costs that stage's calls only, and the second stage's unsure ones are ``escalated``."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from judge.domain.principal import OPERATOR
from judge.domain.result import ScoreResult
from judge.domain.wire import wire_json
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
FIRST, SECOND = "openai/unstable", ("openai/noisy@1", "openai/noisy@2")
STAGES = [[FIRST], list(SECOND)]
#: per dimension: three samples of the first judge, one call of each other judge
FULL_CALLS = (3 + 2) * len(DIMS)
CASCADE = "cascade"
FULL = "full"
ACCURATE = "openai/accurate"


async def _runtime(database_url: str, simulator_url: str) -> ServiceRuntime:
    judges = [{"model": FIRST, "simulated": True, "samples": 3}] + [
        {"model": m, "simulated": True} for m in SECOND
    ]
    settings = load_settings(
        database_url=database_url,
        simulator={"url": simulator_url},
        reliability={"min_items": 20, "floor": 0.0, "line": 0.2, "guarantee": GUARANTEE},
        panels={
            # the same personas under other tags (no shared cache): the full panel's cost
            FULL: {
                "judges": [
                    {"model": "openai/unstable@full", "simulated": True, "samples": 3},
                    {"model": "openai/noisy@full1", "simulated": True},
                    {"model": "openai/noisy@full2", "simulated": True},
                ],
                "per_dimension_calls": True,
            },
            CASCADE: {
                "judges": judges,
                "cascade": [FIRST, list(SECOND)],
                "per_dimension_calls": True,
            },
        },
    )
    database = Database(settings.database_url)
    try:
        await database.upgrade()
    finally:
        await database.dispose()
    return build_runtime(settings)


async def _batch(
    runtime: ServiceRuntime, panel: str, items: list[dict[str, Any]]
) -> tuple[str, list[ScoreResult]]:
    batch, job_ids = await runtime.jobs.submit_batch(
        rubric_id="epitome", panel_name=panel, lines=list(enumerate(items, start=1))
    )
    await runtime.jobs.run_all(job_ids, concurrency=16)
    return batch.id, await _results(runtime, batch.id)


async def _results(runtime: ServiceRuntime, batch_id: str) -> list[ScoreResult]:
    results = []
    async with runtime.database.session() as session:
        async for job in repo.iter_batch_jobs(session, batch_id):
            assert job.status == repo.COMPLETED, job.error
            results.append(ScoreResult.model_validate_json(job.result_json or "{}"))
    return results


def _accurate(result: ScoreResult, dim: str) -> Any:
    (rating,) = [j.rating for j in result.dimensions[dim].judges if j.model == ACCURATE]
    return rating


def _per_stage_sums_to_the_total(result: ScoreResult) -> None:
    assert result.stages is not None
    assert sum(s.llm_calls for s in result.stages) == result.usage.llm_calls
    assert sum(s.prompt_tokens for s in result.stages) == result.usage.prompt_tokens
    assert sum(s.completion_tokens for s in result.stages) == result.usage.completion_tokens


async def _scenario(runtime: ServiceRuntime) -> dict[str, float]:
    items = [item(n) for n in range(N_CALIBRATION)]
    _, experts = await _batch(runtime, "simulated", items)
    labelled = [
        {"id": it["id"], "item": it, "labels": {"expert": {d: _accurate(r, d) for d in DIMS}}}
        for it, r in zip(items, experts, strict=True)
    ]

    # before a calibration: every stage runs on every item (no silent pass)
    _, before = await _batch(runtime, CASCADE, items[:5])
    for result in before:
        _per_stage_sums_to_the_total(result)
        assert result.usage.llm_calls == FULL_CALLS
        assert result.escalate == "human"
        for dim in DIMS:
            part = result.dimensions[dim]
            assert part.stage == 1
            assert part.guarantee is not None
            assert part.guarantee.reason == "not_calibrated"

    run, job_ids = await runtime.calibrations.submit(
        rubric_id="epitome", panel_name=CASCADE, items=labelled
    )
    await runtime.jobs.run_all(job_ids, concurrency=16)
    view = await runtime.calibrations.view(OPERATOR, run.id)
    # a calibration item is scored by every stage, whatever an earlier calibration says
    calibrated = await _results(runtime, run.batch_id)
    assert all(r.usage.llm_calls + r.usage.cache_hits == FULL_CALLS for r in calibrated)
    report = wire_json(view)["report"]
    for dim in DIMS:
        cascade = report["dimensions"][dim]["guarantee"]["cascade"]
        assert cascade["stages"] == STAGES
        assert cascade["n"] == N_CALIBRATION
        assert len(cascade["stage_shares"]) == len(STAGES) + 1
        assert (cascade["thresholds"] is None) == (cascade["status"] != "guaranteed")
    assert any(
        report["dimensions"][d]["guarantee"]["cascade"]["status"] == "guaranteed" for d in DIMS
    )

    fresh = [item(n) for n in range(N_CALIBRATION, N_CALIBRATION + 20)]
    batch_id, after = await _batch(runtime, CASCADE, fresh)
    reasons: set[str | None] = set()
    for result in after:
        _per_stage_sums_to_the_total(result)
        for dim in DIMS:
            part = result.dimensions[dim]
            g = part.guarantee
            assert g is not None
            assert g.calibration_id == run.id
            assert g.guaranteed == (g.reason is None)
            if g.guaranteed:
                assert g.confidence is not None
                assert g.threshold is not None
                assert g.confidence >= g.threshold
            else:
                assert part.stage == 1  # only the last stage returns what it is unsure of
            reasons.add(g.reason)
        assert (result.escalate == "human") == any(
            not d.guarantee.guaranteed for d in result.dimensions.values() if d.guarantee
        )
    calls = [r.usage.llm_calls for r in after]
    # one call per dimension: the second stage's judges are called for the open ones only
    for result, n in zip(after, calls, strict=True):
        second = [d for d in DIMS if result.dimensions[d].stage == 1]
        assert n == 3 * len(DIMS) + len(SECOND) * len(second)
        assert result.stages is not None
        assert result.stages[-1].dimensions == second or not second
    assert sum(calls) < FULL_CALLS * len(after)
    assert "escalated" in reasons
    listed = await runtime.batches.escalations(OPERATOR, batch_id, 10)
    assert listed.escalated == sum(1 for r in after if r.escalate)
    _, full = await _batch(runtime, FULL, fresh)
    assert all(r.usage.llm_calls == FULL_CALLS for r in full)
    return {
        "calls_per_item": sum(calls) / len(after),
        "full_tokens_per_item": sum(r.usage.prompt_tokens + r.usage.completion_tokens for r in full)
        / len(full),
        "full_calls_per_item": FULL_CALLS,
        "tokens_per_item": sum(r.usage.prompt_tokens + r.usage.completion_tokens for r in after)
        / len(after),
        "kept_at_first_stage": sum(1 for r in after for d in DIMS if r.dimensions[d].stage == 0)
        / (len(after) * len(DIMS)),
        "escalated_items": sum(1 for r in after if r.escalate) / len(after),
    }


def test_a_cascade_calls_later_stages_only_when_unsure_and_escalates_the_rest(
    database_url: str, service_simulator: SimulatorProcess, clean_env: None
) -> None:
    async def run() -> dict[str, float]:
        runtime = await _runtime(database_url, service_simulator.base_url)
        try:
            return await _scenario(runtime)
        finally:
            await runtime.close()

    numbers = asyncio.run(run())
    print("\ncascade (simulated judges):", numbers)
